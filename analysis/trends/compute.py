"""compute_trends: the one entry point; every part reads the same cached term table and windows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Protocol

import msgspec
import numpy as np

from radar.analysis.trends.cache import CACHE_VERSION, RULES, Progress, documents_version, term_table
from radar.analysis.trends.config import TrendsConfig, Windows, check_window, series_starts, windows
from radar.analysis.trends.emerging import term_lists
from radar.analysis.trends.errors import TrendsError
from radar.analysis.trends.family import family_lists, join
from radar.analysis.trends.methods import Introductions, first_seen_names, introduced_names, introduction_span
from radar.analysis.trends.parts import Parts, code_version, settings_key
from radar.analysis.trends.result import NewMethod, Span, TermTrend, Topic, TrendsResult
from radar.analysis.trends.series import TagSeries, tag_series
from radar.analysis.trends.term_table import TermTable, day_date, day_number
from radar.analysis.trends.topics import current_model, discover_topics
from radar.index.config import EmbeddingConfig
from radar.index.embeddings import Embeddings
from radar.index.tags_table import Tags
from radar.store.table import Database


@dataclass(frozen=True)
class TrendsEnv:
    """What the trends stage needs from outside it; the composition root (app) builds it."""

    config: TrendsConfig
    embedding: EmbeddingConfig  # whose stored vectors the topics cluster
    term_cache: Path  # the document x term table cache
    topics_dir: Path  # topic centroids per run, so topics keep their ids
    tag_groups: dict[str, list[str]] | None = None  # from the taxonomy; None: no group series
    # what papers of a span of days introduce (analysis.contributions' cards): the new methods; without it the
    # names first seen recently, with their kind from ``kind_of`` (analysis.names): the backtest's plain baseline
    introductions: Introductions | None = None
    kind_of: Callable[[str], str | None] | None = None
    # where each part of an answer is kept under a key of its inputs (parts.py; None: nothing kept), and the version
    # of what ``introductions`` reads (None: the new methods are computed on every call). Trends only read: the
    # command brings what ``introductions`` reads up to date before it computes them.
    parts_dir: Path | None = None
    methods_version: Callable[[], str] | None = None


class TrendDetector(Protocol):
    """The trends stage's seam: what the report and the dashboard call."""

    def __call__(
        self,
        store: Database,
        env: TrendsEnv,
        *,
        as_of: date | None = None,
        window: str = "week",
        topics: bool = True,
        progress: Progress | None = None,
    ) -> TrendsResult: ...


def default_as_of(days: np.ndarray) -> date:
    """The newest day whose past 7 days hold at least half the usual (median of the last 26 weeks)
    weekly volume: a trickle of late documents after the data ends must not make an empty window."""
    first = int(days[0])
    daily = np.bincount(days - first)
    weekly = np.convolve(daily, np.ones(7), mode="full")[: len(daily)]
    usual = float(np.median(weekly[-26 * 7 :: 7])) if len(weekly) else 0.0
    full = np.flatnonzero(weekly >= 0.5 * usual)
    return day_date(first + int(full[-1] if len(full) else len(daily) - 1))


# The parts of a result, each kept by ``Parts`` as its JSON and read back as its type (msgspec checks each value).
class Frame(msgspec.Struct, frozen=True):
    """The part of a result every other part is relative to: the as-of day and the windows."""

    as_of: str
    recent: Span
    baseline: Span
    periods: list[str]


class TermsPart(msgspec.Struct, frozen=True):
    emerging: list[TermTrend]
    declining: list[TermTrend]


class TopicsPart(msgspec.Struct, frozen=True):
    topics: list[Topic]
    note: str


def compute_trends(
    store: Database,
    env: TrendsEnv,
    *,
    as_of: date | None = None,
    window: str = "week",
    cfg: TrendsConfig | None = None,
    topics: bool = True,
    progress: Progress | None = None,
) -> TrendsResult:
    """What is rising, falling and new as of ``as_of`` (default: ``default_as_of``, about the newest day).

    Uses only documents published on or before ``as_of``; ``msgspec.to_builtins(result)`` is the JSON. Each part of the
    answer is kept in ``env.parts_dir`` under a key of its inputs (parts.py): a call whose inputs did not change
    reads them back, without loading the term table.
    """
    check_window(window)
    cfg = cfg or env.config
    asked = as_of.isoformat() if as_of is not None else "newest"
    base = [code_version(), documents_version(store), str(CACHE_VERSION), RULES, settings_key(cfg), asked, window]
    parts = Parts(env.parts_dir, base)
    loaded: list[TermTable] = []

    def table() -> TermTable:
        """The term table, read (or brought up to date) and stratified as of the frame's day on first use."""
        if not loaded:
            found = term_table(env.term_cache, store, progress)
            day = _as_of(found, as_of)
            found.stratify(cfg.major_categories if cfg.stratify else 0, found.rows_until(day_number(day.isoformat())))
            if not cfg.stratify:
                found.stratum, found.strata = np.zeros_like(found.stratum), ["all documents"]
            loaded.append(found)
        return loaded[0]

    frame = parts.get("frame", [], lambda: _frame(table(), _as_of(table(), as_of), window, cfg), shape=Frame)
    day = date.fromisoformat(frame.as_of)
    win = windows(day, window, cfg)
    starts = series_starts(day, window, cfg)

    def terms() -> TermsPart:
        emerging, declining = term_lists(table(), win, cfg, window, starts)
        if cfg.families:
            launches, successions = family_lists(table(), win, cfg, window, starts)
            emerging = join(emerging, launches, cfg.max_terms, rising=True)
            declining = join(declining, successions, cfg.max_terms, rising=False)
        return TermsPart(emerging, declining)

    def tags() -> TagSeries:
        return tag_series(store, table(), win, cfg, window, starts, env.tag_groups)

    def topic_list() -> TopicsPart:
        found, note = discover_topics(
            store, table(), win, cfg, window, embedding=env.embedding, state_dir=env.topics_dir
        )
        return TopicsPart(found, note)

    term_part = parts.get("terms", [], terms, shape=TermsPart)
    groups = repr(sorted((g, sorted(t)) for g, t in (env.tag_groups or {}).items()))
    tag_part = parts.get("tags", [Tags(store).fingerprint(), groups], tags, shape=TagSeries)
    topic_part = TopicsPart([], "not computed")
    if topics:
        model = current_model(store, env.embedding) or ""
        topic_part = parts.get("topics", [str(Embeddings(store).generation()), model], topic_list, shape=TopicsPart)
    if env.methods_version is None or env.introductions is None:  # the plain first-seen names: not kept
        new_methods = _new_methods(env, table(), win, cfg, window, starts)
    else:
        version = env.methods_version
        read_at: list[str] = []

        def methods() -> list[NewMethod]:
            """The new methods, noting the version of what their cards read before reading them."""
            read_at.append(version())
            return _new_methods(env, table(), win, cfg, window, starts)

        def saved_under() -> list[str] | None:
            """The version the cards were read at, when it is still the version now (None otherwise: another
            process wrote contributions meanwhile, and what was read may be older than either; not kept)."""
            now = version()
            return [now] if read_at and read_at[-1] == now else None

        new_methods = parts.get("methods", [version()], methods, shape=list[NewMethod], inputs_after=saved_under)
    return TrendsResult(
        as_of=frame.as_of,
        window=window,
        recent=frame.recent,
        baseline=frame.baseline,
        periods=frame.periods,
        emerging=term_part.emerging,
        declining=term_part.declining,
        tags=tag_part.tags,
        groups=tag_part.groups,
        tag_trends=tag_part.tag_trends,
        group_trends=tag_part.group_trends,
        topics=topic_part.topics,
        topics_note=topic_part.note,
        new_methods=new_methods,
    )


def _as_of(table: TermTable, as_of: date | None) -> date:
    """``as_of``, or the store's default; raises TrendsError on an empty store or a day before its first document."""
    if not len(table.day):
        raise TrendsError("the workspace has no documents yet; run `radar import FILE` or `radar crawl` first")
    first_day, last_day = day_date(int(table.day[0])), day_date(int(table.day[-1]))
    if as_of is None:
        return default_as_of(table.day)
    if as_of < first_day:
        raise TrendsError(
            f"--as-of {as_of.isoformat()} is before the first document ({first_day.isoformat()}); "
            f"use a date between {first_day.isoformat()} and {last_day.isoformat()}"
        )
    return as_of


def _frame(table: TermTable, as_of: date, window: str, cfg: TrendsConfig) -> Frame:
    win = windows(as_of, window, cfg)
    recent_docs = (
        table.rows_until(day_number(as_of.isoformat()))
        - table.row_range(day_number(win.recent_start.isoformat()), 0)[0]
    )
    return Frame(
        as_of=as_of.isoformat(),
        recent=Span(start=win.recent_start.isoformat(), end=as_of.isoformat(), documents=recent_docs),
        baseline=Span(
            start=win.baseline_start.isoformat(),
            end=day_date(day_number(win.recent_start.isoformat()) - 1).isoformat(),
        ),
        periods=[s.isoformat() for s in series_starts(as_of, window, cfg)],
    )


def _new_methods(
    env: TrendsEnv, table: TermTable, win: Windows, cfg: TrendsConfig, window: str, starts: list[date]
) -> list[NewMethod]:
    if env.introductions is None:
        return [
            msgspec.structs.replace(m, kind=env.kind_of(m.name) if env.kind_of else None)
            for m in first_seen_names(table, win, cfg, window, starts)
        ]
    span = introduction_span(table, win, cfg)
    if span is None:
        return []
    cards = env.introductions(span[0].isoformat(), span[1].isoformat())
    return introduced_names(table, win, cfg, window, starts, cards)
