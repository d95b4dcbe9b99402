"""GRPO-family methods as data, and the ``Catalog`` of the presets a run may name.

A preset (``Method``, repro/method_types.py) maps onto TRL's ``GRPOConfig``, names its paper, its baseline, the
settings and plug-ins it changes against that baseline (one change at a time where the paper allows) and one claim
a small run can check. The built-ins: repro/presets_2024.toml (2024 to mid-2025) and repro/presets_2025.toml (QAE,
PSPO, RL-ZVP, VCRL, NGRPO, ...), read by repro/builtin.py; a test checks that every preset's declared ``changes``
equal the real difference of its GRPOConfig, reward shaping and plug-ins from its baseline's.

A method TRL lacks fills a plug-in point (advantage, ratio/loss, batch) with a plug-in of the plug-in catalog
(repro/plugins: built-ins plus the ``radar.repro.plugins`` entry points of installed packages).

Each preset names the ``levers`` its claim depends on (a measured rate per arm, repro/mechanisms.py): a claim whose
lever did not engage in a run is "not testable here", with the rate.

The presets a run may name form a ``Catalog``: a value built from the built-ins plus radar.toml's
``[[repro.presets]]`` (``catalog(tables)``), handed to whatever needs it; a run carries its user presets' tables in
its params, so its worker, exports and later reads rebuild the same catalog.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, cast

from radar.repro.builtin import METHODS
from radar.repro.errors import ReproError
from radar.repro.method_types import (
    HELDOUT_MARGIN,
    Claim,
    Lever,
    Method,
    MethodSummary,
    PresetSettings,
    TrlSettings,
    baseline_of,
    describe,
    settings,
)
from radar.repro.plugins.catalog import BUILTIN_CATALOG, PluginCatalog
from radar.repro.records import UserPreset
from radar.repro.user_presets import CHOICES, PRESET_KEYS, PRESET_SETTINGS, user_preset, user_presets
from radar.store.config import TomlValue

__all__ = [
    "BUILTIN",
    "CHOICES",
    "HELDOUT_MARGIN",
    "METHODS",
    "PRESET_KEYS",
    "PRESET_SETTINGS",
    "Catalog",
    "Claim",
    "Lever",
    "Method",
    "MethodSummary",
    "PresetSettings",
    "TrlSettings",
    "baseline_of",
    "catalog",
    "describe",
    "settings",
    "user_preset",
    "user_presets",
]


@dataclass(frozen=True)
class Catalog:
    """The presets a run may name: the built-ins, then the user presets of radar.toml (or of a run's params).

    A value: built once from the settings (``catalog(tables)``) and passed to what needs it."""

    methods: Mapping[str, Method]
    tables: Mapping[str, Mapping[str, TomlValue]] = field(default_factory=lambda: MappingProxyType({}))  # read-only
    plugins: PluginCatalog = BUILTIN_CATALOG  # the plug-ins the presets may name

    def get(self, name: str) -> Method:
        method = self.methods.get(name)
        if method is None:
            raise ReproError(f"unknown method {name!r}; choose one of: {', '.join(self.methods)}")
        return method

    def __contains__(self, name: object) -> bool:
        return name in self.methods

    def names(self) -> list[str]:
        return list(self.methods)

    def source(self, name: str) -> str:
        return "built-in" if name in METHODS else "radar.toml"

    def describe(self) -> list[MethodSummary]:
        """Every preset as `radar repro methods --json` lists it, its plug-ins' settings in full (defaults too)."""
        out = []
        for m in self.methods.values():
            args = {
                point: self.plugins.get(point, name).settings(m.plugin_args.get(point, {}))
                for point, name in m.plugins().items()
                if (point, name) in self.plugins.plugins
            }
            out.append(describe(m, self.source(m.name), args))
        return out

    def titles(self) -> dict[str, str]:
        """Every preset by name -> title: the report recognises their names in papers."""
        return {name: m.title for name, m in self.methods.items()}

    def definitions(self, *names: str) -> list[UserPreset]:
        """The radar.toml tables of the user presets among ``names`` (a run carries them to its worker)."""
        # each table passed user_preset's checks when the catalog was built: a UserPreset
        return [cast(UserPreset, dict(self.tables[n])) for n in dict.fromkeys(names) if n in self.tables]

    def settings(self, name: str) -> PresetSettings:
        return settings(self.get(name))


def catalog(tables: Any = (), plugins: PluginCatalog = BUILTIN_CATALOG) -> Catalog:
    """The built-in presets plus the validated ``[[repro.presets]]`` tables (one-line errors, user_presets), whose
    plug-ins must be in ``plugins`` (the built-ins by default; the app passes the installed ones too)."""
    users = user_presets(list(tables), plugins)
    methods = dict(METHODS) | {m.name: m for m in users}
    defs = {m.name: MappingProxyType(dict(t)) for m, t in zip(users, tables, strict=True)}
    return Catalog(MappingProxyType(methods), MappingProxyType(defs), plugins)


BUILTIN = catalog()  # the built-in presets alone (what a run without user presets can name)
