"""The people stage's repository: the tables ``people`` (a name, where to reach them, their profile),
``person_feedback`` (liked and disliked papers, with when and where from), ``saved_searches`` (a query, filters
and a score cut-off) and ``person_alerts`` (the saved-search matches found for a person, once each). Written by
`radar people`, the dashboard's People page and the alert step; read by reports/people (digests, learned ranking,
alerts).

Sending an alert or a digest is recorded in the ``deliveries`` table like a report, so it goes out once. The
tables' schema stays with the workspace's migrations (store/schema.py); the records and their reads and writes
are here, on the store's connection (``store.table.Database``); a profile and a saved search's filters are stored
as msgspec encodes them."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypedDict

import msgspec

from radar.store.errors import StoreError
from radar.store.models import utc_now
from radar.store.table import Repository, upsert_sql
from radar.store.text import strip_invisible
from radar.store.urls import UrlRefused, check_configured_url, check_email

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
FEEDBACK_SOURCES = ("import", "cli", "dashboard", "report")
_FEEDBACK_SQL = upsert_sql(
    "person_feedback", ("person_id", "doc_id", "value", "source", "created_at"), "person_id, doc_id"
)
_SEARCH_SQL = upsert_sql(
    "saved_searches",
    ("person_id", "name", "query", "filters", "min_score", "created_at"),
    "person_id, name",
    keep=("created_at",),
)


class SearchFilters(TypedDict, total=False):
    """A saved search's filters as stored (JSON): what index.search.Filters takes (reports/people/alerts.py)."""

    since: str
    until: str
    tags: list[str]
    sources: list[str]
    categories: list[str]
    kinds: list[str]


@dataclass(frozen=True)
class PersonProfile:
    """What a person follows: tags (with weights), terms (with weights), negative terms (a paper naming one is
    left out), followed authors and institutions (a match lifts a paper), and the digest's score cut-off."""

    tags: dict[str, float] = field(default_factory=dict)
    terms: dict[str, float] = field(default_factory=dict)
    negative_terms: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    institutions: tuple[str, ...] = ()
    min_score: float = 0.0

    def cleaned(self) -> PersonProfile:
        """The profile without bidi controls or zero-width characters (store.text) in any name or term."""
        clean = strip_invisible
        return PersonProfile(
            tags={clean(k): v for k, v in self.tags.items() if clean(k)},
            terms={clean(k): v for k, v in self.terms.items() if clean(k)},
            negative_terms=tuple(t for t in map(clean, self.negative_terms) if t),
            authors=tuple(a for a in map(clean, self.authors) if a),
            institutions=tuple(i for i in map(clean, self.institutions) if i),
            min_score=self.min_score,
        )


@dataclass(frozen=True)
class Person:
    id: int
    name: str
    email: str
    webhook: str  # a Slack-compatible incoming-webhook url, '' for none
    profile: PersonProfile
    created_at: str


@dataclass(frozen=True, slots=True)
class Feedback:
    """A person's verdict on a document: +1 liked, -1 not for me."""

    doc_id: str
    value: int
    source: str  # import, cli, dashboard or report
    created_at: str


@dataclass(frozen=True)
class SavedSearch:
    name: str
    query: str
    filters: SearchFilters  # since, tags, sources, kinds (as index.search.Filters takes them)
    min_score: float  # matches below this fused score are not alerts
    created_at: str


@dataclass(frozen=True, slots=True)
class PersonAlert:
    """A saved-search match found for a person (once per document)."""

    doc_id: str
    search: str
    score: float
    found_at: str


class People(Repository):
    """People on ``db``: their profile, feedback, saved searches and alert matches."""

    # -- people ------------------------------------------------------------------------------------
    def add_person(self, name: str, *, email: str = "", webhook: str = "") -> Person:
        if not NAME_RE.match(name):
            raise StoreError(
                f"person name {name!r} must be 1-64 letters, digits, '.', '_' or '-' (e.g. alice or a.smith)"
            )
        _check_reach(name, email, webhook)
        with self.db.transaction() as conn:
            if conn.execute("SELECT 1 FROM people WHERE name = ?", (name,)).fetchone():
                raise StoreError(f"a person named {name!r} exists already; see `radar people list`")
            conn.execute(
                "INSERT INTO people (name, email, webhook, profile, created_at) VALUES (?, ?, ?, '{}', ?)",
                (name, email, webhook, utc_now()),
            )
        return self.person(name)

    def people(self) -> list[Person]:
        return [_person(r) for r in self.db.conn.execute("SELECT * FROM people ORDER BY name")]

    def find_person(self, name: str) -> Person | None:
        row = self.db.conn.execute("SELECT * FROM people WHERE name = ?", (name,)).fetchone()
        return _person(row) if row else None

    def person(self, name: str) -> Person:
        """The person named ``name``, or one line naming the known people."""
        found = self.find_person(name)
        if found is None:
            known = ", ".join(p.name for p in self.people()) or "none yet"
            raise StoreError(f"no person named {name!r} (known: {known}); add one with `radar people add {name}`")
        return found

    def update_person(
        self, name: str, *, email: str | None = None, webhook: str | None = None, profile: PersonProfile | None = None
    ) -> Person:
        person = self.person(name)
        _check_reach(name, email or "", webhook or "")
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE people SET email = ?, webhook = ?, profile = ? WHERE id = ?",
                (
                    person.email if email is None else email,
                    person.webhook if webhook is None else webhook,
                    msgspec.json.encode((profile or person.profile).cleaned()).decode(),
                    person.id,
                ),
            )
        return self.person(name)

    # -- feedback ----------------------------------------------------------------------------------
    def record_feedback(self, name: str, doc_ids: list[str], value: int, source: str) -> int:
        """Like (+1) or not-for-me (-1) ``doc_ids``; the latest verdict on a document wins. Returns how many
        were written (documents not in the store are skipped)."""
        if value not in (1, -1) or source not in FEEDBACK_SOURCES:
            raise StoreError(f"feedback must be +1 or -1 from one of {', '.join(FEEDBACK_SOURCES)}")
        person = self.person(name)
        known = {r[0] for r in self.rows_for("SELECT id FROM documents WHERE id IN ({marks})", doc_ids)}
        now = utc_now()
        with self.db.transaction() as conn:
            conn.executemany(
                _FEEDBACK_SQL,
                [(person.id, d, value, source, now) for d in dict.fromkeys(doc_ids) if d in known],
            )
        return len(known)

    def feedback(self, name: str) -> list[Feedback]:
        """Every verdict of the person, oldest first."""
        person = self.person(name)
        rows = self.db.conn.execute(
            "SELECT doc_id, value, source, created_at FROM person_feedback WHERE person_id = ? "
            "ORDER BY created_at, doc_id",
            (person.id,),
        )
        return [Feedback(*r) for r in rows]

    def feedback_counts(self) -> dict[str, tuple[int, int]]:
        """{person name: (likes, dislikes)}."""
        rows = self.db.conn.execute(
            "SELECT p.name, SUM(f.value = 1), SUM(f.value = -1) FROM people p "
            "JOIN person_feedback f ON f.person_id = p.id GROUP BY p.name"
        )
        return {r[0]: (int(r[1] or 0), int(r[2] or 0)) for r in rows}

    # -- saved searches ----------------------------------------------------------------------------
    def save_search(
        self, name: str, label: str, query: str, *, filters: SearchFilters | None = None, min_score: float = 0.0
    ) -> SavedSearch:
        person = self.person(name)
        label, query = strip_invisible(label), strip_invisible(query)
        if not query.strip():
            raise StoreError('a saved search needs a query, e.g. radar people search alice "GRPO variance"')
        with self.db.transaction() as conn:
            conn.execute(
                _SEARCH_SQL,
                (person.id, label, query.strip(), msgspec.json.encode(filters or {}).decode(), min_score, utc_now()),
            )
        return next(s for s in self.saved_searches(name) if s.name == label)

    def saved_searches(self, name: str) -> list[SavedSearch]:
        person = self.person(name)
        rows = self.db.conn.execute(
            "SELECT name, query, filters, min_score, created_at FROM saved_searches WHERE person_id = ? ORDER BY name",
            (person.id,),
        )
        return [SavedSearch(r[0], r[1], _filters(r[0], r[2]), float(r[3]), r[4]) for r in rows]

    def delete_search(self, name: str, label: str) -> bool:
        person = self.person(name)
        with self.db.transaction() as conn:
            cur = conn.execute("DELETE FROM saved_searches WHERE person_id = ? AND name = ?", (person.id, label))
        return cur.rowcount > 0

    def document_titles(self) -> Iterator[tuple[str, str]]:
        """(id, title) of every document, for matching a library by title."""
        yield from ((r[0], r[1]) for r in self.db.conn.execute("SELECT id, title FROM documents"))

    # -- alert matches -----------------------------------------------------------------------------
    def record_alerts(self, name: str, matches: list[PersonAlert]) -> list[PersonAlert]:
        """Keep the matches not recorded before (a document alerts a person once); returns the new ones."""
        person = self.person(name)
        new: list[PersonAlert] = []
        with self.db.transaction() as conn:
            for m in matches:
                cur = conn.execute(
                    "INSERT INTO person_alerts (person_id, doc_id, search, score, found_at) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT(person_id, doc_id) DO NOTHING",
                    (person.id, m.doc_id, m.search, m.score, m.found_at),
                )
                if cur.rowcount:
                    new.append(m)
        return new

    def alerts(self, name: str, since: str = "") -> list[PersonAlert]:
        """The person's recorded matches found at or after ``since``, newest first."""
        person = self.person(name)
        rows = self.db.conn.execute(
            "SELECT doc_id, search, score, found_at FROM person_alerts WHERE person_id = ? AND found_at >= ? "
            "ORDER BY found_at DESC, score DESC",
            (person.id, since),
        )
        return [PersonAlert(r[0], r[1], float(r[2]), r[3]) for r in rows]


def _check_reach(name: str, email: str, webhook: str) -> None:
    """Where a person's digest and alerts go, checked where it is set: a plain address (no CR/LF: no header
    injection), an http(s) webhook that is no link-local/metadata address."""
    for value, check, what in ((email, check_email, "email"), (webhook, check_configured_url, "webhook")):
        try:
            if value:
                check(value, f"person {name}'s {what}")
        except UrlRefused as exc:
            raise StoreError(f"{exc} (`radar people set {name} --{what} ...`)") from None


def _filters(label: str, stored: str) -> SearchFilters:
    """A saved search's filters as stored (msgspec's JSON, the same bytes orjson wrote before), typed; an integral
    float reads as an int. One that does not decode is one line naming the search and the fix."""
    try:
        return msgspec.json.decode(stored, type=SearchFilters, strict=False)
    except msgspec.DecodeError as exc:
        raise StoreError(
            f"saved search {label!r} has unreadable filters ({exc}); "
            f"save it again: radar people search NAME {label} QUERY"
        ) from None


def _person(row: sqlite3.Row) -> Person:
    return Person(
        id=row["id"],
        name=row["name"],
        email=row["email"],
        webhook=row["webhook"],
        profile=msgspec.json.decode(row["profile"], type=PersonProfile, strict=False),
        created_at=row["created_at"],
    )
