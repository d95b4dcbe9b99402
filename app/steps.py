"""The pipeline's steps, each once: what the CLI commands, the dashboard and `radar weekly` call.

    crawl  -> index -> tag -> trends -> report -> deliver -> reproduce   (weekly runs them in this order)
    open_searcher, evaluate_tags, fix_tags                       (queries and corrections)

Each step takes a ``Radar`` (workspace + settings read once), opens what it needs, takes the
workspace lock its stage must not share, and hands the stage only its config and collaborators
(built by app.wiring). Nothing below app/ reads radar.toml or names a workspace path.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from radar.analysis.names import stage as names_stage
from radar.analysis.tags.evaluate import evaluate_file
from radar.analysis.tags.review import ReviewItem
from radar.analysis.tags.review import review_queue as review_papers
from radar.analysis.tags.tagger import Tagger, TagReport, record_correction, tag_documents
from radar.analysis.trends.compute import TrendDetector, compute_trends
from radar.analysis.trends.result import TrendsResult
from radar.app import steps_people, wiring
from radar.app.context import Radar
from radar.crawler.run import ProgressFn as CrawlProgress
from radar.crawler.run import SourceResult, crawl
from radar.index.embedder import Embedder
from radar.index.pipeline import BatchEmbedder, IndexReport, local_batches, run_index
from radar.index.prebuilt import PrebuiltVectors
from radar.index.search import Searcher
from radar.reports.build import BuiltReport, load_report, write_report
from radar.reports.content import finished_runs, gather, tag_groups
from radar.reports.deliver import Notifier, Outcome, deliver, jobs, summarize_outcomes
from radar.reports.errors import ReportError
from radar.reports.period import Period
from radar.reports.summarize import Summarizer
from radar.repro.methods import Method, register_user_presets, user_presets_kept
from radar.store import ConfigError, Store, WorkspaceError
from radar.store.errors import RadarError
from radar.store.names import NameRow

if TYPE_CHECKING:
    from radar.repro.runner import RunSpec

Progress = Callable[[int, int], None]


# -- crawl ---------------------------------------------------------------------------------------------
def crawl_sources(
    radar: Radar,
    *,
    source: str | None = None,
    since: datetime | None = None,
    progress: CrawlProgress | None = None,
) -> list[SourceResult]:
    """Fetch what is new from the configured sources (one source with ``source``)."""
    config = radar.settings.config
    if source:
        config.source(source)  # unknown name: one line listing the configured ones
    with radar.ws.lock("crawl"), radar.store() as store:
        return crawl(store, config, only=source, since=since, progress=progress)


# -- index ---------------------------------------------------------------------------------------------
@dataclass
class IndexRun:
    report: IndexReport
    device: str
    engine: str


def index(
    radar: Radar,
    *,
    device: str = "auto",
    engine: str = "local",
    progress: Progress | None = None,
    embedder: Embedder | None = None,
    prebuilt: Sequence[PrebuiltVectors] | None = None,
) -> IndexRun:
    """Embed what is new or changed and bring the vector and keyword indexes in step with the store.

    Vectors of the prebuilt files (default: those `radar import` found beside the files it imported) are
    reused where their model id and content hash match; pass ``prebuilt=()`` to embed everything."""
    settings = radar.settings
    if prebuilt is None:
        prebuilt = wiring.prebuilt_vectors(radar)
    with radar.ws.lock("index"), radar.store() as store:
        emb = embedder or wiring.embedder(radar, device=device)
        batches: BatchEmbedder
        if engine == "ray":
            from radar.index.ray_engine import ray_batches  # Ray is an optional extra

            batches = ray_batches(settings.embedding, device=emb.device, cache_dir=radar.ws.model_cache_dir)
        else:
            batches = local_batches(emb)
        report = run_index(
            wiring.index_paths(radar),
            store,
            model_id=emb.model_id,
            dim=emb.dim,
            batches=batches,
            search_cfg=settings.search,
            progress=progress,
            prebuilt=prebuilt,
        )
    return IndexRun(report, emb.device, engine)


def open_searcher(radar: Radar) -> Searcher:
    """A hybrid searcher over the workspace; the caller closes ``searcher.store`` when done."""
    store = radar.store()
    try:
        return wiring.searcher(radar, store)
    except BaseException:
        store.close()
        raise


# -- tags ----------------------------------------------------------------------------------------------
def tag(
    radar: Radar, *, retrain: bool = False, progress: Progress | None = None, tagger: Tagger = tag_documents
) -> TagReport:
    """Tag embedded documents the current model has not decided yet (training it when needed)."""
    with radar.ws.lock("tag"), radar.store() as store:
        return tagger(store, wiring.tag_env(radar, store), retrain=retrain, progress=progress)


def evaluate_tags(radar: Radar, labels: Path) -> dict[str, Any]:
    """`radar tag eval`: per-tag precision/recall/F1 against a label file (works before indexing)."""
    with radar.store() as store:
        return evaluate_file(store, wiring.tag_env(radar, store, allow_empty=True), labels)


def review_queue(radar: Radar, k: int = 10) -> list[ReviewItem]:
    """The papers the tag model is least sure about in the lab's important tags: confirm or remove each
    (`fix_tags`); every answer is a correction the next retrain learns from."""
    with radar.store() as store:
        return review_papers(store, wiring.tag_env(radar, store), k=k)


def fix_tags(radar: Radar, doc_id: str, add: Sequence[str], remove: Sequence[str]) -> list[str]:
    """Record a correction (applies at once, weighs in the next retrain); the document's tags after it."""
    with radar.store() as store:
        record_correction(store, radar.taxonomy, doc_id, add, remove)
        return store.tags_of([doc_id]).get(doc_id, [])


# -- names ---------------------------------------------------------------------------------------------
def stored_names(store: Store, as_of: str = "") -> list[NameRow]:
    """The names table of ``store`` up to ``as_of`` (the names stage, ``analysis.names.stage``), computed on
    first use after the documents change."""
    return names_stage.stored_names(store, as_of)


# -- trends --------------------------------------------------------------------------------------------
def trends(
    radar: Radar,
    store: Store | None = None,
    *,
    as_of: date | None = None,
    window: str = "week",
    topics: bool = True,
    progress: Progress | None = None,
    detector: TrendDetector = compute_trends,
) -> TrendsResult:
    """What is rising, falling and new as of ``as_of`` (documents published on or before it only), on
    ``store`` or a connection of its own."""
    if store is None:
        with radar.store() as opened:
            return trends(
                radar, opened, as_of=as_of, window=window, topics=topics, progress=progress, detector=detector
            )
    return detector(
        store, wiring.trends_env(radar, store), as_of=as_of, window=window, topics=topics, progress=progress
    )


def report_trends(radar: Radar, store: Store, as_of: date) -> tuple[TrendsResult, str]:
    """Trends for a report: as of the period's end over a month window (a week holds 400-1,000 papers, too
    few for significance; the report's own weekly series come from the store). When they fail: empty
    trends and a note saying why (the report still goes out)."""
    try:
        return trends(radar, store, as_of=as_of, window="month"), ""
    except RadarError as exc:
        return TrendsResult.empty(), f"trends not available: {exc}"


# -- report and delivery ---------------------------------------------------------------------------------
def report(
    radar: Radar,
    period: Period,
    *,
    formats: str | None = None,
    trends_result: tuple[TrendsResult, str] | None = None,
    summarizer: Summarizer | None = None,
) -> BuiltReport:
    """Gather one period's report and write it under reports/<period>/ (md, html, json; pdf on request)."""
    started = time.perf_counter()
    settings = radar.settings.with_formats(formats)
    with radar.store() as store:
        found, note = trends_result if trends_result is not None else report_trends(radar, store, period.end)
        content = gather(
            store,
            period,
            settings.report,
            settings.profile,
            trends=found,
            grouping=tag_groups({t.name: t.group for t in radar.taxonomy.tags}, store),
            summarizer=summarizer or wiring.summarizer(radar),
            runs=finished_runs(store, radar.ws.runs_dir),
            presets=repro_titles(radar),
            adoption=names_stage.name_adoption(store),
        )
    content.notes["trends"] = note
    built = write_report(radar.ws.report_dir(period.label), period, content, settings.report)
    built.seconds = time.perf_counter() - started
    return built


@contextmanager
def delivery_lock(radar: Radar) -> Iterator[None]:
    """One delivering process per workspace (`radar report --send` and `radar weekly` alike)."""
    try:
        with radar.ws.lock("deliver"):
            yield
    except WorkspaceError as exc:
        if "another `radar deliver`" not in str(exc):
            raise
        raise ReportError(
            f"another radar process is delivering reports in {radar.ws.root}; wait for it to finish "
            "and rerun (nothing was sent twice)"
        ) from None


def deliver_report(
    radar: Radar, built: BuiltReport, *, retry_earlier: bool = False, notifier: Notifier = jobs
) -> list[Outcome]:
    """Send ``built`` by every configured channel, once per recipient; with ``retry_earlier`` also retry
    the failed deliveries of earlier periods whose reports are still on disk."""
    delivery = radar.settings.delivery
    if not delivery.any_channel:
        raise ConfigError(
            "--send needs a channel: set [delivery] folder, [delivery.email] host/from/to or "
            "[delivery.webhook] url in radar.toml (or RADAR_SMTP_*/RADAR_WEBHOOK_URL)"
        )
    with delivery_lock(radar), radar.store() as store:
        outcomes = deliver(store, built, delivery, notifier)
        if retry_earlier:
            failed = {row.period for row in store.deliveries(status="failed")} - {built.period.label}
            for label in sorted(failed):
                earlier = load_report(radar.ws.report_dir(label))
                if earlier is not None:
                    outcomes += deliver(store, earlier, delivery, notifier)
    return outcomes


# -- weekly ----------------------------------------------------------------------------------------------
WEEKLY_STEPS = ("crawl", "index", "alerts", "tag", "trends", "report", "deliver", "digests", "reproduce")
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


def weekly(radar: Radar, period: Period, *, skip: Sequence[str] = (), log: Log | None = None) -> WeeklyResult:
    """`radar weekly`: every step in order under the "weekly" lock; each step also takes its own stage's lock
    (a `radar crawl` or `radar tag` started by hand waits its turn: one line, not a second fetch).

    Idempotent: each step does only what is new (crawl cursors, content hashes, undecided documents), the
    report is rewritten with the same content, and the deliveries table keeps a recipient from getting a
    period twice; failed deliveries of this and earlier periods are retried. A failed step is reported and
    the run goes on where it can (no trends: the report still goes out). Exit code 0 all good, 2 something
    failed. Raises WorkspaceError when another weekly run holds the lock, ConfigError for a bad radar.toml."""
    say = log or (lambda _msg: None)
    settings = radar.settings  # a bad radar.toml stops here, before any step
    result = WeeklyResult(period)
    found: tuple[TrendsResult, str] = (TrendsResult.empty(), "trends skipped or failed")

    def run_step(name: str, fn: Callable[[], tuple[bool, str]]) -> None:
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

    def crawl_step() -> tuple[bool, str]:
        results = crawl_sources(radar)
        added = sum(r.counts.added for r in results)
        failed = [r for r in results if not r.ok]
        text = f"{added} new from {len(results)} source(s)"
        if failed:
            text += "; failed: " + "; ".join(f"{r.source}: {r.message}" for r in failed)
        return not failed, text

    def index_step() -> tuple[bool, str]:
        rep = index(radar).report
        return True, f"{rep.embedded} embedded, {rep.vectors} vectors"

    def alerts_step() -> tuple[bool, str]:
        runs = steps_people.alerts(radar)  # after the index step: saved searches find new papers by their vectors
        if not runs:
            return True, "no saved searches"
        failed = [o for r in runs for o in r.outcomes if o.status == "failed"]
        text = f"{sum(len(r.new) for r in runs)} new match(es) for {len(runs)} person(s)"
        return not failed, text + (f"; {len(failed)} delivery(ies) failed" if failed else "")

    def digests_step() -> tuple[bool, str]:
        done = steps_people.digests(radar, period, send=settings.delivery.any_channel)
        if not done:
            return True, "no people (radar people add NAME)"
        failed = [o for d in done for o in d.outcomes if o.status == "failed"]
        sent = sum(o.status == "sent" for d in done for o in d.outcomes)
        text = f"{len(done)} digest(s) written, {sent} sent"
        return not failed, text + (f"; {len(failed)} delivery(ies) failed" if failed else "")

    def tag_step() -> tuple[bool, str]:
        rep = tag(radar)
        parts = [f"{rep.decided} decided"]
        if rep.trained:
            parts.append("model trained")
        if rep.unembedded:
            parts.append(f"{rep.unembedded} not embedded yet")
        return True, ", ".join(parts)

    def trends_step() -> tuple[bool, str]:
        nonlocal found
        with radar.store() as store:
            found = report_trends(radar, store, period.end)
        trends_found, note = found
        if note:
            return True, note
        return True, f"{len(trends_found.emerging)} emerging, {len(trends_found.new_methods)} new methods"

    def report_step() -> tuple[bool, str]:
        result.report = report(radar, period, trends_result=found)
        r = result.report.as_dict()
        return True, f"{r['documents']} documents, {r['recommendations']} recommendations -> {result.report.folder}"

    def deliver_step() -> tuple[bool, str]:
        if not settings.delivery.any_channel:
            return True, "no [delivery] channel configured"
        if result.report is None:
            return False, "no report to deliver"
        result.outcomes = deliver_report(radar, result.report, retry_earlier=True)
        return all(o.status != "failed" for o in result.outcomes), summarize_outcomes(result.outcomes)

    def reproduce_step() -> tuple[bool, str]:
        # Last: it needs this week's recommendations, and the training it starts (detached) must neither slow
        # nor block the report's delivery; its verdicts reach next week's report (rules repro-better/-worse).
        cfg = settings.repro
        if not cfg.weekly_runs:
            return True, "off ([repro] weekly_runs = 0)"
        if result.report is None:
            return False, "no report, so no recommendations to reproduce"
        recs = result.report.content.recommendations
        queued, left = reproduce_recommended(radar, recs, cfg.weekly_runs, period.label)
        new = [q for q in queued if q.new]
        parts = [f"{len(new)} queued" + (f" ({', '.join(q.method for q in new)})" if new else "")]
        if len(queued) > len(new):
            parts.append(", ".join(f"{q.method} {q.status}" for q in queued if not q.new))
        wanted = {r["evidence"].get("preset") for r in recs if r.get("action") == "reproduce"} - {None, ""}
        if not left and len(wanted) > len(queued):
            parts.append(f"this week's budget of {cfg.weekly_runs} is used")
        if new and cfg.run_queued:
            pid = start_queue_worker(radar)
            parts.append(f"worker pid {pid}" if pid else "a worker is already running them")
        elif new:
            parts.append("run them with `radar repro work`")
        return True, "; ".join(parts)

    with radar.ws.lock("weekly"):
        order = (
            crawl_step,
            index_step,
            alerts_step,
            tag_step,
            trends_step,
            report_step,
            deliver_step,
            digests_step,
            reproduce_step,
        )
        for name, fn in zip(WEEKLY_STEPS, order, strict=True):
            run_step(name, fn)
    return result


# -- reproductions: user presets, the queue, its worker -------------------------------------------------
REPRO_LOCK = "repro work"  # one queue worker per workspace
DEDUPE_STATUSES = ("queued", "running", "done")  # a failed or cancelled run does not block a new one


def user_presets(radar: Radar) -> list[Method]:
    """Register radar.toml's [[repro.presets]] with repro (validated when the settings were read)."""
    return register_user_presets(list(radar.settings.repro.presets), replace=True)


def repro_titles(radar: Radar) -> dict[str, str]:
    """Every reproduction preset (built-in and radar.toml's) by name -> title: the report finds them in papers."""
    return wiring.repro_presets() | {m.name: m.title for m in user_presets(radar)}


def repro_spec(radar: Radar, method: str) -> RunSpec:
    """The run `radar weekly` and the dashboard's Reproduce button queue for ``method``: [repro]'s settings."""
    from radar.repro.runner import RunSpec

    user_presets(radar)
    cfg = radar.settings.repro
    extra: dict[str, Any] = {
        k: v
        for k, v in (("model", cfg.model), ("dataset", cfg.dataset), ("lora", cfg.lora))
        if v and k in RunSpec.__dataclass_fields__
    }
    return RunSpec(
        method=method, task=cfg.task, preset=cfg.preset, seeds=cfg.seeds, steps=cfg.steps, device=cfg.device, **extra
    )


def dedupe_key(spec: RunSpec, dataset_sha256: str = "") -> str:
    """What makes two runs the same experiment: both arms' full settings (a user preset's, as defined now), the
    task or dataset (its content hash: ``dataset_sha256`` when a run recorded it, else the file's now), model,
    size, seeds and steps; not the device."""
    from radar.repro.methods import get_method, settings

    doc: dict[str, Any] = {k: v for k, v in asdict(spec).items() if k != "device"}
    doc["steps"] = spec.total_steps
    doc["settings"] = {arm: settings(get_method(getattr(spec, arm))) for arm in ("method", "baseline")}
    dataset = doc.get("dataset")
    if not dataset_sha256 and isinstance(dataset, str) and dataset and Path(dataset).is_file():
        dataset_sha256 = hashlib.sha256(Path(dataset).read_bytes()).hexdigest()
    if dataset_sha256:  # the data, not where it lies (`radar repro run --dataset` keeps a relative path)
        doc["dataset"] = f"sha256:{dataset_sha256}"
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()[:20]


@dataclass
class Queued:
    """One reproduction the queue was asked for: ``status`` "queued" (new run) or "already <status>"."""

    method: str
    run_id: str
    status: str
    key: str

    @property
    def new(self) -> bool:
        return self.status == "queued"


def _existing(store: Store, key: str) -> dict[str, Any] | None:
    from radar.repro.runner import KIND, spec_of

    for run in store.list_runs(kind=KIND):  # newest first
        if run["status"] not in DEDUPE_STATUSES:
            continue
        stored = run["params"].get("dedupe_key")
        if stored is None:  # a run started by hand (`radar repro run`): the same experiment counts too
            try:
                with user_presets_kept():  # the run's own preset definitions, not radar.toml's current ones
                    # and the data it trained on: the file may have changed since (and is not re-read per run)
                    stored = dedupe_key(spec_of(run["params"]), str(run["params"].get("dataset_sha256") or ""))
            except RadarError:  # an old record or a preset no longer defined
                continue
        if stored == key:
            return run
    return None


def queue_reproduction(
    radar: Radar, method: str, *, queued_by: str, week: str = "", store: Store | None = None
) -> Queued:
    """Queue a reproduction of ``method`` with [repro]'s settings unless the same experiment is already queued,
    running or done (the dedupe key is stored in the run's params, with who queued it and for which week).
    Nothing is started here."""
    if store is None:
        with radar.store() as opened:
            return queue_reproduction(radar, method, queued_by=queued_by, week=week, store=opened)
    from radar.repro import runner

    spec = repro_spec(radar, method)
    key = dedupe_key(spec)
    with _queue_lock(radar):  # look-up and submit as one: two clicks (or weekly and a click) queue one run
        found = _existing(store, key)
        if found is not None:
            return Queued(method, found["id"], f"already {found['status']}", key)
        run_id = runner.new_run_id(spec)
        runner.submit(store, spec, run_id, radar.ws.run_dir(run_id), radar.ws.policy_cache_dir)
        params = store.get_run(run_id)["params"]  # type: ignore[index]
        store.update_run(run_id, params=params | {"dedupe_key": key, "queued_by": queued_by, "queued_for": week})
    return Queued(method, run_id, "queued", key)


QUEUE_LOCK = "repro queue"


@contextmanager
def _queue_lock(radar: Radar, wait_s: float = 30.0) -> Iterator[None]:
    """The workspace's queue lock, waited for (up to ``wait_s``: a look-up and a submit take well under a second)."""
    deadline = time.monotonic() + wait_s
    while True:
        held = ExitStack()
        try:
            held.enter_context(radar.ws.lock(QUEUE_LOCK))
        except WorkspaceError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
            continue
        with held:  # only the acquisition is retried, never the caller's block
            yield
        return


def reproduce_recommended(
    radar: Radar, recommendations: Sequence[dict[str, Any]], budget: int, week: str
) -> tuple[list[Queued], int]:
    """Queue the ``reproduce`` recommendations' presets, at most ``budget`` new runs for ``week`` (runs queued for
    it by an earlier weekly run count; duplicates cost nothing). Returns (asked for, budget left)."""
    from radar.repro.runner import KIND

    out: list[Queued] = []
    presets = [r.get("evidence", {}).get("preset", "") for r in recommendations if r.get("action") == "reproduce"]
    with radar.store() as store:
        left = budget - sum(r["params"].get("queued_for") == week for r in store.list_runs(kind=KIND))
        for preset in dict.fromkeys(p for p in presets if p):
            if left <= 0:
                break
            queued = queue_reproduction(radar, preset, queued_by="weekly", week=week, store=store)
            out.append(queued)
            left -= queued.new
    return out, max(left, 0)


def queued_runs(store: Store) -> list[dict[str, Any]]:
    """Runs the queue holds (queued by weekly or the dashboard, no worker yet), oldest first."""
    from radar.repro.runner import KIND

    runs = store.list_runs(kind=KIND, status="queued")
    return [r for r in reversed(runs) if r["params"].get("queued_by") and not r["pid"]]


def work_queue(radar: Radar, *, log: Log | None = None, max_runs: int = 0) -> list[dict[str, Any]]:
    """`radar repro work`: run the queued reproductions one after another (one worker per workspace), until the
    queue is empty (or ``max_runs`` are done). Returns the finished runs."""
    say = log or (lambda _msg: None)
    done: list[dict[str, Any]] = []
    user_presets(radar)
    with radar.ws.lock(REPRO_LOCK):
        stopped = _work(radar, say, max_runs, done)
    # A run queued while this worker was finding the queue empty saw the lock held and started no worker:
    # look again now that the lock is released (start_queue_worker probes the lock only after submitting).
    while not stopped and (not max_runs or len(done) < max_runs):
        with radar.store() as store:
            if not queued_runs(store):
                break
        held = ExitStack()
        try:
            held.enter_context(radar.ws.lock(REPRO_LOCK))
        except WorkspaceError:
            break  # another worker took the queue over
        with held:
            stopped = _work(radar, say, max_runs, done)
    return done


def _work(radar: Radar, say: Log, max_runs: int, done: list[dict[str, Any]]) -> bool:
    """Run queued runs (appended to ``done``) until none waits or ``max_runs`` are done; True when told to stop."""
    from radar.repro import runner

    while not max_runs or len(done) < max_runs:
        with radar.store() as store:
            waiting = queued_runs(store)
            if not waiting:
                break
            run_id = waiting[0]["id"]
            runner.check_device(waiting[0]["params"].get("device", "auto"))
            say(f"{run_id}: starting ({len(waiting) - 1} more queued)")
            proc = runner.start(store, run_id)
            run = runner.wait(store, run_id, proc)
        verdict = ((run.get("result") or {}).get("verdict") or {}).get("overall", "")
        say(
            f"{run_id}: {run['status']}"
            + (f", {verdict}" if verdict else "")
            + (f" ({run['error']})" if run["error"] else "")
        )
        done.append(run)
        if run["status"] == "cancelled" and "stopped by" in (run["error"] or ""):
            return True  # the worker itself was told to stop
    return False


def start_queue_worker(radar: Radar) -> int | None:
    """Start `radar repro work` detached (its output: runs/queue.log) unless one is running; returns its pid."""
    try:
        with radar.ws.lock(REPRO_LOCK):
            pass
    except WorkspaceError:
        return None  # a worker is draining the queue already; it picks up the new runs
    log = radar.ws.queue_log_path
    try:
        radar.ws.runs_dir.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "radar.app.cli", "--workspace", str(radar.ws.root), "repro", "work"],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
    except OSError as exc:  # a full disk or a process limit: one line for the CLI and the dashboard, run stays queued
        raise WorkspaceError(
            f"could not start the queue worker ({exc.strerror or exc}); the run stays queued: `radar repro work`"
        ) from exc
    return proc.pid


def reproduce(radar: Radar, method: str, *, queued_by: str) -> Queued:
    """The dashboard's Reproduce button: queue (same dedupe as weekly) and make sure a worker runs the queue."""
    queued = queue_reproduction(radar, method, queued_by=queued_by)
    if queued.new and radar.settings.repro.run_queued:
        start_queue_worker(radar)
    return queued
