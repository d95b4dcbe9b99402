"""The tag tables: ``document_tags`` (tags with score and origin), ``tag_corrections`` (the user's +tag/-tag)
and ``tag_state`` (which tagger model last decided a document). Written and read by analysis/tags; read by
trends, reports and the dashboard."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from radar.store.dates import entered_sql
from radar.store.models import utc_now
from radar.store.table import TAG_WRITES, Table, bump_counter

ENTERED = entered_sql("d")


class EmbeddedDocument(NamedTuple):
    """A document's text and its current float32 vector bytes, as the tagger reads it."""

    doc_id: str
    title: str
    abstract: str
    vector: bytes


class TagDecision(NamedTuple):
    """One tag the tagger decided; ``origin`` names the rule or model that decided it."""

    doc_id: str
    tag: str
    score: float
    origin: str


class TagScore(NamedTuple):
    tag: str
    score: float  # the tagger's confidence; corrections and rules score 1
    origin: str


class TagDetails(NamedTuple):
    """A document's tags, best first, and its corrections ({tag: 1 confirmed / 0 removed})."""

    tags: list[TagScore]
    corrections: dict[str, int]


class TaggedDocument(NamedTuple):
    doc_id: str
    day: str  # publication date, YYYY-MM-DD
    tag: str


class Correction(NamedTuple):
    """A user's +tag (``add``) or -tag on a document."""

    doc_id: str
    tag: str
    add: bool


class TagsTable(Table):
    """Tags: decisions, corrections, and the reads of tags per document, per day and per origin."""

    def known_tags(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT DISTINCT tag FROM document_tags ORDER BY tag")]

    def tag_scores(self, ids: Iterable[str]) -> dict[str, dict[str, float]]:
        """{doc_id: {tag: score}} (the tagger's confidence; corrections and rules score 1)."""
        out: dict[str, dict[str, float]] = {}
        for doc_id, tag, score in self.rows_for(
            "SELECT doc_id, tag, score FROM document_tags WHERE doc_id IN ({marks})", ids
        ):
            out.setdefault(doc_id, {})[tag] = float(score)
        return out

    def tags_of(self, ids: Iterable[str]) -> dict[str, list[str]]:
        """{doc_id: sorted tags} (documents with no tag are absent)."""
        return {doc_id: sorted(scores) for doc_id, scores in self.tag_scores(ids).items()}

    def tag_details(self, doc_id: str) -> TagDetails:
        """A document's tags (best first) and its corrections ({tag: 1 confirmed / 0 removed})."""
        tags = [
            TagScore(r[0], float(r[1]), r[2])
            for r in self.conn.execute(
                "SELECT tag, score, origin FROM document_tags WHERE doc_id = ? ORDER BY score DESC, tag", (doc_id,)
            )
        ]
        fixes = {
            r[0]: r[1] for r in self.conn.execute("SELECT tag, value FROM tag_corrections WHERE doc_id = ?", (doc_id,))
        }
        return TagDetails(tags, fixes)

    def tag_counts(self) -> dict[str, dict[str, int]]:
        """{tag: {origin: documents}}."""
        out: dict[str, dict[str, int]] = {}
        for tag, origin, n in self.conn.execute("SELECT tag, origin, COUNT(*) FROM document_tags GROUP BY 1, 2"):
            out.setdefault(tag, {})[origin] = n
        return out

    def tags_fingerprint(self) -> str:
        """Changes whenever a tag or a tag correction is written: the count of those writes (``TAG_WRITES``; a retag
        that replaces a document's tags with as many rows leaves count and last rowid as they were), and the tables'
        counts and last rows for writes made without it (by another tool)."""
        row = self.conn.execute(  # one statement: one snapshot
            "SELECT (SELECT COALESCE(MAX(CAST(value AS INTEGER)), 0) FROM meta WHERE key = ?), "
            "(SELECT COUNT(*) FROM document_tags), (SELECT COALESCE(MAX(rowid), 0) FROM document_tags), "
            "(SELECT COUNT(*) FROM tag_corrections), (SELECT COALESCE(MAX(created_at), '') FROM tag_corrections)",
            (TAG_WRITES,),
        ).fetchone()
        return ":".join(str(v) for v in row)

    def tagged_in(self, since: str, until: str) -> list[TaggedDocument]:
        """One row per (document, tag) of tagged documents that entered the record (store.dates) in [since, until],
        with that day."""
        rows = self.conn.execute(
            f"SELECT d.id, substr({ENTERED}, 1, 10), t.tag FROM documents d "
            f"JOIN document_tags t ON t.doc_id = d.id WHERE d.published <= ? AND {ENTERED} >= ? AND {ENTERED} <= ?",
            (until, since, until),
        )
        return [TaggedDocument(r[0], r[1], r[2]) for r in rows]

    def tagging_candidates(
        self, model_id: str, tagger: str, *, everything: bool = False, batch: int = 4096
    ) -> Iterator[list[EmbeddedDocument]]:
        """Batches of embedded documents not yet decided by ``tagger`` (all embedded documents when
        ``everything``)."""
        where = "" if everything else "AND (s.doc_id IS NULL OR s.tagger != ?)"
        params: tuple[Any, ...] = (model_id,) if everything else (model_id, tagger)
        # ids first: the caller writes tag_state between batches, which this query reads
        ids = [
            r[0]
            for r in self.conn.execute(
                "SELECT d.id FROM documents d JOIN embeddings e ON e.doc_id = d.id "
                "LEFT JOIN tag_state s ON s.doc_id = d.id "
                f"WHERE e.model_id = ? AND e.content_hash = d.content_hash {where} ORDER BY d.rowid",
                params,
            )
        ]
        for start in range(0, len(ids), batch):
            chunk = ids[start : start + batch]
            rows = {
                r[0]: EmbeddedDocument(r[0], r[1], r[2], r[3])
                for r in self.rows_for(
                    "SELECT d.id, d.title, d.abstract, e.vector FROM documents d JOIN embeddings e ON e.doc_id = d.id "
                    "WHERE d.id IN ({marks})",
                    chunk,
                )
            }
            yield [rows[i] for i in chunk if i in rows]

    def sample_embedded(self, model_id: str, n: int) -> list[EmbeddedDocument]:
        """Up to ``n`` embedded documents, a fixed pseudo-random sample."""
        rows = self.conn.execute(
            "SELECT d.id, d.title, d.abstract, e.vector FROM documents d JOIN embeddings e ON e.doc_id = d.id "
            "WHERE e.model_id = ? AND e.content_hash = d.content_hash ORDER BY (e.vec_id * 2654435761) % 4294967296 "
            "LIMIT ?",
            (model_id, n),
        )
        return [EmbeddedDocument(r[0], r[1], r[2], r[3]) for r in rows]

    def save_tag_decisions(
        self, tagger: str, doc_ids: list[str], decisions: Iterable[tuple[str, str, float, str]]
    ) -> None:
        """Replace the model/rule tags of ``doc_ids`` with ``TagDecision`` rows (or plain tuples in that order),
        in one transaction; user corrections win: a removed tag is never written, a confirmed one is kept."""
        now = utc_now()
        with self.transaction() as conn:
            bump_counter(conn, TAG_WRITES)
            for start in range(0, len(doc_ids), 900):
                chunk = doc_ids[start : start + 900]
                marks = ",".join("?" * len(chunk))
                conn.execute(f"DELETE FROM document_tags WHERE origin != 'user' AND doc_id IN ({marks})", chunk)
            conn.executemany(
                "INSERT INTO document_tags (doc_id, tag, score, origin, created_at) SELECT ?, ?, ?, ?, ? "
                "WHERE NOT EXISTS (SELECT 1 FROM tag_corrections c WHERE c.doc_id = ?1 AND c.tag = ?2) "
                "ON CONFLICT(doc_id, tag) DO NOTHING",
                [(d, t, s, o, now) for d, t, s, o in decisions],
            )
            conn.executemany(
                "INSERT INTO tag_state (doc_id, tagger, tagged_at) VALUES (?, ?, ?) "
                "ON CONFLICT(doc_id) DO UPDATE SET tagger = excluded.tagger, tagged_at = excluded.tagged_at",
                [(d, tagger, now) for d in doc_ids],
            )

    def save_correction(self, doc_id: str, add: Iterable[str], remove: Iterable[str]) -> None:
        """Record +tag / -tag corrections and apply them to the document's tags at once."""
        now = utc_now()
        with self.transaction() as conn:
            bump_counter(conn, TAG_WRITES)
            for tag, value in [(t, 1) for t in add] + [(t, 0) for t in remove]:
                conn.execute(
                    "INSERT INTO tag_corrections (doc_id, tag, value, created_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT(doc_id, tag) DO UPDATE SET value = excluded.value, created_at = excluded.created_at",
                    (doc_id, tag, value, now),
                )
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
        return [
            Correction(r[0], r[1], bool(r[2]))
            for r in self.conn.execute(
                "SELECT doc_id, tag, value FROM tag_corrections ORDER BY created_at, doc_id, tag"
            )
        ]
