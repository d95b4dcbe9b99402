"""What every stage's repository relies on: the connection, transactions and chunked IN queries (``Database``;
``Store`` in store/db.py is one), the rows of a query as records (``Repository``), and the ``meta`` write counters
that fingerprints read."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

import msgspec

R = TypeVar("R")
CHUNK = 900  # ids per IN query: SQLite caps the number of parameters of a statement


class Database(Protocol):
    """What a stage's repository needs of the store (``Store`` is one): the connection, its transactions and chunked
    IN queries."""

    conn: sqlite3.Connection

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def rows_for(self, sql: str, ids: Iterable[str], *params: Any) -> Iterator[sqlite3.Row]: ...


def chunks(ids: Iterable[R], size: int = CHUNK) -> Iterator[list[R]]:
    """``ids`` in lists of at most ``size``, in order (an IN query's placeholders for each: ``marks``)."""
    items = list(ids)
    for start in range(0, len(items), size):
        yield items[start : start + size]


def marks(values: Sequence[object]) -> str:
    """The placeholders of an IN list of ``values``: ``?,?,?``."""
    return ",".join("?" * len(values))


def upsert_sql(table: str, columns: Sequence[str], *key: str, keep: Sequence[str] = ()) -> str:
    """An insert of ``columns`` that updates the row's other columns (but those in ``keep``) when its ``key`` (unique
    columns) is taken."""
    if not key:
        raise ValueError(f"upsert_sql({table!r}): no key; name the unique column(s) a taken row is found by")
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in key and c not in keep)
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks(columns)}) "
        f"ON CONFLICT({', '.join(key)}) DO UPDATE SET {updates}"
    )


_SET_META = upsert_sql("meta", ("key", "value"), "key")


class Repository:
    """A stage's repository on ``db``: its reads give plain tuples, which msgspec converts to records (an array-like
    Struct or a dataclass takes a row's columns in order)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @property
    def conn(self) -> sqlite3.Connection:
        return self.db.conn

    def tuples(self, sql: str, params: Iterable[Any] = ()) -> sqlite3.Cursor:
        """The cursor of ``sql`` over plain tuples (not ``sqlite3.Row``)."""
        cur = self.db.conn.cursor()
        cur.row_factory = None
        return cur.execute(sql, tuple(params))

    def meta_value(self, key: str) -> str:
        """The ``meta`` value of ``key`` ('' when none was written)."""
        row = self.db.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else ""

    def records(self, record: type[R], sql: str, params: Iterable[Any] = ()) -> list[R]:
        """The rows of ``sql`` as ``record``s."""
        return msgspec.convert(self.tuples(sql, params).fetchall(), list[record])  # type: ignore[valid-type]

    def batches(self, record: type[R], sql: str, params: Iterable[Any] = (), size: int = 5000) -> Iterator[list[R]]:
        """The rows of ``sql`` as lists of at most ``size`` ``record``s (the query runs once)."""
        cur = self.tuples(sql, params)
        while rows := cur.fetchmany(size):
            yield msgspec.convert(rows, list[record])  # type: ignore[valid-type]


# the ``meta`` counters of writes (``bump_counter``) that fingerprints read
TAG_WRITES = "tags_writes"  # every write of tags or corrections
CONTRIBUTION_WRITES = "contributions_writes"  # every write of contributions, mentions or rewritten lines
EMBEDDINGS_GENERATION = "embeddings_generation"  # every save of vectors and every removal of documents


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    """Write the ``meta`` value of ``key`` (in the caller's transaction): a state a stage's rows were computed from."""
    conn.execute(_SET_META, (key, value))


def bump_counter(conn: sqlite3.Connection, key: str) -> None:
    """Add one to the ``meta`` counter ``key`` (in the caller's transaction): the write it counts shows in a
    fingerprint even when it leaves the table's row count and last rowid as they were (SQLite reuses rowids)."""
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT(key) "
        "DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        (key,),
    )
