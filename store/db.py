"""The one module that owns the SQLite database (WAL mode).

Writes happen in transactions: a crash leaves either the old or the new row, never half.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Any

import orjson

from radar.store.errors import StoreError
from radar.store.models import CrawlState, Document, UpsertCounts, utc_now
from radar.store.runs import RunsTable
from radar.store.schema import LATEST_VERSION, MIGRATIONS

_DOC_COLUMNS = (
    "id, kind, source, title, abstract, authors, categories, primary_category, published, updated, "
    "url, version, date_estimated, content_hash, first_seen, changed_at, extra"
)

# Insert a new document, or replace an existing one when the incoming version is not older and the
# content changed. first_seen and source are kept; published keeps the earliest date seen
# (an arXiv v2 announcement must not move a paper's v1 date).
_UPSERT_SQL = f"""
INSERT INTO documents ({_DOC_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(id) DO UPDATE SET
    title = excluded.title,
    abstract = excluded.abstract,
    authors = CASE WHEN excluded.authors != '[]' THEN excluded.authors ELSE documents.authors END,
    categories = excluded.categories,
    primary_category = excluded.primary_category,
    published = CASE WHEN documents.date_estimated = 0 AND documents.published < excluded.published
                     THEN documents.published ELSE excluded.published END,
    date_estimated = CASE WHEN documents.date_estimated = 0 AND documents.published < excluded.published
                     THEN 0 ELSE excluded.date_estimated END,
    updated = excluded.updated,
    url = CASE WHEN excluded.url != '' THEN excluded.url ELSE documents.url END,
    version = MAX(documents.version, excluded.version),
    content_hash = excluded.content_hash,
    changed_at = excluded.changed_at,
    extra = excluded.extra
WHERE excluded.version >= documents.version AND excluded.content_hash != documents.content_hash
"""


def _doc_row(doc: Document, now: str) -> tuple[Any, ...]:
    return (
        doc.id,
        doc.kind,
        doc.source,
        doc.title,
        doc.abstract,
        orjson.dumps(list(doc.authors)).decode(),
        orjson.dumps(list(doc.categories)).decode(),
        doc.primary_category,
        doc.published,
        doc.updated or doc.published,
        doc.url,
        doc.version,
        int(doc.date_estimated),
        doc.content_hash,
        now,
        now,
        orjson.dumps(doc.extra).decode(),
    )


def _row_doc(row: sqlite3.Row) -> Document:
    return Document(
        id=row["id"],
        kind=row["kind"],
        source=row["source"],
        title=row["title"],
        abstract=row["abstract"],
        published=row["published"],
        updated=row["updated"],
        authors=tuple(orjson.loads(row["authors"])),
        categories=tuple(orjson.loads(row["categories"])),
        primary_category=row["primary_category"],
        url=row["url"],
        version=row["version"],
        date_estimated=bool(row["date_estimated"]),
        extra=orjson.loads(row["extra"]),
    )


class Store(RunsTable):
    """A connection to the workspace database. Use as a context manager or call close()."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"cannot open the database {path} ({exc}); restore it from a backup or move it away "
                "and run `radar init`"
            ) from None

    # -- lifecycle -------------------------------------------------------------------------------

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any exception (including KeyboardInterrupt)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def _rows_for(self, sql: str, ids: Iterable[str], *params: Any) -> Iterator[sqlite3.Row]:
        """Rows of ``sql`` (whose ``{marks}`` takes the ids' placeholders, after ``params``) for any
        number of ids, 900 at a time (SQLite caps the number of parameters)."""
        ids = list(ids)
        for start in range(0, len(ids), 900):
            chunk = ids[start : start + 900]
            yield from self.conn.execute(sql.format(marks=",".join("?" * len(chunk))), [*params, *chunk])

    @property
    def schema_version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        current = self.schema_version
        if current > LATEST_VERSION:
            raise StoreError(
                f"database schema v{current} is newer than this radar (v{LATEST_VERSION}); upgrade research-radar"
            )
        for version, sql in MIGRATIONS:
            if version <= current:
                continue
            with self.transaction() as conn:
                for statement in sql.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {version}")

    # -- documents -------------------------------------------------------------------------------

    def upsert_documents(self, docs: Iterable[Document]) -> UpsertCounts:
        """Insert or update documents in one transaction; returns added/updated/unchanged counts."""
        now = utc_now()
        rows = [_doc_row(d, now) for d in docs]
        if not rows:
            return UpsertCounts()
        with self.transaction() as conn:
            # new rows get rowids above the current maximum: counting them is a cheap range scan
            max_rowid = conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM documents").fetchone()[0]
            before_changes = conn.total_changes
            conn.executemany(_UPSERT_SQL, rows)
            changed = conn.total_changes - before_changes
            added = conn.execute("SELECT COUNT(*) FROM documents WHERE rowid > ?", (max_rowid,)).fetchone()[0]
        return UpsertCounts(added=added, updated=changed - added, unchanged=len(rows) - changed)

    def get_document(self, doc_id: str) -> Document | None:
        row = self.conn.execute(f"SELECT {_DOC_COLUMNS} FROM documents WHERE id = ?", (doc_id,)).fetchone()
        return _row_doc(row) if row else None

    def document_meta(self, doc_id: str) -> dict[str, Any] | None:
        row = self.conn.execute(
            "SELECT id, first_seen, changed_at, content_hash, version FROM documents WHERE id = ?", (doc_id,)
        ).fetchone()
        return dict(row) if row else None

    def iter_documents(
        self, *, since: str = "", until: str = "", kind: str = "", batch: int = 5000
    ) -> Iterator[Document]:
        clauses, params = self._filter_sql(since, until, (), (), (), (kind,) if kind else ())
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        cur = self.conn.execute(f"SELECT {_DOC_COLUMNS} FROM documents d {where} ORDER BY published, id", params)
        while rows := cur.fetchmany(batch):
            yield from (_row_doc(r) for r in rows)

    def count_documents(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0])

    def stats(self) -> dict[str, Any]:
        q = self.conn.execute
        return {
            "documents": self.count_documents(),
            "by_source": {
                r[0]: r[1] for r in q("SELECT source, COUNT(*) FROM documents GROUP BY source ORDER BY source")
            },
            "by_kind": {r[0]: r[1] for r in q("SELECT kind, COUNT(*) FROM documents GROUP BY kind ORDER BY kind")},
            "by_month": {
                r[0]: r[1] for r in q("SELECT substr(published, 1, 7), COUNT(*) FROM documents GROUP BY 1 ORDER BY 1")
            },
        }

    # -- embeddings and tags (written by index/ and analysis/) -------------------------------------

    def pending_embeddings(self, model_id: str) -> list[tuple[str, str, str, str]]:
        """(id, content_hash, title, abstract) of documents with no vector from ``model_id`` for
        their current content: new, changed, or embedded by another model."""
        rows = self.conn.execute(
            "SELECT d.id, d.content_hash, d.title, d.abstract FROM documents d "
            "LEFT JOIN embeddings e ON e.doc_id = d.id "
            "WHERE e.doc_id IS NULL OR e.model_id != ? OR e.content_hash != d.content_hash ORDER BY d.rowid",
            (model_id,),
        )
        return [tuple(r) for r in rows]  # type: ignore[misc]

    def save_embeddings(self, rows: Iterable[tuple[str, str, str, bytes]]) -> None:
        """Store (doc_id, model_id, content_hash, vector bytes) in one transaction; a doc keeps its vec_id."""
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

    def vec_ids_of(self, doc_ids: Iterable[str]) -> dict[str, int]:
        return {
            r[0]: r[1]
            for r in self._rows_for("SELECT doc_id, vec_id FROM embeddings WHERE doc_id IN ({marks})", doc_ids)
        }

    def facets(self) -> Iterator[tuple[str, str, str, str, int]]:
        """(id, published, source, kind, vec_id or -1) of every document, for in-memory filtering."""
        yield from self.conn.execute(
            "SELECT d.id, d.published, d.source, d.kind, COALESCE(e.vec_id, -1) FROM documents d "
            "LEFT JOIN embeddings e ON e.doc_id = d.id"
        )

    def known_tags(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT DISTINCT tag FROM document_tags ORDER BY tag")]

    def embedding_models(self) -> dict[str, int]:
        return {r[0]: r[1] for r in self.conn.execute("SELECT model_id, COUNT(*) FROM embeddings GROUP BY model_id")}

    def iter_vectors(self, model_id: str, batch: int = 20000) -> Iterator[list[tuple[int, bytes]]]:
        """Batches of (vec_id, vector bytes) for the current content of every document."""
        cur = self.conn.execute(
            "SELECT e.vec_id, e.vector FROM embeddings e JOIN documents d ON d.id = e.doc_id "
            "WHERE e.model_id = ? AND e.content_hash = d.content_hash ORDER BY e.vec_id",
            (model_id,),
        )
        while rows := cur.fetchmany(batch):
            yield [(r[0], r[1]) for r in rows]

    def vector_of(self, doc_id: str, model_id: str) -> tuple[int, bytes] | None:
        row = self.conn.execute(
            "SELECT vec_id, vector FROM embeddings WHERE doc_id = ? AND model_id = ?", (doc_id, model_id)
        ).fetchone()
        return (row[0], row[1]) if row else None

    def doc_ids_for_vectors(self, vec_ids: Iterable[int]) -> dict[int, str]:
        ids = list(vec_ids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(f"SELECT vec_id, doc_id FROM embeddings WHERE vec_id IN ({marks})", ids)
        return {r[0]: r[1] for r in rows}

    def filter_documents(
        self,
        *,
        since: str = "",
        until: str = "",
        tags: Iterable[str] = (),
        sources: Iterable[str] = (),
        categories: Iterable[str] = (),
        kinds: Iterable[str] = (),
    ) -> list[str]:
        """Ids of documents matching every given filter (tags: any of them)."""
        clauses, params = self._filter_sql(since, until, tags, sources, categories, kinds)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        return [r[0] for r in self.conn.execute(f"SELECT d.id FROM documents d {where}", params)]

    @staticmethod
    def _filter_sql(
        since: str,
        until: str,
        tags: Iterable[str],
        sources: Iterable[str],
        categories: Iterable[str],
        kinds: Iterable[str],
    ) -> tuple[list[str], list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        if since:
            clauses.append("d.published >= ?")
            params.append(since)
        if until:
            clauses.append("d.published <= ?")
            params.append(until)
        for column, values in (("d.source", list(sources)), ("d.kind", list(kinds))):
            if values:
                clauses.append(f"{column} IN ({','.join('?' * len(values))})")
                params.extend(values)
        cats = list(categories)
        if cats:
            clauses.append(
                f"EXISTS (SELECT 1 FROM json_each(d.categories) c WHERE c.value IN ({','.join('?' * len(cats))}))"
            )
            params.extend(cats)
        tag_list = list(tags)
        if tag_list:
            clauses.append(
                "EXISTS (SELECT 1 FROM document_tags t WHERE t.doc_id = d.id AND t.tag IN "
                f"({','.join('?' * len(tag_list))}))"
            )
            params.extend(tag_list)
        return clauses, params

    def documents(self, ids: Iterable[str]) -> dict[str, Document]:
        return {
            r["id"]: _row_doc(r)
            for r in self._rows_for(f"SELECT {_DOC_COLUMNS} FROM documents WHERE id IN ({{marks}})", ids)
        }

    def tags_of(self, ids: Iterable[str]) -> dict[str, list[str]]:
        """{doc_id: sorted tags} (documents with no tag are absent)."""
        return {doc_id: sorted(scores) for doc_id, scores in self.tag_scores(ids).items()}

    # -- tag decisions and corrections (written by analysis/tags) ---------------------------------

    def tagging_candidates(
        self, model_id: str, tagger: str, *, everything: bool = False, batch: int = 4096
    ) -> Iterator[list[tuple[str, str, str, bytes]]]:
        """Batches of (id, title, abstract, vector) of embedded documents not yet decided by ``tagger``
        (all embedded documents when ``everything``)."""
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
                r[0]: (r[0], r[1], r[2], r[3])
                for r in self._rows_for(
                    "SELECT d.id, d.title, d.abstract, e.vector FROM documents d JOIN embeddings e ON e.doc_id = d.id "
                    "WHERE d.id IN ({marks})",
                    chunk,
                )
            }
            yield [rows[i] for i in chunk if i in rows]

    def sample_embedded(self, model_id: str, n: int) -> list[tuple[str, str, str, bytes]]:
        """Up to ``n`` (id, title, abstract, vector) of embedded documents, a fixed pseudo-random sample."""
        rows = self.conn.execute(
            "SELECT d.id, d.title, d.abstract, e.vector FROM documents d JOIN embeddings e ON e.doc_id = d.id "
            "WHERE e.model_id = ? AND e.content_hash = d.content_hash ORDER BY (e.vec_id * 2654435761) % 4294967296 "
            "LIMIT ?",
            (model_id, n),
        )
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    def count_unembedded(self, model_id: str) -> int:
        return int(
            self.conn.execute(
                "SELECT COUNT(*) FROM documents d LEFT JOIN embeddings e ON e.doc_id = d.id AND e.model_id = ? "
                "AND e.content_hash = d.content_hash WHERE e.doc_id IS NULL",
                (model_id,),
            ).fetchone()[0]
        )

    def save_tag_decisions(
        self, tagger: str, doc_ids: list[str], decisions: Iterable[tuple[str, str, float, str]]
    ) -> None:
        """Replace the model/rule tags of ``doc_ids`` with (doc_id, tag, score, origin) decisions, in one
        transaction; user corrections win: a removed tag is never written, a confirmed one is kept."""
        now = utc_now()
        with self.transaction() as conn:
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

    def corrections(self) -> list[tuple[str, str, int]]:
        """(doc_id, tag, 1 confirmed / 0 removed), oldest first."""
        return [
            tuple(r)
            for r in self.conn.execute(  # type: ignore[misc]
                "SELECT doc_id, tag, value FROM tag_corrections ORDER BY created_at, doc_id, tag"
            )
        ]

    def tag_counts(self) -> dict[str, dict[str, int]]:
        """{tag: {origin: documents}}."""
        out: dict[str, dict[str, int]] = {}
        for tag, origin, n in self.conn.execute("SELECT tag, origin, COUNT(*) FROM document_tags GROUP BY 1, 2"):
            out.setdefault(tag, {})[origin] = n
        return out

    def fingerprint(self) -> str:
        """Changes whenever a document is added or its content changes (for derived indexes)."""
        row = self.conn.execute(
            "SELECT COUNT(*), COALESCE(MAX(rowid), 0), COALESCE(MAX(changed_at), '') FROM documents"
        ).fetchone()
        return f"{row[0]}:{row[1]}:{row[2]}"

    # -- crawl state -----------------------------------------------------------------------------

    def crawl_state(self, source: str) -> CrawlState:
        row = self.conn.execute("SELECT * FROM crawl_state WHERE source = ?", (source,)).fetchone()
        return CrawlState(**dict(row)) if row else CrawlState(source=source)

    def save_crawl_state(self, state: CrawlState) -> None:
        names = [f.name for f in fields(CrawlState)]
        values = [getattr(state, n) for n in names]
        sets = ", ".join(f"{n} = excluded.{n}" for n in names[1:])
        with self.transaction() as conn:
            conn.execute(
                f"INSERT INTO crawl_state ({', '.join(names)}) VALUES ({', '.join('?' * len(names))}) "
                f"ON CONFLICT(source) DO UPDATE SET {sets}",
                values,
            )

    # -- weekly report: tag volumes and deliveries (written by reports/) ---------------------------

    def tagged_in(self, since: str, until: str) -> list[tuple[str, str, str]]:
        """(doc_id, YYYY-MM-DD, tag) for tagged documents published in [since, until]."""
        rows = self.conn.execute(
            "SELECT d.id, substr(d.published, 1, 10), t.tag FROM documents d "
            "JOIN document_tags t ON t.doc_id = d.id WHERE d.published >= ? AND d.published <= ?",
            (since, until),
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def delivery(self, period: str, channel: str, recipient: str) -> dict[str, Any] | None:
        row = self.conn.execute(
            "SELECT * FROM deliveries WHERE period = ? AND channel = ? AND recipient = ?", (period, channel, recipient)
        ).fetchone()
        return dict(row) if row else None

    def record_delivery(self, period: str, channel: str, recipient: str, *, ok: bool, error: str = "") -> None:
        """Count one attempt; a sent delivery stays sent (its row is what prevents a second send)."""
        now = utc_now()
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO deliveries (period, channel, recipient, status, attempts, last_error, sent_at, "
                "updated_at) VALUES (?, ?, ?, ?, 1, ?, ?, ?) ON CONFLICT(period, channel, recipient) DO UPDATE SET "
                "status = CASE WHEN deliveries.status = 'sent' THEN 'sent' ELSE excluded.status END, "
                "attempts = deliveries.attempts + 1, last_error = excluded.last_error, "
                "sent_at = CASE WHEN deliveries.sent_at != '' THEN deliveries.sent_at ELSE excluded.sent_at END, "
                "updated_at = excluded.updated_at",
                (period, channel, recipient, "sent" if ok else "failed", error, now if ok else "", now),
            )

    def tag_scores(self, ids: Iterable[str]) -> dict[str, dict[str, float]]:
        """{doc_id: {tag: score}} (the tagger's confidence; corrections and rules score 1)."""
        out: dict[str, dict[str, float]] = {}
        for doc_id, tag, score in self._rows_for(
            "SELECT doc_id, tag, score FROM document_tags WHERE doc_id IN ({marks})", ids
        ):
            out.setdefault(doc_id, {})[tag] = float(score)
        return out

    def deliveries(self, period: str = "", status: str = "") -> list[dict[str, Any]]:
        clauses, params = [], []
        for column, value in (("period", period), ("status", status)):
            if value:
                clauses.append(f"{column} = ?")
                params.append(value)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self.conn.execute(f"SELECT * FROM deliveries {where} ORDER BY period, channel, recipient", params)
        return [dict(r) for r in rows]

    # -- dashboard reads (app/dashboard) -----------------------------------------------------------

    def data_version(self) -> int:
        """Changes when another connection commits (PRAGMA data_version): a free "anything new?" check."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def tags_fingerprint(self) -> str:
        """Changes whenever a tag or a tag correction is written."""
        row = self.conn.execute(
            "SELECT (SELECT COUNT(*) FROM document_tags), (SELECT COALESCE(MAX(rowid), 0) FROM "
            "document_tags), (SELECT COUNT(*) FROM tag_corrections), (SELECT COALESCE(MAX("
            "created_at), '') FROM tag_corrections)"
        ).fetchone()
        return ":".join(str(v) for v in row)

    def counts_by_kind(self, since: str = "", until: str = "", tagged: bool = False) -> dict[str, int]:
        """Documents per kind published in [since, until] (index range scan); tagged: only tagged ones."""
        clauses, params = self._filter_sql(since, until, (), (), (), ())
        if tagged:
            clauses.append("EXISTS (SELECT 1 FROM document_tags t WHERE t.doc_id = d.id)")
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self.conn.execute(f"SELECT d.kind, COUNT(*) FROM documents d {where} GROUP BY 1", params)
        return {r[0]: r[1] for r in rows}

    def counts_by_day(self, since: str = "", until: str = "") -> list[tuple[str, str, int]]:
        """(YYYY-MM-DD, kind, documents) for documents published in [since, until] (no bound when '')."""
        clauses, params = self._filter_sql(since, until, (), (), (), ())
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self.conn.execute(
            f"SELECT substr(d.published, 1, 10), d.kind, COUNT(*) FROM documents d {where} GROUP BY 1, 2", params
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def published_range(self, kind: str = "") -> tuple[str, str]:
        """(first, last) publication stamps, of one kind of document if given ('' when none)."""
        where = "WHERE kind = ?" if kind else ""
        params = [kind, kind] if kind else []
        row = self.conn.execute(
            f"SELECT (SELECT MIN(published) FROM documents {where}), (SELECT MAX(published) FROM documents {where})",
            params,
        ).fetchone()
        return row[0] or "", row[1] or ""

    def primary_categories(self) -> dict[str, int]:
        rows = self.conn.execute(
            "SELECT primary_category, COUNT(*) FROM documents WHERE primary_category != '' GROUP BY 1 ORDER BY 2 DESC"
        )
        return {r[0]: r[1] for r in rows}

    def latest_documents(
        self,
        *,
        since: str = "",
        until: str = "",
        tags: Iterable[str] = (),
        sources: Iterable[str] = (),
        categories: Iterable[str] = (),
        kinds: Iterable[str] = (),
        limit: int = 50,
    ) -> list[Document]:
        """The newest documents matching every given filter (tags: any of them)."""
        clauses, params = self._filter_sql(since, until, tags, sources, categories, kinds)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self.conn.execute(
            f"SELECT {_DOC_COLUMNS} FROM documents d {where} ORDER BY published DESC, id DESC LIMIT ?", [*params, limit]
        )
        return [_row_doc(r) for r in rows]

    def tag_details(self, doc_id: str) -> tuple[list[dict[str, Any]], dict[str, int]]:
        """A document's tags ({tag, score, origin}) and its corrections ({tag: 1 confirmed / 0 removed})."""
        tags = [
            dict(r)
            for r in self.conn.execute(
                "SELECT tag, score, origin FROM document_tags WHERE doc_id = ? ORDER BY score DESC, tag", (doc_id,)
            )
        ]
        fixes = {
            r[0]: r[1] for r in self.conn.execute("SELECT tag, value FROM tag_corrections WHERE doc_id = ?", (doc_id,))
        }
        return tags, fixes

    def table_counts(self) -> dict[str, int]:
        """Rows per table, for the dashboard's settings page."""
        tables = ("documents", "embeddings", "document_tags", "tag_corrections", "runs", "deliveries")
        return {t: int(self.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in tables}

    # -- trends: document text for the term cache (read by analysis/trends) ----------------------

    def text_rows(self, changed_since: str = "", batch: int = 5000) -> Iterator[tuple[str, ...]]:
        """(id, published, source, primary_category, categories (JSON list), content_hash, title, abstract,
        changed_at) of every document changed at or after ``changed_since`` (all of them when empty)."""
        cur = self.conn.execute(
            "SELECT id, published, source, primary_category, categories, content_hash, title, abstract, changed_at "
            "FROM documents WHERE changed_at >= ?",
            (changed_since,),
        )
        while rows := cur.fetchmany(batch):
            yield from (tuple(r) for r in rows)  # type: ignore[misc]

    def content_hashes_since(self, changed_since: str) -> list[tuple[str, str]]:
        """(id, content_hash) of documents changed at or after ``changed_since``, sorted by id."""
        rows = self.conn.execute(
            "SELECT id, content_hash FROM documents WHERE changed_at >= ? ORDER BY id", (changed_since,)
        )
        return [(r[0], r[1]) for r in rows]

    def current_vectors(self, ids: Iterable[str], model_id: str) -> dict[str, bytes]:
        """Vector bytes of the given documents from ``model_id``, for their current content only."""
        return {
            r[0]: r[1]
            for r in self._rows_for(
                "SELECT e.doc_id, e.vector FROM embeddings e JOIN documents d ON d.id = e.doc_id "
                "WHERE e.model_id = ? AND e.content_hash = d.content_hash AND e.doc_id IN ({marks})",
                ids,
                model_id,
            )
        }
