"""The framework tables: what the frameworks a lab runs published (``framework_entries``: a commit or release of a
``type = "framework"`` source, as plain text) and which method cards each entry names (``framework_matches``,
recomputed by analysis/contributions/frameworks.py whenever entries or contributions change).

Entries are not documents: they are never embedded, tagged, searched or reported as papers or posts. An entry
that names no card is kept (a later card may match it) and shown nowhere."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from radar.store.models import UpsertCounts, utc_now
from radar.store.table import Table

ENTRY_KINDS = ("release", "commit")
_STATE_KEY = "framework_matches_state"
_ENTRY_COLUMNS = ("id", "source", "framework", "area", "kind", "published", "link", "title", "text")


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


@dataclass(frozen=True, slots=True)
class FrameworkMatch:
    """An entry naming a card: by an arXiv id of the introducing paper, the name, or the name's long form."""

    entry_id: str
    key: str  # spelling key of the card's name
    name: str
    intro_id: str  # the paper introducing the matched sense ('' when no stored paper does)
    sense: str  # the matched sense's key ('' when no paper spells the name out)
    via: str  # arxiv-id | name | expansion


@dataclass(frozen=True, slots=True)
class Adopted:
    """A framework took a method in: which framework, when, where to read it (a card's ``adopted``)."""

    framework: str
    date: str  # YYYY-MM-DD
    link: str
    kind: str  # release | commit
    text: str  # the commit subject or release name
    via: str
    key: str = ""
    intro_id: str = ""
    sense: str = ""


class FrameworksTable(Table):
    """Framework entries (upserted per crawl) and their matches to cards (replaced whole, with their state)."""

    def upsert_framework_entries(self, entries: Iterable[FrameworkEntry]) -> UpsertCounts:
        """Insert new entries, update changed ones (a release note edited), count the rest; one transaction."""
        counts = UpsertCounts()
        rows = list({e.id: e for e in entries}.values())
        if not rows:
            return counts
        now = utc_now()
        with self.transaction() as conn:
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
                conn.execute(
                    f"INSERT INTO framework_entries ({', '.join(_ENTRY_COLUMNS)}, first_seen) "
                    f"VALUES ({', '.join('?' * (len(_ENTRY_COLUMNS) + 1))}) ON CONFLICT(id) DO UPDATE SET "
                    + ", ".join(f"{c} = excluded.{c}" for c in _ENTRY_COLUMNS[1:]),
                    (*values, now),
                )
        return counts

    def framework_entries(self, source: str = "") -> Iterator[FrameworkEntry]:
        """Stored entries (of one source when given), oldest first."""
        clause, params = ("WHERE source = ? ", [source]) if source else ("", [])
        rows = self.conn.execute(
            f"SELECT {', '.join(_ENTRY_COLUMNS)} FROM framework_entries {clause}ORDER BY published, id", params
        )
        for r in rows:
            yield FrameworkEntry(*r)

    def framework_entries_state(self) -> str:
        """Changes whenever an entry is added or changed."""
        row = self.conn.execute(
            "SELECT COUNT(*), COALESCE(MAX(rowid), 0), COALESCE(MAX(first_seen), '') FROM framework_entries"
        ).fetchone()
        return f"{row[0]}:{row[1]}:{row[2]}"

    def framework_matches_state(self) -> str:
        """The state the stored matches were computed from ('' when never)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (_STATE_KEY,)).fetchone()
        return str(row[0]) if row else ""

    def replace_framework_matches(self, matches: Sequence[FrameworkMatch], state: str) -> int:
        """Store ``matches`` in place of every stored match, and remember ``state``; one transaction."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM framework_matches")
            conn.executemany(
                "INSERT OR IGNORE INTO framework_matches (entry_id, key, name, intro_id, sense, via) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(m.entry_id, m.key, m.name, m.intro_id, m.sense, m.via) for m in matches],
            )
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (_STATE_KEY, state),
            )
        return len(matches)

    def adoptions_of(self, keys: Iterable[str]) -> dict[str, list[Adopted]]:
        """The framework entries matched to each spelling key, oldest first (keys no entry names are absent)."""
        out: dict[str, list[Adopted]] = {}
        rows = self.rows_for(
            "SELECT m.key, e.framework, e.published, e.link, e.kind, e.title, m.via, m.intro_id, m.sense "
            "FROM framework_matches m JOIN framework_entries e ON e.id = m.entry_id "
            "WHERE m.key IN ({marks}) ORDER BY e.published, e.id",
            dict.fromkeys(keys),
        )
        for key, framework, published, link, kind, title, via, intro_id, sense in rows:
            out.setdefault(key, []).append(
                Adopted(framework, str(published)[:10], link, kind, title, via, key, intro_id, sense)
            )
        return out

    def framework_counts(self) -> dict[str, tuple[int, int]]:
        """Per framework: (entries stored, entries naming a card)."""
        rows = self.conn.execute(
            "SELECT e.framework, COUNT(DISTINCT e.id), COUNT(DISTINCT m.entry_id) FROM framework_entries e "
            "LEFT JOIN framework_matches m ON m.entry_id = e.id GROUP BY e.framework ORDER BY e.framework"
        )
        return {r[0]: (int(r[1]), int(r[2])) for r in rows}
