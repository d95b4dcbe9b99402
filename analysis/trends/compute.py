"""compute_trends: the one entry point; every part reads the same cached term table and windows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Protocol

import numpy as np

from radar.analysis.trends.cache import Progress, TermTable, day_date, day_number, term_table
from radar.analysis.trends.config import TrendsConfig, Windows, check_window, series_starts, windows
from radar.analysis.trends.emerging import term_lists
from radar.analysis.trends.errors import TrendsError
from radar.analysis.trends.family import family_lists, join
from radar.analysis.trends.methods import Introductions, first_seen_names, introduced_names, introduction_span
from radar.analysis.trends.result import NewMethod, TrendsResult
from radar.analysis.trends.series import tag_series
from radar.analysis.trends.topics import discover_topics
from radar.index.config import EmbeddingConfig
from radar.store.tables import TrendsStore


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


class TrendDetector(Protocol):
    """The trends stage's seam: what the report and the dashboard call."""

    def __call__(
        self,
        store: TrendsStore,
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


def compute_trends(
    store: TrendsStore,
    env: TrendsEnv,
    *,
    as_of: date | None = None,
    window: str = "week",
    cfg: TrendsConfig | None = None,
    topics: bool = True,
    progress: Progress | None = None,
) -> TrendsResult:
    """What is rising, falling and new as of ``as_of`` (default: ``default_as_of``, about the newest day).

    Uses only documents published on or before ``as_of``; ``TrendsResult.as_dict()`` is the JSON.
    """
    check_window(window)
    cfg = cfg or env.config
    table = term_table(env.term_cache, store, progress)
    if not len(table.day):
        raise TrendsError("the workspace has no documents yet; run `radar import FILE` or `radar crawl` first")
    first_day, last_day = day_date(int(table.day[0])), day_date(int(table.day[-1]))
    if as_of is None:
        as_of = default_as_of(table.day)
    if as_of < first_day:
        raise TrendsError(
            f"--as-of {as_of.isoformat()} is before the first document ({first_day.isoformat()}); "
            f"use a date between {first_day.isoformat()} and {last_day.isoformat()}"
        )
    win = windows(as_of, window, cfg)
    table.stratify(cfg.major_categories if cfg.stratify else 0, table.rows_until(day_number(as_of.isoformat())))
    if not cfg.stratify:
        table.stratum, table.strata = np.zeros_like(table.stratum), ["all documents"]
    starts = series_starts(as_of, window, cfg)
    emerging, declining = term_lists(table, win, cfg, window, starts)
    if cfg.families:
        launches, successions = family_lists(table, win, cfg, window, starts)
        emerging = join(emerging, launches, cfg.max_terms, rising=True)
        declining = join(declining, successions, cfg.max_terms, rising=False)
    tags = tag_series(store, table, win, cfg, window, starts, env.tag_groups)
    topic_list, topic_note = (
        discover_topics(store, table, win, cfg, window, embedding=env.embedding, state_dir=env.topics_dir)
        if topics
        else ([], "not computed")
    )
    recent_docs = (
        table.rows_until(day_number(as_of.isoformat()))
        - table.row_range(day_number(win.recent_start.isoformat()), 0)[0]
    )
    return TrendsResult(
        as_of=as_of.isoformat(),
        window=window,
        recent={"start": win.recent_start.isoformat(), "end": as_of.isoformat(), "documents": recent_docs},
        baseline={
            "start": win.baseline_start.isoformat(),
            "end": day_date(day_number(win.recent_start.isoformat()) - 1).isoformat(),
        },
        periods=[s.isoformat() for s in starts],
        emerging=emerging,
        declining=declining,
        tags=tags.tags,
        groups=tags.groups,
        tag_trends=tags.tag_trends,
        group_trends=tags.group_trends,
        topics=topic_list,
        topics_note=topic_note,
        new_methods=_new_methods(env, table, win, cfg, window, starts),
    )


def _new_methods(
    env: TrendsEnv, table: TermTable, win: Windows, cfg: TrendsConfig, window: str, starts: list[date]
) -> list[NewMethod]:
    if env.introductions is None:
        return [
            {**m, "kind": env.kind_of(m["name"]) if env.kind_of else None}
            for m in first_seen_names(table, win, cfg, window, starts)
        ]
    span = introduction_span(table, win, cfg)
    if span is None:
        return []
    cards = env.introductions(span[0].isoformat(), span[1].isoformat())
    return introduced_names(table, win, cfg, window, starts, cards)
