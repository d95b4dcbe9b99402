"""Overview: headline numbers for the chosen period, volume per tag, emerging and declining terms,
new methods and growing topics (from analysis.trends)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from radar.analysis.trends.result import NewMethod, TrendsResult
from radar.app.dashboard import data, reproduce
from radar.store import Workspace

PERIODS_SHOWN = {"week": 26, "month": 18}
WINDOW_LABELS = {"week": "week (the 7 days up to the date)", "month": "month (the month up to the date)"}


def render() -> None:
    root = data.page_root()
    ver = data.version(root)
    facets = data.facets(root, ver)
    st.title("Overview")
    if not facets["counts"]["documents"]:
        st.info("The workspace is empty: run `radar crawl` or `radar import FILE` first.")
        return
    first, last = date.fromisoformat(facets["first"][:10]), date.fromisoformat(facets["last"][:10])
    # default: the newest paper's day (a blog post dated later would leave a nearly empty period)
    default = date.fromisoformat((facets["last_paper"] or facets["last"])[:10])
    left, right = st.columns([1, 1])
    window = left.radio(
        "Period", ["week", "month"], horizontal=True, key="ov_window", format_func=WINDOW_LABELS.__getitem__
    )
    as_of = right.date_input(
        "As of",
        value=default,
        min_value=first,
        max_value=last,
        key="ov_as_of",
        help="only documents published on or before this day count",
    )
    window = window or "week"
    head = data.headline(root, ver, as_of, window)
    _headline(head, facets, window)
    _recommendations(root)

    trends: TrendsResult | None = None
    trends_error = ""
    try:
        with st.spinner("computing trends (a workspace where `radar trends` never ran builds its term table first)"):
            trends = data.trends(root, ver, as_of, window)
    except Exception as exc:  # a RadarError from the trends stage: show its one line, keep the page
        trends_error = str(exc)

    st.subheader(f"Volume per {window}")
    vol = pd.DataFrame(data.volume(root, ver, window, as_of, PERIODS_SHOWN[window]))
    if not vol.empty:
        chart = (
            alt.Chart(vol)
            .mark_bar()
            .encode(
                x=alt.X("period:N", title=None, sort=None),
                y=alt.Y("count:Q", title="documents"),
                color=alt.Color("kind:N", title="kind"),
                tooltip=["period", "kind", "count"],
            )
        )
        st.altair_chart(chart, width="stretch")
    _tag_chart(root, ver, window, as_of, trends)
    if trends is None:
        st.warning(
            data.md(
                "Emerging and declining terms, new methods and growing topics are missing: "
                f"the trends failed ({trends_error})"
            )
        )
        return
    _tag_trends(trends)
    _terms(trends)
    _new_methods(trends.new_methods)
    _table("Growing topics", trends.topics, trends.topics_note or "No topics in this period.")


def _recommendations(root: str) -> None:
    """The newest report's recommendations, each with a Reproduce button where a preset exists."""
    from radar.app.dashboard.page_repro import latest_recommendations

    week, recs = latest_recommendations(Workspace(Path(root)))
    if not recs:
        return
    with st.expander(f"Recommendations of the {week} report", expanded=True):
        reproduce.recommendations(root, recs, "overview")


def _tag_trends(trends: TrendsResult) -> None:
    """Rising / falling / flat per tag, by the trends' rule (significant change in share), as in the report."""
    moving = [t for t in trends.tag_trends if t["direction"] != "flat"]
    if not trends.tag_trends:
        return
    st.caption(
        "Tag trends: rising or falling when a tag's share changes significantly (two-sided, Bonferroni over "
        "the tags at [trends] tag_alpha), as `radar trends` and the report say"
    )
    rows = [
        {
            "tag": t["tag"],
            "trend": t["direction"],
            "share before": f"{100 * t['baseline_share']:.2f}%",
            "share now": f"{100 * t['recent_share']:.2f}%",
            "z": t["z"],
        }
        for t in (moving or trends.tag_trends[:5])
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def _headline(head: dict[str, Any], facets: dict[str, Any], window: str) -> None:
    now, before = head["now"], head["before"]
    total, prev = sum(now.values()), sum(before.values())
    st.caption(f"{head['start']:%Y-%m-%d} to {head['end']:%Y-%m-%d}, compared with the {window} before")
    cols = st.columns(5)
    cols[0].metric("Documents", f"{total:,}", delta=f"{total - prev:+,}")
    cols[1].metric("Papers", f"{now.get('paper', 0):,}", delta=f"{now.get('paper', 0) - before.get('paper', 0):+,}")
    cols[2].metric("Posts", f"{now.get('post', 0):,}", delta=f"{now.get('post', 0) - before.get('post', 0):+,}")
    cols[3].metric("Tagged", f"{head['tagged']:,}", help="documents of this period with at least one tag")
    cols[4].metric("In the workspace", f"{facets['counts']['documents']:,}")


def _tag_chart(root: str, ver: str, window: str, as_of: date, trends: TrendsResult | None) -> None:
    st.subheader(f"Volume per tag and {window}")
    rows: list[dict[str, Any]]
    if trends and trends.tags:
        rows = [
            {"period": p["period"], "tag": tag, "count": p["count"], "share": p["share"]}
            for tag, points in trends.tags.items()
            for p in points
        ]
        source = "radar trends"
    else:
        rows = data.tag_volume(root, ver, window, as_of, PERIODS_SHOWN[window])
        source = "stored tags"
    if not sum(r["count"] for r in rows):
        st.info("No tagged documents yet: run `radar tag` to tag them.")
        return
    groups = _groups(root)
    left, right = st.columns([1, 2])
    measure = left.radio(
        "Show",
        ["count", "share"],
        horizontal=True,
        key="ov_measure",
        help="share: fraction of the period's documents carrying the tag",
    )
    if groups:
        group = right.radio("Tags", ["all", *groups], horizontal=True, key="ov_group")
        if group and group != "all":
            rows = [r for r in rows if r["tag"] in groups[group]]
    frame = pd.DataFrame(rows)
    chart = (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X("period:N", title=None, sort=None),
            y=alt.Y(f"{measure or 'count'}:Q", title=measure or "count"),
            color=alt.Color("tag:N", title="tag"),
            tooltip=["period", "tag", "count", "share"],
        )
    )
    st.altair_chart(chart, width="stretch")
    st.caption(f"from {source}")


def _groups(root: str) -> dict[str, list[str]]:
    """Taxonomy group -> its tags."""
    config = Path(root) / "radar.toml"
    tax = data.taxonomy(root, config.stat().st_mtime if config.exists() else 0.0)
    out: dict[str, list[str]] = {}
    for t in tax:
        out.setdefault(t["group"], []).append(t["tag"])
    return out


def _terms(trends: TrendsResult) -> None:
    left, right = st.columns(2)
    for col, key, title in ((left, "emerging", "Emerging terms"), (right, "declining", "Declining terms")):
        col.subheader(title)
        items = trends.emerging if key == "emerging" else trends.declining
        if not items:
            col.caption("none in this period")
            continue
        keep = ("term", "score", "recent_count", "recent_share", "baseline_share", "first_seen", "aliases")
        frame = pd.DataFrame([{k: _cell(t.get(k)) for k in keep if k in t} for t in items])
        col.dataframe(frame, hide_index=True, width="stretch")


def _new_methods(methods: list[NewMethod]) -> None:
    st.subheader("New methods")
    others = [m for m in methods if m.get("kind") not in data.METHOD_KINDS]
    methods = [m for m in methods if m.get("kind") in data.METHOD_KINDS]
    if others:
        st.caption(
            "new names of other kinds: "
            + ", ".join(f"{m['name']} ({m.get('kind')})" for m in others[:12])
            + (" ..." if len(others) > 12 else "")
        )
    if not methods:
        st.caption("No new method names in this period.")
        return
    st.dataframe(pd.DataFrame(data.method_rows(methods)), hide_index=True, width="stretch")
    series = [
        {"method": m.get("name", ""), "period": p["period"], "count": p["count"]}
        for m in methods[:8]
        for p in m.get("series") or []
        if isinstance(p, dict)
    ]
    if series:
        chart = (
            alt.Chart(pd.DataFrame(series))
            .mark_line(point=True)
            .encode(
                x=alt.X("period:N", title=None, sort=None),
                y=alt.Y("count:Q", title="papers naming it"),
                color=alt.Color("method:N"),
                tooltip=["method", "period", "count"],
            )
        )
        st.altair_chart(chart, width="stretch")


def _table(title: str, items: list[Any], empty: str) -> None:
    st.subheader(title)
    if not items:
        st.caption(empty)
        return
    rows = [
        {k: _cell(v) for k, v in item.items()} if isinstance(item, dict) else {"item": _cell(item)} for item in items
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def _cell(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items())
    return value


if __name__ == "__main__":
    render()
