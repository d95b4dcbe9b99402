"""The tags' repository: ``document_tags`` (tags with score and origin), ``tag_corrections`` (the user's +tag/-tag)
and ``tag_state`` (which tagger model last decided a document). Written by the tagger (analysis/tags); read by
search's tag filter (the lowest reader, so it lives in index/), trends, reports and the dashboard.

The tables' schema stays with the workspace's migrations (store/schema.py); their records and reads and writes are
here, a ``store.table.Repository`` on the store's connection; rows become records by msgspec (array-like Structs
take a row's columns in order).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from radar.index.embeddings import EmbeddedDocument
from radar.store.dates import entered_sql
from radar.store.models import utc_now
from radar.store.table import TAG_WRITES, Repository, bump_counter, chunks, upsert_sql

ENTERED = entered_sql("d")
_STATE_SQL = upsert_sql("tag_state", ("doc_id", "tagger", "tagged_at"), "doc_id")
_CORRECTION_SQL = upsert_sql("tag_corrections", ("doc_id", "tag", "value", "created_at"), "doc_id, tag")


class TagDecision(msgspec.Struct, frozen=True, array_like=True):
    """One tag the tagger decided; ``origin`` names the rule or model that decided it."""

    doc_id: str
    tag: str
    score: float
    origin: str


class TagScore(msgspec.Struct, frozen=True, array_like=True):
    tag: str
    score: float  # the tagger's confidence; corrections and rules score 1
    origin: str


class TagDetails(msgspec.Struct, frozen=True):
    """A document's tags, best first, and its corrections ({tag: 1 confirmed / 0 removed})."""

    tags: list[TagScore]
    corrections: dict[str, int]


class TaggedDocument(msgspec.Struct, frozen=True, array_like=True):
    doc_id: str
    day: str  # publication date, YYYY-MM-DD
    tag: str


class Correction(msgspec.Struct, frozen=True, array_like=True):
    """A user's +tag (``add``) or -tag on a document."""

    doc_id: str
    tag: str
    add: bool


class Tags(Repository):
    """Tags on ``db``: decisions, corrections, and the reads of tags per document, per day and per origin."""

    def known(self) -> list[str]:
        """Every tag some document has, sorted."""
        return [r[0] for r in self.tuples("SELECT DISTINCT tag FROM document_tags ORDER BY tag")]

    def scores(self, ids: Iterable[str]) -> dict[str, dict[str, float]]:
        """{doc_id: {tag: score}} (the tagger's confidence; corrections and rules score 1)."""
        out: dict[str, dict[str, float]] = {}
        for doc_id, tag, score in self.rows_for(
            "SELECT doc_id, tag, score FROM document_tags WHERE doc_id IN ({marks})", ids
        ):
            out.setdefault(doc_id, {})[tag] = float(score)
        return out

    def of(self, ids: Iterable[str]) -> dict[str, list[str]]:
        """{doc_id: sorted tags} (documents with no tag are absent)."""
        return {doc_id: sorted(scores) for doc_id, scores in self.scores(ids).items()}

    def details(self, doc_id: str) -> TagDetails:
        """A document's tags (best first) and its corrections ({tag: 1 confirmed / 0 removed})."""
        tags = self.tuples(
            "SELECT tag, score, origin FROM document_tags WHERE doc_id = ? ORDER BY score DESC, tag", (doc_id,)
        ).fetchall()
        fixes = self.tuples("SELECT tag, value FROM tag_corrections WHERE doc_id = ?", (doc_id,))
        return msgspec.convert({"tags": tags, "corrections": dict(fixes)}, TagDetails)

    def counts(self) -> dict[str, dict[str, int]]:
        """{tag: {origin: documents}}."""
        out: dict[str, dict[str, int]] = {}
        for tag, origin, n in self.tuples("SELECT tag, origin, COUNT(*) FROM document_tags GROUP BY 1, 2"):
            out.setdefault(tag, {})[origin] = n
        return out

    def fingerprint(self) -> str:
        """Changes whenever a tag or a tag correction is written: the count of those writes (``TAG_WRITES``; a retag
        that replaces a document's tags with as many rows leaves count and last rowid as they were), and the tables'
        counts and last rows for writes made without it (by another tool)."""
        row = self.db.conn.execute(  # one statement: one snapshot
            "SELECT (SELECT COALESCE(MAX(CAST(value AS INTEGER)), 0) FROM meta WHERE key = ?), "
            "(SELECT COUNT(*) FROM document_tags), (SELECT COALESCE(MAX(rowid), 0) FROM document_tags), "
            "(SELECT COUNT(*) FROM tag_corrections), (SELECT COALESCE(MAX(created_at), '') FROM tag_corrections)",
            (TAG_WRITES,),
        ).fetchone()
        return ":".join(str(v) for v in row)

    def tagged_in(self, since: str, until: str) -> list[TaggedDocument]:
        """One row per (document, tag) of tagged documents that entered the record (store.dates) in [since, until],
        with that day."""
        return self.records(
            TaggedDocument,
            f"SELECT d.id, substr({ENTERED}, 1, 10), t.tag FROM documents d "
            f"JOIN document_tags t ON t.doc_id = d.id WHERE d.published <= ? AND {ENTERED} >= ? AND {ENTERED} <= ?",
            (until, since, until),
        )

    def candidates(
        self, model_id: str, tagger: str, *, everything: bool = False, batch: int = 4096
    ) -> Iterator[list[EmbeddedDocument]]:
        """Batches of embedded documents not yet decided by ``tagger`` (all embedded documents when
        ``everything``)."""
        where = "" if everything else "AND (s.doc_id IS NULL OR s.tagger != ?)"
        params: tuple[Any, ...] = (model_id,) if everything else (model_id, tagger)
        # ids first: the caller writes tag_state between batches, which this query reads
        ids = [
            r[0]
            for r in self.tuples(
                "SELECT d.id FROM documents d JOIN embeddings e ON e.doc_id = d.id "
                "LEFT JOIN tag_state s ON s.doc_id = d.id "
                f"WHERE e.model_id = ? AND e.content_hash = d.content_hash {where} ORDER BY d.rowid",
                params,
            )
        ]
        for chunk in chunks(ids, batch):
            rows = {
                r[0]: msgspec.convert(tuple(r), EmbeddedDocument)
                for r in self.rows_for(
                    "SELECT d.id, d.title, d.abstract, e.vector FROM documents d JOIN embeddings e ON e.doc_id = d.id "
                    "WHERE d.id IN ({marks})",
                    chunk,
                )
            }
            yield [rows[i] for i in chunk if i in rows]

    def save_decisions(
        self, tagger: str, doc_ids: list[str], decisions: Iterable[TagDecision | tuple[str, str, float, str]]
    ) -> None:
        """Replace the model/rule tags of ``doc_ids`` with ``TagDecision`` rows (or plain tuples in that order),
        in one transaction; user corrections win: a removed tag is never written, a confirmed one is kept."""
        now = utc_now()
        rows = [msgspec.structs.astuple(d) if isinstance(d, TagDecision) else d for d in decisions]
        with self.db.transaction() as conn:
            bump_counter(conn, TAG_WRITES)
            for chunk in chunks(doc_ids):
                conn.execute(
                    f"DELETE FROM document_tags WHERE origin != 'user' AND doc_id IN ({','.join('?' * len(chunk))})",
                    chunk,
                )
            conn.executemany(
                "INSERT INTO document_tags (doc_id, tag, score, origin, created_at) SELECT ?, ?, ?, ?, ? "
                "WHERE NOT EXISTS (SELECT 1 FROM tag_corrections c WHERE c.doc_id = ?1 AND c.tag = ?2) "
                "ON CONFLICT(doc_id, tag) DO NOTHING",
                [(d, t, s, o, now) for d, t, s, o in rows],
            )
            conn.executemany(_STATE_SQL, [(d, tagger, now) for d in doc_ids])

    def save_correction(self, doc_id: str, add: Iterable[str], remove: Iterable[str]) -> None:
        """Record +tag / -tag corrections and apply them to the document's tags at once."""
        now = utc_now()
        with self.db.transaction() as conn:
            bump_counter(conn, TAG_WRITES)
            for tag, value in [(t, 1) for t in add] + [(t, 0) for t in remove]:
                conn.execute(_CORRECTION_SQL, (doc_id, tag, value, now))
                if value:
                    conn.execute(
                        "INSERT INTO document_tags (doc_id, tag, score, origin, created_at) "
                        "VALUES (?, ?, 1.0, 'user', ?) ON CONFLICT(doc_id, tag) DO UPDATE SET score = 1.0, "
                        "origin = 'user', created_at = excluded.created_at",
                        (doc_id, tag, now),
                    )
                else:
                    conn.execute("DELETE FROM document_tags WHERE doc_id = ? AND tag = ?", (doc_id, tag))

    def corrections(self) -> list[Correction]:
        """Every user correction, oldest first."""
        rows = self.tuples("SELECT doc_id, tag, value FROM tag_corrections ORDER BY created_at, doc_id, tag")
        return msgspec.convert([(d, t, bool(v)) for d, t, v in rows], list[Correction])
