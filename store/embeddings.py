"""The embeddings table: one vector per document (its ``vec_id`` is the FAISS id), the model that made it,
and the content hash it was made from. Written by index/, read by search, tagging and topics."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from radar.store.dates import entered_sql
from radar.store.table import Table


class PendingEmbedding(NamedTuple):
    """A document whose current content has no vector from the current model."""

    doc_id: str
    content_hash: str
    title: str
    abstract: str


class Embedding(NamedTuple):
    """One row to save: float32 ``vector`` bytes of ``doc_id``'s content ``content_hash`` by ``model_id``."""

    doc_id: str
    model_id: str
    content_hash: str
    vector: bytes


class StoredVector(NamedTuple):
    vec_id: int
    vector: bytes  # float32 bytes


class Facet(NamedTuple):
    """The filterable fields of one document; ``vec_id`` is -1 when it has no vector."""

    doc_id: str
    published: str  # the day it entered the record (store.dates), what date filters compare
    source: str
    kind: str
    vec_id: int


class EmbeddingsTable(Table):
    """Embeddings: pending work, saving vectors, and reading them back by document or vec_id."""

    def pending_embeddings(self, model_id: str) -> list[PendingEmbedding]:
        """Documents with no vector from ``model_id`` for their current content: new, changed, or embedded
        by another model."""
        rows = self.conn.execute(
            "SELECT d.id, d.content_hash, d.title, d.abstract FROM documents d "
            "LEFT JOIN embeddings e ON e.doc_id = d.id "
            "WHERE e.doc_id IS NULL OR e.model_id != ? OR e.content_hash != d.content_hash ORDER BY d.rowid",
            (model_id,),
        )
        return list(map(PendingEmbedding._make, rows))

    def save_embeddings(self, rows: Iterable[tuple[str, str, str, bytes]]) -> None:
        """Store ``Embedding`` rows (or plain tuples in that order) in one transaction; a doc keeps its vec_id."""
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('embeddings_generation', '1') ON CONFLICT(key) "
                "DO UPDATE SET value = CAST(value AS INTEGER) + 1"
            )
            conn.executemany(
                "INSERT INTO embeddings (doc_id, model_id, content_hash, vector) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(doc_id) DO UPDATE SET model_id = excluded.model_id, "
                "content_hash = excluded.content_hash, vector = excluded.vector",
                list(rows),
            )

    def embeddings_generation(self) -> int:
        """Grows with every save_embeddings: an index built at generation g is current iff this is g."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'embeddings_generation'").fetchone()
        return int(row[0]) if row else 0

    def embedding_models(self) -> dict[str, int]:
        return {r[0]: r[1] for r in self.conn.execute("SELECT model_id, COUNT(*) FROM embeddings GROUP BY model_id")}

    def count_unembedded(self, model_id: str) -> int:
        return int(
            self.conn.execute(
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
        ids = list(vec_ids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(f"SELECT vec_id, doc_id FROM embeddings WHERE vec_id IN ({marks})", ids)
        return {r[0]: r[1] for r in rows}

    def facets(self) -> Iterator[Facet]:
        """The filterable fields of every document, for in-memory filtering."""
        yield from map(
            Facet._make,
            self.conn.execute(
                f"SELECT d.id, {entered_sql('d')}, d.source, d.kind, COALESCE(e.vec_id, -1) FROM documents d "
                "LEFT JOIN embeddings e ON e.doc_id = d.id"
            ),
        )

    def iter_vectors(self, model_id: str, batch: int = 20000) -> Iterator[list[StoredVector]]:
        """Batches of the vectors of the current content of every document, by vec_id."""
        cur = self.conn.execute(
            "SELECT e.vec_id, e.vector FROM embeddings e JOIN documents d ON d.id = e.doc_id "
            "WHERE e.model_id = ? AND e.content_hash = d.content_hash ORDER BY e.vec_id",
            (model_id,),
        )
        while rows := cur.fetchmany(batch):
            yield [StoredVector(r[0], r[1]) for r in rows]

    def vector_of(self, doc_id: str, model_id: str) -> StoredVector | None:
        row = self.conn.execute(
            "SELECT vec_id, vector FROM embeddings WHERE doc_id = ? AND model_id = ?", (doc_id, model_id)
        ).fetchone()
        return StoredVector(row[0], row[1]) if row else None

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
