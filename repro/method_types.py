"""What a method preset is: its claim, the levers the claim needs, its TRL settings and plug-ins (no torch).

A preset (``Method``) maps onto TRL's ``GRPOConfig`` (``config``) and names the plug-ins it fills the plug-in points
with (``advantage``, ``loss_plugin`` for the ratio/loss point, ``batch``; repro/plugins/), with their settings
(``plugin_args``). The built-in presets are data (repro/presets_2024.toml and presets_2025.toml, read by
repro/builtin.py), radar.toml's in repro/user_presets.py; repro/methods.py holds the ``Catalog`` value that joins
them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from radar.repro.errors import ReproError


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class Lever:
    """What a claim needs to have acted: ``metric`` (a field of repro.verdict_record.ArmMechanisms) of ``arm`` at least
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
CLIP_HIGH = Lever(
    "clip_high", "baseline", TOKEN_LEVER, "clip-higher releases the tokens the baseline clips above 1 + epsilon"
)
CLIPPED = Lever(
    "clip_region", "baseline", TOKEN_LEVER, "the change acts on the tokens the baseline's hard clip cuts off"
)
LENGTHS = Lever(
    "length_range", "baseline", LENGTH_LEVER, "a length-normalisation change acts only where lengths in a batch differ"
)


class TrlSettings(TypedDict, total=False):
    """The GRPOConfig fields a preset sets (``Method.config``): the ``[[repro.presets]]`` settings but the three
    that are not TRL's (overlong_shaping, dynamic_sampling and the plug-ins; a test keeps them equal)."""

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
    off_policy_mask_threshold: float
    multi_objective_aggregation: str


PluginArgs = dict[str, dict[str, float]]  # plug-in point -> setting -> value (only what differs from the defaults)


class PresetSettings(TrlSettings, total=False):
    """Everything a preset sets (``settings``): its GRPOConfig fields plus reward shaping, sampling and plug-ins."""

    overlong_shaping: bool
    dynamic_sampling: bool
    loss_plugin: str
    advantage: str
    batch: str
    plugin_args: PluginArgs


@dataclass(frozen=True, slots=True)
class MethodSummary:
    """A preset as `radar repro methods` lists it (``describe``; its --json is this as msgspec encodes it)."""

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
    advantage: str
    batch: str
    plugins: dict[str, str]  # plug-in point -> the plug-in's name, for the points the preset fills
    plugin_args: PluginArgs
    card: str  # the name the method's papers (and the radar's cards) use
    equation: str
    notes: str
    deviations: str


@dataclass(frozen=True, slots=True)
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
    loss_plugin: str = ""  # the ratio/loss plug-in (repro/plugins); "" = TRL's own loss
    levers: tuple[Lever, ...] = ()  # what the claim needs to have engaged (else "not testable here")
    notes: str = ""
    deviations: str = ""  # how this preset departs from its paper
    hparams_from_paper: dict[str, int | float | str | list[float]] = field(default_factory=dict)  # as the paper says
    advantage: str = ""  # the advantage plug-in; "" = TRL's group normalisation (scale_rewards)
    batch: str = ""  # the batch plug-in; "" = every group trains (or DAPO's filter with dynamic_sampling)
    plugin_args: PluginArgs = field(default_factory=dict)  # plug-in point -> settings that differ from the defaults
    card: str = ""  # the name papers use ("QAE"): the radar's cards of that name get this preset
    equation: str = ""  # the equation(s) of the paper the preset implements, cited by number

    def plugins(self) -> dict[str, str]:
        """The plug-in points this preset fills: point -> plug-in name."""
        named = {"advantage": self.advantage, "ratio/loss": self.loss_plugin, "batch": self.batch}
        return {point: name for point, name in named.items() if name}


HELDOUT_MARGIN = 0.02  # "not worse" means within 2 points of held-out accuracy (a non-inferiority margin)
HELD_OUT_NOT_WORSE = Claim(
    "held-out greedy accuracy stays within 2 points of the baseline's",
    "heldout_greedy",
    "not_lower",
    "end",
    HELDOUT_MARGIN,
)
GRPO_SETTINGS: TrlSettings = {"loss_type": "grpo", "beta": 0.0, "scale_rewards": "group", "epsilon": 0.2}


def settings(method: Method) -> PresetSettings:
    """Everything a preset sets: its GRPOConfig fields plus the reward shaping, sampling and plug-ins. The advantage
    and batch plug-ins and their settings appear only when set, so a preset without them has the settings (and a
    run's dedupe key, app/reproductions.py) it had before those points existed."""
    out: PresetSettings = {
        **method.config,
        "overlong_shaping": method.overlong_shaping,
        "dynamic_sampling": method.dynamic_sampling,
        "loss_plugin": method.loss_plugin,
    }
    return out | plugin_fields(method.advantage, method.batch, method.plugin_args)


def plugin_fields(advantage: str, batch: str, plugin_args: PluginArgs) -> PresetSettings:
    """The advantage and batch plug-ins and the plug-ins' settings, where set."""
    out: PresetSettings = {}
    if advantage:
        out["advantage"] = advantage
    if batch:
        out["batch"] = batch
    if args := {point: dict(a) for point, a in sorted(plugin_args.items()) if a}:
        out["plugin_args"] = args
    return out


def baseline_of(method: Method) -> str:
    """The preset a method is compared with by default (its claim's baseline); grpo for grpo itself."""
    return method.baseline or method.name


def describe(method: Method, source: str = "built-in", plugin_args: PluginArgs | None = None) -> MethodSummary:
    """A JSON-ready summary for `radar repro methods`; ``plugin_args``: its plug-ins' settings (default: the ones
    the preset sets)."""
    return MethodSummary(
        name=method.name,
        source=source,
        title=method.title,
        arxiv=method.arxiv,
        baseline=method.baseline,
        changes=list(method.changes),
        config=method.config,
        claim=method.claim.text + (f"; {method.claim.also.text}" if method.claim.also else ""),
        levers=[f"{lv.arm} {lv.metric} >= {lv.minimum:g}: {lv.what}" for lv in method.levers],
        overlong_shaping=method.overlong_shaping,
        dynamic_sampling=method.dynamic_sampling,
        loss_plugin=method.loss_plugin,
        advantage=method.advantage,
        batch=method.batch,
        plugins=method.plugins(),
        plugin_args={point: dict(args) for point, args in method.plugin_args.items()}
        if plugin_args is None
        else plugin_args,
        card=method.card,
        equation=method.equation,
        notes=method.notes,
        deviations=method.deviations,
    )
