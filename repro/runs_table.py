"""The runs table's repository: reproduction runs (and other background jobs) created, updated, read and listed as
``RunRecord``s. Built from a ``Store`` at the composition root (app/reproductions.py, app/steps.py) or by the
worker on the database it opens; repro code takes it, never the Store's methods. The table's DDL stays in the
store's schema (store/schema.py), so the workspace schema is the store's to migrate.

One conversion both ways: a row's JSON columns (params, result) are written and read with msgspec, and a row maps
onto ``RunRecord``'s fields by name.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import msgspec

from radar.repro.records import RUN_STATUSES, RunParams, RunRecord
from radar.store import Store, StoreError, utc_now

# the columns update_run may set: every column but the id, the kind and the creation time
SETTABLE = (
    "status",
    "params",
    "result",
    "progress",
    "pid",
    "error",
    "started_at",
    "finished_at",
    "heartbeat_at",
    "cancel_requested",
)
JSON_COLUMNS = ("params", "result")


class Runs:
    """Runs: create, update (status, progress, result), read one, list by kind/status."""

    def __init__(self, store: Store) -> None:  # the Store: its connection, transactions and path
        self._store = store

    @property
    def path(self) -> Path:
        """The database file (a worker process opens its own connection to it)."""
        return self._store.path

    def create_run(self, run_id: str, kind: str, params: RunParams, status: str = "queued") -> None:
        _check_status(status)
        with self._store.transaction() as conn:
            conn.execute(
                "INSERT INTO runs (id, kind, status, params, created_at) VALUES (?, ?, ?, ?, ?)",
                (run_id, kind, status, msgspec.json.encode(params).decode(), utc_now()),
            )

    def update_run(self, run_id: str, **changes: object) -> None:
        """Set columns of a run; params and result are stored as JSON."""
        bad = set(changes) - set(SETTABLE)
        if bad:
            raise StoreError(f"cannot set run field(s) {', '.join(sorted(bad))}; valid: {', '.join(sorted(SETTABLE))}")
        if "status" in changes:
            _check_status(str(changes["status"]))
        values = [msgspec.json.encode(v).decode() if k in JSON_COLUMNS else v for k, v in changes.items()]
        sets = ", ".join(f"{k} = ?" for k in changes)
        with self._store.transaction() as conn:
            cur = conn.execute(f"UPDATE runs SET {sets} WHERE id = ?", [*values, run_id])
            if cur.rowcount == 0:
                raise StoreError(f"no run {run_id!r}; list runs with `radar repro list`")

    def get_run(self, run_id: str) -> RunRecord | None:
        row = self._store.conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        return _record(row) if row else None

    def list_runs(self, kind: str = "", status: str = "") -> list[RunRecord]:
        """Runs, newest first."""
        clauses, params = [], []
        if kind:
            clauses.append("kind = ?")
            params.append(kind)
        if status:
            clauses.append("status = ?")
            params.append(status)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self._store.conn.execute(f"SELECT * FROM runs {where} ORDER BY created_at DESC, id DESC", params)
        return [_record(r) for r in rows]


def _record(row: sqlite3.Row) -> RunRecord:
    columns = {k: row[k] for k in row.keys()}  # noqa: SIM118  (sqlite3.Row iterates values)
    json = {k: msgspec.json.decode(columns[k]) for k in JSON_COLUMNS}
    return RunRecord(**columns | json | {"cancel_requested": bool(columns["cancel_requested"])})


def _check_status(status: str) -> None:
    if status not in RUN_STATUSES:
        raise StoreError(f"run status {status!r} is not one of {', '.join(RUN_STATUSES)}")
