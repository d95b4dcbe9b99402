"""Overview: the chosen week as the report tells it: headline counts, the week's recommendations, each tag's
change in share (small multiples of its weekly share), emerging and declining terms, new methods and growing
topics. Everything is read: the week's trends as the weekly job kept them (app.period_trends), the counts and
changes through the report's own computation (reports.volume), the recommendations through the report's loader."""

from __future__ import annotations

import altair as alt
import msgspec
import streamlit as st
from msgspec import UNSET

from radar.analysis.trends.result import NewMethod, PeriodTrends, TrendsResult
from radar.app.dashboard import data, period, reproduce
from radar.reports.result import Headline, TagRow

TOP_METHODS = 6  # lines in the new-methods chart


def render() -> None:
    root = data.page_root()
    ver = data.version(root)
    facets = data.facets(root, ver)
    st.title("Overview")
    if not facets.counts["documents"]:
        st.info("The workspace is empty: run `radar crawl` or `radar import FILE` first.")
        return
    week = period.picker(root, ver)
    if week is None:
        return
    found, note = period.trends(root, ver, week.label)
    head, rows = period.volumes(root, ver, week.label)
    st.caption(data.md(f"{week.describe()}: what was announced from its Monday to its Sunday"))
    _headline(head, facets)
    _recommendations(root, week.label)
    if found is None:
        st.info(data.ours(f"{note}: `radar weekly`, `radar report --week {week.label}` or the button computes them"))
        period.compute_button(root, week.label)
        _volume(head)
        return
    if note:
        st.caption(data.ours(note))
    _volume(head)
    _tags(rows, found)
    _terms(found.terms)
    _new_methods(found.terms)
    _topics(found.terms)


# -- the rows the page's tables and charts show (``data.table`` turns them into a dataframe) -------------------
class GroupShare(msgspec.Struct, frozen=True, rename={"change_in_share": "change in share"}):
    group: str
    papers: int
    share: str  # "12.5%"
    change_in_share: str  # the report's wording, "-" when flat


class TagShare(msgspec.Struct, frozen=True, rename={"change_in_share": "change in share"}):
    tag: str
    group: str
    papers: int
    change_in_share: str


class SharePoint(msgspec.Struct, frozen=True):
    """One point of a tag's small multiple: its weekly share in percent."""

    tag: str
    period: str
    share: float
    papers: int


class TermRow(msgspec.Struct, frozen=True, rename={"share_now": "share now", "first_seen": "first seen"}):
    term: str
    recent: int
    share_now: str
    before: str
    first_seen: str


class MethodPoint(msgspec.Struct, frozen=True):
    """Papers naming a new method in one period (the new-methods chart)."""

    method: str
    period: str
    count: int


class TopicRow(msgspec.Struct, frozen=True):
    id: str
    topic: str
    papers: int
    recent: int
    growth: str
    keywords: str


def _headline(head: Headline, facets: data.Facets) -> None:
    cols = st.columns(5)
    change = head.change_pct
    cols[0].metric(
        "Documents",
        f"{head.documents:,}",
        delta=f"{change:+.0f}%" if change is not None else None,
        help=f"the change against the mean of the {head.trailing_weeks} weeks before ({head.trailing_mean})",
    )
    cols[1].metric("Papers", f"{head.papers:,}")
    cols[2].metric("Posts", f"{head.posts:,}")
    cols[3].metric("Tagged", f"{head.tagged:,}", help="documents of this week with at least one tag")
    cols[4].metric("In the workspace", f"{facets.counts['documents']:,}")
    groups = [GroupShare(g.group, g.count, f"{g.share_pct}%", g.change or "-") for g in head.groups]
    if groups:
        st.dataframe(data.table(groups), hide_index=True, width="stretch")


def _recommendations(root: str, label: str) -> None:
    """The week's report's recommendations, each with a Reproduce button where a preset exists."""
    built = period.report(root, label)
    if built is None:
        st.caption(data.ours(f"no report for {label} yet (`radar report --week {label}`)"))
        return
    recs = built.content.recommendations
    with st.expander(f"Recommendations of the {label} report ({len(recs)})", expanded=True):
        reproduce.recommendations(root, recs, "overview")


def _volume(head: Headline) -> None:
    series = head.series
    if not series:
        return
    st.subheader("Documents per week")
    frame = data.table(series)
    order = [p.period for p in series]
    chart = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("period:O", title=None, sort=order, axis=alt.Axis(labelAngle=-45)),
            y=alt.Y("count:Q", title="documents"),
            tooltip=["period", "count"],
        )
        .properties(height=200)
    )
    st.altair_chart(chart, width="stretch")


def _tags(rows: list[TagRow], found: PeriodTrends) -> None:
    """Each tag's change in share, as the report words it, and small multiples of its weekly share."""
    st.subheader("Tags: change in share this week")
    if not rows or not any(r.count for r in rows):
        st.info("No tagged documents this week: run `radar tag` to tag them.")
        return
    base = found.tags.baseline
    against = f"{base.start}..{base.end}" if base else "the weeks before"
    st.caption(
        data.ours(
            f"the week's share of documents against {against}; rising or "
            "falling when the change is significant (stratified test, two-sided, Bonferroni over the tags), as the "
            "report and `radar trends --week` say"
        )
    )
    table = [TagShare(r.tag, r.group, r.count, r.change or "-") for r in rows]
    st.dataframe(data.table(table), hide_index=True, width="stretch")
    points = [
        SharePoint(tag, p.period, 100 * p.raw_share, p.count)
        for tag, series in found.tags.tags.items()
        for p in series[-12:]
    ]
    if not points:
        return
    order = sorted({p.period for p in points})
    chart = (
        alt.Chart(data.table(points))
        .mark_line(point=True)
        .encode(
            x=alt.X("period:O", title=None, sort=order, axis=alt.Axis(labels=False, ticks=False)),
            y=alt.Y("share:Q", title="% of documents"),
            tooltip=["tag", "period", alt.Tooltip("share:Q", format=".2f"), "papers"],
        )
        .properties(width=150, height=100)
        .facet(facet=alt.Facet("tag:N", title=None), columns=4)
        .resolve_scale(y="independent")
    )
    st.altair_chart(chart)
    st.caption(data.md(f"weekly share, {order[0]} to {order[-1]} (each panel its own scale)"))


def _terms(terms: TrendsResult) -> None:
    rec = f"{terms.recent.start}..{terms.recent.end}" if terms.recent else "?"
    base = f"{terms.baseline.start}..{terms.baseline.end}" if terms.baseline else "?"
    st.caption(
        data.md(
            f"terms, new names and topics: {rec} against {base} "
            "(a week holds too few papers for a term to pass the bar)"
        )
    )
    left, right = st.columns(2)
    for col, items, title in ((left, terms.emerging, "Emerging terms"), (right, terms.declining, "Declining terms")):
        col.subheader(title)
        if not items:
            col.caption("none passes the bar")
            continue
        frame = [
            TermRow(
                term=t.term,
                recent=t.recent_count,
                share_now=f"{100 * t.recent_share:.2f}%",
                before=f"{100 * (t.baseline_share or 0):.2f}%",
                first_seen=(t.first_seen or "")[:10],
            )
            for t in items
        ]
        col.dataframe(data.table(frame), hide_index=True, width="stretch")


def _new_methods(terms: TrendsResult) -> None:
    st.subheader("New methods")
    st.caption("introduced by a paper of the last months (its method card), most-named first; the week's own: Methods")
    methods: list[NewMethod] = [m for m in terms.new_methods if m.kind in data.METHOD_KINDS]
    others = [m for m in terms.new_methods if m.kind not in data.METHOD_KINDS]
    if others:
        st.caption(
            data.md(
                "new names of other kinds: "
                + ", ".join(f"{m.name} ({None if m.kind is UNSET else m.kind})" for m in others[:12])
                + (" ..." if len(others) > 12 else "")
            )
        )
    if not methods:
        st.caption("No new method names in this period.")
        return
    st.dataframe(data.method_rows(methods), hide_index=True, width="stretch")
    series = [MethodPoint(m.name, p.period, p.count) for m in methods[:TOP_METHODS] for p in m.series]
    if series:
        order = sorted({p.period for p in series})
        chart = (
            alt.Chart(data.table(series))
            .mark_line(point=True)
            .encode(
                x=alt.X("period:O", title=None, sort=order),
                y=alt.Y("count:Q", title="papers naming it"),
                color=alt.Color("method:N", legend=alt.Legend(orient="bottom", columns=3)),
                tooltip=["method", "period", "count"],
            )
            .properties(height=240)
        )
        st.altair_chart(chart, width="stretch")
        st.caption(data.md(f"the {min(len(methods), TOP_METHODS)} newest methods with the most papers"))


def _topics(terms: TrendsResult) -> None:
    st.subheader("Growing topics")
    if not terms.topics:
        st.caption(data.md(terms.topics_note or "No topics in this period."))
        return
    rows = [
        TopicRow(
            id=t.id,
            topic=t.label,
            papers=t.size,
            recent=t.recent_size,
            growth=f"{t.growth:.2f}x",
            keywords=", ".join(t.keywords[:6]),
        )
        for t in sorted(terms.topics, key=lambda t: (-(t.growth or 0), t.id))
    ]
    st.dataframe(
        data.table(rows),
        hide_index=True,
        width="stretch",
        height=36 * (len(rows) + 1) + 2,  # every topic, no scrolling
        column_config={
            "id": st.column_config.TextColumn(width="small"),
            "topic": st.column_config.TextColumn(width="large"),
            "papers": st.column_config.NumberColumn(width="small"),
            "recent": st.column_config.NumberColumn(width="small"),
            "growth": st.column_config.TextColumn(width="small"),
            "keywords": st.column_config.TextColumn(width="large"),
        },
    )


if __name__ == "__main__":
    render()
