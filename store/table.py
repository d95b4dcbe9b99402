"""What every per-table mixin of ``Store`` relies on: the connection, transactions and chunked IN queries.

``Store`` (store/db.py) owns them; the mixins only declare them so each table module type-checks alone.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any


class Table:
    """Base of the table mixins (``DocumentsTable``, ``RunsTable``, ...); ``Store`` composes them."""

    conn: sqlite3.Connection

    if TYPE_CHECKING:

        def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

        def _rows_for(self, sql: str, ids: Iterable[str], *params: Any) -> Iterator[sqlite3.Row]: ...
