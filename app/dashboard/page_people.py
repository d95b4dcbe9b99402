"""People: each person's digest with like / not-for-me buttons, their profile (tags, terms, negative terms,
followed authors and institutions, cut-off) and their saved searches.

The like / not-for-me links of a digest open this page as ``/people?person=NAME&like=ID`` (or
``&dislike=ID``). Opening the link records nothing (a page loaded in a hidden frame, or a link prefetched by a
mail scanner, must not write): the page asks, and the verdict is recorded when the Confirm button is clicked
(Streamlit sends that over the session's own websocket; the button's key carries a token drawn for the
session, so no URL or other session can press it). Feedback changes the person's ranking on the next digest
(the model is refitted from the stored feedback each time)."""

from __future__ import annotations

import secrets
from dataclasses import replace
from typing import Any

import streamlit as st

from radar.app.dashboard import data, period
from radar.crawler.documents import Documents
from radar.reports.people.repository import People, PersonProfile
from radar.reports.period import parse_week, week_of
from radar.store.errors import RadarError


def render() -> None:
    root = data.page_root()
    radar = data.radar(root)
    st.title("People")
    period.picker(root, data.version(root))  # the dashboard's one week (the digest's default)
    _from_link(radar)
    with radar.store() as store:
        people = [p.name for p in People(store).people()]
    if not people:
        st.info("No people yet: `radar people add NAME --email ADDR`, then `radar people import NAME library.bib`.")
        return
    wanted = st.query_params.get("person")
    name = st.selectbox("Person", people, index=people.index(wanted) if wanted in people else 0, key="pp_person")
    assert name is not None
    tab_digest, tab_profile, tab_searches = st.tabs(["Digest", "Profile", "Saved searches"])
    with tab_digest:
        _digest(radar, name)
    with tab_profile:
        _profile(radar, name)
    with tab_searches:
        _searches(radar, name)


def session_token() -> str:
    """A random token drawn once per browser session: the keys of buttons that act on a URL's parameters."""
    if "pp_token" not in st.session_state:
        st.session_state["pp_token"] = secrets.token_urlsafe(16)
    return str(st.session_state["pp_token"])


def _from_link(radar: Any) -> None:
    """A verdict that arrived as a link from a digest: shown with a Confirm button; only the click records it."""
    params = st.query_params
    person = params.get("person")
    for verdict, value in (("like", 1), ("dislike", -1)):
        doc_id = params.get(verdict)
        if not (person and doc_id):
            continue
        word = "liked" if value > 0 else "not for me"
        box = st.container(border=True)
        box.markdown(data.md(f"From a digest link: mark {doc_id} as {word} for {person}?"))
        left, right = box.columns([1, 1])
        if left.button("Confirm", key=f"pp-confirm-{verdict}-{session_token()}", type="primary"):
            try:
                with radar.store() as store:
                    written = People(store).record_feedback(person, [doc_id], value, "report")
            except RadarError as exc:
                st.error(data.md(f"radar: {exc}"))
            else:
                if written:
                    st.success(data.md(f"Recorded: {person} — {doc_id} {word}. The next digest uses it."))
                else:
                    st.warning(data.md(f"{doc_id} is not in this workspace; nothing recorded."))
            del st.query_params[verdict]
        elif right.button("Dismiss", key=f"pp-dismiss-{verdict}-{session_token()}"):
            del st.query_params[verdict]
            st.rerun()


def _vote(radar: Any, name: str, doc_id: str, value: int) -> None:
    with radar.store() as store:
        People(store).record_feedback(name, [doc_id], value, "dashboard")


def _digest(radar: Any, name: str) -> None:
    from datetime import date

    from radar.app import steps_people  # defers scipy, faiss, bm25s

    with radar.store() as store:
        newest = Documents(store).published_range().last
    if not newest:
        st.info("No documents yet: run `radar import` or `radar crawl`, then `radar index`.")
        return
    chosen = period.current(data.page_root(), data.version(data.page_root()))  # the dashboard's one week
    default = chosen.label if chosen else week_of(date.fromisoformat(newest[:10])).label
    week = st.text_input("Week", value=default, key=f"pp_week_{default}", help="ISO week, e.g. 2025-W22")
    try:
        digest = steps_people.digest(radar, name, parse_week(week.strip()))
    except RadarError as exc:
        st.error(data.md(f"radar: {exc}"))
        return
    st.caption(
        f"{digest.candidates} documents in {digest.period.label}; ranking: {digest.method}"
        + (f"; {digest.dropped} left out by negative terms" if digest.dropped else "")
    )
    for p in digest.papers:
        cols = st.columns([7, 1, 2])  # wide enough for "Not for me" unbroken
        title = data.text(p.doc.title)  # LaTeX as text, then escaped
        cols[0].markdown(f"**{title}** · `{p.doc.id}` · {p.score:.2f}")
        cols[0].caption(data.md("; ".join(p.why)))
        cols[1].button("Like", key=f"pp-like-{p.doc.id}", on_click=_vote, args=(radar, name, p.doc.id, 1))
        cols[2].button("Not for me", key=f"pp-no-{p.doc.id}", on_click=_vote, args=(radar, name, p.doc.id, -1))
    if digest.alerts:
        st.subheader("Alerts")
        st.dataframe(digest.alerts, hide_index=True)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _profile(radar: Any, name: str) -> None:
    with radar.store() as store:
        person = People(store).person(name)
    p = person.profile
    tags = [t.name for t in radar.taxonomy.tags] if radar.tag_groups() is not None else list(p.tags)
    with st.form(f"pp-profile-{name}"):
        email = st.text_input("Email", value=person.email)
        chosen = st.multiselect("Tags", tags, default=[t for t in p.tags if t in tags])
        terms = st.text_area("Terms (one a line)", value="\n".join(p.terms))
        negative = st.text_area(
            "Negative terms (one a line; a paper naming one is left out)", "\n".join(p.negative_terms)
        )
        authors = st.text_area("Followed authors (one a line)", value="\n".join(p.authors))
        institutions = st.text_area("Followed institutions (one a line)", value="\n".join(p.institutions))
        cutoff = st.number_input("Score cut-off", min_value=0.0, max_value=2.0, value=float(p.min_score), step=0.05)
        if st.form_submit_button("Save"):
            profile = replace(
                p,
                tags={t: p.tags.get(t, 1.0) for t in chosen},
                terms={t: p.terms.get(t, 1.0) for t in _lines(terms)},
                negative_terms=tuple(_lines(negative)),
                authors=tuple(_lines(authors)),
                institutions=tuple(_lines(institutions)),
                min_score=float(cutoff),
            )
            _save(radar, name, email.strip(), profile)


def _save(radar: Any, name: str, email: str, profile: PersonProfile) -> None:
    try:
        with radar.store() as store:
            People(store).update_person(name, email=email, profile=profile)
    except RadarError as exc:
        st.error(data.md(f"radar: {exc}"))
    else:
        st.success("Saved; the next digest uses it.")


def _searches(radar: Any, name: str) -> None:
    with radar.store() as store:
        searches = People(store).saved_searches(name)
    if searches:
        st.dataframe(
            [{"name": s.name, "query": s.query, "cut-off": s.min_score, "filters": str(s.filters)} for s in searches],
            hide_index=True,
        )
    with st.form(f"pp-search-{name}"):
        label = st.text_input("Name", placeholder="grpo-variance")
        query = st.text_input("Query", placeholder="GRPO advantage variance")
        cutoff = st.number_input("Cut-off (cosine)", min_value=0.0, max_value=1.0, value=0.35, step=0.05)
        if st.form_submit_button("Save search") and label.strip() and query.strip():
            try:
                with radar.store() as store:
                    People(store).save_search(name, label.strip(), query.strip(), min_score=float(cutoff))
            except RadarError as exc:
                st.error(data.md(f"radar: {exc}"))
            else:
                st.success("Saved; it runs after each crawl and index (`radar alerts run`, `radar weekly`).")


if __name__ == "__main__":
    render()
