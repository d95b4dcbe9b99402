"""The typed result of ``compute_trends``: what `radar trends --json` prints and the report reads.

``TrendsResult`` is a dataclass; its rows are TypedDicts because they *are* the rows of the documented
JSON contract (`radar trends --json`): the type checker knows every key, and ``as_dict()`` is the JSON
without any conversion that could drift from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
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
    # from the introducing paper's method card (first_id is that paper): its area, title and what it changes
    area: NotRequired[str]
    title: NotRequired[str]
    changes: NotRequired[str]


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
    tag: str  # a tag, or a taxonomy group in ``group_trends``
    direction: str  # rising | falling | flat
    score: float
    z: float
    ratio: float
    recent_count: int
    recent_share: float  # within the strata present in both windows (what the test compares)
    baseline_share: float  # the baseline's rates at the recent window's stratum mix
    z_needed: NotRequired[float]  # the |z| a change needs (two-sided, Bonferroni over the tags)


class Span(TypedDict):
    start: str
    end: str
    documents: NotRequired[int]


class TrendsJson(TypedDict):
    """``TrendsResult.as_dict()``: the `radar trends --json` document."""

    as_of: str
    window: str
    recent: Span | None
    baseline: Span | None
    periods: list[str]
    emerging: list[TermTrend]
    declining: list[TermTrend]
    tags: dict[str, list[SharePoint]]
    groups: dict[str, list[SharePoint]]
    tag_trends: list[TagTrend]
    group_trends: list[TagTrend]
    topics: list[Topic]
    topics_note: str
    new_methods: list[NewMethod]


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
    group_trends: list[TagTrend] = field(default_factory=list)  # the taxonomy's groups, judged as tags are
    topics: list[Topic] = field(default_factory=list)
    topics_note: str = ""
    new_methods: list[NewMethod] = field(default_factory=list)

    @classmethod
    def empty(cls) -> TrendsResult:
        """No trends (too little data, or the step failed): the report still goes out."""
        return cls(as_of="", window="month")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrendsResult:  # JSON edge: parsed JSON, its keys checked here
        """A result read back from its JSON (the workspace's cached period trends); unknown keys are refused."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"trends JSON has unknown keys: {', '.join(unknown)}")
        return cls(**data)

    def as_dict(self) -> TrendsJson:
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
            "group_trends": self.group_trends,
            "topics": self.topics,
            "topics_note": self.topics_note,
            "new_methods": self.new_methods,
        }


class PeriodTrendsJson(TypedDict):
    """``PeriodTrends.as_dict()``: the workspace's cached period trends, `radar trends --week --json`."""

    label: str
    start: str
    end: str
    fingerprint: str
    computed_at: str
    tags: TrendsJson
    terms: TrendsJson


@dataclass(frozen=True)
class PeriodTrends:
    """What the report, `radar trends --week`, the demo and the dashboard say about one period: computed once
    (``analysis.trends.period.period_trends``), cached in the workspace, read by all of them.

    ``tags``: the period's own window (a week: that ISO week against the 8 weeks before), for the tags' and
    groups' change in share and their test. ``terms``: the month up to the period's last day against the
    months before, for emerging and declining terms, new names and topics (a week of papers is too few for
    a term to pass the bar). Both use only documents that entered the record by the period's end."""

    label: str  # "2025-W39" (the report folder's name)
    start: str  # YYYY-MM-DD, inclusive
    end: str
    tags: TrendsResult
    terms: TrendsResult
    fingerprint: str = ""  # the store's state the trends were computed on ("" unknown)
    computed_at: str = ""

    def as_dict(self) -> PeriodTrendsJson:
        return {
            "label": self.label,
            "start": self.start,
            "end": self.end,
            "fingerprint": self.fingerprint,
            "computed_at": self.computed_at,
            "tags": self.tags.as_dict(),
            "terms": self.terms.as_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PeriodTrends:  # JSON edge: the cached file as parsed
        return cls(
            label=str(data["label"]),
            start=str(data["start"]),
            end=str(data["end"]),
            tags=TrendsResult.from_dict(data["tags"]),
            terms=TrendsResult.from_dict(data["terms"]),
            fingerprint=str(data.get("fingerprint", "")),
            computed_at=str(data.get("computed_at", "")),
        )

    @classmethod
    def empty(cls, label: str = "", start: str = "", end: str = "") -> PeriodTrends:
        return cls(label, start, end, TrendsResult.empty(), TrendsResult.empty())


def pct_share(value: float | None) -> str:
    """A share as the surfaces print it: 3.72%."""
    return "-" if value is None else f"{100 * value:.2f}%"


def share_change(t: TagTrend) -> str:
    """A tag's (or group's) change in share in the words every surface uses:
    'flat: 2.08% → 3.72% (z +1.4, needs ±2.8)' or 'rising: 2.08% → 5.10% (z +3.9)'."""
    need = t.get("z_needed")
    test = f"z {t['z']:+.1f}" + (f", needs ±{need:.1f}" if t["direction"] == "flat" and need is not None else "")
    return f"{t['direction']}: {pct_share(t['baseline_share'])} → {pct_share(t['recent_share'])} ({test})"
