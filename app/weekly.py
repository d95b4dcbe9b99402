"""`radar weekly`: the pipeline's steps in order for one period, each reported as a line, under one lock.

    crawl -> index -> alerts -> tag -> trends -> report -> deliver -> digests -> reproduce

Each step is a method of ``WeeklyJob`` returning (ok, one line); the steps themselves are app.steps' (and
app.steps_people's, app.reproductions'), the same calls the single commands make.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import msgspec

from radar.analysis.trends.result import PeriodTrends
from radar.app import steps, steps_people, wiring
from radar.app.context import Radar
from radar.reports.build import BuiltReport
from radar.reports.deliver import Outcome, summarize_outcomes
from radar.reports.period import Period
from radar.store.errors import RadarError

WEEKLY_STEPS = ("crawl", "index", "alerts", "tag", "trends", "report", "deliver", "digests", "reproduce")
Log = Callable[[str], None]
StepFn = Callable[[], tuple[bool, str]]


class StepResult(msgspec.Struct):
    """One step's outcome; its fields are its JSON in `radar weekly --json` (``name`` as "step")."""

    name: str = msgspec.field(name="step")
    ok: bool
    summary: str
    seconds: float = 0.0

    def __post_init__(self) -> None:
        self.seconds = round(self.seconds, 2)  # what the JSON shows


@dataclass
class WeeklyResult:
    period: Period
    steps: list[StepResult] = field(default_factory=list)
    report: BuiltReport | None = None
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 0 if all(s.ok for s in self.steps) else 2

    def line(self) -> str:
        parts = [f"{s.name}: {s.summary}" if s.ok else f"{s.name} FAILED: {s.summary}" for s in self.steps]
        return f"weekly {self.period.label}: " + "; ".join(parts)


class WeeklyJson(msgspec.Struct, frozen=True):
    """``WeeklyResult`` as `radar weekly --json` prints it."""

    period: str
    ok: bool
    summary: str
    steps: list[StepResult]
    paths: dict[str, str]
    deliveries: list[Outcome]

    @classmethod
    def of(cls, result: WeeklyResult) -> WeeklyJson:
        paths = {k: str(v) for k, v in result.report.paths.items()} if result.report else {}
        return cls(result.period.label, result.exit_code == 0, result.line(), result.steps, paths, result.outcomes)


def run(radar: Radar, period: Period, *, skip: Sequence[str] = (), log: Log | None = None) -> WeeklyResult:
    """Every step in order under the "weekly" lock; each step also takes its own stage's lock (a `radar crawl`
    or `radar tag` started by hand waits its turn: one line, not a second fetch).

    Idempotent: each step does only what is new (crawl cursors, content hashes, undecided documents), the
    report is rewritten with the same content, and the deliveries table keeps a recipient from getting a
    period twice; failed deliveries of this and earlier periods are retried. A failed step is reported and
    the run goes on where it can (no trends: the report still goes out). Exit code 0 all good, 2 something
    failed. Raises WorkspaceError when another weekly run holds the lock, ConfigError for a bad radar.toml."""
    job = WeeklyJob(radar, period, log or (lambda _msg: None))
    ws = radar.ws
    with ws.lock("weekly", writes=[ws.db_path, ws.index_dir, ws.reports_dir, ws.runs_dir]):
        for name in WEEKLY_STEPS:
            job.run_step(name, skip)
    return job.result


class WeeklyJob:
    """One weekly run's state: the settings (read once: a bad radar.toml stops before any step), the period's
    trends (the report step uses the trends step's), and the result the steps fill in."""

    def __init__(self, radar: Radar, period: Period, say: Log) -> None:
        self.radar = radar
        self.settings = radar.settings
        self.period = period
        self.say = say
        self.result = WeeklyResult(period)
        self.found: tuple[PeriodTrends, str] = (PeriodTrends.empty(period.label), "trends skipped or failed")

    def run_step(self, name: str, skip: Sequence[str]) -> None:
        if name in skip:
            self.result.steps.append(StepResult(name, True, "skipped (--skip)"))
            return
        fn: StepFn = getattr(self, name)
        self.say(f"{name} ...")
        started = time.perf_counter()
        try:
            ok, text = fn()
        except RadarError as exc:
            ok, text = False, str(exc)
        except Exception as exc:  # noqa: BLE001 - one failed step must not stop the report
            ok, text = False, f"unexpected {type(exc).__name__}: {exc}"
        self.result.steps.append(StepResult(name, ok, text, time.perf_counter() - started))
        self.say(f"{name}: {text}")

    def crawl(self) -> tuple[bool, str]:
        results = steps.crawl_sources(self.radar)
        added = sum(r.added for r in results)
        failed = [r for r in results if not r.ok]
        text = f"{added} new from {len(results)} source(s)"
        if failed:
            text += "; failed: " + "; ".join(f"{r.source}: {r.message}" for r in failed)
        return not failed, text

    def index(self) -> tuple[bool, str]:
        cap = self.settings.embedding.weekly_max_documents
        run = steps.index(self.radar, limit=cap)
        text = f"{run.report.embedded} embedded, {run.report.vectors} vectors"
        if run.left:
            text += f"; {run.left:,} left for the next run ([embedding] weekly_max_documents = {cap:,})"
        return True, text

    def alerts(self) -> tuple[bool, str]:
        runs = steps_people.alerts(self.radar)  # after the index step: saved searches find new papers by vectors
        if not runs:
            return True, "no saved searches"
        failed = [o for r in runs for o in r.outcomes if o.status == "failed"]
        text = f"{sum(len(r.new) for r in runs)} new match(es) for {len(runs)} person(s)"
        return not failed, text + (f"; {len(failed)} delivery(ies) failed" if failed else "")

    def tag(self) -> tuple[bool, str]:
        rep = steps.tag(self.radar)
        parts = [f"{rep.decided} decided"]
        if rep.trained:
            parts.append("model trained")
        if rep.unembedded:
            parts.append(f"{rep.unembedded} not embedded yet")
        return True, ", ".join(parts)

    def trends(self) -> tuple[bool, str]:
        with self.radar.store() as store:
            self.found = steps.report_trends(self.radar, store, self.period)
        trends_found, note = self.found
        if note:
            return True, note
        return True, f"{len(trends_found.terms.emerging)} emerging, {len(trends_found.terms.new_methods)} new methods"

    def report(self) -> tuple[bool, str]:
        built = self.result.report = steps.report(self.radar, self.period, trends_result=self.found)
        n, recs = built.content.headline.documents, len(built.content.recommendations)
        return True, f"{n} documents, {recs} recommendations -> {built.folder}"

    def deliver(self) -> tuple[bool, str]:
        if not self.settings.delivery.any_channel:
            return True, "no [delivery] channel configured"
        if self.result.report is None:
            return False, "no report to deliver"
        self.result.outcomes = steps.deliver_report(self.radar, self.result.report, retry_earlier=True)
        return all(o.status != "failed" for o in self.result.outcomes), summarize_outcomes(self.result.outcomes)

    def digests(self) -> tuple[bool, str]:
        done = steps_people.digests(self.radar, self.period, send=self.settings.delivery.any_channel)
        if not done:
            return True, "no people (radar people add NAME)"
        failed = [f"{d.digest.person} {o.channel}: {o.error}" for d in done for o in d.outcomes if o.status == "failed"]
        sent = sum(o.status == "sent" for d in done for o in d.outcomes)
        text = f"{len(done)} digest(s) written, {sent} sent"
        return not failed, text + (f"; {len(failed)} delivery(ies) failed ({'; '.join(failed)})" if failed else "")

    def reproduce(self) -> tuple[bool, str]:
        # Last: it needs this week's recommendations, and the training it starts (detached) must neither slow
        # nor block the report's delivery; its verdicts reach next week's report (rules repro-better/-worse).
        if not self.settings.repro.weekly_runs:
            return True, "off ([repro] weekly_runs = 0)"
        if self.result.report is None:
            return False, "no report, so no recommendations to reproduce"
        recs = self.result.report.content.recommendations
        return wiring.reproductions(self.radar).weekly_step(recs, self.period.label)
