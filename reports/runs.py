"""Finished reproduction runs as the report sees them: one typed summary per run (no repro, no torch).

``RunSummary.setup`` names the model, its parameters, the task or data set, the steps and the seed pairs;
every line the report writes about a run carries it, with the run's class of evidence ("pipeline check",
"evidence", "underpowered"). ``adoptable`` comes from the app (repro/adoption.py over all finished runs):
only an adoptable "better" may drive the ``repro-better`` rule's "adopt".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TypedDict, cast

from radar.store.runs import RunAdoption, RunRecord, RunsTable


class RunSummaryJson(TypedDict):
    """``RunSummary.as_dict()``: a run in report.json (its fields, then ``line``)."""

    id: str
    method: str
    baseline: str
    task: str
    setup: str
    evidence_class: str
    verdict: str
    overall: str
    adoptable: bool
    adoption: str
    summary: str
    claim_status: str
    seed_noise: float | None
    mde: float | None
    finished_at: str
    folder: str
    line: str


@dataclass(frozen=True)
class RunSummary:
    id: str
    method: str
    baseline: str
    task: str
    setup: str  # model, parameters, task or data, steps, seed pairs
    evidence_class: str  # "pipeline check" / "evidence" / "underpowered"; "unclassified" for older records
    verdict: str  # the calibrated label, or what the run is instead ("A/A calibration (...)", "uncalibrated ...")
    overall: str  # the verdict's own label
    adoptable: bool
    adoption: str  # why it may (not) drive an "adopt"
    summary: str
    claim_status: str
    seed_noise: float | None
    mde: float | None
    finished_at: str
    folder: str

    @property
    def line(self) -> str:
        """One line about the run: what was compared on what, its class and its verdict."""
        return f"{self.method} vs {self.baseline} ({self.setup}): {self.evidence_class}, {self.verdict}"

    def as_dict(self) -> RunSummaryJson:
        # every field, then the line (tests/test_typed.py keeps RunSummaryJson's keys equal to them)
        return cast(RunSummaryJson, {**asdict(self), "line": self.line})

    @classmethod
    def from_dict(cls, data: object) -> RunSummary:  # parsed report.json: any value, checked here
        """``as_dict()`` read back (report.json); fields an older report lacks are empty, ``line`` is recomputed."""
        if not isinstance(data, Mapping) or not data.get("id"):
            raise ValueError("a run in report.json is not an object with an id")

        def num(key: str) -> float | None:
            x = data.get(key)
            return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None

        text = {
            f: str(data.get(f) or "") for f in cls.__dataclass_fields__ if f not in ("adoptable", "seed_noise", "mde")
        }
        return cls(**text, adoptable=bool(data.get("adoptable")), seed_noise=num("seed_noise"), mde=num("mde"))


def summarize_run(run: RunRecord, runs_dir: Path, adoption: RunAdoption | None = None) -> RunSummary:
    """The report's view of one finished run."""
    v = run.verdict
    aa = run.method == run.baseline
    if v is None:
        label = ""
    elif aa:
        label = f"A/A calibration ({v.overall})"
    elif not v.calibrated:
        label = f"uncalibrated, old record ({v.overall})"
    else:
        label = v.overall
    why = adoption.reason if adoption is not None else "not assessed against the other runs"
    return RunSummary(
        id=run.id,
        method=run.method,
        baseline=run.baseline,
        task=run.task,
        setup=run.setup,
        evidence_class=(v.evidence_class if v is not None else "") or "unclassified",
        verdict=label,
        overall=v.overall if v is not None else "",
        adoptable=bool(adoption is not None and adoption.adoptable and not aa),
        adoption="an A/A run calibrates the others; it says nothing about a method" if aa else why,
        summary=v.summary if v is not None else "",
        claim_status=v.claim_status if v is not None else "",
        seed_noise=v.seed_noise.sd_difference if v is not None and v.seed_noise is not None else None,
        mde=v.power.mde if v is not None and v.power is not None else None,
        finished_at=run.finished_at,
        folder=run.folder or str(runs_dir / run.id),
    )


def finished_runs(
    store: RunsTable, runs_dir: Path, adoptions: Mapping[str, RunAdoption] | None = None
) -> list[RunSummary]:
    """Finished reproduction runs, newest first, from the store's run records. ``adoptions``: the app's
    decision per run (repro/adoption.py); without it no run is adoptable."""
    found = adoptions or {}
    return [summarize_run(run, runs_dir, found.get(run.id)) for run in store.list_runs(kind="repro", status="done")]
