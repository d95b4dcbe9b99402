"""A reproduction run as its readers see it (``radar repro list/show``, the adoption rule, the dashboard, and the
report through the app's summary): ``RunRecord``, one row of the runs table (repro/runs_table.py reads and writes
them), with what it stores as typed JSON: its params (``RunParams``, with the radar.toml presets it was submitted
with, ``UserPreset``) and its result (result_shapes ``StoredResult``, whose verdict ``RunVerdict`` reads typed).
``RunAdoption`` is the adoption rule's decision about one run (repro/adoption.py). No torch, no I/O: reading runs
never imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Required, TypedDict

from radar.repro.result_shapes import JsonObject, Overlap, PlannedPower, StoredResult
from radar.repro.verdict_record import ArmProfile, RunVerdict, decode

RUN_STATUSES = ("queued", "running", "done", "failed", "cancelled")


class PresetCheck(TypedDict, total=False):
    """A user preset's claim check (``check = {metric = ..., direction = ...}``, repro/methods.py ``Claim``)."""

    metric: str
    direction: str
    window: str
    margin: float
    min_effect: float


class UserPreset(TypedDict, total=False):
    """One radar.toml ``[[repro.presets]]`` table as validated (repro/methods.py ``user_preset``, which refuses
    any other key or type): a run's params carry its presets' tables so that its worker rebuilds the catalog."""

    name: Required[str]
    base: Required[str]  # the built-in preset it changes
    settings: Required[dict[str, str | float | bool]]  # the TRL settings that differ from the base's
    arxiv: str
    claim: str
    title: str
    baseline: str
    check: PresetCheck


class RunParams(TypedDict, total=False):
    """A run's params as the runs table stores them (JSON): its spec (repro/spec.py ``RunSpec``), its folders and
    inputs (repro), and what the app records about the request. Older records may lack any of them."""

    method: str
    baseline: str
    task: str
    preset: str
    seeds: int
    steps: int  # 0: the preset's default (``total_steps`` is what ran)
    device: str
    model: str
    dataset: str
    lora: bool
    first_pair: int
    total_steps: int
    folder: str
    policy_cache: str
    user_presets: list[UserPreset]  # radar.toml [[repro.presets]] tables, as read: the worker's catalog
    model_path: str
    dataset_path: str
    dataset_sha256: str
    weights: int  # bytes of the checkpoint's weight files
    experiment: str
    dedupe_key: str
    look: int
    power: PlannedPower
    queued_by: str
    queued_for: str


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One run as readers see it, a row of the runs table: parameters, life cycle, and (when done) its result.

    ``params`` and ``result`` stay the JSON they were stored as (typed: ``RunParams``, ``StoredResult``); the
    verdict is read from the result once, typed (``RunVerdict``; None for a run without one)."""

    id: str
    kind: str
    status: str
    params: RunParams = field(default_factory=lambda: RunParams())
    result: StoredResult = field(default_factory=lambda: StoredResult())  # the stored result as read
    progress: float = 0.0
    pid: int | None = None
    error: str = ""
    created_at: str = ""
    started_at: str = ""
    finished_at: str = ""
    heartbeat_at: str = ""
    cancel_requested: bool = False
    verdict: RunVerdict | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", RunVerdict.read(self.result.get("verdict")))

    @property
    def metrics(self) -> JsonObject | None:
        """None for a run without them (not finished, or an older record)."""
        return self.result.get("metrics") or None

    @property
    def plots(self) -> tuple[str, ...]:
        return tuple(self.result.get("plots") or ())

    @property
    def folder(self) -> str:
        return str(self.result.get("folder") or "")

    @property
    def eval_overlap(self) -> Overlap | None:
        """The measured overlap, decoded (None for a run without one, or one that does not read)."""
        return decode(self.result.get("eval_overlap"), Overlap)

    @property
    def method(self) -> str:
        return str(self.params.get("method", ""))

    @property
    def baseline(self) -> str:
        return str(self.params.get("baseline", ""))

    @property
    def task(self) -> str:
        return str(self.params.get("task", ""))

    @property
    def steps(self) -> int:
        return int(self.params.get("total_steps") or self.params.get("steps") or 0)

    @property
    def seeds(self) -> int:
        return int(self.params.get("seeds") or 0)

    @property
    def active(self) -> bool:
        return self.status in ("queued", "running")

    @property
    def model(self) -> str:
        """What was trained: the checkpoint's folder name, or the toy tasks' tiny character-level policy."""
        return model_text(self.params)

    @property
    def parameters(self) -> int | None:
        """The policy's parameter count (recorded when the run trained), else None."""
        model = self.result.get("model")
        raw = model.get("parameters") if isinstance(model, dict) else None
        return int(raw) if isinstance(raw, int) and not isinstance(raw, bool) else None

    @property
    def setup(self) -> str:
        """Model, parameters, task, steps and seed pairs: what every line about a run names."""
        return setup_text(self.params, self.parameters)

    @property
    def experiment(self) -> str:
        """The experiment this run is a look at (all its settings but the seed pairs), "" for older records."""
        return str(self.params.get("experiment") or "")

    @property
    def profiles(self) -> dict[str, ArmProfile]:
        """Each arm's efficiency profile ("method", "baseline"); empty for runs recorded before profiles."""
        raw = self.result.get("profile")
        if not isinstance(raw, dict):
            return {}
        return {arm: p for arm, raw_p in raw.items() if (p := decode(raw_p, ArmProfile)) is not None}

    @property
    def efficiency_text(self) -> str:
        """The verdict's paired efficiency comparison as a phrase ("8% slower per step (...)"), or ""."""
        verdict = self.result.get("verdict")
        eff = verdict.get("efficiency") if isinstance(verdict, dict) else None
        return str(eff.get("text", "")) if isinstance(eff, dict) else ""


def model_text(params: RunParams) -> str:
    """A run's policy in words: "checkpoint NAME" or "tiny char-level Qwen2 (SFT warm start)"."""
    path = str(params.get("model_path") or params.get("model") or "")
    if path:
        return "checkpoint " + path.rstrip("/").rsplit("/", 1)[-1]
    return f"{params.get('preset') or 'tiny'} char-level Qwen2 (SFT warm start)"


def setup_text(params: RunParams, parameters: int | None) -> str:
    """ "tiny char-level Qwen2 (SFT warm start), 0.1M parameters, task addition, 200 steps, 5 seed pairs"."""
    size = "parameters not recorded" if parameters is None else f"{_count(parameters)} parameters"
    data = str(params.get("dataset_path") or params.get("dataset") or "")
    task = f"data {data.rstrip('/').rsplit('/', 1)[-1]}" if data else f"task {params.get('task', '')}"
    steps = int(params.get("total_steps") or params.get("steps") or 0)
    seeds, first = int(params.get("seeds") or 0), int(params.get("first_pair") or 0)
    pairs = f"{seeds} seed pairs" + (f" ({first}-{first + seeds - 1})" if first else "")
    return f"{model_text(params)}, {size}, {task}, {steps} steps, {pairs}"


def _count(n: int) -> str:
    return f"{n / 1e9:.1f}B" if n >= 1e9 else f"{n / 1e6:.1f}M" if n >= 1e5 else f"{n:,}"


@dataclass(frozen=True)
class RunAdoption:
    """Whether a finished A/B run may drive an "adopt" (computed over all finished runs: repro/adoption.py).

    ``adoptable`` needs the class ``evidence``, a matching A/A calibration (same model, data, preset, steps) that
    itself found no difference, and the run's test surviving Holm's correction across its family (the runs
    against the same baseline in the same ISO week, plus earlier looks at the same experiment), or a replication
    (another independent look at the same experiment that is also "better")."""

    run_id: str
    adoptable: bool
    reason: str  # why (not): one line
    calibration: str = ""  # the matching A/A run's id, "" when none
    family: tuple[str, ...] = ()  # the runs corrected together (this one included)
    family_p: float | None = None  # this run's p after Holm across the family
    replicated_by: str = ""  # an independent look that agrees
