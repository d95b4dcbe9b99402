"""What every stage's repository relies on: the connection, transactions and chunked IN queries (``Database``;
``Store`` in store/db.py is one), and the ``meta`` write counters that fingerprints read."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from typing import Any, Protocol


class Database(Protocol):
    """What a stage's repository needs of the store (``Store`` is one): the connection, its transactions and chunked
    IN queries."""

    conn: sqlite3.Connection

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def rows_for(self, sql: str, ids: Iterable[str], *params: Any) -> Iterator[sqlite3.Row]: ...


# the ``meta`` counters of writes (``bump_counter``) that fingerprints read
TAG_WRITES = "tags_writes"  # every write of tags or corrections
CONTRIBUTION_WRITES = "contributions_writes"  # every write of contributions, mentions or rewritten lines


def bump_counter(conn: sqlite3.Connection, key: str) -> None:
    """Add one to the ``meta`` counter ``key`` (in the caller's transaction): the write it counts shows in a
    fingerprint even when it leaves the table's row count and last rowid as they were (SQLite reuses rowids)."""
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT(key) "
        "DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        (key,),
    )
