"""compute_trends: the one entry point; every part reads the same cached term table and windows."""

from __future__ import annotations

from datetime import date
from typing import Any

import numpy as np

from radar.analysis.tags import load_taxonomy
from radar.analysis.trends.cache import Progress, day_date, day_number, term_table
from radar.analysis.trends.config import TrendsConfig, check_window, series_starts, windows
from radar.analysis.trends.emerging import term_lists
from radar.analysis.trends.errors import TrendsError
from radar.analysis.trends.methods import new_methods
from radar.analysis.trends.series import tag_series
from radar.analysis.trends.topics import discover_topics
from radar.store import Workspace
from radar.store.db import Store
from radar.store.errors import RadarError


def trends_config(ws: Workspace) -> TrendsConfig:
    return TrendsConfig.from_section(ws.config().section("trends"))


def _tag_groups(ws: Workspace) -> dict[str, list[str]] | None:
    """Tag groups from the tagger's taxonomy (analysis.tags); None when the taxonomy is broken."""
    try:
        return {g: list(names) for g, names in load_taxonomy(ws).groups.items()}
    except RadarError:  # a broken taxonomy is the tagger's error to report, not a reason to lose trends
        return None


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
    ws: Workspace,
    store: Store,
    *,
    as_of: date | None = None,
    window: str = "week",
    cfg: TrendsConfig | None = None,
    topics: bool = True,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """What is rising, falling and new as of ``as_of`` (default: ``default_as_of``, about the newest day).

    Uses only documents published on or before ``as_of``. The result is JSON-serialisable:
    as_of, window, periods, emerging, declining, tags, groups, tag_trends, topics, new_methods.
    """
    check_window(window)
    cfg = cfg or trends_config(ws)
    table = term_table(ws, store, progress)
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
    tags = tag_series(store, table, win, cfg, window, starts, _tag_groups(ws))
    topic_list, topic_note = discover_topics(ws, store, table, win, cfg, window) if topics else ([], "not computed")
    recent_docs = (
        table.rows_until(day_number(as_of.isoformat()))
        - table.row_range(day_number(win.recent_start.isoformat()), 0)[0]
    )
    return {
        "as_of": as_of.isoformat(),
        "window": window,
        "recent": {"start": win.recent_start.isoformat(), "end": as_of.isoformat(), "documents": recent_docs},
        "baseline": {
            "start": win.baseline_start.isoformat(),
            "end": day_date(day_number(win.recent_start.isoformat()) - 1).isoformat(),
        },
        "periods": [s.isoformat() for s in starts],
        "emerging": emerging,
        "declining": declining,
        "tags": tags["tags"],
        "groups": tags.get("groups", {}),
        "tag_trends": tags["tag_trends"],
        "topics": topic_list,
        "topics_note": topic_note,
        "new_methods": new_methods(table, win, cfg, window, starts),
    }
