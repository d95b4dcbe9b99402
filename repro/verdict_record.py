"""A stored verdict as its readers see it (``radar repro list/show``, the adoption rule, the dashboard, the report
through the app's summary): ``RunVerdict`` and its parts, decoded by msgspec from the verdict document
repro/verdict.py builds (result_shapes ``Verdict``), validated where it is read.

Every part has defaults, so records written by an older radar (a verdict with only ``overall`` and ``summary``)
read back with empty parts: ``RunVerdict.calibrated`` is False for records written before verdicts carried their
tests, and ``evidence_class`` is "" for records written before verdicts carried one: neither drives an "adopt".
``RunVerdict.read`` decodes each part on its own (summary, metrics, claim, seed noise, evidence and its power,
each arm's rates, aa): a part that is missing, null or of the wrong shape reads as empty and the rest are kept, as
the reader before msgspec did; a null field reads as its default; a number is read as an int or a float where it
is integral (``n: 5.0``). The metrics are one part (the Holm family the label and ``calibrated`` come from): one bad
metric empties them all. Only a document without a string ``overall`` reads as no verdict. ``SeedNoise`` is the
one type of a run's seed noise: repro/verdict.py builds it, the stored document holds it. No torch, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, is_dataclass
from typing import TypeVar

import msgspec

VERDICT_LABELS = ("better", "worse", "mixed", "no clear difference", "too few seeds")
EVIDENCE_CLASSES = ("pipeline check", "evidence", "underpowered")

T = TypeVar("T")
Rate = float | None
# An arm's lever rates (repro/mechanisms.py): rate name -> mean over seed pairs, and "per_seed": {pair: {rate: v}}
ArmRates = dict[str, Rate | dict[str, dict[str, Rate]]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Calibration:
    """The matching A/A run a verdict quotes (repro/adoption.py ``calibration_for``), stored in its seed noise.
    Read back from a record written before calibrations carried the A/A run's label (30 Nov), ``overall`` is ""
    and ``seeds`` may be None."""

    run: str
    method: str
    seeds: int | None = None
    sd_difference: float
    overall: str = ""


def decode(value: object, kind: type[T]) -> T | None:
    """``value`` (parsed JSON, or a document as built) as a ``kind``, or None when it is not one (an older or
    damaged record). Lenient as the reader before msgspec was: a null field of a record (a Struct or dataclass)
    reads as absent (its default), and an integral float reads as an int (``strict=False``). A part of a document as
    built (a Struct or dataclass) reads as it would be stored."""
    if isinstance(value, msgspec.Struct) or (is_dataclass(value) and not isinstance(value, type)):
        value = msgspec.to_builtins(value)
    if isinstance(value, dict) and isinstance(kind, type) and (issubclass(kind, msgspec.Struct) or is_dataclass(kind)):
        value = {k: v for k, v in value.items() if v is not None}
    try:
        return msgspec.convert(value, kind, from_attributes=True, strict=False)
    except msgspec.ValidationError:
        return None


class MetricTest(msgspec.Struct, frozen=True):
    """One tested metric of a verdict (the document's ``metrics[name]``): the test, its sample size, effect,
    interval and p values. ``name`` is the key it is stored under."""

    title: str = ""
    test: str = ""
    n: int = 0
    effect: float | None = None  # method minus baseline (a share: 0.05 = 5 points)
    interval: tuple[float | None, float | None] = (None, None)
    p: float | None = None
    p_adjusted: float | None = None
    label: str = ""
    method_mean: float | None = None
    baseline_mean: float | None = None
    name: str = ""


class SeedNoise(msgspec.Struct, frozen=True):
    """Seed-to-seed spread of the primary held-out score (repro/verdict.py ``seed_noise``); ``sd_differences``
    per verdict metric; ``calibration`` is the latest matching A/A run's."""

    metric: str = ""
    sd_method: float | None = None
    sd_baseline: float | None = None
    sd_difference: float | None = None
    sd_differences: dict[str, float | None] = {}
    n: int = 0
    calibration: Calibration | None = None


class Power(msgspec.Struct, frozen=True):
    """What a run could detect, fixed before it trained: seed noise (sd of the paired differences of the primary
    score, and where it came from), the minimum detectable effect at the run's seed pairs (80 % power, the
    verdict's own test), the effect asked for and the seed pairs it needs (repro/power.py ``plan`` as stored)."""

    seeds: int
    sd_difference: float | None = None
    noise_source: str = ""  # "A/A run ID", "run ID (stored seed noise)", "assumed: ..." or "" (unknown)
    mde: float | None = None  # a share: 0.035 = 3.5 points
    effect: float = 0.05  # the effect the run should be able to find (a share)
    seeds_needed: int | None = None  # seed pairs for ``effect`` at 80 % power (None: unknown noise or > the maximum)
    power_at_effect: float | None = None

    @property
    def underpowered(self) -> bool:
        return self.mde is not None and self.mde > self.effect

    @property
    def text(self) -> str:
        """One line: 'MDE 3.6 pts at 5 seed pairs (seed noise sd 2.0 pts, A/A run X); +5.0 pts needs 3 pairs'."""
        if self.seeds < 2:
            return f"no test at {self.seeds} seed pair: the verdict's paired test needs at least 2 (run --seeds 5)"
        if self.mde is None or self.sd_difference is None:
            return (
                f"power unknown at {self.seeds} seed pairs: no seed noise measured for this model and task "
                f"(run an A/A first: --method grpo --baseline grpo)"
            )
        needed = f"{self.seeds_needed} pairs" if self.seeds_needed is not None else "more than 20 pairs (the maximum)"
        return (
            f"minimum detectable effect {100 * self.mde:.1f} pts at {self.seeds} seed pairs (80% power; seed noise "
            f"sd {100 * self.sd_difference:.1f} pts, {self.noise_source}); +{100 * self.effect:.1f} pts needs {needed}"
        )


class PowerPlan(Power, frozen=True):
    """repro/power.py ``plan``: a ``Power`` with the test it assumes, as the verdict's evidence stores it (a run's
    params keep the ``Power`` it was submitted with)."""

    alpha: float = 0.05
    power: float = 0.8
    test: str = ""


class ArmMechanisms(msgspec.Struct, frozen=True):
    """Whether the levers a method is about engaged in one arm: rates over its steps and seeds (repro/mechanisms.py
    ``mechanisms``). None where the arm's trainer does not log it (e.g. clip fractions of a plug-in loss). The rates
    an arm's plug-ins logged are stored beside these under their own names: ``plugin_rates`` holds them."""

    overlong_rate: float | None = None  # completions the soft overlong punishment touched
    clip_low: float | None = None  # tokens clipped at the lower bound (1 - epsilon)
    clip_high: float | None = None  # tokens clipped at the upper bound (1 + epsilon_high)
    clip_region: float | None = None  # tokens (GSPO/LUSPO: sequences) outside the trust region
    capped_share: float | None = None  # CISPO: importance weights at the cap
    zero_var_share: float | None = None  # groups whose answers were all right or all wrong, as generated
    zero_var_trained: float | None = None  # ... in the batch trained on (after dynamic sampling's filter and refill)
    resampled_groups: float | None = None  # groups re-generated per generation batch (dynamic sampling)
    length: float | None = None  # mean completion length (tokens)
    length_slope: float | None = None  # tokens per 100 steps
    correct_length: float | None = None
    incorrect_length: float | None = None
    length_range: float | None = None  # mean of (longest - shortest completion) per batch
    plugin_rates: dict[str, float] = {}  # filled from the stored rates that are not fields (see ``arm_mechanisms``)


def arm_mechanisms(rates: ArmRates) -> ArmMechanisms | None:
    """An arm's stored rates: the fields, and every other rate with a value (not ``per_seed``) as a plug-in's."""
    fixed = decode(rates, ArmMechanisms)
    plugins = {k: v for k, v in rates.items() if k not in ArmMechanisms.__struct_fields__ and isinstance(v, float)}
    return None if fixed is None else msgspec.structs.replace(fixed, plugin_rates=plugins)


class ClaimPart(msgspec.Struct, frozen=True):
    claim: str = ""
    status: str = ""  # holds / refuted / inconclusive / not testable here / not checked
    reason: str = ""  # why a claim is not testable here (the lever's measured rate) or not checked


class EvidencePart(msgspec.Struct, frozen=True):
    kind: str = msgspec.field(default="", name="class")  # one of EVIDENCE_CLASSES
    reason: str = ""
    power: Power | None = None


class RunVerdict(msgspec.Struct, frozen=True):
    """The stored verdict document, typed: the overall label, its metrics' tests, the claim, seed noise, evidence
    class and power, and each arm's mechanism rates (read with ``RunVerdict.read``)."""

    overall: str  # one of VERDICT_LABELS
    summary: str = ""
    tests: dict[str, MetricTest] = msgspec.field(default_factory=dict, name="metrics")
    claim_part: ClaimPart | None = msgspec.field(default=None, name="claim")
    seed_noise: SeedNoise | None = None
    evidence: EvidencePart | None = None
    rates: dict[str, ArmRates] = msgspec.field(default_factory=dict, name="mechanisms")
    aa: bool = False  # an A/A run (method == baseline): a calibration, never a result about a method

    @classmethod
    def read(cls, doc: object) -> RunVerdict | None:
        """The stored verdict document (result["verdict"]), each part decoded on its own (a bad or missing part
        reads as empty, the others are kept); None for a run without one (no string ``overall``)."""
        if isinstance(doc, msgspec.Struct):  # a document as built reads as it is stored
            doc = msgspec.to_builtins(doc)
        if not isinstance(doc, dict) or not isinstance(overall := doc.get("overall"), str):
            return None
        rates = doc.get("mechanisms")
        return cls(
            overall=overall,
            summary=decode(doc.get("summary"), str) or "",
            tests=_metrics(doc.get("metrics")),
            claim_part=decode(doc.get("claim"), ClaimPart),
            seed_noise=_seed_noise(doc.get("seed_noise")),
            evidence=_evidence(doc.get("evidence")),
            rates={
                arm: r
                for arm, raw in (rates.items() if isinstance(rates, dict) else ())
                if (r := decode(raw, ArmRates)) is not None
            },
            aa=decode(doc.get("aa"), bool) or False,
        )

    @property
    def metrics(self) -> tuple[MetricTest, ...]:
        return tuple(msgspec.structs.replace(t, name=k, title=t.title or k) for k, t in self.tests.items())

    @property
    def claim(self) -> str:
        return self.claim_part.claim if self.claim_part else ""

    @property
    def claim_status(self) -> str:
        return self.claim_part.status if self.claim_part else ""

    @property
    def claim_reason(self) -> str:
        return self.claim_part.reason if self.claim_part else ""

    @property
    def calibrated(self) -> bool:
        """True when the verdict comes from the paired, Holm-corrected tests."""
        tests = self.tests.values()
        return bool(tests) and all(t.p_adjusted is not None or t.n < 2 for t in tests)

    @property
    def evidence_class(self) -> str:
        """One of EVIDENCE_CLASSES; "" for records written before verdicts carried one."""
        return self.evidence.kind if self.evidence else ""

    @property
    def evidence_reason(self) -> str:
        return self.evidence.reason if self.evidence else ""

    @property
    def power(self) -> Power | None:
        return self.evidence.power if self.evidence else None

    @property
    def mechanisms(self) -> dict[str, ArmMechanisms]:
        """Per arm ("method", "baseline"): the lever rates."""
        return {arm: m for arm, rates in self.rates.items() if (m := arm_mechanisms(rates)) is not None}

    @property
    def decision_p(self) -> float | None:
        """The smallest Holm-adjusted p of the label's metrics (the run's global test)."""
        ps = [t.p_adjusted for t in self.tests.values() if t.p_adjusted is not None]
        return min(ps) if ps else None


def _metrics(raw: object) -> dict[str, MetricTest]:
    """The metrics part: every metric, or none when one does not decode. An interval stored as null, [] or one
    bound reads with the missing bounds None."""
    if not isinstance(raw, dict):
        return {}
    tests: dict[str, MetricTest] = {}
    for name, metric in raw.items():
        if isinstance(metric, dict) and isinstance(interval := metric.get("interval"), list | tuple | None):
            metric = metric | {"interval": ([*(interval or ()), None, None])[:2]}
        if (test := decode(metric, MetricTest)) is None:
            return {}
        tests[name] = test
    return tests


def _seed_noise(raw: object) -> SeedNoise | None:
    """The seed-noise part; its calibration decoded on its own (none when it does not decode), one stored before
    calibrations carried the A/A run's label with ``overall`` "" (repro/runner.py of 30 Nov)."""
    return _with_part(raw, SeedNoise, "calibration", Calibration)


def _evidence(raw: object) -> EvidencePart | None:
    """The evidence part; its power decoded on its own (none when it does not decode: e.g. stored without
    ``seeds``), its class and reason kept."""
    return _with_part(raw, EvidencePart, "power", Power)


S = TypeVar("S", bound=msgspec.Struct)


def _with_part(raw: object, kind: type[S], key: str, part: type) -> S | None:
    """``raw`` as a ``kind``, its ``key`` decoded on its own as a ``part`` (None when that does not decode, the rest
    kept); a document as built (not a dict) decodes whole."""
    if not isinstance(raw, dict):
        return decode(raw, kind)
    whole = decode({k: v for k, v in raw.items() if k != key}, kind)
    return None if whole is None else msgspec.structs.replace(whole, **{key: decode(raw.get(key), part)})


class ArmProfile(msgspec.Struct, frozen=True):
    """One arm's efficiency profile (repro/profile.py), the mean per optimiser step over its seeds."""

    device: str = ""
    step_s: float | None = None
    generate_s: float | None = None
    reward_s: float | None = None
    ref_s: float | None = None
    train_s: float | None = None
    tokens_per_s: float | None = None
    peak_mem_gb: float | None = None
    peak_mem_kind: str = ""
    seeds: int = 0
