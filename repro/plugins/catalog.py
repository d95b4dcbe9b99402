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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import import_module, metadata
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


def _builtin(name: str, point: str, module: str, **kw: Any) -> Plugin:
    return Plugin(name=name, point=point, target=f"radar.repro.plugins.{module}:{name}", **kw)


_NO_ENTROPY = "verl's policy-loss signature carries no entropies or per-row correctness; export with --engine trl"
BUILTIN_PLUGINS: tuple[Plugin, ...] = (
    # -- advantage ---------------------------------------------------------------------------------------------
    _builtin(
        "qae",
        "advantage",
        "advantage",
        summary="K-quantile of the group's rewards as the baseline, divided by the group std",
        arxiv="2509.22611",
        equation="Eq. 3 (and its binary form, Eq. 4)",
        args={"k": 0.4},
        rates={"zero_adv_share": "completions whose advantage is exactly 0 (the paper: ~80% with tuned K)"},
        verl="adv_estimator",
    ),
    _builtin(
        "ngrpo",
        "advantage",
        "advantage",
        summary="group mean and std over the rewards plus one virtual maximum-reward sample",
        arxiv="2509.18851",
        equation="advantage calibration (the authors' compute_ngrpo_outcome_advantage)",
        args={"max_reward": 1.1},
        rates={"all_wrong_signal": "completions of all-wrong groups that get a non-zero (negative) advantage"},
        verl="adv_estimator",
    ),
    _builtin(
        "opo",
        "advantage",
        "advantage",
        summary="length-weighted mean reward of the group as the baseline (the optimal baseline), no std",
        arxiv="2505.23585",
        equation="the optimal baseline b* = sum_i l_i r_i / sum_i l_i",
        rates={"baseline_shift": "mean |b_OPO - group mean| over groups (0 when lengths are equal)"},
        verl="adv_estimator",
    ),
    _builtin(
        "gpg",
        "advantage",
        "advantage",
        summary="(r - group mean) / F_norm, scaled by alpha = B / (B - M), M = completions of zero-variance groups",
        arxiv="2504.02546",
        equation="GPG's advantage with F_norm = 1 and alpha = B/(B-M)",
        args={"f_norm": 1.0},
        rates={"gpg_alpha": "the batch's alpha = B / (B - M)"},
        verl="adv_estimator",
    ),
    _builtin(
        "reinforce_pp",
        "advantage",
        "advantage",
        summary="the reward whitened over the whole batch's tokens (no group baseline)",
        arxiv="2501.03262",
        equation="REINFORCE++'s global advantage normalisation",
        rates={"zero_var_signal": "completions of groups with equal rewards that still get an advantage (GRPO: 0)"},
        verl="adv_estimator",
    ),
    _builtin(
        "reinforce_pp_baseline",
        "advantage",
        "advantage",
        summary="the group mean subtracted, then whitened over the whole batch's tokens",
        arxiv="2501.03262",
        equation="REINFORCE++-baseline (group mean, then global normalisation)",
        rates={"batch_scale": "the batch std the centred rewards were divided by"},
        verl="adv_estimator",
    ),
    _builtin(
        "passk",
        "advantage",
        "advantage",
        summary="the analytic advantage of Pass@k training from the group's counts of right and wrong answers",
        arxiv="2508.10751",
        equation="Eqs. 14-15 (R = 1 - C(N_neg,k)/C(N,k), sigma = sqrt(R(1-R)))",
        args={"k": 4.0},
        rates={"passk_saturated": "completions of mixed groups left with advantage 0 (pass@k already certain)"},
        verl="adv_estimator",
    ),
    # -- ratio/loss --------------------------------------------------------------------------------------------
    _builtin(
        "gmpo",
        "ratio/loss",
        "loss",
        summary="geometric mean of token ratios, each clipped in log space",
        arxiv="2507.20673",
        equation="GMPO's objective (sequence ratio = exp(mean of clipped log-ratios))",
        rates={"clip_region": "tokens whose log-ratio left (-eps, eps_high)"},
        no_verl="verl has it as loss_mode=geo_mean (used directly)",
    ),
    _builtin(
        "pspo",
        "ratio/loss",
        "loss",
        summary="the current probability smoothed toward the old one before the ratio, no clip",
        arxiv="2509.21282",
        equation="r~ = ((1-alpha) pi_theta + alpha pi_old) / pi_old = (1-alpha) r + alpha",
        args={"alpha": 0.1},
        rates={"outside_clip": "tokens whose raw ratio left [1-eps, 1+eps_high] and still train (GRPO would clip)"},
        verl="policy_loss",
    ),
    _builtin(
        "rl_zvp",
        "ratio/loss",
        "loss",
        summary="zero-variance groups train with an entropy-shaped token advantage (+alpha H or -alpha (max H - H))",
        arxiv="2509.21880",
        equation="Eq. 5 (advantage of zero-variance prompts) in the clipped objective Eq. 6",
        args={"alpha": 0.1},
        rates={"zvp_trained": "completions of zero-variance groups that train with a non-zero advantage"},
        no_verl=_NO_ENTROPY,
    ),
    _builtin(
        "clip_cov",
        "ratio/loss",
        "loss",
        summary="a random share of the tokens whose covariance of log-prob and advantage is in (lb, ub) is detached",
        arxiv="2505.22617",
        equation="Clip-Cov (Sec. 4, the authors' compute_policy_loss_clip_cov)",
        args={"ratio": 2e-4, "lb": 1.0, "ub": 5.0},
        rates={"cov_detached": "tokens whose gradient Clip-Cov detached"},
        verl="policy_loss",
    ),
    _builtin(
        "kl_cov",
        "ratio/loss",
        "loss",
        summary="a KL penalty |log r| on the top share of tokens by covariance of log-prob and advantage",
        arxiv="2505.22617",
        equation="KL-Cov (Sec. 4, the authors' compute_policy_loss_kl_cov)",
        args={"ratio": 2e-4, "coef": 1.0},
        rates={"cov_penalised": "tokens KL-Cov penalised"},
        verl="policy_loss",
    ),
    _builtin(
        "gpg",
        "ratio/loss",
        "loss",
        summary="plain policy gradient -A log pi, no ratio and no clip (token mean)",
        arxiv="2504.02546",
        equation="GPG's objective (policy gradient on the original objective)",
        verl="policy_loss",
    ),
    _builtin(
        "ce_gppo",
        "ratio/loss",
        "loss",
        summary="gradient-preserving clip: tokens outside the clip keep beta * (1 +- eps) / sg(r) * r gradients",
        arxiv="2509.20712",
        equation="CE-GPPO's objective (the authors' compute_gppo_loss_general_beta)",
        args={"beta1": 0.75, "beta2": 1.0, "dual_clip": 3.0},
        rates={"gradient_kept": "tokens outside the clip interval whose gradient is kept"},
        verl="policy_loss",
    ),
    _builtin(
        "dcpo",
        "ratio/loss",
        "loss",
        summary="clip bounds from the old probability q: 0.5 + 0.5 sqrt(1 - 4 eps_low / q) .. "
        "0.5 + 0.5 sqrt(1 + 4 eps_high / q)",
        arxiv="2509.02333",
        equation="the dynamic-adaptive clipping bounds (DAC) with the OTM loss (token sum per response)",
        args={"eps_low": 0.16, "eps_high": 0.2},
        rates={"clip_region": "tokens outside the dynamic bounds"},
        verl="policy_loss",
    ),
    _builtin(
        "delta_l",
        "ratio/loss",
        "loss",
        summary="each response's loss weighted by L^-alpha / mean(L^-alpha), summed over tokens, divided by B * T",
        arxiv="2509.07558",
        equation="Delta L normalisation (the authors' implementation of the minimum-variance weights)",
        args={"alpha": 0.75},
        rates={"length_weight_spread": "max / min of the responses' length weights"},
        verl="policy_loss",
    ),
    # -- batch -------------------------------------------------------------------------------------------------
    _builtin(
        "dapo_filter",
        "batch",
        "batch",
        summary="DAPO's dynamic sampling: keep the groups whose answers are neither all right nor all wrong",
        arxiv="2503.14476",
        equation="0 < |{o_i : o_i is right}| < G (DAPO's dynamic-sampling constraint)",
        no_verl="verl has it as algorithm.filter_groups (used directly)",
    ),
    _builtin(
        "vcrl",
        "batch",
        "batch",
        summary="keep a group only when its normalised reward variance p = 4 k (G - k) / G^2 reaches kappa",
        arxiv="2509.19803",
        equation="variance-based dynamic sampling p = sigma^2 / sigma^2_max >= kappa",
        args={"kappa_early": 0.3, "kappa": 0.8, "switch_step": 20.0},
        rates={"vcrl_dropped": "groups of a generation batch below kappa (re-generated)"},
        no_verl="verl has no batch-selection registry; export with --engine trl",
    ),
)


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
