"""GRPO-family methods as data: each preset maps onto TRL's ``GRPOConfig``, names its paper, its
baseline, the settings it changes against that baseline (one change at a time where the paper
allows) and one claim a small run can check. Deviations from the papers are in each ``deviations``
and in repro/README.md.

The default baseline ``grpo`` is KL-free (beta 0, as every other preset), so a verdict never mixes a
method with "no KL"; ``grpo-kl`` (beta 0.04, DeepSeekMath's value) is its own preset. A test checks
that every preset's declared ``changes`` equal the real difference of its GRPOConfig (and reward
shaping) from its baseline's.

All presets share the run's batch shape and ``num_iterations`` (mu = 2 by default): with mu = 1
the importance ratio is exactly 1 and every clipping variant computes the same update (TRL #3120).

A method TRL lacks is added with ``loss_plugin``: the name of a loss registered in
``repro.trainer.LOSS_PLUGINS`` (see ``gmpo`` below and repro/README.md).

Each preset names the ``levers`` its claim depends on (a measured rate per arm, repro/verdict.py
``mechanisms``): a claim whose lever did not engage in a run is "not testable here", with the rate.

The presets a run may name form a ``Catalog``: a value built from the built-ins plus radar.toml's
``[[repro.presets]]`` (``catalog(tables)``), handed to whatever needs it; a run carries its user presets'
tables in its params, so its worker, exports and later reads rebuild the same catalog.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypedDict, cast

from radar.repro.errors import ReproError
from radar.store.config import TomlValue
from radar.store.runs import UserPreset


@dataclass(frozen=True)
class Claim:
    """A checkable statement: ``metric`` aggregated by ``window`` compared with the baseline.

    ``direction``: "higher" (method > baseline by at least ``min_effect``), "lower" (method <
    baseline by at least ``min_effect``), "not_lower" (method >= baseline - ``margin``: a
    non-inferiority test), "ratio_at_least" (method / baseline >= ``margin``).
    ``window``: "end" (the held-out score at the end of training), "late" (mean over the last half
    of steps), "all" (mean over all steps: the normalised area under the curve), "slope"
    (least-squares slope per 100 steps).
    """

    text: str
    metric: str
    direction: str
    window: str = "late"
    margin: float = 0.0
    min_effect: float = 0.0  # for higher/lower: a smaller difference does not make the claim hold
    also: Claim | None = None  # a second condition that must hold too (e.g. "yet learns as well")

    def __post_init__(self) -> None:
        if self.direction not in ("higher", "lower", "not_lower", "ratio_at_least"):
            raise ReproError(f"claim direction {self.direction!r}: use higher, lower, not_lower or ratio_at_least")
        if self.window not in ("end", "late", "all", "slope"):
            raise ReproError(f"claim window {self.window!r}: use end, late, all or slope")
        if self.direction in ("higher", "lower") and self.min_effect <= 0:
            raise ReproError(f"claim {self.text!r} needs a minimum effect (min_effect > 0)")


@dataclass(frozen=True)
class Lever:
    """What a claim needs to have acted: ``metric`` (a field of store.runs.ArmMechanisms) of ``arm`` at least
    ``minimum`` over the run (mean over steps and seed pairs); ``what`` says why in words."""

    metric: str
    arm: str  # "method" or "baseline"
    minimum: float
    what: str

    def __post_init__(self) -> None:
        if self.arm not in ("method", "baseline"):
            raise ReproError(f"lever arm {self.arm!r}: use method or baseline")


TOKEN_LEVER = 0.005  # a clip that touches fewer than 0.5 % of tokens cannot move the claimed metric in a short run
LENGTH_LEVER = 2.0  # length-normalisation changes act only where completions of a batch differ in length (tokens)
_CLIP_HIGH = Lever(
    "clip_high", "baseline", TOKEN_LEVER, "clip-higher releases the tokens the baseline clips above 1 + epsilon"
)
_CLIPPED = Lever(
    "clip_region", "baseline", TOKEN_LEVER, "the change acts on the tokens the baseline's hard clip cuts off"
)
_LENGTHS = Lever(
    "length_range", "baseline", LENGTH_LEVER, "a length-normalisation change acts only where lengths in a batch differ"
)


class TrlSettings(TypedDict, total=False):
    """The GRPOConfig fields a preset sets (``Method.config``): the ``[[repro.presets]]`` settings but the three
    that are not TRL's (overlong_shaping, dynamic_sampling, loss_plugin; a test keeps them equal)."""

    loss_type: str
    beta: float
    scale_rewards: str
    epsilon: float
    epsilon_high: float
    importance_sampling_level: str
    delta: float
    top_entropy_quantile: float
    sapo_temperature_pos: float
    sapo_temperature_neg: float
    vespo_k_pos: float
    vespo_k_neg: float
    vespo_lambda_pos: float
    vespo_lambda_neg: float
    mask_truncated_completions: bool


class PresetSettings(TrlSettings, total=False):
    """Everything a preset sets (``settings``): its GRPOConfig fields plus reward shaping, sampling, loss plug-in."""

    overlong_shaping: bool
    dynamic_sampling: bool
    loss_plugin: str


class MethodSummary(TypedDict):
    """A preset as `radar repro methods` lists it (``describe``; its --json)."""

    name: str
    source: str  # "built-in" or "radar.toml"
    title: str
    arxiv: str
    baseline: str
    changes: list[str]
    config: TrlSettings
    claim: str
    levers: list[str]
    overlong_shaping: bool
    dynamic_sampling: bool
    loss_plugin: str
    notes: str
    deviations: str


@dataclass(frozen=True)
class Method:
    name: str
    title: str
    arxiv: str
    config: TrlSettings  # GRPOConfig fields
    claim: Claim
    baseline: str = "grpo"  # the preset the claim is about ("" for the baseline itself)
    changes: tuple[str, ...] = ()  # settings changed vs the baseline: GRPOConfig fields, overlong_shaping, loss_plugin
    overlong_shaping: bool = False  # add DAPO's soft overlong punishment as a reward
    dynamic_sampling: bool = False  # DAPO: drop groups whose answers are all right or all wrong, re-generate
    loss_plugin: str = ""  # name in repro.trainer.LOSS_PLUGINS; "" = TRL's own loss
    levers: tuple[Lever, ...] = ()  # what the claim needs to have engaged (else "not testable here")
    notes: str = ""
    deviations: str = ""  # how this preset departs from its paper
    hparams_from_paper: dict[str, float | str | list[float]] = field(default_factory=dict)  # as the paper states them


HELDOUT_MARGIN = 0.02  # "not worse" means within 2 points of held-out accuracy (a non-inferiority margin)
_HELD_OUT_NOT_WORSE = Claim(
    "held-out greedy accuracy stays within 2 points of the baseline's",
    "heldout_greedy",
    "not_lower",
    "end",
    HELDOUT_MARGIN,
)
_GRPO: TrlSettings = {"loss_type": "grpo", "beta": 0.0, "scale_rewards": "group", "epsilon": 0.2}

METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            "grpo",
            "GRPO (DeepSeekMath), KL-free",
            "2402.03300",
            _GRPO.copy(),
            _HELD_OUT_NOT_WORSE,
            baseline="",
            notes="The default baseline: std-scaled group advantages, per-sequence mean of token losses, "
            "token-level ratio clipped to [0.8, 1.2]. TRL's defaults (loss_type dapo) are NOT GRPO.",
            deviations="beta 0 (the paper uses a k3 KL term with beta 0.04: see grpo-kl); G = 8 instead of 64.",
            hparams_from_paper={"epsilon": 0.2, "G": 64},
        ),
        Method(
            "grpo-kl",
            "GRPO with the k3 KL penalty (DeepSeekMath)",
            "2402.03300",
            _GRPO | {"beta": 0.04},
            _HELD_OUT_NOT_WORSE,
            changes=("beta",),
            levers=(Lever("kl", "method", 1e-4, "the KL penalty acts through the KL to the reference"),),
            notes="GRPO as published: k3 KL to the warm-started reference, beta 0.04.",
            deviations="G = 8 instead of 64.",
            hparams_from_paper={"beta": 0.04, "epsilon": 0.2, "G": 64},
        ),
        Method(
            "dr_grpo",
            "Dr. GRPO (Understanding R1-Zero-like training)",
            "2503.20783",
            _GRPO | {"loss_type": "dr_grpo", "scale_rewards": "none"},
            Claim(
                "wrong answers grow longer more slowly than under GRPO (>= 0.5 tokens per 100 steps)",
                "incorrect_length",
                "lower",
                "slope",
                min_effect=0.5,
            ),
            changes=("loss_type", "scale_rewards"),
            levers=(_LENGTHS,),
            notes="No std scaling; token losses summed and divided by a constant (max_completion_length).",
            deviations="Completions of a few to ~20 tokens (addition-work) instead of long reasoning; G = 8.",
            hparams_from_paper={"beta": 0.0, "epsilon": 0.2, "G": 8},
        ),
        Method(
            "dapo-clip-higher",
            "DAPO's clip-higher alone",
            "2503.14476",
            _GRPO | {"epsilon_high": 0.28},
            Claim(
                "clip-higher keeps policy entropy higher than GRPO (>= 0.02 nats/token)",
                "entropy",
                "higher",
                "late",
                min_effect=0.02,
            ),
            changes=("epsilon_high",),
            levers=(_CLIP_HIGH,),
            notes="Only the decoupled upper clip bound 1 + 0.28: the one DAPO change its entropy claim is about.",
            deviations="Tiny policy and task; entropy of a char-level answer, not of long reasoning.",
            hparams_from_paper={"epsilon_low": 0.2, "epsilon_high": 0.28},
        ),
        Method(
            "dapo",
            "DAPO (clip-higher, token-level loss, overlong shaping)",
            "2503.14476",
            _GRPO | {"loss_type": "dapo", "epsilon_high": 0.28},
            Claim(
                "keeps policy entropy higher than GRPO (>= 0.02 nats/token)",
                "entropy",
                "higher",
                "late",
                min_effect=0.02,
            ),
            changes=("loss_type", "epsilon_high", "overlong_shaping", "dynamic_sampling"),
            overlong_shaping=True,
            dynamic_sampling=True,
            levers=(_CLIP_HIGH,),
            notes="Clip-higher (1 - 0.2, 1 + 0.28), token-mean loss over the batch, the soft overlong "
            "punishment (TRL's get_soft_overlong_punishment) over the last tokens of the completion budget, and "
            "dynamic sampling: groups whose answers are all right or all wrong are dropped and new prompts "
            "generated in their place (RadarGRPOTrainer; TRL has no switch for it). Its entropy claim is "
            "credited to clip-higher: compare with dapo-clip-higher for the single change.",
            deviations="Dynamic sampling re-generates at most 3 times per batch and then keeps the remaining "
            "zero-variance groups (verl's filter_groups keeps generating up to max_num_gen_batches); it makes "
            "the dapo arm generate more completions per step than its baseline (the profile shows the cost). "
            "beta was already 0 in the baseline.",
            hparams_from_paper={"epsilon_low": 0.2, "epsilon_high": 0.28, "beta": 0.0},
        ),
        Method(
            "gspo",
            "GSPO (group sequence policy optimization)",
            "2507.18071",
            _GRPO | {"importance_sampling_level": "sequence", "epsilon": 3e-4, "epsilon_high": 4e-4},
            Claim(
                "clips far more (>= 10x GRPO's clip fraction)",
                "clip_ratio",
                "ratio_at_least",
                "all",
                10.0,
                also=_HELD_OUT_NOT_WORSE,
            ),
            changes=("importance_sampling_level", "epsilon", "epsilon_high"),
            notes="Sequence-level ratio exp(mean log rho), clip range [1-3e-4, 1+4e-4] as in the paper.",
            deviations="The paper's range is tuned for long sequences where mean log-ratios are tiny; with "
            "answers of a few tokens most sequences leave it after one update, so far more sequences are "
            "clipped than the paper's ~15%.",
            hparams_from_paper={"epsilon_low": 3e-4, "epsilon_high": 4e-4},
        ),
        Method(
            "cispo",
            "CISPO (MiniMax-M1)",
            "2506.13585",
            _GRPO | {"loss_type": "cispo", "epsilon_high": 1.28},
            Claim(
                "learns at least as fast as GRPO (held-out accuracy curve, within 2 points)",
                "heldout",
                "not_lower",
                "all",
                HELDOUT_MARGIN,
            ),
            changes=("loss_type", "epsilon_high"),
            levers=(_CLIPPED,),
            notes="REINFORCE with the detached importance weight clipped, sg(clip(rho)) * A * log pi, "
            "token-mean loss: every token keeps a gradient. MiniMax-M1 clips rho to "
            "[1 - eps_low_IS, 1 + eps_high_IS] with no lower bound in practice (eps_low_IS large) and tunes "
            "only eps_high_IS; TRL's cispo takes the absolute cap as epsilon_high, so 1.28 = 1 + 0.28.",
            deviations="The paper does not print its eps_high_IS; 0.28 (DAPO's clip-higher, which M1 builds on) "
            "puts the cap where this task's importance weights exceed it (see the clip fractions in "
            "repro/README.md); TRL's and ScaleRL's cap of 5.0 never acted here.",
            hparams_from_paper={"epsilon_low_IS": "none (large)", "epsilon_high_IS": "tuned, not stated"},
        ),
        Method(
            "sapo",
            "SAPO (soft adaptive policy optimization)",
            "2511.20347",
            _GRPO | {"loss_type": "sapo", "sapo_temperature_pos": 1.0, "sapo_temperature_neg": 1.05},
            _HELD_OUT_NOT_WORSE,
            changes=("loss_type",),
            levers=(_CLIPPED,),
            notes="A smooth sigmoid gate replaces the hard clip (TRL's temperatures, which are the paper's).",
            deviations="Tiny policy and task.",
            hparams_from_paper={"tau_pos": 1.0, "tau_neg": 1.05},
        ),
        Method(
            "luspo",
            "LUSPO (length-unbiased sequence policy optimization)",
            "2602.05261",
            _GRPO
            | {"loss_type": "luspo", "importance_sampling_level": "sequence", "epsilon": 3e-4, "epsilon_high": 4e-4},
            Claim(
                "avoids GSPO's length collapse: completions are not shorter than GSPO's (within 0.5 tokens)",
                "length",
                "not_lower",
                "late",
                0.5,
            ),
            baseline="gspo",
            changes=("loss_type",),
            levers=(_LENGTHS,),
            notes="GSPO with each sequence's loss scaled by its length; its claim is about GSPO, so its "
            "baseline is gspo.",
            deviations="Answers of 1-5 tokens leave little room for a length collapse; the claim can come out "
            "inconclusive for that reason.",
        ),
        Method(
            "vespo",
            "VESPO (variational sequence-level soft policy optimization)",
            "2602.10693",
            _GRPO | {"loss_type": "vespo"},
            _HELD_OUT_NOT_WORSE,
            changes=("loss_type",),
            levers=(_CLIPPED,),
            notes="Gamma weighting of the sequence IS ratio; TRL's default k/lambda.",
            deviations="TRL's default k/lambda, not tuned.",
        ),
        Method(
            "gmpo",
            "GMPO (geometric-mean policy optimization) - plug-in",
            "2507.20673",
            _GRPO | {"epsilon": 0.4, "epsilon_high": 0.4},
            Claim(
                "learns at least as well as GRPO (held-out accuracy curve, within 2 points)",
                "heldout",
                "not_lower",
                "all",
                HELDOUT_MARGIN,
            ),
            changes=("epsilon", "epsilon_high", "loss_plugin"),
            loss_plugin="gmpo",
            levers=(_CLIPPED,),
            notes="Not in TRL: added through the loss plug-in hook (repro.trainer). Token log-ratios are "
            "clipped in log space to (-0.4, 0.4), then their geometric mean forms a sequence ratio.",
            deviations="Sequence loss averaged over the micro-batch (the paper's per-group mean equals it "
            "for equal group sizes).",
            hparams_from_paper={"clip_log_range": [-0.4, 0.4]},
        ),
    )
}


def settings(method: Method) -> PresetSettings:
    """Everything a preset sets: its GRPOConfig fields plus the reward shaping, sampling and loss plug-in."""
    return {
        **method.config,
        "overlong_shaping": method.overlong_shaping,
        "dynamic_sampling": method.dynamic_sampling,
        "loss_plugin": method.loss_plugin,
    }


def baseline_of(method: Method) -> str:
    """The preset a method is compared with by default (its claim's baseline); grpo for grpo itself."""
    return method.baseline or method.name


def describe(method: Method, source: str = "built-in") -> MethodSummary:
    """A JSON-ready summary for `radar repro methods`."""
    return {
        "name": method.name,
        "source": source,
        "title": method.title,
        "arxiv": method.arxiv,
        "baseline": method.baseline,
        "changes": list(method.changes),
        "config": method.config,
        "claim": method.claim.text + (f"; {method.claim.also.text}" if method.claim.also else ""),
        "levers": [f"{lv.arm} {lv.metric} >= {lv.minimum:g}: {lv.what}" for lv in method.levers],
        "overlong_shaping": method.overlong_shaping,
        "dynamic_sampling": method.dynamic_sampling,
        "loss_plugin": method.loss_plugin,
        "notes": method.notes,
        "deviations": method.deviations,
    }


@dataclass(frozen=True)
class Catalog:
    """The presets a run may name: the built-ins, then the user presets of radar.toml (or of a run's params).

    A value: built once from the settings (``catalog(tables)``) and passed to what needs it."""

    methods: Mapping[str, Method]
    tables: Mapping[str, Mapping[str, TomlValue]] = field(default_factory=lambda: MappingProxyType({}))  # read-only

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
        return [describe(m, self.source(m.name)) for m in self.methods.values()]

    def titles(self) -> dict[str, str]:
        """Every preset by name -> title: the report recognises their names in papers."""
        return {name: m.title for name, m in self.methods.items()}

    def definitions(self, *names: str) -> list[UserPreset]:
        """The radar.toml tables of the user presets among ``names`` (a run carries them to its worker)."""
        # each table passed user_preset's checks when the catalog was built: a UserPreset
        return [cast(UserPreset, dict(self.tables[n])) for n in dict.fromkeys(names) if n in self.tables]

    def settings(self, name: str) -> PresetSettings:
        return settings(self.get(name))


def catalog(tables: Any = ()) -> Catalog:
    """The built-in presets plus the validated ``[[repro.presets]]`` tables (one-line errors, user_presets)."""
    users = user_presets(list(tables))
    methods = dict(METHODS) | {m.name: m for m in users}
    defs = {m.name: MappingProxyType(dict(t)) for m, t in zip(users, tables, strict=True)}
    return Catalog(MappingProxyType(methods), MappingProxyType(defs))


# -- user presets ([[repro.presets]] in radar.toml) -------------------------------------------------
# The GRPOConfig fields a preset may change, with their kind; shared run fields (batch, steps, lr,
# num_iterations, lengths) stay the run's so that both arms see the same data (build_config refuses them).
CHOICES: dict[str, tuple[str, ...]] = {
    "loss_type": ("grpo", "dr_grpo", "dapo", "bnpo", "cispo", "sapo", "luspo", "vespo"),  # TRL 1.x
    "scale_rewards": ("group", "batch", "none"),
    "importance_sampling_level": ("token", "sequence"),
    "loss_plugin": ("", "gmpo"),  # repro.trainer.LOSS_PLUGINS (a test keeps them equal)
}
NUMBERS = (
    "beta",
    "epsilon",
    "epsilon_high",
    "delta",
    "top_entropy_quantile",
    "sapo_temperature_pos",
    "sapo_temperature_neg",
    "vespo_k_pos",
    "vespo_k_neg",
    "vespo_lambda_pos",
    "vespo_lambda_neg",
)
FLAGS = ("dynamic_sampling", "mask_truncated_completions", "overlong_shaping")
PRESET_SETTINGS: tuple[str, ...] = tuple(sorted((*CHOICES, *NUMBERS, *FLAGS)))
PRESET_KEYS = ("name", "base", "settings", "arxiv", "claim", "title", "baseline", "check")
CLAIM_METRICS = (
    "heldout_greedy",
    "heldout_pass1",
    "heldout",
    "entropy",
    "length",
    "correct_length",
    "incorrect_length",
    "clip_ratio",
    "kl",
    "correct",
    "frac_reward_zero_std",
)
_NAME = r"^[a-z0-9][a-z0-9_.-]{0,39}$"


def _setting(preset: str, key: str, value: Any) -> str | float | bool:
    where = f"[[repro.presets]] {preset!r}: setting {key}"
    if key in CHOICES:
        if value not in CHOICES[key]:
            shown = ", ".join(repr(c) for c in CHOICES[key])
            raise ReproError(f"{where} = {value!r} is not one of {shown}; fix it in radar.toml")
        return value
    if key in FLAGS:
        if not isinstance(value, bool):
            raise ReproError(f"{where} must be true or false, not {value!r}; fix it in radar.toml")
        return value
    if not isinstance(value, int | float) or isinstance(value, bool) or value != value or abs(value) > 1e6:
        raise ReproError(f"{where} must be a number, not {value!r}; fix it in radar.toml")
    if key in ("epsilon", "epsilon_high", "beta", "top_entropy_quantile") and value < 0:
        raise ReproError(f"{where} must not be negative (got {value}); fix it in radar.toml")
    return float(value)


def user_preset(table: Any) -> Method:
    """A Method from one ``[[repro.presets]]`` table; every error is one line naming the fix."""
    if not isinstance(table, dict):
        raise ReproError("each [[repro.presets]] entry must be a table (name, base, settings, arxiv, claim)")
    name = table.get("name")
    label = repr(name) if isinstance(name, str) else "(no name)"
    unknown = sorted(set(table) - set(PRESET_KEYS))
    if unknown:
        raise ReproError(
            f"unknown key(s) {', '.join(unknown)} in [[repro.presets]] {label}; valid keys: {', '.join(PRESET_KEYS)}"
        )
    if not isinstance(name, str) or not re.match(_NAME, name):
        raise ReproError(
            f"[[repro.presets]] name {name!r} must be 1-40 lower-case letters, digits, '-', '_' or '.'; fix it"
        )
    if name in METHODS:
        raise ReproError(
            f"[[repro.presets]] {name!r} clashes with a built-in preset; choose another name "
            f"(built-in: {', '.join(METHODS)})"
        )
    base_name = table.get("base", "")
    if base_name not in METHODS:
        raise ReproError(
            f"[[repro.presets]] {name!r}: base {base_name!r} is not a built-in preset; "
            f"choose one of: {', '.join(METHODS)}"
        )
    base = METHODS[base_name]
    settings_table = table.get("settings", {})
    if not isinstance(settings_table, dict) or not settings_table:
        raise ReproError(
            f"[[repro.presets]] {name!r}: settings must be a non-empty table of the TRL settings that differ from "
            f"{base_name!r}; valid settings: {', '.join(PRESET_SETTINGS)}"
        )
    bad = sorted(set(settings_table) - set(PRESET_SETTINGS))
    if bad:
        raise ReproError(
            f"unknown setting(s) {', '.join(bad)} in [[repro.presets]] {name!r}; valid settings: "
            f"{', '.join(PRESET_SETTINGS)}"
        )
    values = {k: _setting(name, k, v) for k, v in settings_table.items()}
    shaping = bool(values.pop("overlong_shaping", base.overlong_shaping))
    dynamic = bool(values.pop("dynamic_sampling", base.dynamic_sampling))
    plugin = str(values.pop("loss_plugin", base.loss_plugin))
    # the settings but the three popped above are TrlSettings' keys, each value of its kind (_setting)
    config = cast(TrlSettings, {**base.config, **values})
    for key in ("arxiv", "claim", "title", "baseline"):
        if not isinstance(table.get(key, ""), str):
            raise ReproError(f"[[repro.presets]] {name!r}: {key} must be a string; fix it in radar.toml")
    arxiv = str(table.get("arxiv", "")).strip()
    if arxiv and not re.match(r"^\d{4}\.\d{4,5}(v\d+)?$", arxiv):
        raise ReproError(f"[[repro.presets]] {name!r}: arxiv {arxiv!r} is not an arXiv id like 2503.14476")
    baseline = str(table.get("baseline") or baseline_of(base))
    if baseline not in METHODS:
        raise ReproError(
            f"[[repro.presets]] {name!r}: baseline {baseline!r} is not a built-in preset; "
            f"choose one of: {', '.join(METHODS)}"
        )
    text = str(table.get("claim", "")).strip() or f"a configuration change of {base_name}"
    check = table.get("check")
    if check is None:
        claim = Claim(
            f"{text} (checked here: held-out greedy accuracy within 2 points of {baseline}'s)",
            "heldout_greedy",
            "not_lower",
            "end",
            HELDOUT_MARGIN,
        )
    else:
        keys = ("metric", "direction", "window", "margin", "min_effect")
        if not isinstance(check, dict) or set(check) - set(keys):
            raise ReproError(f"[[repro.presets]] {name!r}: check takes {', '.join(keys)}; fix it in radar.toml")
        if check.get("metric") not in CLAIM_METRICS:
            raise ReproError(
                f"[[repro.presets]] {name!r}: check metric {check.get('metric')!r} is not one of "
                f"{', '.join(CLAIM_METRICS)}"
            )
        for key in ("margin", "min_effect"):
            value = check.get(key, 0.0)
            if isinstance(value, bool) or not isinstance(value, int | float) or not abs(value) < 1e6:
                raise ReproError(f"[[repro.presets]] {name!r}: check {key} must be a number, not {value!r}")
        try:
            claim = Claim(text, **{k: v for k, v in check.items()})
        except TypeError as exc:
            raise ReproError(f"[[repro.presets]] {name!r}: check: {exc}") from None
    ref = METHODS[baseline]
    mine: PresetSettings = {**config, "overlong_shaping": shaping, "dynamic_sampling": dynamic, "loss_plugin": plugin}
    theirs = settings(ref)
    changes = tuple(sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k)))
    return Method(
        name,
        str(table.get("title") or f"{name} (user preset: {base_name} + {', '.join(sorted(settings_table))})"),
        arxiv,
        config,
        claim,
        baseline=baseline if baseline != name else "",
        changes=changes,
        overlong_shaping=shaping,
        dynamic_sampling=dynamic,
        loss_plugin=plugin,
        levers=base.levers if baseline == baseline_of(base) else (),  # the same change against the same baseline
        notes=f"User preset from radar.toml: {base_name} with "
        + ", ".join(f"{k} = {v!r}" for k, v in sorted(settings_table.items())),
        deviations=base.deviations,
    )


def user_presets(tables: Any) -> list[Method]:
    """Validate every ``[[repro.presets]]`` table (names unique, none a built-in's)."""
    if not isinstance(tables, list | tuple):
        raise ReproError("[repro] presets must be an array of tables: [[repro.presets]]")
    out: list[Method] = []
    for table in tables:
        method = user_preset(table)
        if any(m.name == method.name for m in out):
            raise ReproError(f"[[repro.presets]] {method.name!r} is defined twice; keep one")
        out.append(method)
    return out


BUILTIN = catalog()  # the built-in presets alone (what a run without user presets can name)
