"""New methods: names (acronyms, named systems) first seen recently, with their first paper and
how fast they spread.

A name is new when its first document is within ``new_method_days`` of as_of and after the
first ``burn_in_days`` of the data (everything looks new when the data has just started).
``growth`` is the stratified rate ratio of the recent window over the baseline, as for terms;
``series`` counts documents per period since the name appeared. Spellings that differ only in
case are one method (the most frequent spelling names it).
"""

from __future__ import annotations

import re
from datetime import date, timedelta

import numpy as np

from radar.analysis.trends.cache import TermTable, day_date, day_number
from radar.analysis.trends.config import TrendsConfig, Windows, period_label
from radar.analysis.trends.counts import day_rows, period_stratum_counts, stratum_counts
from radar.analysis.trends.result import NewMethod
from radar.analysis.trends.stats import stratified_test


def spelling_key(term: str) -> str:
    """One key for the spellings of a name: case, hyphens, underscores and spaces ignored (Qwen-3 = Qwen3)."""
    return re.sub(r"[-_ ]+", "", term.lower())


def name_columns(table: TermTable) -> np.ndarray:
    starts = table.vocab.offsets[:-1]
    nonempty = table.vocab.offsets[1:] > starts
    first_byte = np.zeros(len(starts), dtype=np.uint8)
    first_byte[nonempty] = table.vocab.blob[starts[nonempty]]
    return np.flatnonzero(first_byte == ord("@"))


def new_methods(table: TermTable, win: Windows, cfg: TrendsConfig, window: str, starts: list[date]) -> list[NewMethod]:
    if not len(table.day):
        return []
    as_of_day = day_number(win.as_of.isoformat())
    horizon = as_of_day - cfg.new_method_days
    data_start = int(table.day[0])
    names = name_columns(table)
    first = table.first_row[names]
    seen = first >= 0
    names, first = names[seen], first[seen]
    first_day = table.day[first]
    # A name is new when no spelling of it was seen before (Qwen-3 after Qwen3, GPT5 after GPT-5 are not new).
    keys = [spelling_key(table.term(int(col))) for col in names]
    earliest: dict[str, int] = {}
    for key, day in zip(keys, first_day.tolist(), strict=True):
        earliest[key] = min(day, earliest.get(key, day))
    first_day = np.array([earliest[key] for key in keys], dtype=first_day.dtype)
    fresh = (first_day > horizon) & (first_day <= as_of_day) & (first_day >= data_start + cfg.burn_in_days)
    names, first = names[fresh], first[fresh]
    if not len(names):
        return []
    lo, hi = day_rows(table, day_date(horizon + 1), win.as_of)
    counts = np.asarray(table.matrix[lo:hi][:, names].sum(axis=0)).ravel()
    names, first, counts = (
        names[counts >= cfg.min_method_count],
        first[counts >= cfg.min_method_count],
        counts[counts >= cfg.min_method_count],
    )
    # one method per spelling (case, hyphens, spaces): the most frequent spelling wins
    best: dict[str, int] = {}
    for i, col in enumerate(names):
        key = spelling_key(table.term(int(col)))
        if key not in best or counts[i] > counts[best[key]]:
            best[key] = i
    keep = np.array(sorted(best.values()), dtype=np.int64)
    if not len(keep):
        return []
    names, first, counts = names[keep], first[keep], counts[keep]
    r_lo, r_hi = day_rows(table, win.recent_start, win.as_of)
    b_lo, b_hi = day_rows(table, win.baseline_start, win.recent_start - timedelta(days=1))
    recent, n = stratum_counts(table, r_lo, r_hi, names)
    base, m = stratum_counts(table, b_lo, b_hi, names)
    test = stratified_test(recent.toarray(), n, base.toarray(), m, cfg.min_stratum_docs)
    recent_total = np.asarray(recent.sum(axis=0)).ravel()
    order = np.lexsort((-recent_total, -counts))[: cfg.max_methods]
    period_counts, _ = period_stratum_counts(table, starts, win.as_of, names[order])
    per_period = period_counts.sum(axis=1)
    out: list[NewMethod] = []
    for rank, i in enumerate(order):
        col = int(names[i])
        rows = np.flatnonzero(np.asarray(table.matrix[r_lo:r_hi][:, [col]].todense()).ravel())
        since = first_day_of = int(table.day[first[i]])
        out.append(
            {
                "name": table.readable(col),
                "first_seen": day_date(first_day_of).isoformat(),
                "first_id": table.ids[int(first[i])],
                "count": int(counts[i]),
                "recent_count": int(recent_total[i]),
                "growth": round(float(test.ratio[i]), 3),
                "example_ids": [table.ids[r_lo + int(r)] for r in rows[::-1][:3]],
                "series": [
                    {"period": period_label(s, window), "count": int(c)}
                    for s, c in zip(starts, per_period[:, rank], strict=True)
                    if day_number(s.isoformat()) >= since - 31
                ],
            }
        )
    return out
