"""The plug-in points of a GRPO-family run and the catalog of what fills them (no torch).

GRPO-family methods differ in three places, each a typed function with one signature (repro/plugins/points.py):

- ``advantage``: the group baseline and normalisation (QAE's quantile, OPO's length-weighted mean, ...):
  ``AdvantageInputs -> AdvantageResult``, run once per generation batch after the rewards;
- ``ratio/loss``: the importance ratio and the per-token policy loss (PSPO's smoothing, Clip-Cov, ...):
  ``LossInputs -> LossResult``, run in every optimiser step;
- ``batch``: which prompts train (VCRL's variance curriculum): ``BatchInputs -> BatchResult``, a keep-mask over the
  groups of a generation batch; the trainer re-generates the dropped ones (as DAPO's dynamic sampling does).

A ``Plugin`` is a value: its point, name, the function (``target``, "module:function", imported when a run uses it,
so listing plug-ins needs no torch), its settings with their defaults, the rates it logs (the mechanism a claim
needs), the paper and equation it implements, and how it reaches verl. The built-ins are ``BUILTIN_PLUGINS``;
third parties add theirs through the Python entry-point group ``radar.repro.plugins`` of an installed package
(``[project.entry-points."radar.repro.plugins"] name = "package.module:PLUGIN"``, the object a ``Plugin`` or a
tuple of them). ``plugin_catalog()`` is the built-ins plus the installed ones, as one ``PluginCatalog`` value; a
name that is not registered is refused in one line listing the registered ones.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import import_module, metadata
from pathlib import Path
from types import MappingProxyType
from typing import Any

from radar.repro.errors import ReproError

POINTS = ("advantage", "ratio/loss", "batch")
ENTRY_POINT_GROUP = "radar.repro.plugins"
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


@dataclass(frozen=True)
class Plugin:
    """One function at one plug-in point, with what it needs and what it measures.

    ``args``: its settings and their defaults (a preset may change them: ``Method.plugin_args``); ``rates``: the
    rates it logs each step (name -> what it counts), the mechanism its claim needs; ``verl``: "adv_estimator" or
    "policy_loss" when the verl export can register it through verl's own registry, "" when it cannot (why:
    ``no_verl``)."""

    name: str
    point: str
    target: str  # "package.module:function"
    summary: str
    arxiv: str = ""
    equation: str = ""  # the equation it implements, cited by number
    args: Mapping[str, float] = field(default_factory=dict)
    rates: Mapping[str, str] = field(default_factory=dict)
    verl: str = ""
    no_verl: str = ""

    def __post_init__(self) -> None:
        if self.point not in POINTS:
            raise ReproError(f"plug-in {self.name!r}: point {self.point!r} is not one of {', '.join(POINTS)}")
        if not _NAME.match(self.name):
            raise ReproError(f"plug-in name {self.name!r}: use 1-40 lower-case letters, digits or '_'")
        if not _TARGET.match(self.target):
            raise ReproError(f"plug-in {self.name!r}: target {self.target!r} must be 'package.module:function'")
        if self.verl not in ("", "adv_estimator", "policy_loss"):
            raise ReproError(f"plug-in {self.name!r}: verl {self.verl!r} must be adv_estimator, policy_loss or ''")
        bad = [k for k, v in self.args.items() if not _NAME.match(k) or isinstance(v, bool)]
        if bad:
            raise ReproError(f"plug-in {self.name!r}: settings {', '.join(bad)} need lower-case names and numbers")
        object.__setattr__(self, "args", MappingProxyType({k: float(v) for k, v in self.args.items()}))
        object.__setattr__(self, "rates", MappingProxyType(dict(self.rates)))

    def function(self) -> Callable[..., Any]:
        """The plug-in's function, imported now (the module is installed code, never a workspace file)."""
        module, _, attr = self.target.partition(":")
        try:
            fn = getattr(import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise ReproError(f"{self.point} plug-in {self.name!r}: cannot import {self.target} ({exc})") from None
        if not callable(fn):
            raise ReproError(f"{self.point} plug-in {self.name!r}: {self.target} is not a function")
        return fn

    def settings(self, given: Mapping[str, float]) -> dict[str, float]:
        """Its defaults with ``given`` on top; an unknown setting is one line listing the valid ones."""
        unknown = sorted(set(given) - set(self.args))
        if unknown:
            valid = ", ".join(self.args) or "none"
            raise ReproError(f"{self.point} plug-in {self.name!r} has no setting {', '.join(unknown)}; valid: {valid}")
        return {**self.args, **{k: float(v) for k, v in given.items()}}


@dataclass(frozen=True)
class PluginCatalog:
    """The plug-ins a run may name, by point: the built-ins, then the installed entry points (a value)."""

    plugins: Mapping[tuple[str, str], Plugin]
    sources: Mapping[tuple[str, str], str] = field(default_factory=lambda: MappingProxyType({}))
    problems: tuple[str, ...] = ()  # entry points that could not be loaded, one line each

    def get(self, point: str, name: str) -> Plugin:
        if point not in POINTS:
            raise ReproError(f"unknown plug-in point {point!r}; the points are {', '.join(POINTS)}")
        found = self.plugins.get((point, name))
        if found is None:
            raise ReproError(
                f"unknown {point} plug-in {name!r}; registered: {', '.join(self.names(point)) or 'none'} "
                f"(add one through the {ENTRY_POINT_GROUP!r} entry-point group of an installed package)"
            )
        return found

    def names(self, point: str) -> list[str]:
        return sorted(n for p, n in self.plugins if p == point)

    def source(self, point: str, name: str) -> str:
        return self.sources.get((point, name), "built-in")

    def all(self) -> list[Plugin]:
        return [self.plugins[k] for k in sorted(self.plugins, key=lambda k: (POINTS.index(k[0]), k[1]))]


def _builtins() -> tuple[Plugin, ...]:
    """The built-in plug-ins: a data table (builtin_plugins.toml, shipped beside this module), one ``Plugin`` each
    (its function ``radar.repro.plugins.<module>:<name>``), validated as any plug-in is."""
    tables = tomllib.loads(Path(__file__).with_name("builtin_plugins.toml").read_text(encoding="utf-8"))["plugin"]
    return tuple(
        Plugin(**{k: v for k, v in t.items() if k != "module"}, target=f"radar.repro.plugins.{t['module']}:{t['name']}")
        for t in tables
    )


BUILTIN_PLUGINS = _builtins()


def _entry_plugins(value: Any) -> list[Plugin]:
    items = value if isinstance(value, list | tuple) else [value]
    if not items or not all(isinstance(p, Plugin) for p in items):
        raise ReproError("its object must be a radar.repro.plugins.Plugin or a tuple of them")
    return list(items)


def build_catalog(builtin: Iterable[Plugin], entry_points: Iterable[Any] = ()) -> PluginCatalog:
    """The built-ins plus the plug-ins of ``entry_points`` (importlib.metadata EntryPoint values). An entry point
    that fails to load, or names a point and name a built-in holds, is left out with one line in ``problems``."""
    plugins: dict[tuple[str, str], Plugin] = {(p.point, p.name): p for p in builtin}
    sources: dict[tuple[str, str], str] = {}
    problems: list[str] = []
    for ep in entry_points:
        dist = getattr(getattr(ep, "dist", None), "name", None) or "an installed package"
        try:
            found = _entry_plugins(ep.load())
        except Exception as exc:  # a third party's import error must not stop the built-ins: it is reported
            problems.append(
                f"entry point {ep.name!r} of {dist} ({ENTRY_POINT_GROUP}) was not loaded: "
                f"{type(exc).__name__}: {str(exc)[:200]}; fix or uninstall {dist}"
            )
            continue
        for p in found:
            key = (p.point, p.name)
            if key in plugins:
                problems.append(
                    f"entry point {ep.name!r} of {dist}: {p.point} plug-in {p.name!r} is already registered "
                    f"({sources.get(key, 'built-in')}); rename it"
                )
                continue
            plugins[key] = p
            sources[key] = f"entry point of {dist}"
    return PluginCatalog(MappingProxyType(plugins), MappingProxyType(sources), tuple(problems))


@cache
def plugin_catalog() -> PluginCatalog:
    """The built-ins plus every plug-in the installed packages declare in the ``radar.repro.plugins`` group."""
    return build_catalog(BUILTIN_PLUGINS, metadata.entry_points(group=ENTRY_POINT_GROUP))


BUILTIN_CATALOG = build_catalog(BUILTIN_PLUGINS)
