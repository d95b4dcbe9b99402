"""The runs table: reproduction runs and other background jobs (written by repro/, read by app/ and reports/).

``RunRecord`` and ``RunVerdict`` are the typed, frozen view of a finished run that readers use
(``radar repro list/show``, reports' recommendations and runs section, the dashboard): they live
here, in the store that repro and reports share, so that reading runs never imports repro or torch.
``RunVerdict.calibrated`` is False for records written before verdicts carried their tests (an
old bootstrap verdict must not drive an "adopt").
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any

import orjson

from radar.store.errors import StoreError
from radar.store.models import utc_now
from radar.store.table import Table

RUN_STATUSES = ("queued", "running", "done", "failed", "cancelled")
VERDICT_LABELS = ("better", "worse", "mixed", "no clear difference", "too few seeds")


def _num(x: Any) -> float | None:
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
    def from_dict(cls, name: str, d: dict[str, Any]) -> MetricTest:
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
    calibration: dict[str, Any] | None = None


@dataclass(frozen=True)
class RunVerdict:
    overall: str  # one of VERDICT_LABELS
    summary: str
    metrics: tuple[MetricTest, ...] = ()
    claim: str = ""
    claim_status: str = ""
    seed_noise: SeedNoise | None = None
    calibrated: bool = False  # True when the verdict comes from the paired, Holm-corrected tests

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> RunVerdict | None:
        if not isinstance(d, dict) or "overall" not in d:
            return None
        raw_metrics, raw_claim = d.get("metrics"), d.get("claim")
        metrics: dict[str, Any] = raw_metrics if isinstance(raw_metrics, dict) else {}
        tests = tuple(MetricTest.from_dict(k, v) for k, v in metrics.items() if isinstance(v, dict))
        noise = d.get("seed_noise")
        claim: dict[str, Any] = raw_claim if isinstance(raw_claim, dict) else {}
        return cls(
            overall=str(d["overall"]),
            summary=str(d.get("summary", "")),
            metrics=tests,
            claim=str(claim.get("claim", "")),
            claim_status=str(claim.get("status", "")),
            seed_noise=SeedNoise(
                metric=str(noise.get("metric", "")),
                sd_method=_num(noise.get("sd_method")),
                sd_baseline=_num(noise.get("sd_baseline")),
                sd_difference=_num(noise.get("sd_difference")),
                n=int(noise.get("n") or 0),
                calibration=noise.get("calibration") if isinstance(noise.get("calibration"), dict) else None,
            )
            if isinstance(noise, dict)
            else None,
            calibrated=bool(tests) and all(t.p_adjusted is not None or t.n < 2 for t in tests),
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
    def from_dict(cls, d: dict[str, Any]) -> ArmProfile:
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


@dataclass(frozen=True)
class RunRecord:
    """One run as readers see it: parameters, life cycle, and (when done) verdict, metrics, plots."""

    id: str
    kind: str
    status: str
    params: dict[str, Any]
    progress: float
    error: str
    created_at: str
    started_at: str
    finished_at: str
    cancel_requested: bool
    pid: int | None
    verdict: RunVerdict | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    plots: tuple[str, ...] = ()
    folder: str = ""
    eval_overlap: dict[str, Any] | None = None
    result: dict[str, Any] = field(default_factory=dict)  # the raw stored result (JSON)

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

    @classmethod
    def from_row(cls, d: dict[str, Any]) -> RunRecord:
        raw = d.get("result")
        result: dict[str, Any] = raw if isinstance(raw, dict) else {}
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
            verdict=RunVerdict.from_dict(result.get("verdict")),
            metrics=result.get("metrics") or {},
            plots=tuple(result.get("plots") or ()),
            folder=str(result.get("folder") or ""),
            eval_overlap=result.get("eval_overlap"),
            result=result,
        )


class RunsTable(Table):
    """Runs: create, update (status, progress, result), read one, list by kind/status."""

    def create_run(self, run_id: str, kind: str, params: dict[str, Any], status: str = "queued") -> None:
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

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        return self._run_dict(row) if row else None

    def list_runs(self, kind: str = "", status: str = "") -> list[dict[str, Any]]:
        clauses, params = [], []
        if kind:
            clauses.append("kind = ?")
            params.append(kind)
        if status:
            clauses.append("status = ?")
            params.append(status)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self.conn.execute(f"SELECT * FROM runs {where} ORDER BY created_at DESC, id DESC", params)
        return [self._run_dict(r) for r in rows]

    def run_record(self, run_id: str) -> RunRecord | None:
        run = self.get_run(run_id)
        return RunRecord.from_row(run) if run else None

    def run_records(self, kind: str = "", status: str = "") -> list[RunRecord]:
        """Typed records, newest first."""
        return [RunRecord.from_row(r) for r in self.list_runs(kind=kind, status=status)]

    @staticmethod
    def _run_dict(row: sqlite3.Row) -> dict[str, Any]:
        d = dict(row)
        d["params"] = orjson.loads(d["params"])
        d["result"] = orjson.loads(d["result"])
        return d

    @staticmethod
    def _check_status(status: str) -> None:
        if status not in RUN_STATUSES:
            raise StoreError(f"run status {status!r} is not one of {', '.join(RUN_STATUSES)}")
