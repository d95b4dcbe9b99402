"""One period's trends, computed once and kept in the workspace: what the report, `radar trends --week`, the demo's
summary and the dashboard show for that period (``analysis.trends.result.PeriodTrends``).

``get`` computes them (when the cached copy is missing or was computed on another state of the store) and saves
them; ``load`` only reads the cached copy (the dashboard: a page never computes trends on open). Two parts, both
as of the period's last day and both using only documents that entered the record by then (store.dates): the
period's own window for the tags' change in share, the month up to it for terms, new names and topics.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import asdict

from radar.analysis.contributions.table import Contributions
from radar.analysis.trends.compute import TrendDetector, compute_trends
from radar.analysis.trends.result import PeriodTrends, decode, encode
from radar.app import steps_contributions, wiring
from radar.app.context import Radar
from radar.crawler.documents import Documents
from radar.index.embeddings import Embeddings
from radar.index.tags_table import Tags
from radar.reports.period import Period
from radar.store import Store
from radar.store.files import write_cache_atomic
from radar.store.models import utc_now

Progress = Callable[[int, int], None]


def state(radar: Radar, store: Store) -> str:  # the whole Store: a fingerprint of four of its tables
    """What the trends depend on: documents, tags, embeddings, the contributions (their model versions: the new
    methods are the method cards) and the [trends] settings."""
    settings = hashlib.blake2b(repr(asdict(radar.settings.trends)).encode(), digest_size=6).hexdigest()
    models = ",".join(f"{m}:{n}" for m, n in sorted(Contributions(store).contribution_models().items()))
    tables = f"{Documents(store).fingerprint()}|{Tags(store).fingerprint()}|{Embeddings(store).generation()}"
    return f"{tables}|{models}|{settings}"


def tags_window(period: Period) -> str:
    """The window of the tags' test: the ISO week itself for a week, else the month up to the period's end."""
    return "week" if period.is_week else "month"


def compute(
    radar: Radar,
    store: Store,  # the whole Store: trends, and through trends_env the names and the contributions stage
    period: Period,
    *,
    progress: Progress | None = None,
    detector: TrendDetector = compute_trends,
) -> PeriodTrends:
    """Both parts of ``period``'s trends (raises the trends stage's RadarError, e.g. an empty workspace); the
    contributions the new methods read are brought up to date first."""
    steps_contributions.refresh(radar, store)
    env = wiring.trends_env(radar, store)
    tags = detector(store, env, as_of=period.end, window=tags_window(period), topics=False, progress=progress)
    terms = detector(store, env, as_of=period.end, window="month", topics=True, progress=progress)
    return PeriodTrends(
        label=period.label,
        start=period.start.isoformat(),
        end=period.end.isoformat(),
        tags=tags,
        terms=terms,
        fingerprint=state(radar, store),
        computed_at=utc_now(),
    )


def load(radar: Radar, label: str) -> PeriodTrends | None:
    """The cached trends of the period ``label``, None when there are none (or the file is unreadable)."""
    path = radar.ws.period_trends_path(label)
    try:
        return decode(path.read_bytes(), PeriodTrends)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save(radar: Radar, found: PeriodTrends) -> None:
    write_cache_atomic(radar.ws.period_trends_path(found.label), encode(found))  # not kept on a full or read-only disk


def get(
    radar: Radar,
    store: Store,
    period: Period,
    *,
    refresh: bool = False,
    progress: Progress | None = None,
    detector: TrendDetector = compute_trends,
) -> PeriodTrends:
    """The period's trends: the cached copy when it was computed on the store as it is now, else computed and
    saved (``refresh``: always computed)."""
    if not refresh:
        cached = load(radar, period.label)
        if cached is not None and cached.fingerprint == state(radar, store):
            return cached
    found = compute(radar, store, period, progress=progress, detector=detector)
    save(radar, found)
    return found
