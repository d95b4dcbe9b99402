"""The one module that owns the SQLite database (WAL mode).

Writes happen in transactions: a crash leaves either the old or the new row, never half.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from functools import cache
from pathlib import Path
from urllib.parse import quote

from radar.store.errors import DiskError, StoreError, damage_message, disk_message, free_bytes
from radar.store.schema import LATEST_VERSION, MIGRATIONS
from radar.store.text import INVISIBLE, fold_lookalikes, strip_invisible

BUSY_TIMEOUT_S = 30.0  # how long a write waits for another process's write before "the workspace is busy"
# tables a reading command may write (caches): on a read-only workspace they live in memory for the process
CACHE_TABLES = ("names", "meta")


def _is_busy(exc: sqlite3.DatabaseError) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


def _on_read_only_mount(path: Path) -> bool:
    try:
        return bool(os.statvfs(path.parent).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def writable(path: Path) -> bool:
    """Whether the database file and its folder can be written (a read-only mount, or a folder without write
    permission, cannot: SQLite must create its -wal and -shm files beside the database)."""
    folder = path.parent
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return False
    except OSError:
        return True  # a missing folder: the connect below says so
    return os.access(folder, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


def integrity(path: Path) -> str:
    """``PRAGMA integrity_check`` on a read-only connection: "ok", or what it (or opening the file) found."""
    try:
        conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro&immutable=1", uri=True)
        try:
            rows = conn.execute("PRAGMA integrity_check(5)").fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return str(exc)
    except UnicodeDecodeError:  # SQLite's own message quotes the damaged bytes
        return "the file's schema is unreadable (SQLite's message is not UTF-8 text)"
    return " ".join("; ".join(str(r[0]) for r in rows).split())[:200] or "no answer"


def _has_invisible(*values: str | None) -> bool:
    return any(v is not None and INVISIBLE.search(v) is not None for v in values)


def register_functions(conn: sqlite3.Connection) -> None:
    """The SQL functions migrations use (store.text's character clean-up and lookalike folding)."""
    conn.create_function("radar_has_invisible", -1, _has_invisible, deterministic=True)
    conn.create_function(
        "radar_strip_invisible", 1, lambda s: s if s is None else strip_invisible(s), deterministic=True
    )
    conn.create_function(
        "radar_fold_lookalikes", 1, lambda s: s if s is None else fold_lookalikes(s), deterministic=True
    )


@cache
def expected_schema() -> dict[str, tuple[str, list[str]]]:
    """{table: (its CREATE TABLE statement, its CREATE INDEX statements)} after every migration."""
    conn = sqlite3.connect(":memory:")
    register_functions(conn)
    try:
        for _, sql in MIGRATIONS:
            for statement in sql.split(";"):
                if statement.strip():
                    conn.execute(statement)
        rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL").fetchall()
    finally:
        conn.close()
    tables: dict[str, tuple[str, list[str]]] = {name: (sql, []) for kind, name, _, sql in rows if kind == "table"}
    for kind, _, table, sql in rows:
        if kind == "index":
            tables[table][1].append(sql)
    return tables


def _temp(create: str) -> str:
    return create.replace("CREATE TABLE", "CREATE TEMP TABLE", 1)


class Store:
    """A connection to the workspace database. Use as a context manager or call close().

    The connection, transactions and migrations live here, and no table's methods: each stage reads its tables
    through its own repository on this connection (crawler.documents,
    crawler.state, crawler.frameworks, index.embeddings, index.tags_table, analysis.contributions.table and
    .adoptions, analysis.names.table, reports.deliveries, reports.people, repro.runs_table).

    On a read-only workspace (a read-only mount, a folder without write permission) the database is opened
    read-only: reading works, the cache tables (names, meta) are kept in memory for the process, and a
    write is one line saying so. A table missing from the database (dropped by hand or by another tool) is
    created again, empty, on open (``recreated`` names them). Opening fails with "damaged, restore it from a
    backup" only when ``PRAGMA integrity_check`` says so; a full disk or a permission problem is said as such.
    """

    def __init__(self, path: Path, *, busy_timeout_s: float = BUSY_TIMEOUT_S) -> None:
        self.path = path
        self.busy_timeout_s = busy_timeout_s
        self.read_only = not writable(path) and path.exists()
        self.recreated: list[str] = []
        try:
            if self.read_only:
                self._open_read_only()
            else:
                self.conn = sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
                self.conn.row_factory = sqlite3.Row
                register_functions(self.conn)
                self.conn.execute("PRAGMA journal_mode=WAL")
                self.conn.execute("PRAGMA synchronous=NORMAL")
                self.conn.execute("PRAGMA foreign_keys=ON")
                self._migrate()
            self._recreate_missing()
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # UnicodeDecodeError: a message quoting damage
            if isinstance(exc, sqlite3.DatabaseError) and _is_busy(exc):
                raise self._busy() from None
            raise self._cannot_open(exc) from None

    def _open_read_only(self) -> None:
        """mode=ro reads the WAL when its -shm exists; immutable=1 when nothing can be created beside the file."""
        uri = f"file:{quote(str(self.path))}?mode=ro"
        try:
            self.conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            self.conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        except sqlite3.OperationalError:
            self.conn = sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None, check_same_thread=False)
        self.conn.row_factory = sqlite3.Row
        if self.schema_version < LATEST_VERSION:
            raise StoreError(
                f"the database {self.path} is read-only and needs an upgrade (schema v{self.schema_version} -> "
                f"v{LATEST_VERSION}); run any radar command once where the workspace is writable"
            )
        for table in CACHE_TABLES:  # shadowed by in-memory copies (TEMP is searched first), filled from the file
            self.conn.execute(_temp(expected_schema()[table][0]))
            with suppress(sqlite3.OperationalError):  # the file may lack the table
                self.conn.execute(f"INSERT INTO temp.{table} SELECT * FROM main.{table}")

    def _cannot_open(self, exc: sqlite3.DatabaseError | UnicodeDecodeError) -> StoreError:
        """One line that says what is really wrong: a full disk, or damage (only when integrity_check says so)."""
        free = free_bytes(self.path)
        if "full" in str(exc) or (free is not None and free < 1 << 20):
            return DiskError(disk_message(errno.ENOSPC, self.path, "opening"), errno.ENOSPC, self.path)
        if not self.path.parent.is_dir():
            return StoreError(f"cannot open the database {self.path}: the folder {self.path.parent} does not exist")
        verdict = integrity(self.path) if self.path.exists() else "ok"
        if verdict == "ok":
            return StoreError(
                f"cannot open the database {self.path} ({exc}); the database itself is intact (integrity_check "
                "ok): check the folder's permissions and free space, then rerun"
            )
        return StoreError(damage_message(self.path, f"integrity_check: {verdict}"))

    def _recreate_missing(self) -> None:
        """Create tables (and their indexes) that an older migration made but the file lacks, empty."""
        have = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if self.read_only:
            have |= {r[0] for r in self.conn.execute("SELECT name FROM sqlite_temp_master WHERE type = 'table'")}
        missing = [t for t in expected_schema() if t not in have]
        if not missing:
            return
        with self.transaction() as conn:
            for table in missing:
                create, indexes = expected_schema()[table]
                if self.read_only:  # in memory for this process; the file stays as it is
                    conn.execute(_temp(create))
                    continue
                conn.execute(create)
                for index in indexes:
                    conn.execute(index)
        self.recreated = missing

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
            self.conn.execute("BEGIN" if self.read_only else "BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise self._busy() from None
            raise self._write_failed(exc) from None
        try:
            yield self.conn
        except BaseException as exc:
            with suppress(sqlite3.Error):  # a full disk may have rolled it back already
                self.conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.OperationalError) and not _is_busy(exc):
                raise self._write_failed(exc) from None
            raise
        try:
            self.conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            with suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
            if _is_busy(exc):
                raise self._busy() from None
            raise self._write_failed(exc) from None

    def _write_failed(self, exc: sqlite3.OperationalError) -> StoreError | sqlite3.OperationalError:
        """A write SQLite refused as one line: read-only, full disk, I/O error; other errors unchanged."""
        text = str(exc)
        if "readonly" in text:  # a read-only mount, or a database or folder this user may not write
            code = errno.EROFS if _on_read_only_mount(self.path) else errno.EACCES
            return DiskError(disk_message(code, self.path), code, self.path)
        free = free_bytes(self.path)
        if "full" in text or (("I/O" in text or "disk" in text) and free is not None and free < 1 << 20):
            return DiskError(disk_message(errno.ENOSPC, self.path), errno.ENOSPC, self.path)
        if "I/O" in text:
            return StoreError(
                f"a disk I/O error writing the database {self.path} ({text}); nothing was stored: check the "
                "disk (free space, `dmesg`) and rerun"
            )
        return exc

    def _busy(self) -> StoreError:
        return StoreError(
            f"the workspace is busy: another radar process has held the database {self.path} for "
            f"{self.busy_timeout_s:g} s; wait for it to finish (or stop it) and rerun"
        )

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
