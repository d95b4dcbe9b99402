"""The JSON of a run's result as the runs table stores it: the verdict document (repro/verdict.py), its
metrics, efficiency profiles and measured overlap (repro/execute.py), typed for the code that builds them. Readers
decode the verdict typed (repro/verdict_record.py ``RunVerdict``, ``Power``, ``ArmMechanisms``, ``ArmProfile``,
and ``SeedNoise``, the one type of a run's seed noise, which the verdict document holds); repro/shapes.py
re-exports these beside the shapes only repro writes.

``StoredResult`` is the result column as read: a finished run's ``RunResult``, a failed run's log, or
``{}``. Records written by an older radar may lack keys these shapes declare: the store's readers check
before they use one. No I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NotRequired, TypeAlias, TypedDict

import msgspec

from radar.repro.verdict_record import ArmRates, PowerPlan, SeedNoise

PlannedPower = dict[str, float | str | None]  # ``Power`` as a run was submitted with it (msgspec.structs.asdict)


class Profile(TypedDict, total=False):
    """An arm's efficiency profile per optimiser step (repro/profile.py ``StepProfiler.summary``; the mean over
    an arm's seeds in ``mean_profile``, which adds ``seeds``; a checkpoint arm adds ``lora`` and ``vllm``)."""

    device: str
    steps: int
    warmup_excluded: int
    measured_steps: int
    first_step_s: float | None
    step_s: float
    step_s_median: float | None
    generate_s: float
    reward_s: float
    ref_s: float
    train_s: float
    generated_tokens: int
    trained_tokens: int
    tokens_per_s: float | None
    gen_tokens_per_s: float | None
    train_tokens_per_s: float | None
    peak_mem_gb: float
    peak_mem_kind: str
    ref_model: str
    ref_mem_gb: float
    timing: str
    lora: bool
    vllm: bool
    seeds: int
    per_seed: dict[str, Profile]  # an arm's mean profile in a run's result: each seed pair's own


# repro/power.py ``classify``: the class of evidence a run supports ("pipeline check", "evidence",
# "underpowered"), why, and its power; the verdict adds the plan made when the run was submitted.
Evidence = TypedDict(
    "Evidence", {"class": str, "reason": str, "power": PowerPlan, "planned": NotRequired["PlannedPower | None"]}
)


class VerdictMetric(msgspec.Struct, frozen=True, kw_only=True):
    """One verdict metric's paired test (verdict.json ``metrics``, as msgspec writes it; verdict_record.MetricTest
    reads it back)."""

    title: str
    test: str
    n: int
    effect: float | None
    interval: list[float | None]
    confidence: float
    p: float | None
    p_adjusted: float | None
    label: str
    method_mean: float | None
    baseline_mean: float | None
    method: list[float | None]
    baseline: list[float | None]
    seeds: list[int]


class ClaimTest(msgspec.Struct, frozen=True, kw_only=True):
    """The test of one condition of a method's claim (repro/verdict.py ``check_claim``); ``p_adjusted`` is set (and
    written, last) once Holm has run over the claim's conditions."""

    name: str
    metric: str
    window: str
    test: str
    n: int
    effect: float | None
    effect_scale: str  # "ratio" or "difference"
    interval: list[float | None]
    p: float | None
    method: list[float | None]
    baseline: list[float | None]
    seeds: list[int]
    p_adjusted: float | None | msgspec.UnsetType = msgspec.UNSET  # Holm over the claim's conditions


@dataclass(frozen=True, slots=True)
class ClaimCondition:
    """One condition of a claim, tested (repro/verdict.py ``check_claim``); stored as msgspec encodes it."""

    test: ClaimTest
    status: str


@dataclass(frozen=True, slots=True)
class LeverCheck:
    """Whether one of a method's levers (repro.methods.Lever) engaged (repro/mechanisms.py ``gate``): the lever,
    the rate measured (None: not logged) and whether it reached the minimum; stored as msgspec encodes it."""

    metric: str
    arm: str
    minimum: float
    measured: float | None
    engaged: bool
    what: str


class ClaimResult(msgspec.Struct, frozen=True, kw_only=True):
    """The verdict's claim: its test's status (and each condition's), or why it was not checked or is not testable
    here; what is unset is not written (a claim not checked: claim, status, reason)."""

    claim: str
    status: str  # holds / refuted / inconclusive / not testable here / not checked
    test: ClaimTest | msgspec.UnsetType = msgspec.UNSET
    conditions: list[ClaimCondition] | msgspec.UnsetType = msgspec.UNSET
    levers: list[LeverCheck] | msgspec.UnsetType = msgspec.UNSET
    tested_status: str | msgspec.UnsetType = msgspec.UNSET  # what the test alone said, when a lever did not engage
    reason: str | msgspec.UnsetType = msgspec.UNSET


class Efficiency(msgspec.Struct, frozen=True, kw_only=True):
    """Method vs baseline cost over the seed pairs with both profiles (repro/verdict.py ``efficiency``); without a
    pair only ``pairs`` (0) is set and written."""

    pairs: int
    step_ratio: float | None | msgspec.UnsetType = msgspec.UNSET
    step_ratio_interval: list[float | None] | None | msgspec.UnsetType = msgspec.UNSET
    step_ratio_range: list[float | None] | msgspec.UnsetType = msgspec.UNSET
    step_ratio_per_pair: list[float | None] | msgspec.UnsetType = msgspec.UNSET
    peak_mem_diff_gb: float | None | msgspec.UnsetType = msgspec.UNSET
    peak_mem_diff_range: list[float | None] | None | msgspec.UnsetType = msgspec.UNSET
    tokens_per_s_ratio: float | None | msgspec.UnsetType = msgspec.UNSET
    peak_mem_kind: str | msgspec.UnsetType = msgspec.UNSET
    device: str | msgspec.UnsetType = msgspec.UNSET
    method: dict[str, float | None] | msgspec.UnsetType = msgspec.UNSET
    baseline: dict[str, float | None] | msgspec.UnsetType = msgspec.UNSET
    text: str | msgspec.UnsetType = msgspec.UNSET  # last: built from the rest (verdict.efficiency_text)


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    """The verdict document as built (repro/verdict.py ``verdict``): verdict.json without its timing, and the runs
    table's result["verdict"], as msgspec writes it (verdict_record.RunVerdict reads it back)."""

    overall: str
    alpha: float
    min_effect: float
    primary: str
    metrics: dict[str, VerdictMetric]
    claim: ClaimResult
    seed_noise: SeedNoise
    aa: bool
    setup: str
    evidence: Evidence
    mechanisms: dict[str, ArmRates]
    efficiency: Efficiency | msgspec.UnsetType = msgspec.UNSET  # with the arms' profiles
    summary: str = ""  # last: built from the rest


class Timing(msgspec.Struct, frozen=True):
    """How long a run's parts took (repro/execute.py), before the verdict."""

    train_wall_s: float
    warm_start_seconds: float
    warm_start_cached: bool
    warm_start_sampled_accuracy: list[float | None]
    parallel_arms: int
    device: str


class RunMetrics(Timing, frozen=True):
    """The result's ``metrics`` (and verdict.json's ``timing``): the timing, then these."""

    time_to_verdict_s: float
    train_seconds: float
    steps_per_s: float | None  # per arm process
    steps_per_s_wall: float | None
    heldout: dict[str, dict[str, dict[str, float]]]  # arm -> seed pair -> final held-out scores
    final_heldout_greedy: dict[str, float | None]
    eval_seconds: float


@dataclass(frozen=True, slots=True)
class ResultModel:
    """What a run trained: the model in words, its parameter count (None: not recorded) and whether it is a toy."""

    name: str
    parameters: int | None
    toy: bool


@dataclass(frozen=True, slots=True)
class RunResult:
    """A finished run's result as repro/execute.py builds it; the runs table stores it as msgspec encodes it and
    reads it back as a ``StoredResult`` (records.RunRecord)."""

    verdict: Verdict
    metrics: RunMetrics
    plots: list[str]
    folder: str
    model: ResultModel
    profile: dict[str, Profile]  # per arm: the mean over its seed pairs, with ``per_seed``
    eval_overlap: Overlap | None = None  # set by the runner before the result is stored
    record: ResultRecord | None = None


class OverlapPart(msgspec.Struct, frozen=True, kw_only=True):
    """One held-out set's measured overlap with the training data (``distinct``: toy tasks only)."""

    prompts: int
    distinct: int | msgspec.UnsetType = msgspec.UNSET
    in_sft: int | None = None  # None: a warm start recorded before it was measured
    in_rl: int = 0
    share: float | None = None


class Overlap(msgspec.Struct, frozen=True, kw_only=True):
    """Measured share of held-out problems that occur in the training data (run.json, the result); a stored one is
    decoded where it is read (records.RunRecord.eval_overlap)."""

    by: str  # the canonical key problems are compared by
    eval: OverlapPart
    ood: OverlapPart | msgspec.UnsetType = msgspec.UNSET  # toy tasks: one difficulty up
    share: float | None = None


@dataclass(frozen=True, slots=True)
class ResultRecord:
    """The result's ``record``: where a run ran and on what code."""

    device: str
    cuda_device: str | None
    seeds: list[int]
    git_commit: str
    repro_dirty: bool
    python: str
    packages: dict[str, str | None]


Json: TypeAlias = str | int | float | bool | None | list["Json"] | dict[str, "Json"]
JsonObject: TypeAlias = dict[str, Json]  # a stored part as read, kept as stored (the CLI prints it as it is)


class StoredResult(TypedDict, total=False):
    """The runs table's result column as read: a finished run's ``RunResult`` as stored (its metrics, model and
    record as stored: readers print them as they are), else what a failed or reaped run recorded (its log and the
    log's tail), else nothing."""

    verdict: JsonObject  # RunVerdict.read decodes it
    metrics: JsonObject
    plots: list[str]
    folder: str
    model: JsonObject
    profile: dict[str, Profile]
    eval_overlap: JsonObject
    record: JsonObject
    log: str  # a failed run: its log file
    log_tail: str  # a reaped run: the last lines of its log
