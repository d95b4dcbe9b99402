"""The reports' repository: the deliveries table, one row per (report period, channel, recipient), so a report,
digest or alert is sent once and a failed send is retried. Written and read by reports/deliver.py and
reports/people/.

The table's schema stays with the workspace's migrations (store/schema.py); its record and its reads and writes
are here, on the store's connection (``store.table.Database``).
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from radar.store.models import utc_now
from radar.store.table import Repository


@dataclass(frozen=True, slots=True)
class Delivery:
    period: str  # the report period, e.g. 2025-W20 (or a digest's or alert's label)
    channel: str  # email, webhook or folder
    recipient: str
    status: str  # sent or failed
    attempts: int
    last_error: str
    sent_at: str  # '' until sent
    updated_at: str


class Deliveries(Repository):
    """Deliveries on ``db``: look up one, list them, count an attempt."""

    def get(self, period: str, channel: str, recipient: str) -> Delivery | None:
        row = self.db.conn.execute(
            "SELECT * FROM deliveries WHERE period = ? AND channel = ? AND recipient = ?", (period, channel, recipient)
        ).fetchone()
        return msgspec.convert(dict(row), Delivery) if row else None

    def find(self, period: str = "", status: str = "") -> list[Delivery]:
        clauses, params = [], []
        for column, value in (("period", period), ("status", status)):
            if value:
                clauses.append(f"{column} = ?")
                params.append(value)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self.db.conn.execute(f"SELECT * FROM deliveries {where} ORDER BY period, channel, recipient", params)
        return msgspec.convert([dict(r) for r in rows], list[Delivery])

    def record(self, period: str, channel: str, recipient: str, *, ok: bool, error: str = "") -> None:
        """Count one attempt; a sent delivery stays sent (its row is what prevents a second send)."""
        now = utc_now()
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO deliveries (period, channel, recipient, status, attempts, last_error, sent_at, "
                "updated_at) VALUES (?, ?, ?, ?, 1, ?, ?, ?) ON CONFLICT(period, channel, recipient) DO UPDATE SET "
                "status = CASE WHEN deliveries.status = 'sent' THEN 'sent' ELSE excluded.status END, "
                "attempts = deliveries.attempts + 1, last_error = excluded.last_error, "
                "sent_at = CASE WHEN deliveries.sent_at != '' THEN deliveries.sent_at ELSE excluded.sent_at END, "
                "updated_at = excluded.updated_at",
                (period, channel, recipient, "sent" if ok else "failed", error, now if ok else "", now),
            )
