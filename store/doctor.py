"""A damaged database, named as such, and what of it can be recovered (`radar doctor`).

Damage is what SQLite's ``PRAGMA integrity_check`` finds, and text that is not UTF-8 (SQLite stores what it is
given and does not check that: one flipped byte in a title stops every command that reads the row). Either is
one line naming `radar doctor`, never a traceback (``damaged``).

``salvage`` reads the damaged file read-only, table by table in rowid order, and keeps every row SQLite can still
read whose text decodes; past a page it cannot read it seeks to the next rowid it can. With a destination it
writes those rows into a new database built from Radar's own migrations (never from the damaged file's schema:
nothing from the file is executed, values are bound as parameters), refusing a destination that exists. The
damaged file is never written.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from urllib.parse import quote

from radar.store.db import Store, expected_schema, integrity
from radar.store.errors import StoreError, damage_message

# tables whose rows others reference go first, so a recovered row keeps its foreign keys
_FIRST = ("documents", "people", "runs")
_LAST = (1 << 63) - 1  # SQLite's largest rowid
MAX_REPEATS = 1_000  # rows read again in a row before the scan is taken to loop
MAX_RESTARTS = 10_000  # damaged spots in one table before the doctor gives the table up
_DAMAGE_WORDS = ("malformed", "not a database", "could not decode", "disk image", "encrypted")

# a table's row check (its columns, a row's values: still intact?), given by the stage that owns the table's records
RowCheck = Callable[[Sequence[str], Sequence[object]], bool]


def damaged(path: Path, exc: BaseException) -> StoreError | None:
    """The one-line error for ``exc`` when it comes from damage in the database at ``path``; None when the
    database is not damaged (then ``exc`` is something else and stays as it is)."""
    text = str(exc) if not isinstance(exc, UnicodeDecodeError) else ""
    if any(word in text.lower() for word in _DAMAGE_WORDS):
        return StoreError(damage_message(path, f"SQLite: {text[:160]}"))
    if not path.is_file():
        return None
    verdict = integrity(path)
    return None if verdict == "ok" else StoreError(damage_message(path, f"integrity_check: {verdict}"))


@dataclass
class TableSalvage:
    rows: int = 0  # read and decoded (and, when recovering, written)
    unreadable: int = 0  # spots SQLite could not read (a damaged page each), skipped
    not_utf8: int = 0  # rows with text that does not decode, skipped
    altered: int = 0  # documents whose text no longer matches their content hash (a flipped byte), skipped
    orphans: int = 0  # rows whose referenced row was lost, skipped (recovering only)
    error: str = ""  # the table could not be read at all


@dataclass
class Salvage:
    path: Path
    integrity: str
    tables: dict[str, TableSalvage] = field(default_factory=dict)
    written: Path | None = None

    @property
    def damaged(self) -> bool:
        return self.integrity != "ok" or any(t.unreadable or t.not_utf8 or t.error for t in self.tables.values())


def _open(path: Path) -> sqlite3.Connection:
    """A read-only connection that returns text as bytes (decoded, and checked, here); immutable when SQLite
    cannot use the WAL's shared memory beside the file."""
    uri = f"file:{quote(str(path))}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except (sqlite3.DatabaseError, UnicodeDecodeError):
        conn = sqlite3.connect(uri + "&immutable=1", uri=True)
    conn.text_factory = bytes
    return conn


@cache
def _declared(table: str) -> dict[str, str]:
    """{column: declared type} of ``table`` as Radar's migrations make it."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(expected_schema()[table][0])
        return {str(r[1]): str(r[2]).upper() for r in conn.execute(f'PRAGMA table_info("{table}")')}
    finally:
        conn.close()


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    """The columns of ``table`` that both Radar's schema and the file have (an older file has fewer)."""
    have = {r[1].decode() if isinstance(r[1], bytes) else r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')}
    return [c for c in _declared(table) if c in have]


def _first_after(conn: sqlite3.Connection, table: str, probe: int) -> tuple[bool, int | None]:
    """(whether SQLite could look, the first rowid past ``probe`` or None at the end)."""
    try:
        row = conn.execute(f'SELECT rowid FROM "{table}" WHERE rowid > ? ORDER BY rowid LIMIT 1', (probe,)).fetchone()
    except (sqlite3.DatabaseError, UnicodeDecodeError):
        return False, None
    return True, None if row is None else int(row[0])


def _next_rowid(conn: sqlite3.Connection, table: str, after: int) -> int | None:
    """Where to go on past a spot SQLite cannot read after ``after``: the step past it doubles until a lookup
    works, then halves back to the smallest one that works (so the healthy pages after a damaged one are kept).
    Always more than ``after``; None at the end of the table."""
    failed, step = 0, 1
    while after + step < _LAST:
        ok, found = _first_after(conn, table, after + step)
        if ok:
            break
        failed, step = step, step * 2
    else:
        return None
    while step - failed > 1:  # the smallest step that works, between one that failed and one that worked
        mid = (failed + step) // 2
        ok, at_mid = _first_after(conn, table, after + mid)
        if ok:
            step, found = mid, at_mid
        else:
            failed = mid
    # go on from the probe, not from the rowid found: a damaged cell can carry a rowid far from its neighbours
    return None if found is None else after + step


class _Loop(Exception):
    """The scan keeps returning rows it has read: a damaged page points back into the tree."""


def _rows(
    conn: sqlite3.Connection, table: str, columns: list[str], state: TableSalvage
) -> Iterator[tuple[object, ...]]:
    """The rows SQLite can read, in rowid order, with text decoded (BLOB columns stay bytes); what it cannot read
    or decode is counted in ``state``. Past a spot it cannot read, or a loop in the damaged tree (the same rows
    again and again), the scan goes on from a rowid further than any it went on from before, so it ends."""
    listed = ", ".join(f'"{c}"' for c in columns)
    text = [_declared(table)[c] != "BLOB" for c in columns]
    seen: set[int] = set()  # a damaged cell can carry a wrong rowid, out of order: each rowid is read once
    last = floor = -(1 << 63)  # the rowid read last; the furthest point the scan went on from
    for _ in range(MAX_RESTARTS):
        repeats = 0
        try:
            for row in conn.execute(f'SELECT rowid, {listed} FROM "{table}" WHERE rowid > ? ORDER BY rowid', (last,)):
                last = int(row[0])
                if last in seen:
                    repeats += 1
                    if repeats > MAX_REPEATS:
                        raise _Loop
                    continue
                repeats = 0
                seen.add(last)
                try:
                    yield tuple(
                        v.decode("utf-8") if is_text and isinstance(v, bytes) else v
                        for v, is_text in zip(row[1:], text, strict=True)
                    )
                except UnicodeDecodeError:
                    state.not_utf8 += 1
            return
        except (sqlite3.DatabaseError, UnicodeDecodeError, _Loop):
            state.unreadable += 1
            found = _next_rowid(conn, table, max(last, floor, max(seen, default=floor)))
            if found is None:
                return
            last = floor = found
    state.error = f"stopped after {MAX_RESTARTS:,} damaged spots"


def _intact(
    rows: Iterator[tuple[object, ...]], columns: list[str], state: TableSalvage, check: RowCheck
) -> Iterator[tuple[object, ...]]:
    """The rows ``check`` finds intact (documents: title, abstract, authors and categories still hash to their
    content_hash)."""
    for row in rows:
        if check(columns, row):
            yield row
        else:
            state.altered += 1


def salvage(path: Path, out: Path | None = None, checks: Mapping[str, RowCheck] | None = None) -> Salvage:
    """What of ``path`` can be read, table by table; with ``out``, those rows written into a new database there.
    ``checks``: per table, the rows to keep besides readable ones (the documents' content-hash check, which the
    crawler owns: ``crawler.documents.row_intact``)."""
    if out is not None and (out.exists() or Path(f"{out}-wal").exists()):
        raise StoreError(f"{out} exists; give another --out file (the doctor never overwrites a database)")
    result = Salvage(path, integrity(path))
    try:
        src = _open(path)
    except sqlite3.DatabaseError as exc:
        result.tables = {t: TableSalvage(error=str(exc)[:120]) for t in expected_schema()}
        return result
    dst = Store(out) if out is not None else None
    tables = [*_FIRST, *(t for t in expected_schema() if t not in _FIRST)]
    try:
        for table in tables:
            state = result.tables.setdefault(table, TableSalvage())
            try:
                columns = _columns(src, table)
            except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
                state.error = f"{type(exc).__name__}: {str(exc)[:120]}"
                continue
            if not columns:
                state.error = "no such table in the file"
                continue
            listed = ", ".join(f'"{c}"' for c in columns)
            insert = f'INSERT OR IGNORE INTO "{table}" ({listed}) VALUES ({", ".join("?" * len(columns))})'
            rows = _rows(src, table, columns, state)
            if checks and table in checks:
                rows = _intact(rows, columns, state, checks[table])
            if dst is None:
                state.rows = sum(1 for _ in rows)
                continue
            with dst.transaction() as conn:
                for row in rows:
                    try:
                        conn.execute(insert, row)
                        state.rows += 1
                    except sqlite3.IntegrityError:
                        state.orphans += 1
    finally:
        src.close()
        if dst is not None:
            dst.close()
    result.written = out
    return result
