"""The typed result of ``compute_trends``: what `radar trends --json` prints and the report reads.

``TrendsResult`` and ``PeriodTrends`` and their rows are msgspec Structs, their JSON what msgspec converts them to
(a row's fields in the order its JSON keys have always come; a key that older files or some rows lack is ``UNSET``
by default, and left out of the JSON). Every row is read by attribute; msgspec checks each row's types where a cached
file is read back.
"""

from __future__ import annotations

import json
from typing import TypeVar

import msgspec
from msgspec import UNSET, UnsetType


class Burst(msgspec.Struct, frozen=True):
    active: bool
    since: str | None


class TermTrend(msgspec.Struct, frozen=True, kw_only=True):
    """An emerging or declining term: its keys as a term's item writes them (a family's own item writes the same
    keys, ``burst`` among them, in this order too)."""

    term: str
    aliases: list[str]
    keys: list[str]  # term-cache keys of the term and its merged aliases
    score: float  # the test's statistics (emerging.trend_item): log-likelihood ratio (ranking)
    z: float
    ratio: float
    ratio_bound: float
    recent_count: int
    compared_count: int
    expected_count: float
    recent_share: float
    baseline_share: float
    first_seen: str | None
    example_ids: list[str]
    burst: Burst | UnsetType = UNSET
    coherence: dict[str, float] | None | UnsetType = UNSET
    # why it is listed: "rise", "continuing rise" (compared with the baseline before its burst, which ends on
    # baseline_end), "family launch", "fall", "successor" (a model family replaced by ``successor``)
    rule: str | UnsetType = UNSET
    baseline_end: str | UnsetType = UNSET
    family: str | UnsetType = UNSET  # the model family key (qwen3) when the item counts a family's members together
    successor: str | UnsetType = UNSET


class PeriodCount(msgspec.Struct, frozen=True):
    period: str
    count: int


class NewMethod(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    first_seen: str
    first_id: str
    count: int
    recent_count: int
    growth: float
    example_ids: list[str]
    series: list[PeriodCount]
    kind: str | None | UnsetType = UNSET  # method, model, benchmark, system, ... (None: unknown)
    # from the introducing paper's method card (first_id is that paper): its area, title and what it changes
    area: str | UnsetType = UNSET
    title: str | UnsetType = UNSET
    changes: str | UnsetType = UNSET


class Topic(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    label: str
    keywords: list[str]
    size: int
    recent_size: int
    growth: float
    example_ids: list[str]
    sample_ids: list[str] | UnsetType = UNSET  # up to 20 members nearest the centroid (the report judges relevance)


class SharePoint(msgspec.Struct, frozen=True, kw_only=True):
    period: str
    count: int
    docs: int
    share: float  # mix-free share (fixed effects over strata)
    raw_share: float


class TagTrend(msgspec.Struct, frozen=True, kw_only=True):
    tag: str  # a tag, or a taxonomy group in ``group_trends``
    direction: str  # rising | falling | flat
    score: float
    z: float
    ratio: float
    recent_count: int
    recent_share: float  # within the strata present in both windows (what the test compares)
    baseline_share: float  # the baseline's rates at the recent window's stratum mix
    z_needed: float | UnsetType = UNSET  # the |z| a change needs (two-sided, Bonferroni over the tags)


class Span(msgspec.Struct, frozen=True, kw_only=True):
    start: str
    end: str
    documents: int | UnsetType = UNSET


class TrendsResult(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What is rising, falling and new as of a day: `radar trends --json` as it is (``encode``); read back from the
    workspace's cached period trends with every row's type checked and unknown keys refused (``decode``)."""

    as_of: str
    window: str
    recent: Span | None = None
    baseline: Span | None = None
    periods: list[str] = []
    emerging: list[TermTrend] = []
    declining: list[TermTrend] = []
    tags: dict[str, list[SharePoint]] = {}
    groups: dict[str, list[SharePoint]] = {}
    tag_trends: list[TagTrend] = []
    group_trends: list[TagTrend] = []  # the taxonomy's groups, judged as tags are
    topics: list[Topic] = []
    topics_note: str = ""
    new_methods: list[NewMethod] = []

    @classmethod
    def empty(cls) -> TrendsResult:
        """No trends (too little data, or the step failed): the report still goes out."""
        return cls(as_of="", window="month")


class PeriodTrends(msgspec.Struct, frozen=True, kw_only=True):
    """What the report, `radar trends --week`, the demo and the dashboard say about one period: computed once
    (``app.period_trends``), cached in the workspace (``encode``/``decode``: a file without ``fingerprint`` or
    ``computed_at`` reads with them empty), read by all of them.

    ``tags``: the period's own window (a week: that ISO week against the 8 weeks before), for the tags' and
    groups' change in share and their test. ``terms``: the month up to the period's last day against the
    months before, for emerging and declining terms, new names and topics (a week of papers is too few for
    a term to pass the bar). Both use only documents that entered the record by the period's end."""

    label: str  # "2025-W39" (the report folder's name)
    start: str  # YYYY-MM-DD, inclusive
    end: str
    fingerprint: str = ""  # the store's state the trends were computed on ("" unknown)
    computed_at: str = ""
    tags: TrendsResult
    terms: TrendsResult

    @classmethod
    def empty(cls, label: str = "", start: str = "", end: str = "") -> PeriodTrends:
        return cls(label=label, start=start, end=end, tags=TrendsResult.empty(), terms=TrendsResult.empty())


Trends = TypeVar("Trends", TrendsResult, PeriodTrends)


def encode(found: TrendsResult | PeriodTrends) -> bytes:
    """The JSON of trends as msgspec converts them, written by ``json`` (a NaN or an infinity stays one, where
    msgspec's encoder would write null: the cached files have always kept them)."""
    return json.dumps(msgspec.to_builtins(found), ensure_ascii=False).encode("utf-8")


def decode(data: bytes | str, kind: type[Trends]) -> Trends:
    """Trends read back (``encode``'s JSON), every type checked; a ``ValueError`` when they are not of ``kind``."""
    return msgspec.convert(json.loads(data), kind)


def pct_share(value: float | None) -> str:
    """A share as the surfaces print it: 3.72%."""
    return "-" if value is None else f"{100 * value:.2f}%"


def share_change(t: TagTrend) -> str:
    """A tag's (or group's) change in share in the words every surface uses:
    'flat: 2.08% → 3.72% (z +1.4, needs ±2.8)' or 'rising: 2.08% → 5.10% (z +3.9)'."""
    need = t.z_needed
    test = f"z {t.z:+.1f}" + (f", needs ±{need:.1f}" if t.direction == "flat" and need is not UNSET else "")
    return f"{t.direction}: {pct_share(t.baseline_share)} → {pct_share(t.recent_share)} ({test})"
