"""The store as each stage sees it: narrow Protocols over ``Store``, so a stage's signature says which tables it
touches (issue 27, "Typed to the edge").

A function that reads one table takes that table's mixin (``store: RunsTable``, ``store: DocumentsTable``, ...);
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
from radar.store.documents import DayCount, DocumentHash, DocumentText
from radar.store.frameworks import Adopted, FrameworkEntry, FrameworkMatch
from radar.store.models import Document, UpsertCounts
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
    """crawler.run: documents and framework entries (upserted); its own crawl_state through the database
    (crawler.state.CrawlStates)."""

    def upsert_documents(self, docs: Iterable[Document]) -> UpsertCounts: ...

    def upsert_framework_entries(self, entries: Iterable[FrameworkEntry]) -> UpsertCounts: ...


class IndexStore(Database, Protocol):
    """index.pipeline: documents (their text, for BM25); its own embeddings through the database
    (index.embeddings.Embeddings)."""

    def fingerprint(self) -> str: ...

    def iter_documents(
        self, *, since: str = "", until: str = "", kind: str = "", batch: int = 5000
    ) -> Iterator[Document]: ...


# -- analysis ----------------------------------------------------------------------------------------------
class TaggingStore(Database, Protocol):
    """analysis.tags: documents; embeddings and tags through the database (index.embeddings.Embeddings,
    index.tags_table.Tags)."""

    def documents(self, ids: Iterable[str]) -> dict[str, Document]: ...

    def get_document(self, doc_id: str) -> Document | None: ...

    def count_documents(self) -> int: ...


class TrendsStore(Database, Protocol):
    """analysis.trends: documents (texts for the term table); tags (the tag series) and embeddings (topics) through
    the database (index.tags_table.Tags, index.embeddings.Embeddings)."""

    def fingerprint(self) -> str: ...

    def count_documents(self) -> int: ...

    def text_rows(self, changed_since: str = "", batch: int = 5000) -> Iterator[DocumentText]: ...

    def content_hashes_since(self, changed_since: str) -> list[DocumentHash]: ...


class NamesStore(Protocol):
    """analysis.names.stage: documents (the names' source) and names (the computed table, cached by state)."""

    def fingerprint(self) -> str: ...

    def iter_documents(
        self, *, since: str = "", until: str = "", kind: str = "", batch: int = 5000
    ) -> Iterator[Document]: ...

    def names(self, kind: str = "", since: str = "") -> list[NameRow]: ...

    def names_state(self) -> str: ...

    def replace_names(self, rows: Iterable[NameRow], state: str) -> int: ...


class ContributionsStore(Protocol):
    """analysis.contributions.update: documents (texts and hashes) and contributions (what is decided, written)."""

    def documents(self, ids: Iterable[str]) -> dict[str, Document]: ...

    def content_hashes(self, ids: Iterable[str]) -> dict[str, str]: ...

    def papers_without_contribution(self, model: str) -> list[str]: ...

    def write_contributions(self, rows: Sequence[ContributionRow], mentions: Iterable[Mention]) -> int: ...


class CardsStore(Mentions, Database, Protocol):
    """analysis.contributions.cards: contributions (introductions, mentions), documents and their tags (through the
    database: index.tags_table.Tags)."""

    def documents(self, ids: Iterable[str]) -> dict[str, Document]: ...

    def get_document(self, doc_id: str) -> Document | None: ...

    def first_paper_day(self) -> str: ...

    def introductions(self, since: str = "", until: str = "") -> list[ContributionRow]: ...

    def introductions_of(self, keys: Iterable[str]) -> list[ContributionRow]: ...

    def introductions_also_naming(self, text: str) -> list[ContributionRow]: ...

    def contributions_between(self, since: str, until: str, *, introducing: bool = True) -> list[ContributionRow]: ...


class FrameworksStore(CardsStore, Adoptions, Protocol):
    """analysis.contributions.frameworks: framework entries matched to the cards' names (contributions, the names
    table), the matches replaced whole when entries or contributions change."""

    def fingerprint(self) -> str: ...

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
    """reports (content, evidence, volume): documents, contributions (evidence) and tags (scores, series; through the
    database: index.tags_table.Tags)."""

    def documents(self, ids: Iterable[str]) -> dict[str, Document]: ...

    def iter_documents(
        self, *, since: str = "", until: str = "", kind: str = "", batch: int = 5000
    ) -> Iterator[Document]: ...

    def counts_by_day(self, since: str = "", until: str = "") -> list[DayCount]: ...

    def contributions(self, ids: Iterable[str]) -> dict[str, ContributionRow]: ...

    def introductions_of(self, keys: Iterable[str]) -> list[ContributionRow]: ...


class PeopleStore(Database, Protocol):
    """reports.people (digests, alerts, libraries): documents; tags, embeddings, its own people tables and the
    deliveries through the database (index.tags_table, index.embeddings, reports.people.repository,
    reports.deliveries)."""

    def documents(self, ids: Iterable[str]) -> dict[str, Document]: ...

    def filter_documents(
        self,
        *,
        since: str = "",
        until: str = "",
        tags: Iterable[str] = (),
        sources: Iterable[str] = (),
        categories: Iterable[str] = (),
        kinds: Iterable[str] = (),
    ) -> list[str]: ...


if TYPE_CHECKING:  # mypy: the Store satisfies every Protocol above (tests/test_typed.py checks it at run time)

    def _store_satisfies_every_protocol(store: Store) -> None:
        views: tuple[
            Mentions,
            Adoptions,
            CrawlStore,
            IndexStore,
            TaggingStore,
            TrendsStore,
            NamesStore,
            ContributionsStore,
            CardsStore,
            FrameworksStore,
            MethodsStore,
            ReportStore,
            PeopleStore,
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
            store,
            store,
            store,
            store,
        )
        del views
