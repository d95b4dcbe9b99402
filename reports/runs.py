"""Finished reproduction runs as the report sees them: one typed summary per run (no repro, no torch).

``RunSummary.setup`` names the model, its parameters, the task or data set, the steps and the seed pairs;
every line the report writes about a run carries it, with the run's class of evidence ("pipeline check",
"evidence", "underpowered"). The app adapts repro's run records into these (app/run_summaries.py), with
``adoptable`` from repro/adoption.py over all finished runs: only an adoptable "better" may drive the
``repro-better`` rule's "adopt".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TypedDict, cast


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
