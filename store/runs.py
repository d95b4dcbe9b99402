"""The runs table: reproduction runs and other background jobs (written by repro/, read by app/ and reports/)."""

from __future__ import annotations

import sqlite3
from typing import Any

import orjson

from radar.store.errors import StoreError
from radar.store.models import utc_now
from radar.store.table import Table

RUN_STATUSES = ("queued", "running", "done", "failed", "cancelled")


class RunsTable(Table):
    """Runs: create, update (status, progress, result), read one, list by kind/status."""

    def create_run(self, run_id: str, kind: str, params: dict[str, Any], status: str = "queued") -> None:
        self._check_status(status)
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO runs (id, kind, status, params, created_at) VALUES (?, ?, ?, ?, ?)",
                (run_id, kind, status, orjson.dumps(params).decode(), utc_now()),
            )

    def update_run(self, run_id: str, **changes: Any) -> None:
        """Set columns of a run; dict values (params, result) are stored as JSON."""
        allowed = {
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
        }
        bad = set(changes) - allowed
        if bad:
            raise StoreError(f"cannot set run field(s) {', '.join(sorted(bad))}; valid: {', '.join(sorted(allowed))}")
        if "status" in changes:
            self._check_status(changes["status"])
        values = [orjson.dumps(v).decode() if isinstance(v, dict | list) else v for v in changes.values()]
        sets = ", ".join(f"{k} = ?" for k in changes)
        with self.transaction() as conn:
            cur = conn.execute(f"UPDATE runs SET {sets} WHERE id = ?", [*values, run_id])
            if cur.rowcount == 0:
                raise StoreError(f"no run {run_id!r}; list runs with `radar repro list`")

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        return self._run_dict(row) if row else None

    def list_runs(self, kind: str = "", status: str = "") -> list[dict[str, Any]]:
        clauses, params = [], []
        if kind:
            clauses.append("kind = ?")
            params.append(kind)
        if status:
            clauses.append("status = ?")
            params.append(status)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self.conn.execute(f"SELECT * FROM runs {where} ORDER BY created_at DESC, id DESC", params)
        return [self._run_dict(r) for r in rows]

    @staticmethod
    def _run_dict(row: sqlite3.Row) -> dict[str, Any]:
        d = dict(row)
        d["params"] = orjson.loads(d["params"])
        d["result"] = orjson.loads(d["result"])
        return d

    @staticmethod
    def _check_status(status: str) -> None:
        if status not in RUN_STATUSES:
            raise StoreError(f"run status {status!r} is not one of {', '.join(RUN_STATUSES)}")
