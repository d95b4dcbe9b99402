"""The JSON shapes a reproduction run writes (metrics.jsonl lines, arm summaries, run.json, verdict.json and the
runs table's result), typed for the code that builds them.

They are TypedDicts, not dataclasses, because they are the stored JSON itself: the runs table, run.json and
verdict.json hold exactly these objects. The shapes of a run's result (the verdict document, metrics,
profiles, overlap) are in repro/result_shapes.py, which readers of runs import without the rest of repro (no
torch); they are re-exported here beside the shapes only repro reads. No torch, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Required, TypedDict

from radar.repro.method_types import Method
from radar.repro.result_shapes import (
    ClaimCondition,
    ClaimResult,
    ClaimTest,
    Efficiency,
    Evidence,
    LeverCheck,
    Overlap,
    OverlapPart,
    PlannedPower,
    PowerPlan,
    Profile,
    ResultModel,
    ResultRecord,
    RunMetrics,
    RunResult,
    Timing,
    Verdict,
    VerdictMetric,
)
from radar.repro.verdict_record import ArmRates, Calibration, Rate, SeedNoise

__all__ = [  # this module's shapes and the result's (repro/result_shapes.py)
    "ArmRates",
    "ArmRun",
    "ArmSummary",
    "Calibration",
    "ClaimCondition",
    "ClaimResult",
    "ClaimTest",
    "Efficiency",
    "Evidence",
    "Example",
    "GrpoConfigJson",
    "LeverCheck",
    "ModelFingerprint",
    "Overlap",
    "OverlapPart",
    "PlannedPower",
    "PowerPlan",
    "Profile",
    "Provenance",
    "Rate",
    "ResultModel",
    "ResultRecord",
    "RunCommon",
    "RunJson",
    "RunMetrics",
    "RunPolicy",
    "RunResult",
    "Scalar",
    "SeedNoise",
    "SftOverlap",
    "StepRecord",
    "Timing",
    "Verdict",
    "VerdictMetric",
    "WarmStart",
]

Scalar = str | int | float | bool | None  # a JSON scalar

# One training step of one (arm, seed pair): "step", "time", the optional "heldout" curve point and the
# normalised TRL metrics (repro/trainer.py METRIC_KEYS); one line of metrics.jsonl.
StepRecord = dict[str, float]


class Example(TypedDict, total=False):
    """One problem: a toy task's (repro/tasks.py) or a row of a math data set (repro/checkpoint.py)."""

    prompt: Required[str]
    answer: Required[str]  # the reference answer (a math row: its final answer)
    sft_answer: str  # addition-work: the SFT target, the bare sum or its working
    numbers: list[int]  # countdown: the numbers to use
    target: int  # countdown: the value to reach
    line: int  # a data set row: its line in the JSONL file
    part: str  # a data set row: "rl" or "eval"


@dataclass(frozen=True, slots=True)
class ArmRun:
    """One (arm, seed pair) as the verdict, its mechanisms and the plots read it (in memory: the worker builds it from
    the arm's summary and step records)."""

    records: list[StepRecord] = field(default_factory=list)
    final: dict[str, float] = field(default_factory=dict)  # held-out scores at the end: heldout_greedy, ...


@dataclass(frozen=True, slots=True)
class ArmSummary:
    """One trained (arm, seed pair) (repro/trainer.py ``_arm_result``): what its arm process hands the worker."""

    steps: int
    seconds: float
    steps_per_s: float | None
    eval_seconds: float
    final: dict[str, float]
    eval_accuracy: float
    profile: Profile
    parameters: int


class Provenance(TypedDict):
    """What code and packages a run ran on (run.json, and the result's ``record``)."""

    git_commit: str
    repro_dirty: bool
    python: str
    platform: str
    packages: dict[str, str | None]


class ModelFingerprint(TypedDict):
    """What identifies a checkpoint in a run record (repro/checkpoint.py ``model_fingerprint``)."""

    path: str
    config_sha256: str
    model_type: str | None
    weights: dict[str, int]  # weight file -> bytes
    chat_template: bool


class SftOverlap(TypedDict):
    """How many problems of one held-out set a warm start's SFT data held (by canonical key)."""

    prompts: int
    in_sft: int


class WarmStart(TypedDict, total=False):
    """A toy task's SFT warm start as its cache folder records it (warm_start.json, repro/policy.py
    ``warm_start``); a cache written before overlaps were measured lacks ``eval_overlap``."""

    task: str
    size: dict[str, str | int | float]  # the PolicySize it was trained at (dataclasses.asdict)
    sft_steps: int
    sampled_accuracy: float
    parameters: int
    seconds: float
    cache_version: int
    seed: int
    eval_overlap: dict[str, SftOverlap]  # held-out set -> overlap with the SFT data


class RunPolicy(WarmStart, total=False):
    """Where one seed pair's arms start (run.json ``policies``): a toy run's warm start (its folder and
    warm_start.json), or a checkpoint run's checkpoint itself."""

    pair: Required[int]
    path: Required[str]
    checkpoint: bool


class GrpoConfigJson(TypedDict, total=False):
    """An arm's GRPOConfig in run.json (``GRPOConfig.to_dict()``, which holds every TRL field): the fields the
    exports read or carry over (repro/export.py ``_GRPO_FIELDS``; a test keeps the two equal)."""

    max_steps: int
    learning_rate: float
    lr_scheduler_type: str
    warmup_steps: float
    per_device_train_batch_size: int
    gradient_accumulation_steps: int
    num_generations: int
    num_iterations: int
    max_completion_length: int
    temperature: float
    top_p: float
    max_grad_norm: float
    logging_steps: float
    save_strategy: str
    report_to: str | list[str]
    gradient_checkpointing: bool
    bf16: bool
    beta: float
    epsilon: float
    epsilon_high: float | None
    loss_type: str
    scale_rewards: str
    importance_sampling_level: str
    mask_truncated_completions: bool
    sapo_temperature_pos: float
    sapo_temperature_neg: float
    model_init_kwargs: dict[str, str] | None
    off_policy_mask_threshold: float | None
    top_entropy_quantile: float
    multi_objective_aggregation: str


class RunCommon(Provenance):
    """What every run record holds (repro/record.py ``_common``): spec, schedule, seeds, arms, device, code."""

    spec: dict[str, str | int | bool]  # the RunSpec (dataclasses.asdict)
    device: str
    steps: int
    seeds: list[int]  # the seed pairs
    rl_seeds: dict[str, list[int]]  # arm -> RL seed per pair
    methods: dict[str, Method]  # arm -> its Method (msgspec writes its fields): run.json only, read by none
    cuda_device: str | None


class RunJson(RunCommon, total=False):
    """RUN_DIR/run.json, written before training (repro/record.py; a toy engine's seam writes fewer keys): the
    record the worker's arms, the exports and the result's provenance read."""

    id: Required[str]
    policies: Required[list[RunPolicy]]  # one per seed pair
    policy: Required[RunPolicy]  # the first pair's
    eval_overlap: Required[Overlap]
    configs: dict[str, GrpoConfigJson]  # arm -> GRPOConfig
    overlong_buffer: int
    torch_threads: int
    engine: str  # a toy run: the engine module that trained it
    model: ModelFingerprint  # a checkpoint run
    dataset: dict[str, str | int]  # a checkpoint run: repro/checkpoint.py MathDataset.summary
    lora: bool  # a checkpoint run
