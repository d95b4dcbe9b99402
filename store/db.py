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

from store.errors import StoreError
from store.models import CrawlState, Document, UpsertCounts, utc_now
from store.schema import LATEST_VERSION, MIGRATIONS

RUN_STATUSES = ("queued", "running", "done", "failed", "cancelled")

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


class Store:
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

    def find_by_url(self, url: str) -> str | None:
        row = self.conn.execute("SELECT id FROM documents WHERE url = ? LIMIT 1", (url,)).fetchone()
        return row[0] if row else None

    def iter_documents(
        self, *, since: str = "", until: str = "", kind: str = "", batch: int = 5000
    ) -> Iterator[Document]:
        clauses, params = [], []
        if since:
            clauses.append("published >= ?")
            params.append(since)
        if until:
            clauses.append("published <= ?")
            params.append(until)
        if kind:
            clauses.append("kind = ?")
            params.append(kind)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        cur = self.conn.execute(f"SELECT {_DOC_COLUMNS} FROM documents {where} ORDER BY published, id", params)
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
                r[0]: r[1]
                for r in q("SELECT substr(published, 1, 7), COUNT(*) FROM documents GROUP BY 1 ORDER BY 1")
            },
        }

    # -- crawl state -----------------------------------------------------------------------------

    def crawl_state(self, source: str) -> CrawlState:
        row = self.conn.execute("SELECT * FROM crawl_state WHERE source = ?", (source,)).fetchone()
        return CrawlState(**dict(row)) if row else CrawlState(source=source)

    def all_crawl_states(self) -> list[CrawlState]:
        return [CrawlState(**dict(r)) for r in self.conn.execute("SELECT * FROM crawl_state ORDER BY source")]

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

    # -- runs (repro and other background jobs) --------------------------------------------------

    def create_run(self, run_id: str, kind: str, params: dict[str, Any], status: str = "queued") -> None:
        self._check_status(status)
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO runs (id, kind, status, params, created_at) VALUES (?, ?, ?, ?, ?)",
                (run_id, kind, status, orjson.dumps(params).decode(), utc_now()),
            )

    def update_run(self, run_id: str, **changes: Any) -> None:
        """Set columns of a run; dict values (params, result) are stored as JSON."""
        allowed = {
            "status", "params", "result", "progress", "pid", "error", "started_at", "finished_at",
            "heartbeat_at", "cancel_requested",
        }  # fmt: skip
        bad = set(changes) - allowed
        if bad:
            raise StoreError(f"cannot set run field(s) {', '.join(sorted(bad))}; valid: {', '.join(sorted(allowed))}")
        if "status" in changes:
            self._check_status(changes["status"])
        values = [orjson.dumps(v).decode() if isinstance(v, dict | list) else v for v in changes.values()]
        sets = ", ".join(f"{k} = ?" for k in changes)
        with self.transaction() as conn:
            cur = conn.execute(f"UPDATE runs SET {sets} WHERE id = ?", [*values, run_id])
            if cur.rowcount == 0:
                raise StoreError(f"no run {run_id!r}; list runs with `radar repro list`")

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        return self._run_dict(row) if row else None

    def list_runs(self, kind: str = "", status: str = "") -> list[dict[str, Any]]:
        clauses, params = [], []
        if kind:
            clauses.append("kind = ?")
            params.append(kind)
        if status:
            clauses.append("status = ?")
            params.append(status)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self.conn.execute(f"SELECT * FROM runs {where} ORDER BY created_at DESC, id DESC", params)
        return [self._run_dict(r) for r in rows]

    @staticmethod
    def _run_dict(row: sqlite3.Row) -> dict[str, Any]:
        d = dict(row)
        d["params"] = orjson.loads(d["params"])
        d["result"] = orjson.loads(d["result"])
        return d

    @staticmethod
    def _check_status(status: str) -> None:
        if status not in RUN_STATUSES:
            raise StoreError(f"run status {status!r} is not one of {', '.join(RUN_STATUSES)}")
