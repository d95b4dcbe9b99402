"""The kernel's generic table: a stage's repository (``Repository``) on a ``Database`` (a ``Store`` is one) reads a
query's rows as plain tuples that msgspec converts to records (array-like), and IN queries chunked; upserts, meta."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

import msgspec

R = TypeVar("R")


class Database(Protocol):
    conn: sqlite3.Connection

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...


def chunks(ids: Iterable[R], size: int = 900) -> Iterator[list[R]]:  # 900: SQLite caps a statement's parameters
    items = list(ids)
    yield from (items[start : start + size] for start in range(0, len(items), size))


def upsert_sql(table: str, columns: Sequence[str], key: str, keep: Sequence[str] = ()) -> str:
    """Insert ``columns``; where the ``key`` (unique columns: "a, b") is taken, update the others but ``keep``."""
    sets = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in (*key.split(", "), *keep))
    values = ",".join("?" * len(columns))
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({values}) ON CONFLICT({key}) DO UPDATE SET {sets}"


class Repository:
    def __init__(self, db: Database) -> None:
        self.db, self.conn = db, db.conn

    def tuples(self, sql: str, params: Iterable[Any] = ()) -> sqlite3.Cursor:
        cur = self.conn.cursor()
        cur.row_factory = None  # plain tuples: what msgspec converts to array-like Structs and dataclasses
        return cur.execute(sql, tuple(params))

    def records(self, record: type[R], sql: str, params: Iterable[Any] = ()) -> list[R]:
        return msgspec.convert(self.tuples(sql, params).fetchall(), list[record])  # type: ignore[valid-type]

    def rows_for(self, sql: str, ids: Iterable[Any], *params: Any) -> Iterator[sqlite3.Row]:  # ids at ``{marks}``
        for chunk in chunks(ids):
            yield from self.conn.execute(sql.format(marks=",".join("?" * len(chunk))), [*params, *chunk])

    def meta_value(self, key: str) -> str:  # '' when none was written (``set_meta``)
        return next((str(r[0]) for r in self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,))), "")


TAG_WRITES = "tags_writes"  # ``meta`` counters (``bump_counter``): every write of tags or corrections,
CONTRIBUTION_WRITES = "contributions_writes"  # of contributions, mentions or rewritten lines,
EMBEDDINGS_GENERATION = "embeddings_generation"  # of vectors, and every removal of documents


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:  # in the caller's transaction
    conn.execute(upsert_sql("meta", ("key", "value"), "key"), (key, value))


def bump_counter(conn: sqlite3.Connection, key: str) -> None:  # for fingerprints: SQLite reuses rowids
    sql = "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER)"
    conn.execute(sql + " + 1", (key,))
