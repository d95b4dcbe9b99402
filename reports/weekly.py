"""`radar weekly`: crawl, index, tag, trends, report, deliver, in one run that cron can repeat.

- One run at a time: a workspace lock ("weekly"); a second run says one is in progress (exit 1).
- Idempotent: every step does only what is new (the crawl's cursors, the index's content hashes,
  untagged documents), the report is rewritten with the same content, and the deliveries table
  keeps each recipient from getting a period twice. Failed deliveries of this and earlier periods
  are retried.
- A step that fails is reported and the run continues where it can (no tags, no trends: the report
  still goes out); the exit code says what happened: 0 all good, 2 something failed (a source, a
  step, a delivery), 1 nothing could be done (bad config, lock held).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from radar.reports.build import BuiltReport, build_report, compute_trends, load_report, profile_config, report_config
from radar.reports.config import DeliveryConfig
from radar.reports.content import EMPTY_TRENDS
from radar.reports.deliver import Outcome, deliver, delivery_lock, summarize_outcomes
from radar.reports.period import Period
from radar.store import Workspace
from radar.store.errors import RadarError

STEPS = ("crawl", "index", "tag", "trends", "report", "deliver")
Log = Callable[[str], None]


@dataclass
class StepResult:
    name: str
    ok: bool
    summary: str
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"step": self.name, "ok": self.ok, "summary": self.summary, "seconds": round(self.seconds, 2)}


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

    def as_dict(self) -> dict[str, Any]:
        return {
            "period": self.period.label,
            "ok": self.exit_code == 0,
            "summary": self.line(),
            "steps": [s.as_dict() for s in self.steps],
            "paths": {k: str(v) for k, v in self.report.paths.items()} if self.report else {},
            "deliveries": [o.as_dict() for o in self.outcomes],
        }


def _crawl(ws: Workspace) -> tuple[bool, str]:
    from radar.crawler.run import crawl

    with ws.store() as store:
        results = crawl(store, ws.config())
    added = sum(r.counts.added for r in results)
    failed = [r for r in results if not r.ok]
    text = f"{added} new from {len(results)} source(s)"
    if failed:
        text += "; failed: " + "; ".join(f"{r.source}: {r.message}" for r in failed)
    return not failed, text


def _index(ws: Workspace) -> tuple[bool, str]:
    from radar.index.embedder import make_embedder
    from radar.index.pipeline import embedding_config, local_batches, model_cache_dir, run_index, search_config

    cfg = embedding_config(ws)
    with ws.lock("index"), ws.store() as store:
        embedder = make_embedder(cfg, device="auto", cache_dir=model_cache_dir(ws))
        rep = run_index(
            ws,
            store,
            model_id=embedder.model_id,
            dim=embedder.dim,
            batches=local_batches(embedder),
            search_cfg=search_config(ws),
        )
    return True, f"{rep.embedded} embedded, {rep.vectors} vectors"


def _tag(ws: Workspace) -> tuple[bool, str]:
    from radar.analysis.tags import tag_documents

    with ws.store() as store:
        rep = tag_documents(ws, store)
    parts = [f"{rep.decided} decided"]
    if rep.trained:
        parts.append("model trained")
    if rep.unembedded:
        parts.append(f"{rep.unembedded} not embedded yet")
    return True, ", ".join(parts)


def run_weekly(
    ws: Workspace, period: Period, *, skip: tuple[str, ...] = (), log: Log | None = None, formats: str | None = None
) -> WeeklyResult:
    """The whole weekly job under the workspace lock. Raises WorkspaceError if a run is in progress."""
    say = log or (lambda _msg: None)
    cfg = report_config(ws, formats)  # validate config before taking any step
    profile = profile_config(ws)
    delivery = DeliveryConfig.from_section(ws.config().section("delivery"))
    result = WeeklyResult(period)
    with ws.lock("weekly"):
        trends: dict[str, Any] = dict(EMPTY_TRENDS)
        trends_note = "trends skipped or failed"

        def step(name: str, fn: Callable[[], tuple[bool, str]]) -> None:
            if name in skip:
                result.steps.append(StepResult(name, True, "skipped (--skip)"))
                return
            say(f"{name} ...")
            started = time.perf_counter()
            try:
                ok, text = fn()
            except RadarError as exc:
                ok, text = False, str(exc)
            except Exception as exc:  # noqa: BLE001 - one failed step must not stop the report
                ok, text = False, f"unexpected {type(exc).__name__}: {exc}"
            result.steps.append(StepResult(name, ok, text, time.perf_counter() - started))
            say(f"{name}: {text}")

        def trends_step() -> tuple[bool, str]:
            nonlocal trends, trends_note
            with ws.store() as store:
                trends, note = compute_trends(ws, store, period.end)
            trends_note = note
            if note:
                return True, note
            return True, (
                f"{len(trends.get('emerging', []))} emerging, {len(trends.get('new_methods', []))} new methods"
            )

        def report_step() -> tuple[bool, str]:
            with ws.store() as store:
                result.report = build_report(ws, store, period, cfg, profile, trends=trends, trends_note=trends_note)
            r = result.report.as_dict()
            return True, (
                f"{r['documents']} documents, {r['recommendations']} recommendations -> {result.report.folder}"
            )

        def deliver_step() -> tuple[bool, str]:
            if not delivery.any_channel:
                return True, "no [delivery] channel configured"
            if result.report is None:
                return False, "no report to deliver"
            with delivery_lock(ws), ws.store() as store:
                result.outcomes = deliver(store, result.report, delivery)
                for label in sorted({row["period"] for row in store.deliveries(status="failed")} - {period.label}):
                    earlier = load_report(ws, label)
                    if earlier is not None:
                        result.outcomes += deliver(store, earlier, delivery)
            ok = all(o.status != "failed" for o in result.outcomes)
            return ok, summarize_outcomes(result.outcomes)

        step("crawl", lambda: _crawl(ws))
        step("index", lambda: _index(ws))
        step("tag", lambda: _tag(ws))
        step("trends", trends_step)
        step("report", report_step)
        step("deliver", deliver_step)
    return result
