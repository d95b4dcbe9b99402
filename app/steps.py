"""The pipeline's steps, each once: what the CLI commands, the dashboard and `radar weekly` call.

    crawl  -> index -> tag -> trends -> report -> deliver        (weekly runs them in this order)
    open_searcher, evaluate_tags, fix_tags                       (queries and corrections)

Each step takes a ``Radar`` (workspace + settings read once), opens what it needs, takes the
workspace lock its stage must not share, and hands the stage only its config and collaborators
(built by app.wiring). Nothing below app/ reads radar.toml or names a workspace path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from radar.analysis.tags.evaluate import evaluate_file
from radar.analysis.tags.tagger import TagReport, record_correction, tag_documents
from radar.analysis.trends.compute import compute_trends
from radar.analysis.trends.result import TrendsResult
from radar.app import wiring
from radar.app.context import Radar
from radar.crawler.run import ProgressFn as CrawlProgress
from radar.crawler.run import SourceResult, crawl
from radar.index.embedder import Embedder
from radar.index.pipeline import BatchEmbedder, IndexReport, local_batches, run_index
from radar.index.search import Searcher
from radar.store import Store

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
) -> IndexRun:
    """Embed what is new or changed and bring the vector and keyword indexes in step with the store."""
    settings = radar.settings
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
def tag(radar: Radar, *, retrain: bool = False, progress: Progress | None = None) -> TagReport:
    """Tag embedded documents the current model has not decided yet (training it when needed)."""
    with radar.ws.lock("tag"), radar.store() as store:
        return tag_documents(store, wiring.tag_env(radar, store), retrain=retrain, progress=progress)


def evaluate_tags(radar: Radar, labels: Path) -> dict[str, Any]:
    """`radar tag eval`: per-tag precision/recall/F1 against a label file (works before indexing)."""
    with radar.store() as store:
        return evaluate_file(store, wiring.tag_env(radar, store, allow_empty=True), labels)


def fix_tags(radar: Radar, doc_id: str, add: Sequence[str], remove: Sequence[str]) -> list[str]:
    """Record a correction (applies at once, weighs in the next retrain); the document's tags after it."""
    with radar.store() as store:
        record_correction(store, radar.taxonomy, doc_id, add, remove)
        return store.tags_of([doc_id]).get(doc_id, [])


# -- trends --------------------------------------------------------------------------------------------
def trends(
    radar: Radar,
    store: Store | None = None,
    *,
    as_of: date | None = None,
    window: str = "week",
    topics: bool = True,
    progress: Progress | None = None,
) -> TrendsResult:
    """What is rising, falling and new as of ``as_of`` (documents published on or before it only)."""
    with nullcontext(store) if store is not None else radar.store() as opened:
        assert opened is not None
        return compute_trends(
            opened, wiring.trends_env(radar), as_of=as_of, window=window, topics=topics, progress=progress
        )
