"""Report periods: ISO weeks (``2025-W20``) or explicit date ranges, inclusive of both ends."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from radar.crawler.documents import Documents
from radar.reports.errors import ReportError
from radar.store.dates import ISO_WEEK, week_monday
from radar.store.table import Database


@dataclass(frozen=True)
class Period:
    label: str  # "2025-W20" for a week, "2025-05-01_2025-05-14" for a range; also the report folder name
    start: date
    end: date  # inclusive

    @property
    def since(self) -> str:
        """Lower bound for ``published`` (ISO timestamps compare as strings)."""
        return f"{self.start.isoformat()}T00:00:00Z"

    @property
    def until(self) -> str:
        return f"{self.end.isoformat()}T23:59:59Z"

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    @property
    def is_week(self) -> bool:
        return bool(ISO_WEEK.match(self.label))

    def shifted(self, periods: int) -> Period:
        """The period of the same length ``periods`` lengths earlier (negative) or later."""
        delta = timedelta(days=self.days * periods)
        start, end = self.start + delta, self.end + delta
        return week_of(start) if self.is_week else Period(_range_label(start, end), start, end)

    def trailing(self, n: int) -> list[Period]:
        """The n periods before this one, oldest first."""
        return [self.shifted(-k) for k in range(n, 0, -1)]

    def describe(self) -> str:
        return f"{self.label} ({self.start:%a %d %b %Y} - {self.end:%a %d %b %Y})"


def _range_label(start: date, end: date) -> str:
    return f"{start.isoformat()}_{end.isoformat()}"


def week_of(day: date) -> Period:
    year, week, _ = day.isocalendar()
    start = date.fromisocalendar(year, week, 1)
    return Period(f"{year}-W{week:02d}", start, start + timedelta(days=6))


def parse_week(text: str) -> Period:
    hint = "use YYYY-Www, e.g. --week 2025-W20, or --week last / --week latest"
    try:
        start = week_monday(text)
    except ValueError:
        year, week = text.strip().split("-W")
        raise ReportError(f"--week {text!r} does not exist (week {week} of {year}); {hint}") from None
    if start is None:
        raise ReportError(f"--week {text!r} is not an ISO week; {hint}")
    return week_of(start)


def parse_range(since: str, until: str) -> Period:
    try:
        start, end = date.fromisoformat(since), date.fromisoformat(until)
    except ValueError:
        hint = "e.g. --from 2025-05-01 --to 2025-05-14"
        raise ReportError(f"--from {since!r} / --to {until!r} must be dates, {hint}") from None
    if end < start:
        raise ReportError(f"--to {until} is before --from {since}; swap them")
    if (end - start).days > 366:
        raise ReportError("a report covers at most a year; choose a shorter --from/--to range")
    return Period(_range_label(start, end), start, end)


def last_full_week(today: date | None = None) -> Period:
    """The ISO week before the one containing ``today`` (UTC): what a Monday cron job reports."""
    today = today or datetime.now(UTC).date()
    return week_of(today - timedelta(days=7))


def latest_data_week(store: Database) -> Period:
    """The latest ISO week the store's papers cover completely (its Sunday is on or before the newest
    paper's date), so a snapshot that ends on a Wednesday reports the week before."""
    newest = Documents(store).published_range("paper").last or Documents(store).published_range().last
    if not newest:
        raise ReportError("the workspace has no documents yet; run `radar import` or `radar crawl` first")
    day = date.fromisoformat(newest[:10])
    week = week_of(day)
    return week if week.end <= day else week.shifted(-1)


def resolve_period(
    store: Database,
    *,
    week: str | None = None,
    since: str | None = None,
    until: str | None = None,
    today: date | None = None,
) -> Period:
    if (since or until) and week:
        raise ReportError("give either --week or --from/--to, not both")
    if since or until:
        if not (since and until):
            raise ReportError("a date range needs both --from YYYY-MM-DD and --to YYYY-MM-DD")
        return parse_range(since, until)
    if not week or week == "last":
        return last_full_week(today)
    if week == "latest":
        return latest_data_week(store)
    return parse_week(week)


def period_from_label(label: str) -> Period:
    """The period a report folder name stands for ("2025-W20" or "2025-05-01_2025-05-14")."""
    if "_" in label:
        start, _, end = label.partition("_")
        return parse_range(start, end)
    return parse_week(label)
