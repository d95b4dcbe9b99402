"""The names stage's repository: named things of the corpus with their kind, introducing paper, code links, mention
series and adoption counts (``names``), replaced as a whole with the corpus state they were computed from (the
``names_state`` key of ``meta``). Written by stage.py (``stored_names``); read by app/, trends, the method cards and
the framework matcher.

The table's schema stays with the workspace's migrations (store/schema.py; on a read-only workspace the store keeps
it in memory, ``store.db.CACHE_TABLES``); its record and its reads and writes are here, on the store's connection
(``store.table.Database``), rows converted by msgspec (tuples stored as JSON arrays).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import get_origin, get_type_hints

import msgspec

from radar.store.models import utc_now
from radar.store.table import Repository, set_meta

_STATE_KEY = "names_state"


@dataclass(frozen=True, slots=True)
class NameRow:
    """A named thing of the corpus (documents counted up to ``as_of``): what ``find_names`` decides (``Name`` there)
    and the table stores, one record."""

    name: str
    kind: str
    kind_score: float  # the classifier's probability of ``kind`` (0 when decided by rules)
    aliases: tuple[str, ...]  # other spellings and variants (Qwen-3.5, Qwen3.5-9B, ...)
    introduced_by: str | None  # the earliest paper whose title or abstract introduces it
    first_seen: str  # YYYY-MM-DD of its first mention
    first_id: str  # the paper of its first mention
    count: int  # documents that mention it
    recent_count: int  # ... in the recent window (``recent_days`` up to as_of)
    baseline_mentions: int  # documents that compare against it ("outperforms X", "than X", ...)
    recent_baseline_mentions: int
    code: tuple[str, ...]  # GitHub/GitLab/Hugging Face links in the introducing paper's abstract
    series: tuple[tuple[str, int], ...]  # (YYYY-MM, documents) per month since its first mention


# a column per field, tuples stored as JSON arrays (each decoded to its field's type)
_FIELDS = tuple(f.name for f in fields(NameRow))
_COLUMNS = ", ".join(_FIELDS)
_ARRAYS = {f: msgspec.json.Decoder(t) for f, t in get_type_hints(NameRow).items() if get_origin(t) is tuple}


def _row(r: sqlite3.Row) -> NameRow:
    data = dict(zip(r.keys(), r, strict=True))
    for name, decoder in _ARRAYS.items():
        data[name] = decoder.decode(data[name])
    return msgspec.convert(data, NameRow)


def _values(row: NameRow) -> list[object]:
    """The row's column values, in ``_FIELDS`` order."""
    return [
        msgspec.json.encode(v).decode() if f in _ARRAYS else v
        for f, v in zip(_FIELDS, map(row.__getattribute__, _FIELDS), strict=True)
    ]


class Names(Repository):
    """Names on ``db``: replace all of them (with the state they were computed from), list them by kind and date."""

    def replace_names(self, rows: Iterable[NameRow], state: str) -> int:
        """Store ``rows`` in place of every stored name and remember ``state`` (what they were computed from)."""
        now = utc_now()
        values = [(*_values(r), now) for r in rows]
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM names")
            conn.executemany(
                f"INSERT INTO names ({_COLUMNS}, computed_at) VALUES ({', '.join('?' * (len(_FIELDS) + 1))})", values
            )
            set_meta(conn, _STATE_KEY, state)
        return len(values)

    def names_state(self) -> str:
        """The state the stored names were computed from ('' when none were)."""
        return self.meta_value(_STATE_KEY)

    def names(self, kind: str = "", since: str = "") -> list[NameRow]:
        """Stored names, most mentioned first; ``kind`` filters, ``since`` keeps names first seen on or after it."""
        clauses, params = [], []
        if kind:
            clauses.append("kind = ?")
            params.append(kind)
        if since:
            clauses.append("first_seen >= ?")
            params.append(since[:10])
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self.db.conn.execute(f"SELECT {_COLUMNS} FROM names {where} ORDER BY count DESC, name", params)
        return [_row(r) for r in rows]
