"""Per-tag (and per tag-group) series, normalised for the source/category mix, and tag trends.

Tags come from the ``document_tags`` table. For each period: ``count`` = documents with the tag,
``docs`` = documents published, ``raw_share`` = count / docs, and ``share`` = the fixed-effects
share (``stats.fixed_effect_shares``): what the share would have been at the overall stratum mix,
so that a new source bringing many documents of one category moves ``raw_share`` but not ``share``.
``tag_trends`` applies the stratified recent-vs-baseline test to each tag.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

import numpy as np
from scipy.special import ndtri

from radar.analysis.trends.config import TrendsConfig, Windows, period_label
from radar.analysis.trends.result import SharePoint, TagTrend
from radar.analysis.trends.stats import fixed_effect_shares, stratified_test
from radar.analysis.trends.term_table import TermTable, day_number
from radar.index.tags_table import Tags
from radar.store.table import Database


@dataclass(frozen=True)
class TagSeries:
    """The tags' (and the taxonomy groups') series per period and their trends (``TrendsResult``'s fields)."""

    tags: dict[str, list[SharePoint]]
    tag_trends: list[TagTrend]
    groups: dict[str, list[SharePoint]] = field(default_factory=dict)  # empty unless groups are given
    group_trends: list[TagTrend] = field(default_factory=list)


def _tag_matrix(
    store: Database, table: TermTable, first: date, as_of: date
) -> tuple[int, int, list[str], dict[str, np.ndarray]]:
    """Row range [lo, hi) and, per tag, the row offsets (within the range) of documents with it."""
    lo = table.row_range(day_number(first.isoformat()), 0)[0]
    hi = table.rows_until(day_number(as_of.isoformat()))
    where = {doc_id: i for i, doc_id in enumerate(table.ids[lo:hi])}
    rows: dict[str, list[int]] = {}
    for row in Tags(store).tagged_in(first.isoformat(), f"{as_of.isoformat()}T23:59:59Z~"):
        i = where.get(row.doc_id)
        if i is not None:
            rows.setdefault(row.tag, []).append(i)
    return lo, hi, sorted(rows), {t: np.array(sorted(set(r)), dtype=np.int64) for t, r in rows.items()}


def _counts(keys: np.ndarray, rows: np.ndarray, n_keys: int) -> np.ndarray:
    return np.bincount(keys[rows], minlength=n_keys).astype(np.float64)


def tag_series(
    store: Database,
    table: TermTable,
    win: Windows,
    cfg: TrendsConfig,
    window: str,
    starts: list[date],
    groups: dict[str, list[str]] | None = None,
) -> TagSeries:
    """Per tag, one ``SharePoint`` per period, and the tags' trends; the same for the taxonomy's groups (only
    when ``groups`` are given)."""
    first = min(starts[0], win.baseline_start)
    lo, hi, tags, rows = _tag_matrix(store, table, first, win.as_of)
    n_strata = len(table.strata)
    day = table.day[lo:hi]
    stratum = table.stratum[lo:hi]
    bounds = np.array([day_number(s.isoformat()) for s in starts[1:]] + [day_number(win.as_of.isoformat()) + 1])
    in_series = day >= day_number(starts[0].isoformat())
    period = np.searchsorted(bounds, day, side="right")
    keys = np.where(in_series, period * n_strata + stratum, len(starts) * n_strata)  # outside: one spare key
    n_keys = len(starts) * n_strata + 1
    docs = _counts(keys, np.arange(hi - lo), n_keys)[:-1].reshape(len(starts), n_strata)
    labels = [period_label(s, window) for s in starts]

    def series(members: np.ndarray) -> list[SharePoint]:
        counts = _counts(keys, members, n_keys)[:-1].reshape(len(starts), n_strata)
        shares = fixed_effect_shares(counts, docs)
        per, total = counts.sum(axis=1), docs.sum(axis=1)
        return [
            SharePoint(
                period=lab,
                count=int(c),
                docs=int(d),
                share=0.0 if np.isnan(s) else round(float(s), 6),
                raw_share=round(float(c / d), 6) if d else 0.0,
            )
            for lab, c, d, s in zip(labels, per, total, shares, strict=True)
        ]

    tag_points = {t: series(rows[t]) for t in tags}
    group_points: dict[str, list[SharePoint]] = {}
    group_trends: list[TagTrend] = []
    if groups:
        group_rows = {}
        for group, names in groups.items():
            members = [rows[t] for t in names if t in rows]
            group_rows[group] = np.unique(np.concatenate(members)) if members else np.zeros(0, np.int64)
            group_points[group] = series(group_rows[group])
        # a group is judged as a tag is (its documents: those with any of its tags), Bonferroni over the groups
        group_trends = _tag_trends(table, lo, day, stratum, win, cfg, list(group_rows), group_rows)
    return TagSeries(tag_points, _tag_trends(table, lo, day, stratum, win, cfg, tags, rows), group_points, group_trends)


def tag_z(alpha: float, n_tags: int) -> float:
    """The |z| a tag's change in share needs: two-sided, Bonferroni over ``n_tags`` tests at level ``alpha``
    (the normal's inverse survival function, as ``scipy.stats.norm.isf`` computes it, without importing
    scipy.stats: about a second at the start of every trends and report command)."""
    return float(-ndtri(alpha / (2 * max(n_tags, 1))))


def tag_direction(z: float, ratio: float, z_needed: float) -> str:
    """A significant change in share, either way (|z| >= z_needed), is rising or falling; else flat."""
    if z >= z_needed and ratio > 1:
        return "rising"
    if z <= -z_needed and ratio < 1:
        return "falling"
    return "flat"


def _tag_trends(
    table: TermTable,
    lo: int,
    day: np.ndarray,
    stratum: np.ndarray,
    win: Windows,
    cfg: TrendsConfig,
    tags: list[str],
    rows: dict[str, np.ndarray],
) -> list[TagTrend]:
    if not tags:
        return []
    n_strata = len(table.strata)
    recent_from = day_number(win.recent_start.isoformat())
    base_from = day_number(win.baseline_start.isoformat())
    recent = day >= recent_from
    base = (day >= base_from) & ~recent
    n = np.bincount(stratum[recent], minlength=n_strata).astype(np.float64)
    m = np.bincount(stratum[base], minlength=n_strata).astype(np.float64)
    a = np.zeros((n_strata, len(tags)))
    b = np.zeros((n_strata, len(tags)))
    for j, tag in enumerate(tags):
        r = rows[tag]
        a[:, j] = np.bincount(stratum[r[recent[r]]], minlength=n_strata)
        b[:, j] = np.bincount(stratum[r[base[r]]], minlength=n_strata)
    test = stratified_test(a, n, b, m, cfg.min_stratum_docs)
    docs = max(test.recent_docs, 1.0)
    out: list[TagTrend] = []
    z_needed = tag_z(cfg.tag_alpha, len(tags))
    for j, tag in enumerate(tags):
        direction = tag_direction(float(test.z[j]), float(test.ratio[j]), z_needed)
        out.append(
            TagTrend(
                tag=tag,
                direction=direction,
                score=round(float(test.llr[j]), 2),
                z=round(float(test.z[j]), 2),
                ratio=round(float(test.ratio[j]), 3),
                recent_count=int(a[:, j].sum()),
                recent_share=round(float(test.observed[j]) / docs, 6),
                baseline_share=round(float(test.expected_base[j]) / docs, 6),
                z_needed=round(z_needed, 2),
            )
        )
    return sorted(out, key=lambda t: -t.score)
