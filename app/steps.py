"""The pipeline's steps, each once: what the CLI commands, the dashboard and `radar weekly` (app.weekly) call.

    crawl  -> index -> tag -> trends -> report -> deliver        (app.weekly runs them in order, with alerts,
    evaluate_tags, fix_tags                                       digests and the reproduce queue beside them;
                                                                  wiring.open_searcher: queries)

Each step takes a ``Radar`` (workspace + settings read once), opens what it needs, takes the
workspace lock its stage must not share, and hands the stage only its config and collaborators
(built by app.wiring). Nothing below app/ reads radar.toml or names a workspace path.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from radar.analysis.contributions.adoptions import Adoptions
from radar.analysis.contributions.cards import MethodCard
from radar.analysis.contributions.frameworks import with_adoptions
from radar.analysis.contributions.labels import KINDS
from radar.analysis.contributions.table import Contributions
from radar.analysis.contributions.week import introduced_methods, week_cards
from radar.analysis.names import stage as names_stage
from radar.analysis.names.table import NameRow
from radar.analysis.tags.evaluate import TagEvaluation, evaluate_file
from radar.analysis.tags.review import ReviewItem
from radar.analysis.tags.review import review_queue as review_papers
from radar.analysis.tags.tagger import Tagger, TagReport, record_correction, tag_documents
from radar.analysis.trends.compute import TrendDetector, compute_trends
from radar.analysis.trends.result import PeriodTrends, TrendsResult
from radar.app import period_trends, steps_contributions, wiring
from radar.app.context import Radar
from radar.crawler.documents import Documents
from radar.crawler.run import ProgressFn as CrawlProgress
from radar.crawler.run import SourceResult, crawl
from radar.index.embedder import Embedder
from radar.index.pipeline import BatchEmbedder, IndexReport, local_batches, run_index
from radar.index.prebuilt import PrebuiltVectors
from radar.index.ray_engine import ray_batches
from radar.index.tags_table import Tags
from radar.reports.build import BuiltReport, load_report, write_report
from radar.reports.calls import WEEKS_AGO, PastWeek
from radar.reports.content import ReportInputs, gather, tag_groups
from radar.reports.deliver import Notifier, Outcome, deliver, jobs
from radar.reports.deliveries import Deliveries
from radar.reports.errors import ReportError
from radar.reports.period import Period
from radar.reports.sections import Area
from radar.reports.summarize import Summarizer
from radar.repro.runs_table import Runs
from radar.store import ConfigError, Store, Workspace, WorkspaceError
from radar.store.errors import RadarError
from radar.store.table import Database
from radar.store.workspace import cannot_write

Progress = Callable[[int, int], None]


def index_writes(ws: Workspace) -> list[Path]:
    """What `radar index` writes: the database and index/ (its vector and keyword indexes are replaced there)."""
    return [ws.db_path, ws.index_dir, ws.vector_dir, ws.keyword_dir]


# -- crawl ---------------------------------------------------------------------------------------------
def crawl_sources(
    radar: Radar,
    *,
    source: str | None = None,
    since: datetime | None = None,
    progress: CrawlProgress | None = None,
) -> list[SourceResult]:
    """Fetch what is new from the configured sources (one source with ``source``)."""
    config = radar.settings.crawler
    if source:
        config.source(source)  # unknown name: one line listing the configured ones
    with radar.ws.lock("crawl", writes=[radar.ws.db_path]), radar.store() as store:
        results = crawl(store, config, only=source, since=since, progress=progress)
        steps_contributions.refresh(radar, store)  # what each new paper introduces (seconds for a week)
        return results


# -- index ---------------------------------------------------------------------------------------------
@dataclass
class IndexRun:
    report: IndexReport
    device: str
    engine: str
    left: int = 0  # documents not embedded because of ``limit`` (the next run embeds them)


def index(
    radar: Radar,
    *,
    device: str = "auto",
    engine: str = "local",
    progress: Progress | None = None,
    embedder: Embedder | None = None,
    prebuilt: Sequence[PrebuiltVectors] | None = None,
    limit: int = 0,
) -> IndexRun:
    """Embed what is new or changed and bring the vector and keyword indexes in step with the store.

    Vectors of the prebuilt files (default: those `radar import` found beside the files it imported) are
    reused where their model id and content hash match; pass ``prebuilt=()`` to embed everything. With
    ``limit``, at most that many (the newest stored) are embedded; the rest stay pending for the next run."""
    settings = radar.settings
    if prebuilt is None:
        prebuilt = wiring.prebuilt_vectors(radar)
    with radar.ws.lock("index", writes=index_writes(radar.ws)), radar.store() as store:
        emb = embedder or wiring.embedder(radar, device=device, lazy=True)  # loaded only if something is new
        batches: BatchEmbedder
        if engine == "ray":
            on_ray = ray_batches(settings.embedding, device=emb.device, cache_dir=radar.ws.model_cache_dir)

            def warmed(items: list[tuple[str, str]]) -> Iterator[tuple[list[str], Any]]:
                if items:  # loaded (and exported into the cache) here once, not by every Ray worker at the same time
                    emb.embed([])
                return on_ray(items)

            batches = warmed
        else:
            batches = local_batches(emb)
        left = 0
        if limit:
            unlimited = batches

            def capped(items: list[tuple[str, str]]) -> Iterator[tuple[list[str], Any]]:
                nonlocal left
                left = max(0, len(items) - limit)
                return unlimited(items[-limit:])

            batches = capped
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
    return IndexRun(report, emb.device, engine, left)


# -- tags ----------------------------------------------------------------------------------------------
def tag(
    radar: Radar, *, retrain: bool = False, progress: Progress | None = None, tagger: Tagger = tag_documents
) -> TagReport:
    """Tag embedded documents the current model has not decided yet (training it when needed)."""
    with radar.ws.lock("tag", writes=[radar.ws.db_path, radar.ws.tag_model_path]), radar.store() as store:
        return tagger(store, wiring.tag_env(radar, store), retrain=retrain, progress=progress)


def evaluate_tags(radar: Radar, labels: Path) -> TagEvaluation:
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
        return Tags(store).of([doc_id]).get(doc_id, [])


# -- names ---------------------------------------------------------------------------------------------
def stored_names(store: Database, as_of: str = "") -> list[NameRow]:
    """The names table of ``store`` up to ``as_of`` (the names stage, ``analysis.names.stage``), computed on
    first use after the documents change."""
    return names_stage.stored_names(store, as_of)


# -- trends --------------------------------------------------------------------------------------------
def trends(
    radar: Radar,
    store: Store | None = None,  # the whole Store: trends, and through trends_env the names and the contributions
    *,
    as_of: date | None = None,
    window: str = "week",
    topics: bool = True,
    progress: Progress | None = None,
    detector: TrendDetector = compute_trends,
) -> TrendsResult:
    """What is rising, falling and new as of ``as_of`` (documents published on or before it only), on
    ``store`` or a connection of its own; the contributions the new methods read are brought up to date first."""
    if store is None:
        with radar.store() as opened:
            return trends(
                radar, opened, as_of=as_of, window=window, topics=topics, progress=progress, detector=detector
            )
    steps_contributions.refresh(radar, store)
    return detector(
        store, wiring.trends_env(radar, store), as_of=as_of, window=window, topics=topics, progress=progress
    )


def report_trends(radar: Radar, store: Store, period: Period) -> tuple[PeriodTrends, str]:
    """The period's trends (app.period_trends: computed once, kept in the workspace, read by the report, `radar
    trends --week` and the dashboard). When they fail: empty trends and a note saying why (the report still
    goes out)."""
    try:
        return period_trends.get(radar, store, period), ""
    except RadarError as exc:
        return PeriodTrends.empty(period.label), f"trends not available: {exc}"


# -- report and delivery ---------------------------------------------------------------------------------
def report(
    radar: Radar,
    period: Period,
    *,
    formats: str | None = None,
    trends_result: tuple[PeriodTrends, str] | None = None,
    summarizer: Summarizer | None = None,
    area_of: Area | None = None,
    folder: Path | None = None,
) -> BuiltReport:
    """Gather one period's report and write it under reports/<period>/ (md, html, json; pdf on request), or
    into ``folder``. ``area_of``: each paper's contribution area (reports.sections; default: the contributions
    stage's)."""
    started = time.perf_counter()
    settings = radar.settings.with_formats(formats)
    target = folder or radar.ws.report_dir(period.label)
    why = cannot_write(target)
    if why:  # said before the report is gathered, not after
        raise ReportError(
            f"the report goes to {target}, but {why}; write it elsewhere with `radar report --out DIR`, or run it "
            "as the workspace's owner"
        )
    catalog = wiring.repro_catalog(radar)  # resolved once: the runs, the presets, what each sets, their papers
    with radar.store() as store:
        found, note = trends_result if trends_result is not None else report_trends(radar, store, period)
        cards = period_cards(radar, store, period)  # brings the contributions up to date first
        past = past_weeks(radar, store, period)
        inputs = ReportInputs(
            period,
            settings.report,
            settings.profile,
            trends=found,
            grouping=tag_groups({t.name: t.group for t in radar.taxonomy.tags}, store),
            summarizer=summarizer or wiring.summarizer(radar),
            runs=wiring.reproductions(radar, catalog).finished(Runs(store)),
            presets=catalog.titles(),
            cards=cards,
            knobs=wiring.preset_knobs(catalog),
            preset_papers={name: m.arxiv for name, m in catalog.methods.items() if m.arxiv},
            area_of=area_of or contribution_areas(store, period),
            past=past,
        )
        content = gather(store, inputs)
    content.notes.trends = note
    built = write_report(target, period, content, settings.report)
    built.seconds = time.perf_counter() - started
    return built


def period_cards(radar: Radar, store: Database, period: Period) -> list[MethodCard]:
    """The method cards of the period's papers: for a week what `radar methods --week` lists (the same call), for
    a date range those of every kind and area its papers introduce, in the same order."""
    if period.is_week:
        return steps_contributions.week(radar, store, period.label)
    steps_contributions.refresh(radar, store)
    cards = introduced_methods(
        store,
        period.start.isoformat(),
        period.end.isoformat(),
        steps_contributions.presets(radar),
        kinds=KINDS,
        areas=(),
        groups=steps_contributions.tag_groups(radar),
    )
    return steps_contributions.rewrite_changes(store, cards, steps_contributions.changes_writer(radar))


def past_weeks(radar: Radar, store: Database, period: Period) -> list[PastWeek]:
    """For a week's report, the weeks ``WEEKS_AGO`` before it: their cards (the week listing, with framework
    adoptions; no summary endpoint call) and what each week's stored report flagged (None when none was stored)."""
    if not period.is_week:
        return []
    presets, groups = steps_contributions.presets(radar), steps_contributions.tag_groups(radar)
    out = []
    for k in WEEKS_AGO:
        earlier = period.shifted(-k)
        cards = with_adoptions(Adoptions(store), week_cards(store, earlier.label, presets, groups))
        stored = load_report(radar.ws.report_dir(earlier.label))
        flagged = (
            {r.method: r.action for r in stored.content.recommendations if r.evidence.new}
            if stored is not None
            else None
        )
        out.append(PastWeek(earlier.label, k, cards, flagged))
    return out


def contribution_areas(store: Database, period: Period) -> Area:
    """area_of(doc_id): the area of the paper's stored contribution (rl-post-training, hardware-systems,
    other-llm, other; reports.sections places it), None for a document the contributions stage has not decided."""
    ids = [d.id for d in Documents(store).scan(since=period.since, until=period.until, kind="paper")]
    rows = Contributions(store).contributions(ids)
    return lambda doc_id: rows[doc_id].area if doc_id in rows else None


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
            failed = {row.period for row in Deliveries(store).find(status="failed")} - {built.period.label}
            for label in sorted(failed):
                earlier = load_report(radar.ws.report_dir(label))
                if earlier is not None:
                    outcomes += deliver(store, earlier, delivery, notifier)
    return outcomes
