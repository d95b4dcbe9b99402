"""[trends] section of radar.toml, and the windows it implies."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from radar.store.config import TomlTable, dataclass_from
from radar.store.errors import ConfigError

WINDOWS = ("week", "month")


@dataclass(frozen=True)
class TrendsConfig:
    """How terms, methods and topics are judged. Counts are documents, not mentions."""

    baseline_weeks: int = 8  # week window: the recent 7 days against the 8 weeks before
    baseline_months: int = 6  # month window: the recent month against the 6 months before
    series_weeks: int = 26  # periods shown in tag series
    series_months: int = 24
    min_count: int = 4  # recent documents a term needs before it can be emerging
    min_ratio: float = 2.0  # emerging: rate ratio whose 95% lower bound clears this (declining: 1/x)
    min_z: float = 4.0  # and a stratified z-score at least this large
    tag_alpha: float = 0.05  # a tag is rising/falling when its share changes at this family-wise level
    spike_extra_z: float = 2.0  # a rise seen in the last period only needs z >= min_z + this
    min_stratum_docs: int = 20  # a stratum needs this many baseline documents to be compared
    # strata: source x primary category x cross-listing in each of the N most common categories
    major_categories: int = 6
    stratify: bool = True  # false compares raw shares (what a naive detector does; the backtest's baseline)
    # a term's recent documents must be about one thing (analysis/trends/coherence.py): their mean pairwise
    # TF-IDF cosine, the term's own words removed, at least min_coherence_lift times the median of equally
    # many random documents of the same strata, and min_coherence_z robust deviations (MAD) above it;
    # min_coherence_z = 0 turns the check off
    min_coherence_lift: float = 1.5
    min_coherence_z: float = 3.0
    coherence_samples: int = 50  # random document sets drawn per term for that baseline
    max_terms: int = 25  # emerging and declining terms listed
    # a rise stays emerging while its burst is at most rise_periods periods old: the recent window is then
    # compared with the baseline that ends where the burst began, so a rise that continues is not hidden by
    # its own first months (1: only the baseline right before the recent window)
    rise_periods: int = 3
    # versioned names (Qwen3, Qwen3-VL, Qwen3-Coder) are also judged per family (analysis/trends/family.py):
    # a family launch is emerging without the coherence check (a release is used across topics), and a
    # family whose share falls while a successor (same stem, higher version) rises is declining when its
    # fall is significant (z <= -min_z) and its rate ratio's upper bound is <= 1 / successor_ratio
    families: bool = True
    successor_ratio: float = 1.5
    # new methods (analysis/trends/methods.py): what a paper published within new_method_days of as_of introduces
    # (its method card), not in the first burn_in_days of the data (a card cannot tell a reused name there), named
    # by at least min_method_count documents by as_of, the introducing paper included (2: one later paper)
    new_method_days: int = 120
    burn_in_days: int = 90
    min_method_count: int = 2
    max_methods: int = 25
    topic_weeks: int = 12  # topics cluster the documents of the last 12 weeks (week window) ...
    topic_months: int = 3  # ... or 3 months (month window)
    max_topic_docs: int = 20000
    topic_match: float = 0.75  # cosine similarity for a cluster to keep a previous topic's id

    def __post_init__(self) -> None:
        positive = (
            "baseline_weeks",
            "baseline_months",
            "series_weeks",
            "series_months",
            "min_count",
            "max_terms",
            "new_method_days",
            "min_method_count",
            "max_methods",
            "topic_weeks",
            "topic_months",
            "max_topic_docs",
            "major_categories",
            "coherence_samples",
            "rise_periods",
        )
        for name in positive:
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"[trends] {name} must be a whole number >= 1 (got {value!r})")
        # windows are dates: a century back at most (date arithmetic beyond year 1 fails)
        for name, most in (("baseline_weeks", 520), ("series_weeks", 520), ("topic_weeks", 520)) + (
            ("baseline_months", 120),
            ("series_months", 120),
            ("topic_months", 120),
            ("new_method_days", 3650),
            ("burn_in_days", 3650),
            ("rise_periods", 12),
        ):
            if getattr(self, name) > most:
                raise ConfigError(f"[trends] {name} must be at most {most} (got {getattr(self, name)!r})")
        if self.min_ratio <= 1.0:
            raise ConfigError("[trends] min_ratio must be > 1 (e.g. 1.5: at least 50% more than the baseline)")
        if self.successor_ratio <= 1.0:
            raise ConfigError("[trends] successor_ratio must be > 1 (e.g. 1.5: a third fewer than the baseline)")
        if self.min_z < 0 or self.spike_extra_z < 0 or self.min_coherence_z < 0:
            raise ConfigError("[trends] min_z, spike_extra_z and min_coherence_z must be >= 0")
        if self.min_coherence_lift < 1.0:
            raise ConfigError("[trends] min_coherence_lift must be >= 1 (1: no more alike than random documents)")
        if not 0.0 < self.tag_alpha < 0.5:
            raise ConfigError("[trends] tag_alpha is a significance level: between 0 and 0.5 (e.g. 0.05)")
        if not 0.0 < self.topic_match < 1.0:
            raise ConfigError("[trends] topic_match must be between 0 and 1 (cosine similarity)")

    @classmethod
    def from_section(cls, table: TomlTable) -> TrendsConfig:
        found: TrendsConfig = dataclass_from(cls, table, "[trends]")  # every field a scalar with a default
        return found


def check_window(window: str) -> str:
    if window not in WINDOWS:
        raise ConfigError(f"unknown window {window!r}; use one of: {', '.join(WINDOWS)}")
    return window


def months_back(day: date, months: int) -> date:
    """The same day ``months`` earlier (clamped to the month's length)."""
    year, month = divmod(day.year * 12 + day.month - 1 - months, 12)
    month += 1
    last = (date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)).day
    return date(year, month, min(day.day, last))


@dataclass(frozen=True)
class Windows:
    """Inclusive day ranges: baseline [baseline_start, recent_start - 1], recent [recent_start, as_of]."""

    as_of: date
    recent_start: date
    baseline_start: date
    topic_start: date
    baseline_end: date | None = None  # None: the day before recent_start

    @property
    def baseline_last(self) -> date:
        return self.baseline_end or self.recent_start - timedelta(days=1)


def _back(day: date, window: str, cfg: TrendsConfig) -> date:
    return day - timedelta(weeks=cfg.baseline_weeks) if window == "week" else months_back(day, cfg.baseline_months)


def earlier_baseline(win: Windows, end_before: date, window: str, cfg: TrendsConfig) -> Windows:
    """The same recent window against a baseline of the usual length that ends the day before ``end_before``."""
    end = min(end_before, win.recent_start)
    return Windows(win.as_of, win.recent_start, _back(end, window, cfg), win.topic_start, end - timedelta(days=1))


def span(first: date, last: date, window: str, cfg: TrendsConfig) -> Windows:
    """The days first .. last as the recent window, against the usual baseline before ``first``."""
    return Windows(last, first, _back(first, window, cfg), first)


def windows(as_of: date, window: str, cfg: TrendsConfig) -> Windows:
    if window == "week":
        recent = as_of - timedelta(days=6)
        return Windows(
            as_of,
            recent,
            recent - timedelta(weeks=cfg.baseline_weeks),
            as_of - timedelta(weeks=cfg.topic_weeks) + timedelta(days=1),
        )
    month_end = (as_of + timedelta(days=1)).day == 1
    recent = as_of.replace(day=1) if month_end else months_back(as_of, 1) + timedelta(days=1)
    return Windows(as_of, recent, months_back(recent, cfg.baseline_months), months_back(recent, cfg.topic_months - 1))


def period_label(day: date, window: str) -> str:
    if window == "week":
        iso = day.isocalendar()
        return f"{iso.year}-W{iso.week:02d}"
    return f"{day.year}-{day.month:02d}"


def period_start(day: date, window: str) -> date:
    return day - timedelta(days=day.weekday()) if window == "week" else day.replace(day=1)


def series_starts(as_of: date, window: str, cfg: TrendsConfig) -> list[date]:
    """First days of the periods shown, oldest first; the last one contains as_of."""
    last = period_start(as_of, window)
    if window == "week":
        return [last - timedelta(weeks=k) for k in range(cfg.series_weeks - 1, -1, -1)]
    return [months_back(last, k) for k in range(cfg.series_months - 1, -1, -1)]
