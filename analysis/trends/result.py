"""The typed result of ``compute_trends``: what `radar trends --json` prints and the report reads.

``TrendsResult`` is a dataclass; its rows are TypedDicts because they *are* the rows of the documented
JSON contract (`radar trends --json`): the type checker knows every key, and ``as_dict()`` is the JSON
without any conversion that could drift from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict


class Burst(TypedDict):
    active: bool
    since: str | None


class StatFields(TypedDict):
    """The test's statistics of one scored term or family (emerging.stat_fields)."""

    score: float  # log-likelihood ratio (ranking)
    z: float
    ratio: float
    ratio_bound: float
    recent_count: int
    compared_count: int
    expected_count: float
    recent_share: float
    baseline_share: float


class TermTrend(StatFields):
    """An emerging or declining term."""

    term: str
    aliases: list[str]
    keys: list[str]  # term-cache keys of the term and its merged aliases
    first_seen: str | None
    example_ids: list[str]
    burst: NotRequired[Burst]
    coherence: NotRequired[dict[str, float] | None]
    # why it is listed: "rise", "continuing rise" (compared with the baseline before its burst, which ends on
    # baseline_end), "family launch", "fall", "successor" (a model family replaced by ``successor``)
    rule: NotRequired[str]
    baseline_end: NotRequired[str]
    family: NotRequired[str]  # the model family key (qwen3) when the item counts a family's members together
    successor: NotRequired[str]


class PeriodCount(TypedDict):
    period: str
    count: int


class NewMethod(TypedDict):
    name: str
    first_seen: str
    first_id: str
    count: int
    recent_count: int
    growth: float
    example_ids: list[str]
    series: list[PeriodCount]
    kind: NotRequired[str | None]  # method, model, benchmark, system, hardware, metric, org, generic (None: unknown)


class Topic(TypedDict):
    id: str
    label: str
    keywords: list[str]
    size: int
    recent_size: int
    growth: float
    example_ids: list[str]
    sample_ids: NotRequired[list[str]]  # up to 20 members nearest the centroid (the report judges relevance on them)


class SharePoint(TypedDict):
    period: str
    count: int
    docs: int
    share: float  # mix-free share (fixed effects over strata)
    raw_share: float


class TagTrend(TypedDict):
    tag: str
    direction: str  # rising | falling | flat
    score: float
    z: float
    ratio: float
    recent_count: int
    recent_share: float
    baseline_share: float


class Span(TypedDict):
    start: str
    end: str
    documents: NotRequired[int]


@dataclass(frozen=True)
class TrendsResult:
    as_of: str
    window: str
    recent: Span | None = None
    baseline: Span | None = None
    periods: list[str] = field(default_factory=list)
    emerging: list[TermTrend] = field(default_factory=list)
    declining: list[TermTrend] = field(default_factory=list)
    tags: dict[str, list[SharePoint]] = field(default_factory=dict)
    groups: dict[str, list[SharePoint]] = field(default_factory=dict)
    tag_trends: list[TagTrend] = field(default_factory=list)
    topics: list[Topic] = field(default_factory=list)
    topics_note: str = ""
    new_methods: list[NewMethod] = field(default_factory=list)

    @classmethod
    def empty(cls) -> TrendsResult:
        """No trends (too little data, or the step failed): the report still goes out."""
        return cls(as_of="", window="month")

    def as_dict(self) -> dict[str, Any]:
        """The `radar trends --json` document."""
        return {
            "as_of": self.as_of,
            "window": self.window,
            "recent": self.recent,
            "baseline": self.baseline,
            "periods": self.periods,
            "emerging": self.emerging,
            "declining": self.declining,
            "tags": self.tags,
            "groups": self.groups,
            "tag_trends": self.tag_trends,
            "topics": self.topics,
            "topics_note": self.topics_note,
            "new_methods": self.new_methods,
        }
