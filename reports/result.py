"""``ReportContent``: what one period's report says, typed; ``as_dict()`` is report.json.

The templates render ``as_dict()`` (Jinja reads the same names either way), the dashboard and
delivery read the dataclass, and ``from_dict`` reads a report.json written earlier (to retry its
deliveries). Rows inside the sections stay JSON objects: they are what report.json documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, NotRequired, TypeAlias, TypedDict

from radar.analysis.trends.result import NewMethod, TermTrend, Topic
from radar.reports.calls import CallsSection
from radar.reports.new_this_week import NewThisWeek
from radar.reports.ranking import PaperRow
from radar.reports.recommend import Evidence, Recommendation
from radar.reports.runs import RunSummary, read_runs, runs_json

# A JSON value as json.loads gives it: what report.json holds and the templates read.
JsonValue: TypeAlias = str | int | float | bool | None | list["JsonValue"] | dict[str, "JsonValue"]
ReportDocument: TypeAlias = Mapping[str, JsonValue]  # report.json's document (``ReportContent.as_dict()``)


class PeriodInfo(TypedDict):
    label: str
    start: str
    end: str
    describe: str


class Bullet(TypedDict):
    text: str
    link: str  # the evidence (a paper's URL), "" when the bullet is its own evidence
    label: str  # the link's text


class ShareFields(TypedDict):
    """A tag's or group's change in share, from the trends' test (reports.volume.share_fields)."""

    trend: str  # "rising" / "falling" / "steady" ..., "" when the trends have no row for it
    share_now: float | None
    share_before: float | None
    z: float | None
    change: str  # worded by analysis.trends.result.share_change


class SeriesPoint(TypedDict):
    period: str
    count: int
    share: NotRequired[float]  # a tag's share of the period's documents


class GroupRow(ShareFields):
    group: str
    count: int
    share_pct: float
    tags: list[str]


class TagRow(ShareFields):
    """One tag's row of the report's table (reports.volume.volumes)."""

    tag: str
    group: str
    count: int
    series: list[SeriesPoint]


class Headline(TypedDict):
    """The period's counts against the trailing mean, per taxonomy group, and the documents' weekly series."""

    documents: int
    papers: int
    posts: int
    trailing_weeks: int
    trailing_mean: float
    change_pct: float | None
    tagged: int
    groups: list[GroupRow]
    series: list[SeriesPoint]


class TagSection(TypedDict):
    """The lab's section of one tag: its best papers not listed above."""

    tag: str
    group: str
    count: int  # papers tagged: the table's count
    in_area: int  # of those, whose contribution is in the area
    papers: list[PaperRow]


class PostRow(TypedDict):
    id: str
    title: str
    url: str
    published: str
    source: str
    summary: str


class ElsewhereRow(TypedDict):
    """A paper carrying a profile tag whose contribution lies elsewhere (reports.sections), listed in one line."""

    id: str
    title: str
    url: str
    field: str


class ReportTrends(TypedDict):
    as_of: str
    start: NotRequired[str]  # the terms' window (the month up to the period's end), YYYY-MM-DD
    baseline_start: NotRequired[str]  # ... against this baseline, up to the day before ``start``
    tags_baseline: NotRequired[str]  # "YYYY-MM-DD..YYYY-MM-DD": the tags' share this period is compared with
    emerging: list[TermTrend]
    declining: list[TermTrend]
    new_methods: list[NewMethod]  # kinds method and system (and hardware for a hardware profile)
    topics: list[Topic]
    new_models: NotRequired[list[NewMethod]]  # new names of kind model: their own short section
    new_benchmarks: NotRequired[list[NewMethod]]


class Notes(TypedDict):
    profile: str
    summaries: str
    off_profile: str
    tags: str
    ranking: str
    trends: str  # why trends are missing ("" when they are there)
    topics: NotRequired[str]  # growing topics and new names left out as unrelated to the profile


@dataclass
class ReportContent:
    title: str
    period: PeriodInfo
    generated_at: str
    headline: Headline
    tag_volume: list[TagRow]
    trends: ReportTrends
    top_overall: list[PaperRow]  # ranked papers (reports.ranking.Ranked.as_dict)
    top_papers: list[TagSection]
    posts: list[PostRow]
    posts_total: int
    recommendations: list[Recommendation]  # as_dict(): Recommendation.as_dict each
    runs: list[RunSummary]  # finished reproduction runs with their verdicts (as_dict(): reports.runs.runs_json)
    notes: Notes
    summary: list[Bullet] = field(default_factory=list)  # the executive summary: at most five bullets
    # papers carrying a profile tag whose contribution lies elsewhere (an application: speech, medicine, ...):
    # {id, title, url, field}, listed in one line instead of the lab's sections (reports.sections)
    elsewhere: list[ElsewhereRow] = field(default_factory=list)
    # "New this week" (reports.new_this_week): the period's method cards in the profile's areas and the rest by name
    new_this_week: NewThisWeek = field(default_factory=lambda: NewThisWeek())
    # "Last month's calls" (reports.calls): what the radar flagged 4, 8 and 12 weeks earlier and what came of it
    calls: CallsSection = field(default_factory=lambda: CallsSection())
    extra: dict[str, JsonValue] = field(default_factory=dict)  # sections added by later stages, kept as read

    def as_dict(self) -> dict[str, Any]:  # report.json (the JSON edge: its sections' rows are the TypedDicts above)
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        out["recommendations"] = [r.as_dict() for r in self.recommendations]
        out["runs"] = runs_json(self.runs)
        return {**out, **self.extra}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReportContent:  # report.json as parsed; its keys checked here
        """A report.json read back; ValueError when it is not one (a key missing, a recommendation malformed)."""
        names = {f.name for f in fields(cls)} - {"extra"}
        missing = sorted(names - set(data) - {"summary", "elsewhere", "new_this_week", "calls"})  # before these existed
        if missing:
            raise ValueError(f"report.json lacks {', '.join(missing)}")
        values = {k: data[k] for k in names if k in data}
        values["recommendations"] = [recommendation_from_dict(r) for r in data["recommendations"] or []]
        values["runs"] = read_runs(data["runs"])
        return cls(**values, extra={k: v for k, v in data.items() if k not in names})


def recommendation_from_dict(data: Any) -> Recommendation:
    """``Recommendation.as_dict()`` read back (report.json); keys a later version added are ignored."""
    if not isinstance(data, dict) or not isinstance(data.get("evidence"), dict):
        raise ValueError("a recommendation in report.json is not an object with its evidence")
    known = {f.name for f in fields(Evidence)}
    evidence = Evidence(**{k: v for k, v in data["evidence"].items() if k in known})
    return Recommendation(
        method=str(data["method"]),
        action=str(data["action"]),
        rule=str(data["rule"]),
        reason=str(data["reason"]),
        evidence=evidence,
    )
