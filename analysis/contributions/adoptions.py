"""The framework matches' repository: which method cards each framework entry names (``framework_matches``,
recomputed by frameworks.py whenever entries or contributions change, replaced whole with the state they were
computed from) and what a card shows of them (``Adopted``). Analysis writes the matches and is the lowest stage
that reads them (the entries themselves are the crawler's: crawler/frameworks.py).

The table's schema stays with the workspace's migrations (store/schema.py); its records and its reads and writes are
here, on the store's connection (``store.table.Database``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from radar.store.table import Repository, set_meta

_STATE_KEY = "framework_matches_state"


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


class Adoptions(Repository):
    """Framework matches on ``db``: replaced whole (with their state), read per card name and per framework."""

    def framework_matches_state(self) -> str:
        """The state the stored matches were computed from ('' when never)."""
        return self.meta_value(_STATE_KEY)

    def replace_framework_matches(self, matches: Sequence[FrameworkMatch], state: str) -> int:
        """Store ``matches`` in place of every stored match, and remember ``state``; one transaction."""
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM framework_matches")
            conn.executemany(
                "INSERT OR IGNORE INTO framework_matches (entry_id, key, name, intro_id, sense, via) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(m.entry_id, m.key, m.name, m.intro_id, m.sense, m.via) for m in matches],
            )
            set_meta(conn, _STATE_KEY, state)
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
        rows = self.db.conn.execute(
            "SELECT e.framework, COUNT(DISTINCT e.id), COUNT(DISTINCT m.entry_id) FROM framework_entries e "
            "LEFT JOIN framework_matches m ON m.entry_id = e.id GROUP BY e.framework ORDER BY e.framework"
        )
        return {r[0]: (int(r[1]), int(r[2])) for r in rows}
