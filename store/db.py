"""The one module that owns the SQLite database (WAL mode).

Writes happen in transactions: a crash leaves either the old or the new row, never half.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from radar.store.contributions import ContributionsTable
from radar.store.crawl import CrawlStateTable
from radar.store.deliveries import DeliveriesTable
from radar.store.documents import DocumentsTable
from radar.store.embeddings import EmbeddingsTable
from radar.store.errors import StoreError
from radar.store.names import NamesTable
from radar.store.people import PeopleTable
from radar.store.runs import RunsTable
from radar.store.schema import LATEST_VERSION, MIGRATIONS
from radar.store.tags import TagsTable

BUSY_TIMEOUT_S = 30.0  # how long a write waits for another process's write before "the workspace is busy"


def _is_busy(exc: sqlite3.DatabaseError) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


class Store(
    DocumentsTable,
    EmbeddingsTable,
    TagsTable,
    RunsTable,
    DeliveriesTable,
    CrawlStateTable,
    NamesTable,
    PeopleTable,
    ContributionsTable,
):
    """A connection to the workspace database. Use as a context manager or call close().

    The connection, transactions and migrations live here; each table's methods and row types live in
    its module (documents, embeddings, tags, runs, deliveries, crawl), composed into this one class."""

    def __init__(self, path: Path, *, busy_timeout_s: float = BUSY_TIMEOUT_S) -> None:
        self.path = path
        self.busy_timeout_s = busy_timeout_s
        try:
            self.conn = sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            if _is_busy(exc):
                raise self._busy() from None
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
        """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any exception (including KeyboardInterrupt). Waits up to
        ``busy_timeout_s`` for another writer, then raises one line: the workspace is busy."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise self._busy() from None
            raise
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def _busy(self) -> StoreError:
        return StoreError(
            f"the workspace is busy: another radar process has held the database {self.path} for "
            f"{self.busy_timeout_s:g} s; wait for it to finish (or stop it) and rerun"
        )

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

    # -- whole database ---------------------------------------------------------------------------

    def data_version(self) -> int:
        """Changes when another connection commits (PRAGMA data_version): a free "anything new?" check."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def table_counts(self) -> dict[str, int]:
        """Rows per table, for the dashboard's settings page."""
        tables = ("documents", "embeddings", "document_tags", "tag_corrections", "runs", "deliveries")
        return {t: int(self.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in tables}
