"""The store as each stage sees it: narrow Protocols over ``Store``, so a stage's signature says which tables it
touches (issue 27, "Typed to the edge").

A function that reads one table takes that table's mixin (``store: NamesTable``, ...) or its stage's repository;
one that reads several takes a Protocol here, named for the stage that reads it; only a function that needs the
whole database (the connection, a transaction across tables, its path, or one that hands the store to several
stages, as the composition root does) takes ``Store``. ``Store`` subclasses every mixin and satisfies every
Protocol, so callers pass the Store they hold. The methods are copies of the mixins' signatures: mypy checks
that ``Store`` satisfies each Protocol wherever one is passed (and below), tests/test_typed.py that the
copies match.

Protocols are combined by inheritance, so a function typed with a smaller one (``Mentions``,
``Adoptions``) can be called with any larger one that includes it; a table mixin cannot (it is a class, not a
Protocol), so a helper called from a Protocol-typed function takes a Protocol too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

from radar.store.contributions import ContributionRow, Mention, MentionRow, PaperText
from radar.store.frameworks import Adopted, FrameworkEntry, FrameworkMatch
from radar.store.models import UpsertCounts
from radar.store.names import NameRow
from radar.store.table import Database

if TYPE_CHECKING:
    from radar.store.db import Store


# -- pieces several stages share ---------------------------------------------------------------------------
class Mentions(Protocol):
    """contributions: the stored papers that name a method (the cards' spread, the report's evidence)."""

    def mentions_of(self, keys: Iterable[str]) -> dict[str, list[MentionRow]]: ...

    def papers_since(self, since: str = "") -> Iterator[PaperText]: ...


class Adoptions(Protocol):
    """framework_matches: the framework entries (commits, releases) that name each card's name."""

    def adoptions_of(self, keys: Iterable[str]) -> dict[str, list[Adopted]]: ...


# -- crawler and index -------------------------------------------------------------------------------------
class CrawlStore(Database, Protocol):
    """crawler.run: framework entries (upserted); its own documents and crawl_state through the database
    (crawler.documents.Documents, crawler.state.CrawlStates)."""

    def upsert_framework_entries(self, entries: Iterable[FrameworkEntry]) -> UpsertCounts: ...


# -- analysis ----------------------------------------------------------------------------------------------
class NamesStore(Database, Protocol):
    """analysis.names.stage: names (the computed table, cached by state); documents (the names' source) through the
    database (crawler.documents.Documents)."""

    def names(self, kind: str = "", since: str = "") -> list[NameRow]: ...

    def names_state(self) -> str: ...

    def replace_names(self, rows: Iterable[NameRow], state: str) -> int: ...


class ContributionsStore(Database, Protocol):
    """analysis.contributions.update: contributions (what is decided, written); documents (texts and hashes) through
    the database (crawler.documents.Documents)."""

    def papers_without_contribution(self, model: str) -> list[str]: ...

    def write_contributions(self, rows: Sequence[ContributionRow], mentions: Iterable[Mention]) -> int: ...


class CardsStore(Mentions, Database, Protocol):
    """analysis.contributions.cards: contributions (introductions, mentions); documents and their tags through the
    database (crawler.documents.Documents, index.tags_table.Tags)."""

    def first_paper_day(self) -> str: ...

    def introductions(self, since: str = "", until: str = "") -> list[ContributionRow]: ...

    def introductions_of(self, keys: Iterable[str]) -> list[ContributionRow]: ...

    def introductions_also_naming(self, text: str) -> list[ContributionRow]: ...

    def contributions_between(self, since: str, until: str, *, introducing: bool = True) -> list[ContributionRow]: ...


class FrameworksStore(CardsStore, Adoptions, Protocol):
    """analysis.contributions.frameworks: framework entries matched to the cards' names (contributions, the names
    table), the matches replaced whole when entries or contributions change."""

    def contribution_models(self) -> dict[str, int]: ...

    def mention_counts(self, min_papers: int = 1) -> dict[str, int]: ...

    def names(self, kind: str = "", since: str = "") -> list[NameRow]: ...

    def names_state(self) -> str: ...

    def framework_entries(self, source: str = "") -> Iterator[FrameworkEntry]: ...

    def framework_entries_state(self) -> str: ...

    def framework_matches_state(self) -> str: ...

    def replace_framework_matches(self, matches: Sequence[FrameworkMatch], state: str) -> int: ...


class MethodsStore(FrameworksStore, ContributionsStore, Protocol):
    """app's method-card steps: contributions brought up to date, then the cards, their ``changes`` rewritten (and
    the names table as last computed, for `radar methods --name`)."""

    def contributions(self, ids: Iterable[str]) -> dict[str, ContributionRow]: ...

    def set_rewritten_changes(self, lines: dict[str, str]) -> None: ...

    def names(self, kind: str = "", since: str = "") -> list[NameRow]: ...

    def contribution_models(self) -> dict[str, int]: ...

    def contributions_fingerprint(self) -> str: ...


# -- reports -----------------------------------------------------------------------------------------------
class ReportStore(Mentions, Adoptions, Database, Protocol):
    """reports (content, evidence, volume): contributions (evidence); documents and tags (scores, series) through the
    database (crawler.documents.Documents, index.tags_table.Tags)."""

    def contributions(self, ids: Iterable[str]) -> dict[str, ContributionRow]: ...

    def introductions_of(self, keys: Iterable[str]) -> list[ContributionRow]: ...


if TYPE_CHECKING:  # mypy: the Store satisfies every Protocol above (tests/test_typed.py checks it at run time)

    def _store_satisfies_every_protocol(store: Store) -> None:
        views: tuple[
            Mentions,
            Adoptions,
            CrawlStore,
            NamesStore,
            ContributionsStore,
            CardsStore,
            FrameworksStore,
            MethodsStore,
            ReportStore,
        ] = (
            store,
            store,
            store,
            store,
            store,
            store,
            store,
            store,
            store,
        )
        del views
