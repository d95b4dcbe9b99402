"""The names table: named things of the corpus with their kind, introducing paper, code links, mention
series and adoption counts. Written by ``radar methods`` (from ``radar.analysis.names.find_names``), read
by app/ and, later, trends and reports. Replaced as a whole: the names of one corpus state."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

import orjson

from radar.store.models import utc_now
from radar.store.table import Table

_STATE_KEY = "names_state"
_COLUMNS = (
    "name, kind, kind_score, aliases, introduced_by, first_seen, first_id, count, recent_count, "
    "baseline_mentions, recent_baseline_mentions, code, series"
)


@dataclass(frozen=True, slots=True)
class NameRow:
    name: str
    kind: str
    kind_score: float
    aliases: tuple[str, ...]
    introduced_by: str | None
    first_seen: str  # YYYY-MM-DD
    first_id: str
    count: int
    recent_count: int
    baseline_mentions: int
    recent_baseline_mentions: int
    code: tuple[str, ...]
    series: tuple[tuple[str, int], ...]  # (YYYY-MM, documents)


def _row(r: sqlite3.Row) -> NameRow:
    return NameRow(
        name=r["name"],
        kind=r["kind"],
        kind_score=float(r["kind_score"]),
        aliases=tuple(orjson.loads(r["aliases"])),
        introduced_by=r["introduced_by"],
        first_seen=r["first_seen"],
        first_id=r["first_id"],
        count=int(r["count"]),
        recent_count=int(r["recent_count"]),
        baseline_mentions=int(r["baseline_mentions"]),
        recent_baseline_mentions=int(r["recent_baseline_mentions"]),
        code=tuple(orjson.loads(r["code"])),
        series=tuple((str(p), int(c)) for p, c in orjson.loads(r["series"])),
    )


class NamesTable(Table):
    """Names: replace all of them (with the state they were computed from), list them by kind and date."""

    def replace_names(self, rows: Iterable[NameRow], state: str) -> int:
        """Store ``rows`` in place of every stored name and remember ``state`` (what they were computed from)."""
        values = [
            (
                r.name,
                r.kind,
                r.kind_score,
                orjson.dumps(list(r.aliases)).decode(),
                r.introduced_by,
                r.first_seen,
                r.first_id,
                r.count,
                r.recent_count,
                r.baseline_mentions,
                r.recent_baseline_mentions,
                orjson.dumps(list(r.code)).decode(),
                orjson.dumps([list(p) for p in r.series]).decode(),
                utc_now(),
            )
            for r in rows
        ]
        with self.transaction() as conn:
            conn.execute("DELETE FROM names")
            conn.executemany(f"INSERT INTO names ({_COLUMNS}, computed_at) VALUES ({', '.join('?' * 14)})", values)
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (_STATE_KEY, state),
            )
        return len(values)

    def names_state(self) -> str:
        """The state the stored names were computed from ('' when none were)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (_STATE_KEY,)).fetchone()
        return str(row[0]) if row else ""

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
        rows = self.conn.execute(f"SELECT {_COLUMNS} FROM names {where} ORDER BY count DESC, name", params)
        return [_row(r) for r in rows]
