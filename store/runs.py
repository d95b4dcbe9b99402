"""The runs table: reproduction runs and other background jobs (written by repro/, read by app/ and reports/).

``RunRecord`` is the only run type from the store up: ``get_run``/``list_runs`` return it, and readers
(``radar repro list/show``, reports' recommendations and runs section, the dashboard) use it and its
typed ``RunVerdict`` (tests, evidence class, power, per-arm mechanism rates). They live here, in the
store that repro and reports share, so that reading runs never imports repro or torch.
``RunVerdict.calibrated`` is False for records written before verdicts carried their tests, and
``evidence_class`` is "" for records written before verdicts carried one: neither drives an "adopt".
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any, Required, TypedDict

import orjson

from radar.store.errors import StoreError
from radar.store.models import utc_now
from radar.store.run_shapes import (
    ArmRates,
    Calibration,
    Overlap,
    PlannedPower,
    PowerPlan,
    Profile,
    RunMetrics,
    StoredResult,
    Verdict,
    VerdictMetric,
)
from radar.store.table import Table

RUN_STATUSES = ("queued", "running", "done", "failed", "cancelled")
VERDICT_LABELS = ("better", "worse", "mixed", "no clear difference", "too few seeds")


def _num(x: object) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


@dataclass(frozen=True)
class MetricTest:
    """One tested metric of a verdict: the test, its sample size, effect, interval and p values."""

    name: str
    title: str
    test: str
    n: int
    effect: float | None  # method minus baseline (a share: 0.05 = 5 points)
    interval: tuple[float | None, float | None]
    p: float | None
    p_adjusted: float | None
    label: str
    method_mean: float | None
    baseline_mean: float | None

    @classmethod
    def from_dict(cls, name: str, d: VerdictMetric) -> MetricTest:
        lo, hi = (list(d.get("interval") or []) + [None, None])[:2]
        return cls(
            name=name,
            title=str(d.get("title", name)),
            test=str(d.get("test", "")),
            n=int(d.get("n") or 0),
            effect=_num(d.get("effect")),
            interval=(_num(lo), _num(hi)),
            p=_num(d.get("p")),
            p_adjusted=_num(d.get("p_adjusted")),
            label=str(d.get("label", "")),
            method_mean=_num(d.get("method_mean")),
            baseline_mean=_num(d.get("baseline_mean")),
        )


@dataclass(frozen=True)
class SeedNoise:
    """Seed-to-seed spread of the primary held-out score; ``calibration`` is the latest A/A run's."""

    metric: str
    sd_method: float | None
    sd_baseline: float | None
    sd_difference: float | None
    n: int
    calibration: Calibration | None = None


EVIDENCE_CLASSES = ("pipeline check", "evidence", "underpowered")


@dataclass(frozen=True)
class Power:
    """What a run could detect, fixed before it trained: seed noise (sd of the paired differences of the primary
    score, and where it came from), the minimum detectable effect at the run's seed pairs (80 % power, the
    verdict's own test), the effect asked for and the seed pairs it needs."""

    seeds: int
    sd_difference: float | None
    noise_source: str  # "A/A run ID", "run ID (stored seed noise)", "assumed: ..." or "" (unknown)
    mde: float | None  # a share: 0.035 = 3.5 points
    effect: float  # the effect the run should be able to find (a share)
    seeds_needed: int | None  # seed pairs for ``effect`` at 80 % power (None: unknown noise or > the maximum)
    power_at_effect: float | None

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

    @classmethod
    def from_dict(cls, d: PowerPlan | None) -> Power | None:
        if not isinstance(d, dict) or "seeds" not in d:
            return None
        needed = d.get("seeds_needed")
        return cls(
            seeds=int(d.get("seeds") or 0),
            sd_difference=_num(d.get("sd_difference")),
            noise_source=str(d.get("noise_source") or ""),
            mde=_num(d.get("mde")),
            effect=float(_num(d.get("effect")) or 0.05),
            seeds_needed=int(needed) if isinstance(needed, int) and not isinstance(needed, bool) else None,
            power_at_effect=_num(d.get("power_at_effect")),
        )


@dataclass(frozen=True)
class ArmMechanisms:
    """Whether the levers a method is about engaged in one arm: rates over its steps and seeds (repro/verdict.py
    ``mechanisms``). None where the arm's trainer does not log it (e.g. clip fractions of a plug-in loss)."""

    overlong_rate: float | None  # completions the soft overlong punishment touched
    clip_low: float | None  # tokens clipped at the lower bound (1 - epsilon)
    clip_high: float | None  # tokens clipped at the upper bound (1 + epsilon_high)
    clip_region: float | None  # tokens (GSPO/LUSPO: sequences) outside the trust region
    capped_share: float | None  # CISPO: importance weights at the cap
    zero_var_share: float | None  # groups whose answers were all right or all wrong, as generated
    zero_var_trained: float | None  # ... in the batch trained on (after dynamic sampling's filter and refill)
    resampled_groups: float | None  # groups re-generated per generation batch (dynamic sampling)
    length: float | None  # mean completion length (tokens)
    length_slope: float | None  # tokens per 100 steps
    correct_length: float | None
    incorrect_length: float | None
    length_range: float | None  # mean of (longest - shortest completion) per batch
    plugin_rates: dict[str, float] = field(default_factory=dict)  # the rates the arm's plug-ins logged, by name

    @classmethod
    def from_dict(cls, d: ArmRates) -> ArmMechanisms:
        d = d if isinstance(d, dict) else {}
        fixed = [f for f in cls.__dataclass_fields__ if f != "plugin_rates"]
        extra = {k: _num(v) for k, v in d.items() if k not in fixed and k != "per_seed"}
        return cls(**{f: _num(d.get(f)) for f in fixed}, plugin_rates={k: v for k, v in extra.items() if v is not None})


@dataclass(frozen=True)
class RunVerdict:
    overall: str  # one of VERDICT_LABELS
    summary: str
    metrics: tuple[MetricTest, ...] = ()
    claim: str = ""
    claim_status: str = ""  # holds / refuted / inconclusive / not testable here / not checked
    claim_reason: str = ""  # why a claim is not testable here (the lever's measured rate) or not checked
    seed_noise: SeedNoise | None = None
    calibrated: bool = False  # True when the verdict comes from the paired, Holm-corrected tests
    evidence_class: str = ""  # one of EVIDENCE_CLASSES; "" for records written before verdicts carried one
    evidence_reason: str = ""
    power: Power | None = None
    mechanisms: dict[str, ArmMechanisms] = field(default_factory=dict)  # per arm ("method", "baseline")
    aa: bool = False  # an A/A run (method == baseline): a calibration, never a result about a method
    decision_p: float | None = None  # the smallest Holm-adjusted p of the label's metrics (the run's global test)

    @classmethod
    def from_dict(cls, d: Verdict | None) -> RunVerdict | None:
        """The stored verdict document read back; an older record's missing or malformed parts read as empty."""
        if not isinstance(d, dict) or "overall" not in d:
            return None
        raw_metrics, raw_claim = d.get("metrics"), d.get("claim")
        raw_evidence, raw_mech = d.get("evidence"), d.get("mechanisms")
        metrics = raw_metrics if isinstance(raw_metrics, dict) else {}
        tests = tuple(MetricTest.from_dict(k, v) for k, v in metrics.items() if isinstance(v, dict))
        noise = d.get("seed_noise")
        claim = raw_claim if isinstance(raw_claim, dict) else None
        evidence = raw_evidence if isinstance(raw_evidence, dict) else None
        mech = raw_mech if isinstance(raw_mech, dict) else {}
        ps = [t.p_adjusted for t in tests if t.p_adjusted is not None]
        return cls(
            overall=str(d["overall"]),
            summary=str(d.get("summary", "")),
            metrics=tests,
            claim=str(claim.get("claim", "")) if claim else "",
            claim_status=str(claim.get("status", "")) if claim else "",
            claim_reason=str(claim.get("reason", "")) if claim else "",
            seed_noise=SeedNoise(
                metric=str(noise.get("metric", "")),
                sd_method=_num(noise.get("sd_method")),
                sd_baseline=_num(noise.get("sd_baseline")),
                sd_difference=_num(noise.get("sd_difference")),
                n=int(noise.get("n") or 0),
                calibration=noise["calibration"] if isinstance(noise.get("calibration"), dict) else None,
            )
            if isinstance(noise, dict)
            else None,
            calibrated=bool(tests) and all(t.p_adjusted is not None or t.n < 2 for t in tests),
            evidence_class=str(evidence.get("class", "")) if evidence else "",
            evidence_reason=str(evidence.get("reason", "")) if evidence else "",
            power=Power.from_dict(evidence.get("power")) if evidence else None,
            mechanisms={arm: ArmMechanisms.from_dict(v) for arm, v in mech.items()},
            aa=bool(d.get("aa")),
            decision_p=min(ps) if ps else None,
        )


@dataclass(frozen=True)
class ArmProfile:
    """One arm's efficiency profile (repro/profile.py), the mean per optimiser step over its seeds."""

    device: str
    step_s: float | None
    generate_s: float | None
    reward_s: float | None
    ref_s: float | None
    train_s: float | None
    tokens_per_s: float | None
    peak_mem_gb: float | None
    peak_mem_kind: str
    seeds: int

    @classmethod
    def from_dict(cls, d: Profile) -> ArmProfile:
        return cls(
            device=str(d.get("device", "")),
            step_s=_num(d.get("step_s")),
            generate_s=_num(d.get("generate_s")),
            reward_s=_num(d.get("reward_s")),
            ref_s=_num(d.get("ref_s")),
            train_s=_num(d.get("train_s")),
            tokens_per_s=_num(d.get("tokens_per_s")),
            peak_mem_gb=_num(d.get("peak_mem_gb")),
            peak_mem_kind=str(d.get("peak_mem_kind", "")),
            seeds=int(d.get("seeds") or 0),
        )


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


class RunRow(TypedDict, total=False):
    """A row of the runs table, its JSON columns parsed (store/schema.py; ``RunRecord.from_row`` reads it)."""

    id: Required[str]
    kind: Required[str]
    status: Required[str]
    params: RunParams
    result: StoredResult
    progress: float
    pid: int | None
    error: str
    created_at: str
    started_at: str
    finished_at: str
    heartbeat_at: str
    cancel_requested: int


@dataclass(frozen=True)
class RunRecord:
    """One run as readers see it: parameters, life cycle, and (when done) verdict, metrics, plots.

    The store returns runs only as RunRecords; ``params`` and ``result`` stay the JSON they were stored as (typed:
    ``RunParams``, ``StoredResult``); ``metrics`` is None for a run without them (not finished, or an older record)."""

    id: str
    kind: str
    status: str
    params: RunParams
    progress: float
    error: str
    created_at: str
    started_at: str
    finished_at: str
    cancel_requested: bool
    pid: int | None
    heartbeat_at: str = ""
    verdict: RunVerdict | None = None
    metrics: RunMetrics | None = None
    plots: tuple[str, ...] = ()
    folder: str = ""
    eval_overlap: Overlap | None = None
    result: StoredResult = field(default_factory=StoredResult)  # the stored result as read

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
        return {arm: ArmProfile.from_dict(p) for arm, p in raw.items() if isinstance(p, dict)}

    @property
    def efficiency_text(self) -> str:
        """The verdict's paired efficiency comparison as a phrase ("8% slower per step (...)"), or ""."""
        verdict = self.result.get("verdict")
        eff = verdict.get("efficiency") if isinstance(verdict, dict) else None
        return str(eff.get("text", "")) if isinstance(eff, dict) else ""

    def as_json(self) -> dict[str, Any]:  # the JSON edge: `radar repro list/show --json`
        """The run as one JSON object (`radar repro list/show --json`)."""
        result = self.result
        verdict = result.get("verdict")
        return {
            "id": self.id,
            "status": self.status,
            "setup": self.setup,
            "verdict": verdict,
            "metrics": result.get("metrics"),
            "plots": list(self.plots),
            "params": self.params,
            "progress": self.progress,
            "error": self.error,
            "created_at": self.created_at,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "folder": result.get("folder"),
            "eval_overlap": self.eval_overlap,
            "model": result.get("model"),
            "profile": result.get("profile"),
            "efficiency": verdict.get("efficiency") if isinstance(verdict, dict) else None,
        }

    @classmethod
    def from_row(cls, d: RunRow) -> RunRecord:
        raw = d.get("result")
        result: StoredResult = raw if isinstance(raw, dict) else {}
        return cls(
            id=d["id"],
            kind=d["kind"],
            status=d["status"],
            params=d.get("params") or {},
            progress=float(d.get("progress") or 0.0),
            error=d.get("error") or "",
            created_at=d.get("created_at") or "",
            started_at=d.get("started_at") or "",
            finished_at=d.get("finished_at") or "",
            cancel_requested=bool(d.get("cancel_requested")),
            pid=d.get("pid"),
            heartbeat_at=d.get("heartbeat_at") or "",
            verdict=RunVerdict.from_dict(result.get("verdict")),
            metrics=result.get("metrics") or None,
            plots=tuple(result.get("plots") or ()),
            folder=str(result.get("folder") or ""),
            eval_overlap=result.get("eval_overlap"),
            result=result,
        )


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


class RunsTable(Table):
    """Runs: create, update (status, progress, result), read one, list by kind/status."""

    def create_run(self, run_id: str, kind: str, params: RunParams, status: str = "queued") -> None:
        self._check_status(status)
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO runs (id, kind, status, params, created_at) VALUES (?, ?, ?, ?, ?)",
                (run_id, kind, status, orjson.dumps(params).decode(), utc_now()),
            )

    def update_run(self, run_id: str, **changes: Any) -> None:
        """Set columns of a run; dict values (params, result) are stored as JSON."""
        allowed = {
            "status",
            "params",
            "result",
            "progress",
            "pid",
            "error",
            "started_at",
            "finished_at",
            "heartbeat_at",
            "cancel_requested",
        }
        bad = set(changes) - allowed
        if bad:
            raise StoreError(f"cannot set run field(s) {', '.join(sorted(bad))}; valid: {', '.join(sorted(allowed))}")
        if "status" in changes:
            self._check_status(changes["status"])
        values = [orjson.dumps(v).decode() if isinstance(v, dict | list) else v for v in changes.values()]
        sets = ", ".join(f"{k} = ?" for k in changes)
        with self.transaction() as conn:
            cur = conn.execute(f"UPDATE runs SET {sets} WHERE id = ?", [*values, run_id])
            if cur.rowcount == 0:
                raise StoreError(f"no run {run_id!r}; list runs with `radar repro list`")

    def get_run(self, run_id: str) -> RunRecord | None:
        row = self.conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        return RunRecord.from_row(self._run_dict(row)) if row else None

    def list_runs(self, kind: str = "", status: str = "") -> list[RunRecord]:
        """Runs, newest first."""
        clauses, params = [], []
        if kind:
            clauses.append("kind = ?")
            params.append(kind)
        if status:
            clauses.append("status = ?")
            params.append(status)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self.conn.execute(f"SELECT * FROM runs {where} ORDER BY created_at DESC, id DESC", params)
        return [RunRecord.from_row(self._run_dict(r)) for r in rows]

    @staticmethod
    def _run_dict(row: sqlite3.Row) -> RunRow:
        return RunRow(
            id=row["id"],
            kind=row["kind"],
            status=row["status"],
            params=orjson.loads(row["params"]),
            result=orjson.loads(row["result"]),
            progress=row["progress"],
            pid=row["pid"],
            error=row["error"],
            created_at=row["created_at"],
            started_at=row["started_at"],
            finished_at=row["finished_at"],
            heartbeat_at=row["heartbeat_at"],
            cancel_requested=row["cancel_requested"],
        )

    @staticmethod
    def _check_status(status: str) -> None:
        if status not in RUN_STATUSES:
            raise StoreError(f"run status {status!r} is not one of {', '.join(RUN_STATUSES)}")
