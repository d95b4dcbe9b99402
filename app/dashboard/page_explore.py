"""Explore: hybrid search with filters, a result list with tags and scores, and a paper's detail
(abstract, links, similar papers) with buttons that confirm or remove its tags.

Titles and abstracts come from feeds: they are shown through ``data.md`` (every Markdown/HTML
special escaped), never as HTML.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

import streamlit as st

from radar.app.dashboard import data, period
from radar.crawler.documents import Documents
from radar.index.tags_table import Tags, TagScore
from radar.reports.period import Period
from radar.store.errors import RadarError


def render() -> None:
    root = data.page_root()
    ver = data.version(root)
    facets = data.facets(root, ver)
    st.title("Explore")
    week = period.picker(root, ver)
    query = st.text_input("Search", key="ex_query", placeholder="e.g. sequence-level importance ratio for MoE RL")
    filters = _filter_widgets(facets)
    _review(root)
    results, detail = st.columns([3, 2], gap="large")
    with results:
        _results(root, query, filters, week)
    with detail:
        doc_id = st.session_state.get("ex_doc")
        if doc_id:
            _detail(root, doc_id, facets)
        else:
            st.caption("Open a result to see its abstract, tags and similar papers.")


@dataclass(frozen=True, slots=True)
class Picked:
    """What the filter widgets hold: index.search.Filters' fields and how many results."""

    since: str  # YYYY-MM-DD, '' for no bound
    until: str
    tags: tuple[str, ...]
    sources: tuple[str, ...]
    categories: tuple[str, ...]
    kinds: tuple[str, ...]
    k: int


def _filter_widgets(facets: data.Facets) -> Picked:
    first = date.fromisoformat(facets.first[:10]) if facets.first else None
    last = date.fromisoformat(facets.last[:10]) if facets.last else None
    with st.expander("Filters", expanded=False):
        c1, c2, c3 = st.columns(3)
        since = c1.date_input("Published from", value=None, min_value=first, max_value=last, key="ex_since")
        until = c1.date_input("Published until", value=None, min_value=first, max_value=last, key="ex_until")
        tags = c2.multiselect("Tags (any)", facets.tags, key="ex_tags")
        kinds = c2.multiselect("Kind", ["paper", "post"], key="ex_kinds")
        sources = c3.multiselect("Source", list(facets.sources), key="ex_sources")
        categories = c3.multiselect("Category", list(facets.categories), key="ex_categories")
        k = st.slider("Results", 5, 50, 10, step=5, key="ex_k")
    return Picked(
        since=since.isoformat() if since else "",
        until=until.isoformat() if until else "",
        tags=tuple(tags),
        sources=tuple(sources),
        categories=tuple(categories),
        kinds=tuple(kinds),
        k=k,
    )


def _results(root: str, query: str, f: Picked, week: Period | None) -> None:
    from radar.index.search import Filters  # defers faiss, bm25s

    in_week = not query.strip() and not f.since and not f.until and week is not None
    if in_week and week is not None:  # the list without a query: the dashboard's week, unless dates are chosen
        f = replace(f, since=week.start.isoformat(), until=week.end.isoformat())
    filters = Filters(
        since=f.since, until=f.until, tags=f.tags, sources=f.sources, categories=f.categories, kinds=f.kinds
    )
    ver = data.version(root)
    if not query.strip():
        docs, tags = data.latest(root, ver, filters, f.k)
        where = f"of {week.label}" if in_week and week is not None else "matching the filters"
        st.caption(data.md(f"newest {len(docs)} documents {where}; type a query to search all dates"))
        for d in docs:
            _row(d.id, d.title, d.published, d.source, tags.get(d.id, []), None)
        return
    try:
        hits = data.search(root, ver, query.strip(), filters, f.k)
    except RadarError as exc:
        st.error(data.md(f"radar: {exc}"))
        return
    st.caption(f"{len(hits)} results (hybrid: semantic + keyword, fused by reciprocal rank)")
    if not hits:
        st.info("No results: loosen the filters or rephrase the query.")
    for h in hits:
        _row(h.id, h.title, h.published, h.source, h.tags, h.score)


def _row(doc_id: str, title: str, published: str, source: str, tags: list[str], score: float | None) -> None:
    with st.container(border=True):
        st.markdown(f"**{data.text(data.one_line(title))}**")
        bits = [doc_id, published[:10], source] + ([f"score {score:.4f}"] if score is not None else [])
        st.caption(data.md(" · ".join(bits)) + ("  \n" + data.md("tags: " + ", ".join(tags)) if tags else ""))
        st.button("Open", key=f"open-{doc_id}", on_click=_open, args=(doc_id,))


def _open(doc_id: str) -> None:
    st.session_state["ex_doc"] = doc_id


def _detail(root: str, doc_id: str, facets: data.Facets) -> None:
    doc = data.read(root, lambda s: Documents(s).get(doc_id))
    if doc is None:
        st.warning(data.md(f"no document {doc_id} in this workspace"))
        return
    details = data.read(root, lambda s: Tags(s).details(doc_id))
    tags, fixes = details.tags, details.corrections
    st.subheader(data.text(data.one_line(doc.title, 500)))
    authors = ", ".join(doc.authors[:8]) + (" et al." if len(doc.authors) > 8 else "")
    st.caption(data.md(" · ".join(x for x in (doc.id, doc.published[:10], doc.source, authors) if x)))
    if doc.categories:
        st.caption(data.md("categories: " + ", ".join(doc.categories)))
    links = _links(doc.id, doc.url, doc.kind)
    if links:
        cols = st.columns(len(links))
        for col, (label, url) in zip(cols, links, strict=True):
            col.link_button(label, url)
    st.markdown(data.text(doc.abstract) or "_no abstract_")
    _tag_controls(root, doc_id, tags, fixes, facets)
    _similar(root, doc_id)


def _links(doc_id: str, url: str, kind: str) -> list[tuple[str, str]]:
    """Only http(s) links leave the page (feed URLs are untrusted)."""
    out = []
    if url.startswith(("https://", "http://")):
        out.append(("Open source page", url))
    if kind == "paper" and not doc_id.startswith("post:"):
        out.append(("arXiv PDF", f"https://arxiv.org/pdf/{doc_id}"))
    return out


def _tag_controls(root: str, doc_id: str, tags: list[TagScore], fixes: dict[str, int], facets: data.Facets) -> None:
    st.markdown("**Tags**")
    if not tags:
        st.caption("no tags")
    gone = sorted(t for t, v in fixes.items() if v == 0 and t not in {x.tag for x in tags})
    if gone:
        st.caption(data.md("removed by a correction: " + ", ".join(gone)))
    for t in tags:  # the tag on its own line, its two buttons below it: the detail column is narrow
        state = {1: " · confirmed", 0: " · removed"}.get(fixes.get(t.tag, -1), "")
        st.markdown(f"**{data.md(t.tag)}** {data.md(t.origin)} {t.score:.2f}{state}")
        c1, c2 = st.columns(2)
        c1.button(
            "Confirm",
            key=f"confirm-{doc_id}-{t.tag}",
            disabled=state != "",
            on_click=_correct,
            args=(root, doc_id, [t.tag], []),
            width="stretch",
        )
        c2.button(
            "Remove",
            key=f"remove-{doc_id}-{t.tag}",
            on_click=_correct,
            args=(root, doc_id, [], [t.tag]),
            width="stretch",
        )
    choices = [t for t in _tag_names(root, facets) if t not in {x.tag for x in tags}]
    if choices:
        c1, c2 = st.columns([3, 1])
        new = c1.selectbox(
            "Add a tag", choices, index=None, key=f"add-{doc_id}", label_visibility="collapsed", placeholder="add a tag"
        )
        c2.button(
            "Add", key=f"add-btn-{doc_id}", disabled=new is None, on_click=_correct, args=(root, doc_id, [new], [])
        )
    if msg := st.session_state.pop("ex_fix_msg", None):
        (st.success if msg[0] else st.error)(msg[1])


def _tag_names(root: str, facets: data.Facets) -> list[str]:
    config = Path(root) / "radar.toml"
    tax = data.taxonomy(root, config.stat().st_mtime if config.exists() else 0.0)
    return [t.tag for t in tax] if tax else list(facets.tags)


def _review(root: str) -> None:
    """Active learning: the papers the tag model is least sure about in the important tags; each answer is a
    correction (the next `radar tag --retrain` learns from it)."""
    with st.expander("Review queue: help the tagger where it is least sure", expanded=False):
        if not st.toggle("Load the queue", key="ex_review_on", help="trains the tag model first if there is none"):
            return
        from radar.app import steps  # defers scipy, faiss, bm25s

        try:
            items = steps.review_queue(data.radar(root), k=8)
        except RadarError as exc:
            st.caption(data.md(f"radar: {exc}"))
            return
        if not items:
            st.caption("Nothing to review: every paper of the sample is decided with confidence, or labeled.")
        for n, item in enumerate(items):
            cols = st.columns([6, 1, 1])
            now = "tagged" if item.tagged else "not tagged"
            cols[0].markdown(
                f"**{data.md(item.tag)}**? {data.text(item.title)} :gray[({data.md(item.doc_id)}; {now}, "
                f"score {item.score:.2f} vs {item.threshold:.2f})]"
            )
            if cols[1].button("Yes", key=f"ex_rev_yes_{n}_{item.doc_id}_{item.tag}"):
                _correct(root, item.doc_id, [item.tag], [])
            if cols[2].button("No", key=f"ex_rev_no_{n}_{item.doc_id}_{item.tag}"):
                _correct(root, item.doc_id, [], [item.tag])


def _correct(root: str, doc_id: str, add: list[str], remove: list[str]) -> None:
    """Store a correction through the tagging stage (a fresh connection: writes never share the cache's)."""
    from radar.app import steps  # defers scipy, faiss, bm25s

    try:
        steps.fix_tags(data.radar(root), doc_id, add, remove)
    except RadarError as exc:
        st.session_state["ex_fix_msg"] = (False, data.md(f"radar: {exc}"))
        return
    what = ", ".join([f"+{t}" for t in add] + [f"-{t}" for t in remove])
    st.session_state["ex_fix_msg"] = (
        True,
        f"recorded {data.md(what)} for {data.md(doc_id)}; the next `radar tag --retrain` learns it",
    )


def _similar(root: str, doc_id: str) -> None:
    st.markdown("**Similar papers**")
    try:
        hits = data.similar(root, data.version(root), doc_id, 5)
    except RadarError as exc:
        st.caption(data.md(str(exc)))
        return
    for h in hits:
        c1, c2 = st.columns([4, 1])
        c1.markdown(
            f"{data.text(data.one_line(h.title, 160))}  \n" + data.md(f"{h.id} · {h.published[:10]} · {h.score:.3f}")
        )
        c2.button("Open", key=f"sim-{doc_id}-{h.id}", on_click=_open, args=(h.id,))


if __name__ == "__main__":
    render()
