"""The contributions stage's repository: what each paper introduces (``contributions``, one row per paper, with the
content hash and the model version that decided it) and the names each paper mentions (``document_mentions``, by
spelling key, with whether it compares against them). Written by update.py when papers are new or the model
changed; read by the method cards (``radar methods --week/--name``), trends and reports.

The tables' schema stays with the workspace's migrations (store/schema.py); their records and their reads and writes
are here, on the store's connection (``store.table.Database``), and so is their write counter's use
(``store.table.CONTRIBUTION_WRITES``, which fingerprints read)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import get_origin, get_type_hints

import msgspec

from radar.store.dates import entered_sql
from radar.store.models import utc_now
from radar.store.table import CONTRIBUTION_WRITES, Repository, bump_counter


@dataclass(frozen=True, slots=True)
class ContributionRow:
    """One paper's stored contribution (``published`` comes from the documents table when read)."""

    doc_id: str
    content_hash: str  # of the document text it was decided from
    model: str  # the model version that decided it
    introduces: bool
    name: str
    name_key: str  # the spelling key of ``name`` (look-ups by any spelling)
    also: tuple[str, ...]
    kind: str
    area: str
    builds_on: tuple[str, ...]
    changes: str  # the extractive line
    changes_rewritten: str  # the summary endpoint's line ('' until rewritten)
    code: tuple[str, ...]
    score: float
    kind_score: float
    published: str = ""  # YYYY-MM-DD (filled on read)


@dataclass(frozen=True, slots=True)
class Mention:
    """A paper naming something: the spelling key, whether it compares against it ("outperforms X"), and the
    long form it gives ("Group Relative Policy Optimization (GRPO)": which of a name's senses it means)."""

    doc_id: str
    key: str
    compared: bool
    expansion: str = ""


@dataclass(frozen=True, slots=True)
class MentionRow:
    doc_id: str
    published: str  # YYYY-MM-DD
    compared: bool
    expansion: str = ""  # the long form the paper gives the name ('' when it gives none)
    area: str = ""  # the area of the paper's own contribution ('' when not decided)


@dataclass(frozen=True, slots=True)
class PaperText:
    """A paper's id, text and day (what a look-up of multi-word names reads)."""

    doc_id: str
    title: str
    abstract: str
    published: str  # YYYY-MM-DD


# one codec between ContributionRow and its table (msgspec): a column per field but ``published`` (read from the
# documents table), tuples stored as JSON arrays; a new field is a column of the same name (and a migration)
_FIELDS = tuple(f.name for f in fields(ContributionRow) if f.name != "published")
_COLUMNS = ", ".join(_FIELDS)
_MARKS = ", ".join("?" * (len(_FIELDS) + 1))  # the fields and computed_at
_ARRAYS = tuple(f for f, t in get_type_hints(ContributionRow).items() if get_origin(t) is tuple)
_ARRAY = msgspec.json.Decoder(tuple[str, ...])


def _row(r: sqlite3.Row) -> ContributionRow:
    data = dict(zip(r.keys(), r, strict=True))
    for name in _ARRAYS:
        data[name] = _ARRAY.decode(data[name])
    data["published"] = str(data["published"] or "")[:10]
    return msgspec.convert(data, ContributionRow, strict=False)  # strict=False: SQLite's 0/1 as a bool


def _values(row: ContributionRow) -> list[object]:
    """The row's column values, in ``_FIELDS`` order."""
    return [msgspec.json.encode(v).decode() if isinstance(v, tuple) else v for v in map(row.__getattribute__, _FIELDS)]


_SELECT = f"SELECT {', '.join('c.' + c.strip() for c in _COLUMNS.split(','))}, d.published FROM contributions c " + (
    "JOIN documents d ON d.id = c.doc_id"
)


# implied by entering by a day (a paper enters on or after the day it is published: ``entered_sql``), and what lets
# SQLite read a period's papers off the published index instead of every contribution (0.23 -> 0.09 s for
# 2025-W39 on 93k papers)
_PUBLISHED_BY = "d.published <= ?"


class Contributions(Repository):
    """Contributions and mentions on ``db``: the papers still to decide, writes per batch, reads by week, name and
    id."""

    def papers_without_contribution(self, model: str) -> list[str]:
        """Ids of the papers with no contribution by ``model`` for their current text, oldest first."""
        rows = self.db.conn.execute(
            "SELECT d.id FROM documents d LEFT JOIN contributions c ON c.doc_id = d.id "
            "WHERE d.kind = 'paper' AND (c.doc_id IS NULL OR c.model != ? OR c.content_hash != d.content_hash) "
            "ORDER BY d.published, d.id",
            (model,),
        )
        return [r[0] for r in rows]

    def write_contributions(self, rows: Sequence[ContributionRow], mentions: Iterable[Mention]) -> int:
        """Store ``rows`` (replacing each paper's previous row and mentions) in one transaction."""
        now = utc_now()
        values = [(*_values(r), now) for r in rows]
        with self.db.transaction() as conn:
            bump_counter(conn, CONTRIBUTION_WRITES)
            conn.executemany("DELETE FROM document_mentions WHERE doc_id = ?", [(r.doc_id,) for r in rows])
            conn.executemany(
                f"INSERT OR REPLACE INTO contributions ({_COLUMNS}, computed_at) VALUES ({_MARKS})",
                values,
            )
            conn.executemany(
                "INSERT OR IGNORE INTO document_mentions (doc_id, key, compared, expansion) VALUES (?, ?, ?, ?)",
                [(m.doc_id, m.key, int(m.compared), m.expansion) for m in mentions],
            )
        return len(values)

    def set_rewritten_changes(self, lines: dict[str, str]) -> None:
        """Store the summary endpoint's one-line ``changes`` per paper id."""
        with self.db.transaction() as conn:
            bump_counter(conn, CONTRIBUTION_WRITES)
            conn.executemany(
                "UPDATE contributions SET changes_rewritten = ? WHERE doc_id = ?", [(v, k) for k, v in lines.items()]
            )

    def contributions(self, ids: Iterable[str]) -> dict[str, ContributionRow]:
        return {r["doc_id"]: _row(r) for r in self.rows_for(_SELECT + " WHERE c.doc_id IN ({marks})", ids)}

    def introductions(self, since: str = "", until: str = "") -> list[ContributionRow]:
        """Papers that entered the record in [since, until] (YYYY-MM-DD or stamps; '' = open; store.dates: a paper
        held in moderation enters when it was announced) that introduce a name, oldest first."""
        clauses, params = ["c.introduces = 1"], []
        if since:
            clauses.append(f"{entered_sql('d')} >= ?")
            params.append(since)
        if until:
            clauses += [f"{entered_sql('d')} <= ?", _PUBLISHED_BY]
            params += [until if len(until) > 10 else until + "\uffff"] * 2
        rows = self.db.conn.execute(_SELECT + " WHERE " + " AND ".join(clauses) + " ORDER BY d.published, d.id", params)
        return [_row(r) for r in rows]

    def contributions_between(self, since: str, until: str, *, introducing: bool = True) -> list[ContributionRow]:
        """The decided papers that entered the record in [since, until] (as ``introductions`` reads the days) that
        introduce a name (``introducing``) or that introduce none, oldest first."""
        clauses = [
            f"c.introduces = {1 if introducing else 0}",
            f"{entered_sql('d')} >= ?",
            f"{entered_sql('d')} <= ?",
            _PUBLISHED_BY,
        ]
        until = until if len(until) > 10 else until + "\uffff"
        params = [since, until, until]
        rows = self.db.conn.execute(_SELECT + " WHERE " + " AND ".join(clauses) + " ORDER BY d.published, d.id", params)
        return [_row(r) for r in rows]

    def introductions_of(self, keys: Iterable[str]) -> list[ContributionRow]:
        """Papers that introduce a name with one of these spelling keys, oldest first."""
        rows = self.rows_for(_SELECT + " WHERE c.introduces = 1 AND c.name_key IN ({marks})", dict.fromkeys(keys))
        return sorted((_row(r) for r in rows), key=lambda r: (r.published, r.doc_id))

    def introductions_also_naming(self, text: str) -> list[ContributionRow]:
        """Papers whose other introduced names (``also``) contain ``text`` (case-insensitive), oldest first."""
        escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self.db.conn.execute(
            _SELECT + " WHERE c.introduces = 1 AND c.also LIKE ? ESCAPE '\\' ORDER BY d.published, d.id",
            (f"%{escaped}%",),
        )
        return [_row(r) for r in rows]

    def mentions_by_paper(self, ids: Iterable[str]) -> dict[str, list[Mention]]:
        """The names each of ``ids`` mentions (papers that mention none are absent), by key."""
        out: dict[str, list[Mention]] = {}
        rows = self.rows_for(
            "SELECT doc_id, key, compared, expansion FROM document_mentions WHERE doc_id IN ({marks}) "
            "ORDER BY doc_id, key",
            ids,
        )
        for doc_id, key, compared, expansion in rows:
            out.setdefault(doc_id, []).append(Mention(doc_id, key, bool(compared), expansion))
        return out

    def mentions_of(self, keys: Iterable[str]) -> dict[str, list[MentionRow]]:
        """Papers naming each spelling key, oldest first (keys nobody names are absent), with the long form
        each gives and the area of its own contribution."""
        out: dict[str, list[MentionRow]] = {}
        rows = self.rows_for(
            "SELECT m.key, m.doc_id, d.published, m.compared, m.expansion, COALESCE(c.area, '') "
            "FROM document_mentions m JOIN documents d ON d.id = m.doc_id "
            "LEFT JOIN contributions c ON c.doc_id = m.doc_id "
            "WHERE m.key IN ({marks}) ORDER BY d.published, m.doc_id",
            dict.fromkeys(keys),
        )
        for key, doc_id, published, compared, expansion, area in rows:
            out.setdefault(key, []).append(MentionRow(doc_id, str(published)[:10], bool(compared), expansion, area))
        return out

    def papers_since(self, since: str = "") -> Iterator[PaperText]:
        """The stored papers published on or after ``since`` (every paper when ''), oldest first: what a look-up of
        multi-word names reads (``analysis.contributions.extract.papers_naming``)."""
        clause, params = ("published >= ? AND ", [since]) if since else ("", [])
        rows = self.db.conn.execute(
            f"SELECT id, title, abstract, published FROM documents WHERE {clause}kind = 'paper' ORDER BY published, id",
            params,
        )
        for doc_id, title, abstract, published in rows:
            yield PaperText(doc_id, title, abstract or "", str(published)[:10])

    def first_paper_day(self) -> str:
        """YYYY-MM-DD of the earliest stored paper ('' when none is stored): where the store's papers begin."""
        row = self.db.conn.execute("SELECT MIN(published) FROM documents WHERE kind = 'paper'").fetchone()
        return str(row[0])[:10] if row and row[0] else ""

    def contribution_models(self) -> dict[str, int]:
        """Stored contributions per model version."""
        return {r[0]: r[1] for r in self.db.conn.execute("SELECT model, COUNT(*) FROM contributions GROUP BY model")}

    def contributions_fingerprint(self) -> str:
        """Changes whenever a contribution, a paper's mentions or a rewritten ``changes`` line is written: the count
        of those writes (``CONTRIBUTION_WRITES``: a rewrite of the same length, or rows replaced by as many under
        reused rowids, leave the tables' counts and last rowids as they were), and those for writes made without
        it."""
        row = self.db.conn.execute(  # one statement: one snapshot
            "SELECT (SELECT COALESCE(MAX(CAST(value AS INTEGER)), 0) FROM meta WHERE key = ?), "
            "(SELECT COUNT(*) FROM contributions), (SELECT COALESCE(MAX(rowid), 0) FROM contributions), "
            "(SELECT COALESCE(MAX(computed_at), '') FROM contributions), "
            "(SELECT TOTAL(length(changes_rewritten)) FROM contributions), "
            "(SELECT COUNT(*) FROM document_mentions), (SELECT COALESCE(MAX(rowid), 0) FROM document_mentions)",
            (CONTRIBUTION_WRITES,),
        ).fetchone()
        return ":".join(str(v) for v in row)
