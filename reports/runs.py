"""Finished reproduction runs as the report sees them: one typed summary per run (no repro, no torch).

``RunSummary.setup`` names the model, its parameters, the task or data set, the steps and the seed pairs;
every line the report writes about a run carries it, with the run's class of evidence ("pipeline check",
"evidence", "underpowered"). The app adapts repro's run records into these (app/run_summaries.py), with
``adoptable`` from repro/adoption.py over all finished runs: only an adoptable "better" may drive the
``repro-better`` rule's "adopt".

One codec: report.json's ``runs`` are the summaries as msgspec encodes them, each followed by its ``line``
(``runs_json``), and read back by msgspec (``read_runs``): a field an older report lacks (or holds as null)
reads as its default, ``line`` is recomputed.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec


@dataclass(frozen=True, slots=True)
class RunSummary:
    id: str
    method: str = ""
    baseline: str = ""
    task: str = ""
    setup: str = ""  # model, parameters, task or data, steps, seed pairs
    evidence_class: str = ""  # "pipeline check" / "evidence" / "underpowered"; "unclassified" for older records
    verdict: str = ""  # the calibrated label, or what the run is instead ("A/A calibration (...)", "uncalibrated ...")
    overall: str = ""  # the verdict's own label
    adoptable: bool = False
    adoption: str = ""  # why it may (not) drive an "adopt"
    summary: str = ""
    claim_status: str = ""
    seed_noise: float | None = None
    mde: float | None = None
    finished_at: str = ""
    folder: str = ""

    @property
    def line(self) -> str:
        """One line about the run: what was compared on what, its class and its verdict."""
        return f"{self.method} vs {self.baseline} ({self.setup}): {self.evidence_class}, {self.verdict}"


RunJson = dict[str, str | bool | float | None]  # a run in report.json: its fields, then ``line``


def runs_json(runs: list[RunSummary]) -> list[RunJson]:
    """report.json's ``runs``: each summary's fields as msgspec encodes them, then its line."""
    return [msgspec.to_builtins(run) | {"line": run.line} for run in runs]


def read_runs(value: object) -> list[RunSummary]:
    """report.json's ``runs`` read back (a list of ``runs_json`` objects; null reads as none). A null field reads as
    its default, a key the summary does not know (``line``) is ignored; ValueError names what does not read."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(r, dict) and r.get("id") for r in value):
        raise ValueError("the runs in report.json are not a list of objects with an id; write the report again")
    try:
        return msgspec.convert(
            [{k: v for k, v in r.items() if v is not None} for r in value], list[RunSummary], strict=False
        )
    except msgspec.ValidationError as e:
        raise ValueError(f"a run in report.json does not read ({e}); write the report again") from None
