"""Saved searches and alerts: after each crawl every person's saved searches run; documents stored since the
search was saved that match it above its cut-off become alerts, found once per (person, document), and
are sent in one short message per channel.

A match is a hit of the hybrid search (dense + BM25, the search's filters applied) among the top
``CANDIDATES``; its score is the cosine similarity of the query's embedding to the paper's stored vector
(what the cut-off applies to: 0.3 loosely related, 0.5 on topic, 0.7 near-duplicate wording).

Each alerted document is recorded per channel in the deliveries table (label ``alert:<name>:<doc id>``): a
document is sent once per channel and recipient; a failed send is retried with the next alert.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import msgspec
import numpy as np

from radar.crawler.documents import Documents
from radar.index.embeddings import Embeddings
from radar.index.search import Filters, Searcher
from radar.reports.config import DeliveryConfig
from radar.reports.deliver import Outcome, send_jobs
from radar.reports.deliveries import Deliveries
from radar.reports.people.digest import AlertHit, person_jobs
from radar.reports.people.repository import People, Person, PersonAlert, SavedSearch
from radar.store.models import utc_now
from radar.store.table import Database

CANDIDATES = 100
DEFAULT_MIN_SCORE = 0.35


def filters_of(search: SavedSearch) -> Filters:
    f = search.filters
    return Filters(
        since=str(f.get("since", "")),
        until=str(f.get("until", "")),
        tags=tuple(f.get("tags", ())),
        sources=tuple(f.get("sources", ())),
        categories=tuple(f.get("categories", ())),
        kinds=tuple(f.get("kinds", ())),
    )


def matches(searcher: Searcher, person: Person) -> list[PersonAlert]:
    """The new matches of the person's saved searches (best score per document), not yet recorded."""
    store = searcher.store
    model_id = searcher.vectors.manifest.model_id
    best: dict[str, PersonAlert] = {}
    now = utc_now()
    for search in People(store).saved_searches(person.name):
        hits = searcher.search(search.query, CANDIDATES, filters_of(search))
        new = [h.id for h in hits if _first_seen(store, h.id) >= search.created_at]
        if not new:
            continue
        query = np.asarray(searcher.embedder.embed([search.query])[0], dtype=np.float32)
        query /= max(float(np.linalg.norm(query)), 1e-12)
        vectors = Embeddings(store).current_vectors(new, model_id)
        for doc_id in new:
            if doc_id not in vectors:
                continue
            v = np.frombuffer(vectors[doc_id], dtype=np.float32)
            score = float(v @ query / max(float(np.linalg.norm(v)), 1e-12))
            if score >= search.min_score and (doc_id not in best or best[doc_id].score < score):
                best[doc_id] = PersonAlert(doc_id, search.name, score, now)
    already = {a.doc_id for a in People(store).alerts(person.name)}
    return sorted((a for a in best.values() if a.doc_id not in already), key=lambda a: -a.score)


def _first_seen(store: Database, doc_id: str) -> str:
    meta = Documents(store).meta(doc_id)
    return meta.first_seen if meta else ""


@dataclass
class AlertMessage:
    subject: str
    text: str
    alerts: list[PersonAlert]


class AlertMessageJson(msgspec.Struct, frozen=True):
    """``AlertMessage`` as `radar alerts test --json` prints it, with the channels it would go to."""

    subject: str
    text: str
    alerts: list[AlertHit]
    channels: list[str]

    @classmethod
    def of(cls, msg: AlertMessage, channels: list[str]) -> AlertMessageJson:
        return cls(msg.subject, msg.text, [AlertHit.of(a, found_at=False) for a in msg.alerts], channels)


def message(store: Database, person: Person, alerts: list[PersonAlert]) -> AlertMessage:
    docs = Documents(store).of([a.doc_id for a in alerts])
    lines = [f"{len(alerts)} new paper(s) match your saved searches:"]
    for a in alerts:
        d = docs.get(a.doc_id)
        if d is None:
            continue
        lines.append(f"- [{a.search}] {d.title} ({d.id}, {a.score:.2f}) {d.url}".rstrip())
    subject = f"Research Radar alert for {person.name}: {len(alerts)} new match(es)"
    return AlertMessage(subject, "\n".join(lines) + "\n", alerts)


def _label(person: Person, doc_id: str) -> str:
    return f"alert:{person.name}:{doc_id}"


def pending(store: Database, person: Person, channel: str, recipient: str) -> list[PersonAlert]:
    """Recorded alerts not yet sent on this channel to this recipient."""
    out = []
    log = Deliveries(store)
    for a in People(store).alerts(person.name):
        row = log.get(_label(person, a.doc_id), channel, recipient)
        if row is None or row.status != "sent":
            out.append(a)
    return out


def send_alerts(store: Database, person: Person, cfg: DeliveryConfig) -> list[Outcome]:
    """One message per channel holding the alerts that channel has not had; each alerted document is then
    recorded as sent there (never sent again)."""
    outcomes: list[Outcome] = []
    for channel, recipient, _, _ in person_jobs(person, cfg, "", "", None):
        due = pending(store, person, channel, recipient)
        if not due:
            continue
        msg = message(store, person, due)
        job = [j for j in person_jobs(person, cfg, msg.subject, msg.text, None) if j[0] == channel]
        batch = hashlib.blake2b(",".join(sorted(a.doc_id for a in due)).encode(), digest_size=6).hexdigest()
        result = send_jobs(store, f"alert-batch:{person.name}:{batch}", job, cfg)
        outcomes += result
        if any(o.status in ("sent", "already-sent") for o in result):
            for a in due:
                Deliveries(store).record(_label(person, a.doc_id), channel, recipient, ok=True)
    return outcomes
