"""The report's counts (from the store) and the tags' and groups' change in share (from the period's trends).

Counts: documents, papers and posts of the period and of the trailing periods, per tag and per taxonomy group, by
the day each document entered the record (store.dates), so they agree with `radar stats` and the dashboard.
Changes: a tag's (or group's) change is its change in *share* of the period's documents, judged by the trends'
stratified test (``TrendsResult.tag_trends`` / ``group_trends``) and worded by ``share_change``; raw counts
grow with the week's volume, so a +35% week would make every tag "grow". The documents' own volume is a count
and is compared with the trailing mean.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import date
from typing import Any

import msgspec

from radar.analysis.trends.result import TagTrend, TrendsResult, share_change
from radar.crawler.documents import Documents
from radar.index.tags_table import Tags
from radar.reports.config import ReportConfig
from radar.reports.period import Period
from radar.reports.result import GroupRow, Headline, SeriesPoint, ShareFields, TagRow
from radar.store.table import Database

Volumes = tuple[Headline, list[TagRow]]


def _pct(now: float, before: float) -> float | None:
    return round(100.0 * (now - before) / before, 1) if before > 0 else None


def _bucket(day: str, periods: list[Period]) -> int:
    d = date.fromisoformat(day)
    for i, p in enumerate(periods):
        if p.start <= d <= p.end:
            return i
    return -1


def share_fields(found: TagTrend | None) -> ShareFields:
    """A row's share-change fields from the trends' test (empty values when the trends have no row for it)."""
    if found is None:
        return ShareFields()
    return ShareFields(found.direction, found.recent_share, found.baseline_share, found.z, share_change(found))


def volumes(store: Database, period: Period, grouping: Any, cfg: ReportConfig, trends: TrendsResult) -> Volumes:
    """Headline (documents against the trailing mean; per group: count and change in share) and per-tag rows
    (count, change in share, per-period counts for the charts). ``grouping``: reports.content.TagGroups;
    ``trends``: the period's tag trends (PeriodTrends.tags)."""
    n_hist = max(cfg.chart_weeks, cfg.trailing_weeks + 1)
    periods = [*period.trailing(n_hist - 1), period]
    first = periods[0]
    kinds: list[Counter[str]] = [Counter() for _ in periods]
    for count in Documents(store).counts_by_day(first.since, period.until):
        i = _bucket(count.day, periods)
        if i >= 0:
            kinds[i][count.kind] += count.documents
    tag_counts: list[Counter[str]] = [Counter() for _ in periods]
    group_docs: list[dict[str, set[str]]] = [defaultdict(set) for _ in periods]
    for row in Tags(store).tagged_in(first.since, period.until):
        i = _bucket(row.day, periods)
        if i >= 0:
            tag_counts[i][row.tag] += 1
            group_docs[i][grouping.group_of(row.tag)].add(row.doc_id)
    k = cfg.trailing_weeks
    trail = range(len(periods) - 1 - k, len(periods) - 1)
    totals = [sum(c.values()) for c in kinds]
    now_total = totals[-1]
    mean_total = sum(totals[i] for i in trail) / k
    group_test = {t.tag: t for t in trends.group_trends}
    tag_test = {t.tag: t for t in trends.tag_trends}
    groups: list[GroupRow] = []
    for g in grouping.group_names():
        now = len(group_docs[-1].get(g, ()))
        groups.append(
            GroupRow(
                group=g,
                count=now,
                share_pct=round(100.0 * now / now_total, 1) if now_total else 0.0,
                tags=[t for t, gg in grouping.groups.items() if gg == g],
                **msgspec.structs.asdict(share_fields(group_test.get(g))),
            )
        )
    doc_series = [SeriesPoint(p.label, totals[i]) for i, p in enumerate(periods)]
    headline = Headline(
        documents=now_total,
        papers=kinds[-1]["paper"],
        posts=kinds[-1]["post"],
        trailing_weeks=k,
        trailing_mean=round(mean_total, 1),
        change_pct=_pct(now_total, mean_total),
        tagged=len(set().union(*group_docs[-1].values())) if group_docs[-1] else 0,
        groups=groups,
        series=doc_series[-cfg.chart_weeks :],
    )
    tags: list[TagRow] = []
    for tag in sorted(grouping.groups, key=lambda t: (grouping.group_names().index(grouping.group_of(t)), t)):
        points = [
            SeriesPoint(p.label, tag_counts[i][tag], round(tag_counts[i][tag] / totals[i], 4) if totals[i] else 0.0)
            for i, p in enumerate(periods)
        ]
        series = points[-cfg.chart_weeks :]
        share = msgspec.structs.asdict(share_fields(tag_test.get(tag)))
        tags.append(TagRow(tag=tag, group=grouping.group_of(tag), count=tag_counts[-1][tag], series=series, **share))
    return headline, tags
