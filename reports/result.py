"""``ReportContent``: what one period's report says, typed; ``as_dict()`` is report.json.

The templates render ``as_dict()`` (Jinja reads the same names either way), the dashboard and
delivery read the dataclass, and ``from_dict`` reads a report.json written earlier (to retry its
deliveries). Rows inside the sections stay JSON objects: they are what report.json documents.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, NotRequired, TypedDict

from radar.analysis.trends.result import NewMethod, TermTrend, Topic
from radar.reports.recommend import Evidence, Recommendation
from radar.reports.runs import RunSummary


class PeriodInfo(TypedDict):
    label: str
    start: str
    end: str
    describe: str


class Bullet(TypedDict):
    text: str
    link: str  # the evidence (a paper's URL), "" when the bullet is its own evidence
    label: str  # the link's text


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
    headline: dict[str, Any]  # documents, papers, posts, trailing mean and change, per-group counts, series
    tag_volume: list[dict[str, Any]]  # per tag: count, trailing mean, change, weekly series
    trends: ReportTrends
    top_overall: list[dict[str, Any]]  # ranked papers (reports.ranking.Ranked.as_dict)
    top_papers: list[dict[str, Any]]  # per tag: {tag, group, count, papers}
    posts: list[dict[str, Any]]
    posts_total: int
    recommendations: list[Recommendation]  # as_dict(): Recommendation.as_dict each
    runs: list[RunSummary]  # finished reproduction runs with their verdicts (as_dict(): RunSummary.as_dict each)
    notes: Notes
    summary: list[Bullet] = field(default_factory=list)  # the executive summary: at most five bullets
    # papers carrying a profile tag whose contribution lies elsewhere (an application: speech, medicine, ...):
    # {id, title, url, field}, listed in one line instead of the lab's sections (reports.sections)
    elsewhere: list[dict[str, Any]] = field(default_factory=list)
    # "New this week" (reports.new_this_week): the period's method cards in the profile's areas and the rest by name
    new_this_week: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # sections added by later stages, kept as read

    def as_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        out["recommendations"] = [r.as_dict() for r in self.recommendations]
        out["runs"] = [r.as_dict() for r in self.runs]
        return {**out, **self.extra}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReportContent:
        """A report.json read back; ValueError when it is not one (a key missing, a recommendation malformed)."""
        names = {f.name for f in fields(cls)} - {"extra"}
        missing = sorted(names - set(data) - {"summary", "elsewhere", "new_this_week"})  # written before these existed
        if missing:
            raise ValueError(f"report.json lacks {', '.join(missing)}")
        values = {k: data[k] for k in names if k in data}
        values["recommendations"] = [recommendation_from_dict(r) for r in data["recommendations"] or []]
        values["runs"] = [RunSummary.from_dict(r) for r in data["runs"] or []]
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
