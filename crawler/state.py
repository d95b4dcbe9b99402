"""The crawler's repository: the crawl_state table (per source, and per framework feed "<source>#<kind>", the
incremental cursor, the HTTP validators and the last outcome; the dashboard's settings page shows it).

The table's schema stays with the workspace's migrations (store/schema.py); its record and its reads and writes
are here, on the store's connection (``store.table.Database``).
"""

from __future__ import annotations

import msgspec

from radar.store.table import Repository, upsert_sql


class CrawlState(msgspec.Struct, kw_only=True):
    """One source's crawl state (one row; the crawler updates it as pages are stored)."""

    source: str
    cursor: str = ""
    etag: str = ""
    last_modified: str = ""
    last_attempt: str = ""
    last_success: str = ""
    last_error: str = ""
    last_error_at: str = ""
    last_summary: str = ""


_COLUMNS = CrawlState.__struct_fields__
_UPSERT = upsert_sql("crawl_state", _COLUMNS, "source")


class CrawlStates(Repository):
    """Crawl state on ``db``: read one source's state (a fresh one when never crawled), save it."""

    def get(self, source: str) -> CrawlState:
        row = self.db.conn.execute("SELECT * FROM crawl_state WHERE source = ?", (source,)).fetchone()
        return msgspec.convert(dict(row), CrawlState) if row else CrawlState(source=source)

    def save(self, state: CrawlState) -> None:
        with self.db.transaction() as conn:
            conn.execute(_UPSERT, msgspec.structs.astuple(state))
