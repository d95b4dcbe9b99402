"""Per-person steps: import a library, a person's digest, saved-search alerts, and the weekly digests.

    radar weekly:  ... index -> alerts(radar) ... report -> deliver -> digests(radar, period)

``alerts`` needs the new documents embedded, so it runs after the index step (and on its own from
`radar alerts test`, which only shows). ``digests`` writes each person's digest next to the lab report
(reports/<period>/digest-<name>.md and .html) and sends it once by the person's channels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from radar.app.context import Radar
from radar.app.wiring import open_searcher
from radar.index.errors import IndexError_
from radar.index.pipeline import stored_model
from radar.reports.deliver import Outcome
from radar.reports.people.alerts import AlertMessage, matches, message, pending, send_alerts
from radar.reports.people.digest import Digest, build_digest, person_jobs, render_html, render_text, send_digest
from radar.reports.people.library import LibraryMatch, match_entries, read_library
from radar.reports.people.repository import People, PersonAlert
from radar.reports.period import Period
from radar.store.files import write_text_atomic
from radar.store.table import Database


def model_id(radar: Radar, store: Database) -> str:
    """The stored embeddings' model id, '' when nothing is embedded (the rules rank then)."""
    try:
        return stored_model(store, radar.settings.embedding)[0]
    except IndexError_:
        return ""


def dashboard_url(radar: Radar) -> str:
    """Where a digest's like / not-for-me links point: [dashboard] public_url ("" when unset: no links, since the
    dashboard's own address is a loopback one by default, dead in a reader's mail client)."""
    return radar.settings.dashboard.link_base


def import_library(radar: Radar, name: str, path: Path) -> LibraryMatch:
    """Read a .bib / CSL .json library, match it to stored documents and record the matches as liked."""
    with radar.store() as store:
        People(store).person(name)  # an unknown person first: the file may be fine
        entries = read_library(path)
        found = match_entries(store, entries)
        People(store).record_feedback(name, found.doc_ids, 1, "import")
    return found


def digest(radar: Radar, name: str, period: Period) -> Digest:
    with radar.store() as store:
        person = People(store).person(name)
        return build_digest(
            store,
            person,
            period,
            radar.settings.report,
            model_id=model_id(radar, store),
            dashboard_url=dashboard_url(radar),
            lab=radar.settings.profile,
        )


@dataclass
class PersonDigest:
    digest: Digest
    paths: dict[str, Path]
    outcomes: list[Outcome] = field(default_factory=list)


def digests(radar: Radar, period: Period, *, send: bool = True) -> list[PersonDigest]:
    """Every person's digest of ``period``: written under reports/<period>/ and, with ``send``, sent once by
    their channels (email through [delivery.email]'s server, their own webhook); failures retried next run."""
    out = []
    folder = radar.ws.report_dir(period.label)
    with radar.store() as store:
        mid = model_id(radar, store)
        for person in People(store).people():
            d = build_digest(
                store,
                person,
                period,
                radar.settings.report,
                model_id=mid,
                dashboard_url=dashboard_url(radar),
                lab=radar.settings.profile,
            )
            paths = {"md": folder / f"digest-{person.name}.md", "html": folder / f"digest-{person.name}.html"}
            write_text_atomic(paths["md"], render_text(d))
            write_text_atomic(paths["html"], render_html(d))
            outcomes = send_digest(store, d, person, radar.settings.delivery) if send else []
            out.append(PersonDigest(d, paths, outcomes))
    return out


@dataclass
class AlertRun:
    person: str
    new: list[PersonAlert]
    outcomes: list[Outcome]


def alerts(radar: Radar, *, send: bool = True) -> list[AlertRun]:
    """Run every saved search once (after a crawl and the index step): record new matches, send what each
    channel has not had."""
    with radar.store() as store:
        if not any(People(store).saved_searches(p.name) for p in People(store).people()):
            return []
    searcher = open_searcher(radar)
    try:
        store = searcher.store
        runs = []
        for person in People(store).people():
            new = People(store).record_alerts(person.name, matches(searcher, person))
            outcomes = send_alerts(store, person, radar.settings.delivery) if send else []
            runs.append(AlertRun(person.name, new, outcomes))
        return runs
    finally:
        searcher.store.close()


def alerts_preview(radar: Radar, name: str) -> tuple[AlertMessage, list[str]]:
    """What the next alert run would send ``name`` (nothing is recorded or sent), and the channels it would
    go to."""

    with radar.store() as store:
        person = People(store).person(name)
        searches = People(store).saved_searches(name)
    found: list[PersonAlert] = []
    if searches:
        searcher = open_searcher(radar)
        try:
            found = matches(searcher, person)
        finally:
            searcher.store.close()
    with radar.store() as store:
        jobs = person_jobs(person, radar.settings.delivery, "", "", None)
        unsent = {a.doc_id: a for ch, to, _, _ in jobs for a in pending(store, person, ch, to)}
        due = list({**unsent, **{a.doc_id: a for a in found}}.values())
        return message(store, person, due), [f"{ch} {to}" for ch, to, _, _ in jobs]
