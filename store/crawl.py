"""The crawl_state table: per source, the incremental cursor, HTTP validators and the last outcome.
Written and read by crawler/, shown on the dashboard's settings page."""

from __future__ import annotations

from dataclasses import fields

from radar.store.models import CrawlState
from radar.store.table import Table


class CrawlStateTable(Table):
    """Crawl state: read one source's state (a fresh one when never crawled), save it."""

    def crawl_state(self, source: str) -> CrawlState:
        row = self.conn.execute("SELECT * FROM crawl_state WHERE source = ?", (source,)).fetchone()
        return CrawlState(**dict(row)) if row else CrawlState(source=source)

    def save_crawl_state(self, state: CrawlState) -> None:
        names = [f.name for f in fields(CrawlState)]
        values = [getattr(state, n) for n in names]
        sets = ", ".join(f"{n} = excluded.{n}" for n in names[1:])
        with self.transaction() as conn:
            conn.execute(
                f"INSERT INTO crawl_state ({', '.join(names)}) VALUES ({', '.join('?' * len(names))}) "
                f"ON CONFLICT(source) DO UPDATE SET {sets}",
                values,
            )
