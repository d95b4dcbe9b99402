"""The deliveries table: one row per (report period, channel, recipient), so a report is sent once and a
failed send is retried. Written and read by reports/deliver."""

from __future__ import annotations

from dataclasses import dataclass

from radar.store.models import utc_now
from radar.store.table import Table


@dataclass(frozen=True, slots=True)
class Delivery:
    period: str  # the report period, e.g. 2025-W20
    channel: str  # email, webhook or folder
    recipient: str
    status: str  # sent or failed
    attempts: int
    last_error: str
    sent_at: str  # '' until sent
    updated_at: str


class DeliveriesTable(Table):
    """Deliveries: look up one, list them, count an attempt."""

    def delivery(self, period: str, channel: str, recipient: str) -> Delivery | None:
        row = self.conn.execute(
            "SELECT * FROM deliveries WHERE period = ? AND channel = ? AND recipient = ?", (period, channel, recipient)
        ).fetchone()
        return Delivery(**dict(row)) if row else None

    def deliveries(self, period: str = "", status: str = "") -> list[Delivery]:
        clauses, params = [], []
        for column, value in (("period", period), ("status", status)):
            if value:
                clauses.append(f"{column} = ?")
                params.append(value)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self.conn.execute(f"SELECT * FROM deliveries {where} ORDER BY period, channel, recipient", params)
        return [Delivery(**dict(r)) for r in rows]

    def record_delivery(self, period: str, channel: str, recipient: str, *, ok: bool, error: str = "") -> None:
        """Count one attempt; a sent delivery stays sent (its row is what prevents a second send)."""
        now = utc_now()
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO deliveries (period, channel, recipient, status, attempts, last_error, sent_at, "
                "updated_at) VALUES (?, ?, ?, ?, 1, ?, ?, ?) ON CONFLICT(period, channel, recipient) DO UPDATE SET "
                "status = CASE WHEN deliveries.status = 'sent' THEN 'sent' ELSE excluded.status END, "
                "attempts = deliveries.attempts + 1, last_error = excluded.last_error, "
                "sent_at = CASE WHEN deliveries.sent_at != '' THEN deliveries.sent_at ELSE excluded.sent_at END, "
                "updated_at = excluded.updated_at",
                (period, channel, recipient, "sent" if ok else "failed", error, now if ok else "", now),
            )
