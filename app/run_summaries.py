"""Finished reproduction runs as the report sees them: the app adapts repro's ``RunRecord``s (and the adoption
rule's decision about each) into reports' ``RunSummary`` (reports/runs.py), so reports never imports repro."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from radar.reports.runs import RunSummary
from radar.repro.records import RunAdoption, RunRecord
from radar.repro.runs_table import Runs


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


def finished_runs(store: Runs, runs_dir: Path, adoptions: Mapping[str, RunAdoption] | None = None) -> list[RunSummary]:
    """Finished reproduction runs, newest first, from the store's run records. ``adoptions``: the app's
    decision per run (repro/adoption.py); without it no run is adoptable."""
    found = adoptions or {}
    return [summarize_run(run, runs_dir, found.get(run.id)) for run in store.list_runs(kind="repro", status="done")]
