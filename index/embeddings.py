"""The index's repository: the embeddings table, one vector per document (its ``vec_id`` is the FAISS id), the model
that made it and the content hash it was made from. Written by index/, read through index by search, tagging,
topics and the digests.

The table's schema stays with the workspace's migrations (store/schema.py); its records and its reads and writes
are here, a ``store.table.Repository`` on the store's connection; rows become records by msgspec (array-like Structs
take a row's columns in order).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import msgspec

from radar.store.dates import entered_sql
from radar.store.table import EMBEDDINGS_GENERATION, Repository, bump_counter, upsert_sql

_SAVE_SQL = upsert_sql("embeddings", ("doc_id", "model_id", "content_hash", "vector"), "doc_id")


class PendingEmbedding(msgspec.Struct, frozen=True, array_like=True):
    """A document whose current content has no vector from the current model."""

    doc_id: str
    content_hash: str
    title: str
    abstract: str


class Embedding(msgspec.Struct, frozen=True, array_like=True):
    """One row to save: float32 ``vector`` bytes of ``doc_id``'s content ``content_hash`` by ``model_id``."""

    doc_id: str
    model_id: str
    content_hash: str
    vector: bytes


class StoredVector(msgspec.Struct, frozen=True, array_like=True):
    vec_id: int
    vector: bytes  # float32 bytes


class EmbeddedDocument(msgspec.Struct, frozen=True, array_like=True):
    """A document's text and its current float32 vector bytes, as the tagger reads it."""

    doc_id: str
    title: str
    abstract: str
    vector: bytes


class Facet(msgspec.Struct, frozen=True, array_like=True):
    """The filterable fields of one document; ``vec_id`` is -1 when it has no vector."""

    doc_id: str
    published: str  # the day it entered the record (store.dates), what date filters compare
    source: str
    kind: str
    vec_id: int


class Embeddings(Repository):
    """Embeddings on ``db``: pending work, saving vectors, and reading them back by document or vec_id."""

    def pending(self, model_id: str) -> list[PendingEmbedding]:
        """Documents with no vector from ``model_id`` for their current content: new, changed, or embedded
        by another model."""
        return self.records(
            PendingEmbedding,
            "SELECT d.id, d.content_hash, d.title, d.abstract FROM documents d "
            "LEFT JOIN embeddings e ON e.doc_id = d.id "
            "WHERE e.doc_id IS NULL OR e.model_id != ? OR e.content_hash != d.content_hash ORDER BY d.rowid",
            (model_id,),
        )

    def save(self, rows: Iterable[Embedding | tuple[str, str, str, bytes]]) -> None:
        """Store ``Embedding`` rows (or plain tuples in that order) in one transaction; a doc keeps its vec_id."""
        with self.db.transaction() as conn:
            bump_counter(conn, EMBEDDINGS_GENERATION)
            conn.executemany(_SAVE_SQL, [msgspec.structs.astuple(r) if isinstance(r, Embedding) else r for r in rows])

    def generation(self) -> int:
        """Grows with every save: an index built at generation g is current iff this is g."""
        return int(self.meta_value(EMBEDDINGS_GENERATION) or 0)

    def models(self) -> dict[str, int]:
        """How many vectors each model made."""
        return dict(self.tuples("SELECT model_id, COUNT(*) FROM embeddings GROUP BY model_id").fetchall())

    def count_unembedded(self, model_id: str) -> int:
        return int(
            self.db.conn.execute(
                "SELECT COUNT(*) FROM documents d LEFT JOIN embeddings e ON e.doc_id = d.id AND e.model_id = ? "
                "AND e.content_hash = d.content_hash WHERE e.doc_id IS NULL",
                (model_id,),
            ).fetchone()[0]
        )

    def vec_ids_of(self, doc_ids: Iterable[str]) -> dict[str, int]:
        return {
            r[0]: r[1]
            for r in self.rows_for("SELECT doc_id, vec_id FROM embeddings WHERE doc_id IN ({marks})", doc_ids)
        }

    def doc_ids_for_vectors(self, vec_ids: Iterable[int]) -> dict[int, str]:
        return {
            r[0]: r[1]
            for r in self.rows_for("SELECT vec_id, doc_id FROM embeddings WHERE vec_id IN ({marks})", vec_ids)
        }

    def facets(self) -> list[Facet]:
        """The filterable fields of every document, for in-memory filtering."""
        return self.records(
            Facet,
            f"SELECT d.id, {entered_sql('d')}, d.source, d.kind, COALESCE(e.vec_id, -1) FROM documents d "
            "LEFT JOIN embeddings e ON e.doc_id = d.id",
        )

    def iter_vectors(self, model_id: str, batch: int = 20000) -> Iterator[list[StoredVector]]:
        """Batches of the vectors of the current content of every document, by vec_id."""
        cur = self.tuples(
            "SELECT e.vec_id, e.vector FROM embeddings e JOIN documents d ON d.id = e.doc_id "
            "WHERE e.model_id = ? AND e.content_hash = d.content_hash ORDER BY e.vec_id",
            (model_id,),
        )
        while rows := cur.fetchmany(batch):
            yield msgspec.convert(rows, list[StoredVector])

    def sample_embedded(self, model_id: str, n: int) -> list[EmbeddedDocument]:
        """Up to ``n`` embedded documents, a fixed pseudo-random sample."""
        return self.records(
            EmbeddedDocument,
            "SELECT d.id, d.title, d.abstract, e.vector FROM documents d JOIN embeddings e ON e.doc_id = d.id "
            "WHERE e.model_id = ? AND e.content_hash = d.content_hash ORDER BY (e.vec_id * 2654435761) % 4294967296 "
            "LIMIT ?",
            (model_id, n),
        )

    def vector_of(self, doc_id: str, model_id: str) -> StoredVector | None:
        rows = self.records(
            StoredVector, "SELECT vec_id, vector FROM embeddings WHERE doc_id = ? AND model_id = ?", (doc_id, model_id)
        )
        return rows[0] if rows else None

    def current_vectors(self, ids: Iterable[str], model_id: str) -> dict[str, bytes]:
        """Vector bytes of the given documents from ``model_id``, for their current content only."""
        return {
            r[0]: r[1]
            for r in self.rows_for(
                "SELECT e.doc_id, e.vector FROM embeddings e JOIN documents d ON d.id = e.doc_id "
                "WHERE e.model_id = ? AND e.content_hash = d.content_hash AND e.doc_id IN ({marks})",
                ids,
                model_id,
            )
        }
