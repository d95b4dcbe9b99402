"""``ReportContent``: what one period's report says, typed; ``document()`` is report.json.

One codec, msgspec: ``document()`` is the content as ``msgspec.to_builtins`` writes it (the templates render
it; Jinja reads the same names either way), the dashboard and delivery read the dataclass, and ``read``
decodes a report.json written earlier (to retry its deliveries, last month's calls): its records
(``RECORDS``: the period, the headline, the tags' table, the listed papers, recommendations, notes, ...;
``RunSummary``) typed and checked; the trends section is ``ReportTrends``, holding the trends' own rows (terms,
names and topics: analysis.trends.result's records).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TypeAlias

import msgspec

from radar.analysis.trends.parts import numpy_builtins
from radar.analysis.trends.result import NewMethod, TermTrend, Topic
from radar.reports.calls import CallsSection
from radar.reports.new_this_week import NewThisWeek
from radar.reports.ranking import PaperRow
from radar.reports.recommend import Recommendation
from radar.reports.runs import RunSummary, read_runs, runs_json

# A JSON value as json.loads gives it: what report.json holds and the templates read.
JsonValue: TypeAlias = str | int | float | bool | None | list["JsonValue"] | dict[str, "JsonValue"]
ReportDocument: TypeAlias = Mapping[str, JsonValue]  # report.json's document (``ReportContent.document()``)


class LaterSections(dict[str, JsonValue]):
    """The top-level sections of a report.json that a later version added, kept as read: msgspec passes an
    instance through ``convert`` unread and writes it as the JSON object it is."""


class PeriodInfo(msgspec.Struct, frozen=True):
    label: str
    start: str
    end: str
    describe: str


class Bullet(msgspec.Struct, frozen=True):
    """A line of the executive summary."""

    text: str
    link: str = ""  # the evidence (a paper's URL), "" when the bullet is its own evidence
    label: str = ""  # the link's text


class ShareFields(msgspec.Struct, frozen=True):
    """A tag's or group's change in share, from the trends' test (reports.volume.share_fields); a row lists these
    fields after its own (``GroupRow``, ``TagRow``)."""

    trend: str = ""  # "rising" / "falling" / "steady" ..., "" when the trends have no row for it
    share_now: float | None = None
    share_before: float | None = None
    z: float | None = None
    change: str = ""  # worded by analysis.trends.result.share_change


class SeriesPoint(msgspec.Struct, frozen=True):
    period: str
    count: int
    share: float | msgspec.UnsetType = msgspec.UNSET  # a tag's share of the period's documents


class GroupRow(msgspec.Struct, frozen=True, kw_only=True):
    group: str
    count: int
    share_pct: float
    tags: list[str]
    trend: str = ""  # the fields of ShareFields
    share_now: float | None = None
    share_before: float | None = None
    z: float | None = None
    change: str = ""


class TagRow(msgspec.Struct, frozen=True, kw_only=True):
    """One tag's row of the report's table (reports.volume.volumes)."""

    tag: str
    group: str
    count: int
    series: list[SeriesPoint]
    trend: str = ""  # the fields of ShareFields
    share_now: float | None = None
    share_before: float | None = None
    z: float | None = None
    change: str = ""


class Headline(msgspec.Struct, frozen=True, kw_only=True):
    """The period's counts against the trailing mean, per taxonomy group, and the documents' weekly series."""

    documents: int
    papers: int = 0
    posts: int = 0
    trailing_weeks: int = 0
    trailing_mean: float = 0.0
    change_pct: float | None = None
    tagged: int = 0
    groups: list[GroupRow] = []
    series: list[SeriesPoint] = []


class TagSection(msgspec.Struct, frozen=True, kw_only=True):
    """The lab's section of one tag: its best papers not listed above."""

    tag: str
    group: str
    count: int  # papers tagged: the table's count
    in_area: int = 0  # of those, whose contribution is in the area
    papers: list[PaperRow]


class PostRow(msgspec.Struct, frozen=True):
    id: str
    title: str
    url: str
    published: str
    source: str
    summary: str


class ElsewhereRow(msgspec.Struct, frozen=True):
    """A paper carrying a profile tag whose contribution lies elsewhere (reports.sections), listed in one line."""

    id: str
    title: str
    url: str
    field: str


class ReportTrends(msgspec.Struct, frozen=True, kw_only=True):
    """The trends' rows as the report shows them (an older report.json's missing windows and name lists read as
    empty)."""

    as_of: str
    start: str = ""  # the terms' window (the month up to the period's end), YYYY-MM-DD
    baseline_start: str = ""  # ... against this baseline, up to the day before ``start``
    tags_baseline: str = ""  # "YYYY-MM-DD..YYYY-MM-DD": the tags' share this period is compared with
    emerging: list[TermTrend]
    declining: list[TermTrend]
    new_methods: list[NewMethod]  # kinds method and system (and hardware for a hardware profile)
    new_models: list[NewMethod] = []  # new names of kind model: their own short section
    new_benchmarks: list[NewMethod] = []
    topics: list[Topic]


class Notes(msgspec.Struct, kw_only=True):
    """The report's notes on how it was made (an older report.json's missing ones read as "")."""

    profile: str = ""
    summaries: str = ""
    off_profile: str = ""
    tags: str = ""
    ranking: str = ""
    trends: str = ""  # why trends are missing ("" when they are there; the composition root sets it)
    topics: str = ""  # growing topics and new names left out as unrelated to the profile


# report.json's sections that are records, as ``ReportContent.read`` decodes them (msgspec, types checked): each
# section's name, its type, and what null reads as
RECORDS: tuple[tuple[str, object, list[str] | dict[str, str]], ...] = (
    ("period", PeriodInfo, {}),
    ("headline", Headline, {}),
    ("tag_volume", list[TagRow], []),
    ("trends", ReportTrends, {}),
    ("top_overall", list[PaperRow], []),
    ("top_papers", list[TagSection], []),
    ("posts", list[PostRow], []),
    ("recommendations", list[Recommendation], []),
    ("notes", Notes, {}),
    ("summary", list[Bullet], []),
    ("elsewhere", list[ElsewhereRow], []),
    ("new_this_week", NewThisWeek, {}),
    ("calls", CallsSection, {}),
)


@dataclass
class ReportContent:
    title: str
    period: PeriodInfo
    generated_at: str
    headline: Headline
    tag_volume: list[TagRow]
    trends: ReportTrends
    top_overall: list[PaperRow]  # ranked papers
    top_papers: list[TagSection]
    posts: list[PostRow]
    posts_total: int
    recommendations: list[Recommendation]
    runs: list[RunSummary]  # finished reproduction runs with their verdicts
    notes: Notes
    summary: list[Bullet] = field(default_factory=list)  # the executive summary: at most five bullets
    # papers carrying a profile tag whose contribution lies elsewhere (an application: speech, medicine, ...):
    # {id, title, url, field}, listed in one line instead of the lab's sections (reports.sections)
    elsewhere: list[ElsewhereRow] = field(default_factory=list)
    # "New this week" (reports.new_this_week): the period's method cards in the profile's areas and the rest by name
    new_this_week: NewThisWeek = field(default_factory=NewThisWeek)
    # "Last month's calls" (reports.calls): what the radar flagged 4, 8 and 12 weeks earlier and what came of it
    calls: CallsSection = field(default_factory=CallsSection)
    extra: LaterSections = field(default_factory=lambda: LaterSections())  # sections a later version added

    def document(self) -> dict[str, JsonValue]:
        """report.json: the fields in order as msgspec writes them, then the sections read from a later version."""
        out: dict[str, JsonValue] = msgspec.to_builtins(self, enc_hook=numpy_builtins)
        del out["extra"]
        out["runs"] = msgspec.to_builtins(runs_json(self.runs))  # with each run's ``line`` (runs.py)
        return {**out, **self.extra}

    @classmethod
    def read(cls, data: object) -> ReportContent:
        """A report.json read back; ValueError when it is not one (a section missing, a record malformed). Its
        records (``RECORDS``) are decoded by msgspec, types checked, the runs by ``RunSummary``'s reader (lenient
        with older runs); the trends' rows are the trends' records (analysis.trends.result). A report written
        before summary, elsewhere, new_this_week or calls existed reads with them empty; keys a later version
        added are ignored inside records and kept in ``extra`` at the top."""
        if not isinstance(data, dict):
            raise ValueError("report.json is not a JSON object")
        names = {f.name for f in fields(cls)} - {"extra"}
        missing = sorted(names - set(data) - {"summary", "elsewhere", "new_this_week", "calls"})  # before these existed
        if missing:
            raise ValueError(f"report.json lacks {', '.join(missing)}")
        values = {k: data[k] for k in names if k in data}
        try:
            for name, record, empty in RECORDS:
                if name in data:
                    values[name] = msgspec.convert(data[name] or empty, record, strict=False)
        except msgspec.ValidationError as exc:
            raise ValueError(f"report.json: {exc}") from None
        values["runs"] = read_runs(data["runs"])  # older runs: fields missing or null read as defaults
        later = LaterSections({k: v for k, v in data.items() if k not in names})
        return cls(**values, extra=later)
