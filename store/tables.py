"""The store as each stage sees it: narrow Protocols over ``Store``, so a stage's signature says which tables it
touches (issue 27, "Typed to the edge").

A function that reads one table takes that table's mixin (``store: RunsTable``, ``store: DocumentsTable``, ...);
one that reads several takes a Protocol here, named for the stage that reads it; only a function that needs the
whole database (the connection, a transaction across tables, its path, or one that hands the store to several
stages, as the composition root does) takes ``Store``. ``Store`` subclasses every mixin and satisfies every
Protocol, so callers pass the Store they hold. The methods are copies of the mixins' signatures: mypy checks
that ``Store`` satisfies each Protocol wherever one is passed (and below), tests/test_typed.py that the
copies match.

Protocols are combined by inheritance, so a function typed with a smaller one (``StoredVectors``) can be called
with any larger one that includes it; a table mixin cannot (it is a class, not a Protocol), so a helper called
from a Protocol-typed function takes a Protocol too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Protocol

from radar.store.documents import DayCount, DocumentHash, DocumentText
from radar.store.embeddings import PendingEmbedding, StoredVector
from radar.store.models import Document, UpsertCounts
from radar.store.table import Database
from radar.store.tags import Correction, EmbeddedDocument, TaggedDocument

if TYPE_CHECKING:
    from radar.store.db import Store


# -- pieces several stages share ---------------------------------------------------------------------------
class StoredVectors(Protocol):
    """embeddings: which models' vectors the store holds, and the current vectors of documents (search, tagging,
    topics and the digests pick the model and read vectors this way)."""

    def embedding_models(self) -> dict[str, int]: ...

    def current_vectors(self, ids: Iterable[str], model_id: str) -> dict[str, bytes]: ...


# -- crawler and index -------------------------------------------------------------------------------------
class CrawlStore(Database, Protocol):
    """crawler.run: documents (upserted); its own crawl_state and framework entries through the database
    (crawler.state.CrawlStates, crawler.frameworks.FrameworkEntries)."""

    def upsert_documents(self, docs: Iterable[Document]) -> UpsertCounts: ...


class IndexStore(Protocol):
    """index.pipeline: documents (their text, for BM25) and embeddings (pending, saved, read back)."""

    def fingerprint(self) -> str: ...

    def iter_documents(
        self, *, since: str = "", until: str = "", kind: str = "", batch: int = 5000
    ) -> Iterator[Document]: ...

    def embeddings_generation(self) -> int: ...

    def pending_embeddings(self, model_id: str) -> list[PendingEmbedding]: ...

    def save_embeddings(self, rows: Iterable[tuple[str, str, str, bytes]]) -> None: ...

    def vec_ids_of(self, doc_ids: Iterable[str]) -> dict[str, int]: ...

    def iter_vectors(self, model_id: str, batch: int = 20000) -> Iterator[list[StoredVector]]: ...


# -- analysis ----------------------------------------------------------------------------------------------
class TaggingStore(StoredVectors, Protocol):
    """analysis.tags: documents, embeddings (vectors and embedded samples) and tags (decisions, corrections)."""

    def documents(self, ids: Iterable[str]) -> dict[str, Document]: ...

    def get_document(self, doc_id: str) -> Document | None: ...

    def count_documents(self) -> int: ...

    def count_unembedded(self, model_id: str) -> int: ...

    def sample_embedded(self, model_id: str, n: int) -> list[EmbeddedDocument]: ...

    def tagging_candidates(
        self, model_id: str, tagger: str, *, everything: bool = False, batch: int = 4096
    ) -> Iterator[list[EmbeddedDocument]]: ...

    def save_tag_decisions(
        self, tagger: str, doc_ids: list[str], decisions: Iterable[tuple[str, str, float, str]]
    ) -> None: ...

    def tag_counts(self) -> dict[str, dict[str, int]]: ...

    def corrections(self) -> list[Correction]: ...

    def save_correction(self, doc_id: str, add: Iterable[str], remove: Iterable[str]) -> None: ...


class TrendsStore(StoredVectors, Protocol):
    """analysis.trends: documents (texts for the term table), tags (the tag series), embeddings (topics)."""

    def fingerprint(self) -> str: ...

    def count_documents(self) -> int: ...

    def text_rows(self, changed_since: str = "", batch: int = 5000) -> Iterator[DocumentText]: ...

    def content_hashes_since(self, changed_since: str) -> list[DocumentHash]: ...

    def tagged_in(self, since: str, until: str) -> list[TaggedDocument]: ...

    def tags_fingerprint(self) -> str: ...

    def embeddings_generation(self) -> int: ...


# The contributions, names and framework tables are read through their stages' repositories on the database
# (analysis.contributions.table.Contributions, analysis.names.table.Names, crawler.frameworks.FrameworkEntries,
# analysis.contributions.adoptions.Adoptions): a Protocol below that includes ``Database`` lists the other tables'
# methods its stage reads, and the stage builds the repositories it reads from it.
class NamesStore(Database, Protocol):
    """analysis.names.stage: documents (the names' source); the names (the computed table, cached by state) through
    the database (Names)."""

    def fingerprint(self) -> str: ...

    def iter_documents(
        self, *, since: str = "", until: str = "", kind: str = "", batch: int = 5000
    ) -> Iterator[Document]: ...


class ContributionsStore(Database, Protocol):
    """analysis.contributions.update: documents (texts and hashes); contributions (what is decided, written) through
    the database (Contributions)."""

    def documents(self, ids: Iterable[str]) -> dict[str, Document]: ...

    def content_hashes(self, ids: Iterable[str]) -> dict[str, str]: ...


class CardsStore(Database, Protocol):
    """analysis.contributions.cards: documents and their tags; contributions (introductions, mentions) through the
    database (Contributions)."""

    def documents(self, ids: Iterable[str]) -> dict[str, Document]: ...

    def get_document(self, doc_id: str) -> Document | None: ...

    def tags_of(self, ids: Iterable[str]) -> dict[str, list[str]]: ...


class FrameworksStore(CardsStore, Protocol):
    """analysis.contributions.frameworks: the documents' fingerprint; framework entries matched to the cards' names
    (contributions, the names table), the matches replaced whole when entries or contributions change, through the
    database (FrameworkEntries, Adoptions, Contributions, Names)."""

    def fingerprint(self) -> str: ...


class MethodsStore(FrameworksStore, ContributionsStore, Protocol):
    """app's method-card steps: contributions brought up to date, then the cards, their ``changes`` rewritten (and
    the names table as last computed, for `radar methods --name`), the tags' fingerprint."""

    def tags_fingerprint(self) -> str: ...


# -- reports -----------------------------------------------------------------------------------------------
class ReportStore(Database, Protocol):
    """reports (content, evidence, volume): documents, tags (scores, series); contributions and framework matches
    (evidence) through the database (Contributions, Adoptions)."""

    def documents(self, ids: Iterable[str]) -> dict[str, Document]: ...

    def iter_documents(
        self, *, since: str = "", until: str = "", kind: str = "", batch: int = 5000
    ) -> Iterator[Document]: ...

    def counts_by_day(self, since: str = "", until: str = "") -> list[DayCount]: ...

    def known_tags(self) -> list[str]: ...

    def tags_of(self, ids: Iterable[str]) -> dict[str, list[str]]: ...

    def tag_scores(self, ids: Iterable[str]) -> dict[str, dict[str, float]]: ...

    def tagged_in(self, since: str, until: str) -> list[TaggedDocument]: ...


class PeopleStore(StoredVectors, Database, Protocol):
    """reports.people (digests, alerts, libraries): documents, tags and embeddings; its own people tables and the
    deliveries through the database (reports.people.repository, reports.deliveries)."""

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

    def tag_scores(self, ids: Iterable[str]) -> dict[str, dict[str, float]]: ...

    def sample_embedded(self, model_id: str, n: int) -> list[EmbeddedDocument]: ...


if TYPE_CHECKING:  # mypy: the Store satisfies every Protocol above (tests/test_typed.py checks it at run time)

    def _store_satisfies_every_protocol(store: Store) -> None:
        views: tuple[
            StoredVectors,
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
        )
        del views
