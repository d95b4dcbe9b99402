"""Framework sources: a code repository's public Atom feeds (its releases and its branch's commits, as GitHub and
GitLab publish them) as framework entries (pure: a feed parsed by the blog feeds' parser in, entries out); the feed
rules are the blog feeds' (crawler/feeds.py: markup reduced to plain text, http(s) links only, implausible dates
replaced, at most twice the entry cap parsed).

The entries' repository is here too (``FrameworkEntries``, on the store's connection: ``store.table.Database``): the
crawler writes them and is the lowest stage that does; the matcher (analysis/contributions/frameworks.py) reads them.
The table's schema stays with the workspace's migrations (store/schema.py)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields

import msgspec

from radar.crawler.config import FrameworkSource
from radar.crawler.feeds import ParsedFeed
from radar.store.models import UpsertCounts, utc_now
from radar.store.table import Repository, upsert_sql


@dataclass(frozen=True, slots=True)
class FrameworkEntry:
    """One commit or release of a framework, as its public Atom feed gave it (plain text; link http(s) only)."""

    id: str
    source: str
    framework: str
    area: str
    kind: str  # release | commit
    published: str  # YYYY-MM-DDTHH:MM:SSZ
    link: str
    title: str
    text: str


# a column per field, of the same name (and ``first_seen``, the first crawl that stored it)
_ENTRY_COLUMNS = tuple(f.name for f in fields(FrameworkEntry))
_UPSERT_SQL = upsert_sql("framework_entries", (*_ENTRY_COLUMNS, "first_seen"), "id", keep=("first_seen",))


@dataclass(frozen=True)
class ParsedEntries:
    entries: list[FrameworkEntry]
    skipped: int = 0
    warning: str = ""
    cut: int = 0  # entries past twice the cap, never parsed


def framework_entries(parsed: ParsedFeed, src: FrameworkSource, kind: str) -> ParsedEntries:
    """A releases or commits feed of ``src``, parsed as a blog feed (``feeds.parse_feed``), as entries of ``kind``
    (release | commit)."""
    entries = [
        FrameworkEntry(
            id="fw:" + d.id.removeprefix("post:"),
            source=src.name,
            framework=src.framework,
            area=src.area,
            kind=kind,
            published=d.published,
            link=d.url,
            title=d.title,
            text=d.abstract,
        )
        for d in parsed.documents
    ]
    return ParsedEntries(entries, parsed.skipped, parsed.warning, int(parsed.extra.get("cut", 0)))


class FrameworkEntries(Repository):
    """Framework entries on ``db`` (upserted per crawl), read by the matcher."""

    def upsert_framework_entries(self, entries: Iterable[FrameworkEntry]) -> UpsertCounts:
        """Insert new entries, update changed ones (a release note edited), count the rest; one transaction."""
        counts = UpsertCounts()
        rows = list({e.id: e for e in entries}.values())
        if not rows:
            return counts
        now = utc_now()
        with self.db.transaction() as conn:
            old = {
                r[0]: tuple(r[1:])
                for r in self.rows_for(
                    f"SELECT {', '.join(_ENTRY_COLUMNS)} FROM framework_entries WHERE id IN ({{marks}})",
                    [e.id for e in rows],
                )
            }
            for e in rows:
                values = tuple(getattr(e, c) for c in _ENTRY_COLUMNS)
                if e.id not in old:
                    counts.added += 1
                elif old[e.id] != values[1:]:
                    counts.updated += 1
                else:
                    counts.unchanged += 1
                    continue
                conn.execute(_UPSERT_SQL, (*values, now))
        return counts

    def framework_entries(self, source: str = "") -> Iterator[FrameworkEntry]:
        """Stored entries (of one source when given), oldest first."""
        clause, params = ("WHERE source = ? ", [source]) if source else ("", [])
        rows = self.db.conn.execute(
            f"SELECT {', '.join(_ENTRY_COLUMNS)} FROM framework_entries {clause}ORDER BY published, id", params
        )
        for r in rows:
            yield msgspec.convert(dict(r), FrameworkEntry)

    def framework_entries_state(self) -> str:
        """Changes whenever an entry is added or changed."""
        row = self.db.conn.execute(
            "SELECT COUNT(*), COALESCE(MAX(rowid), 0), COALESCE(MAX(first_seen), '') FROM framework_entries"
        ).fetchone()
        return f"{row[0]}:{row[1]}:{row[2]}"
