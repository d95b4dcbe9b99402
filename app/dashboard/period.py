"""The dashboard's one period: every page shows the same ISO week until the user picks another.

It opens on the week of the newest report (what the weekly job or the demo wrote, so the recommendations and the
panels beside them agree), else on the latest week the workspace's papers cover completely. The choice lives in
``st.session_state`` (``KEY``) and the picker in the sidebar is drawn by each page (``picker``), so moving
between pages keeps it.

What a page shows for the week is read, never computed on open: the period's trends from the workspace
(app.period_trends, written by `radar weekly`, `radar report`, `radar trends --week` and the demo), the report
through its own loader (reports.build.load_report), and the counts and changes in share through the report's
own computation (reports.volume), so the dashboard says what the report and `radar trends --week` say.
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import streamlit as st

from radar.analysis.trends.result import PeriodTrends, TrendsResult
from radar.app.dashboard import data
from radar.reports.build import BuiltReport, load_report, report_file
from radar.reports.period import Period, latest_data_week, parse_week, week_of
from radar.reports.volume import Volumes
from radar.reports.volume import volumes as report_volumes
from radar.store import Workspace
from radar.store.errors import RadarError

KEY = "radar_week"
WIDGET = "radar_week_picker"


def report_weeks(root: str) -> list[str]:
    """Weeks with a report folder, newest first."""
    reports = Workspace(Path(root)).reports_dir
    if not reports.is_dir():
        return []
    return sorted((p.name for p in reports.iterdir() if p.is_dir() and _is_week(p.name)), reverse=True)


def _is_week(label: str) -> bool:
    try:
        parse_week(label)
    except RadarError:
        return False
    return True


@data.cache_data
def _latest_week(root: str, ver: str) -> str:
    try:
        return str(data.read(root, lambda s: latest_data_week(s).label))
    except RadarError:
        return ""


def default_label(root: str, ver: str) -> str:
    """The newest report's week, else the latest week the papers cover completely ("" for an empty workspace)."""
    weeks = report_weeks(root)
    return weeks[0] if weeks else _latest_week(root, ver)


def choices(root: str, ver: str) -> list[str]:
    """Every ISO week of the workspace's data, newest first (the report weeks among them)."""
    facets = data.facets(root, ver)
    first, last = facets.first, facets.last_paper or facets.last
    if not first or not last:
        return report_weeks(root)
    out: list[str] = []
    day = week_of(date.fromisoformat(last[:10])).start
    stop = date.fromisoformat(first[:10])
    while day >= stop - timedelta(days=6) and len(out) < 520:
        out.append(week_of(day).label)
        day -= timedelta(days=7)
    return list(dict.fromkeys([*out, *report_weeks(root)]))


def current(root: str, ver: str) -> Period | None:
    """The period every page shows (the default until the user picks one)."""
    label = st.session_state.get(KEY) or default_label(root, ver)
    if not label:
        return None
    st.session_state[KEY] = label
    return parse_week(label)


def _picked() -> None:
    st.session_state[KEY] = st.session_state[WIDGET]


def picker(root: str, ver: str) -> Period | None:
    """The week picker in the sidebar (one for all pages) and the chosen week."""
    period = current(root, ver)
    if period is None:
        return None
    options = choices(root, ver)
    if period.label not in options:
        options = [period.label, *options]
    reports = set(report_weeks(root))
    st.session_state[WIDGET] = period.label
    st.sidebar.selectbox(
        "Week",
        options,
        key=WIDGET,
        on_change=_picked,
        format_func=lambda w: f"{w} · report" if w in reports else w,
        help="every page shows this ISO week: what was announced from its Monday to its Sunday",
    )
    st.sidebar.caption(data.md(period.describe()))
    return period


# -- what a page shows for the week (read, never computed on open) ------------------------------------------
def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


@data.cache_data
def _trends_file(root: str, label: str, mtime: float) -> PeriodTrends | None:
    from radar.app import period_trends  # defers scipy, faiss, bm25s

    return period_trends.load(data.radar(root), label)


def trends(root: str, ver: str, label: str) -> tuple[PeriodTrends | None, str]:
    """(the week's trends as the weekly job saved them, a note when they are missing or were computed on another
    state of the workspace)."""
    from radar.app import period_trends  # defers scipy, faiss, bm25s

    radar = data.radar(root)
    found = _trends_file(root, label, _mtime(radar.ws.period_trends_path(label)))
    if found is None:
        return None, f"no trends computed for {label} yet"
    now = data.read(root, lambda s: period_trends.state(radar, s))
    if found.fingerprint != now:
        return found, (
            f"computed {found.computed_at} on an earlier state of the workspace: `radar trends --week {label}` "
            "brings them up to date"
        )
    return found, ""


def compute_button(root: str, label: str) -> None:
    """A button that computes (and keeps) the week's trends: the one place a page computes them, on request."""
    if st.button(f"Compute the trends of {label}", key=f"compute-trends-{label}", help="as radar trends --week does"):
        from radar.app import period_trends  # defers scipy, faiss, bm25s

        radar = data.radar(root)
        try:
            with (
                st.spinner(f"computing the trends of {label} (the first time builds the term table)"),
                radar.store() as s,
            ):
                period_trends.get(radar, s, parse_week(label), refresh=True)
        except RadarError as exc:
            st.error(data.md(f"radar: {exc}"))
            return
        _trends_file.clear()  # type: ignore[attr-defined]
        st.rerun()


@data.cache_data
def _report_file(root: str, label: str, mtime: float) -> BuiltReport | None:
    return load_report(Workspace(Path(root)).report_dir(label))


def report(root: str, label: str) -> BuiltReport | None:
    """The week's report through the report module's loader; None when there is none."""
    folder = Workspace(Path(root)).report_dir(label)
    return _report_file(root, label, _mtime(report_file(folder, "json")))


def volumes(root: str, ver: str, label: str) -> Volumes:
    """The report's headline and per-tag rows for the week (reports.volume: the report's own computation), with the
    changes in share from the week's kept trends (their file's time is in the cache key, so the rows follow it)."""
    return _volumes(root, ver, label, _mtime(data.radar(root).ws.period_trends_path(label)))


@data.cache_data
def _volumes(root: str, ver: str, label: str, trends_mtime: float) -> Volumes:
    from radar.reports.content import tag_groups  # defers scipy, requests

    radar = data.radar(root)
    groups = {t.name: t.group for t in radar.taxonomy.tags}
    found = _trends_file(root, label, trends_mtime)
    tags = found.tags if found is not None else TrendsResult.empty()
    period = parse_week(label)
    cfg = radar.settings.report
    result: Volumes = data.read(root, lambda s: report_volumes(s, period, tag_groups(groups, s), cfg, tags))
    return result
