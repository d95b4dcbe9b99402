"""Hybrid search: dense (FAISS) and keyword (BM25) candidates, re-ranked by what the query names (index/rerank.py:
the share of its words and phrases a paper holds, its names in the title, no sibling name instead) and fused by
reciprocal rank fusion, with filters on date, tag, source, category and kind applied inside both retrievers.
Measured on lead-style queries and known-item queries: benchmarks/bench_search.py."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import msgspec
import numpy as np
from msgspec.structs import force_setattr

from radar.crawler.documents import Document, Documents
from radar.index.config import SearchConfig
from radar.index.embedder import Embedder
from radar.index.embeddings import Embeddings
from radar.index.errors import IndexError_
from radar.index.keyword import KeywordIndex
from radar.index.rerank import Votes, analyse, rank
from radar.index.rerank import rrf as weighted_rrf
from radar.index.tags_table import Tags
from radar.index.vectors import Manifest
from radar.store import Store


@dataclass(frozen=True)
class Filters:
    since: str = ""  # YYYY-MM-DD, inclusive
    until: str = ""
    tags: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        return any((self.since, self.until, self.tags, self.sources, self.categories, self.kinds))

    def sql_bounds(self) -> tuple[str, str]:
        return (self.since + "T00:00:00Z" if self.since else "", self.until + "T23:59:59Z" if self.until else "")


@dataclass
class Hit:
    id: str
    title: str
    score: float
    published: str
    url: str
    tags: list[str] = field(default_factory=list)
    source: str = ""
    dense_rank: int | None = None
    keyword_rank: int | None = None


class HitJson(msgspec.Struct, frozen=True):
    """One result of `radar search --json`: a view msgspec fills from a ``Hit``'s attributes (``of``), the score to 6
    places and the day of ``published``; how it was retrieved is left out."""

    id: str
    title: str
    score: float
    published: str  # YYYY-MM-DD
    tags: list[str]
    url: str

    def __post_init__(self) -> None:
        force_setattr(self, "score", round(self.score, 6))
        force_setattr(self, "published", self.published[:10])

    @classmethod
    def of(cls, hits: list[Hit]) -> list[HitJson]:
        return msgspec.convert(hits, list[cls], from_attributes=True)  # type: ignore[valid-type]


def rrf(rankings: list[list[str]], k: int) -> dict[str, float]:
    """Reciprocal rank fusion (Cormack et al. 2009): sum over lists of 1 / (k + rank)."""
    return weighted_rrf([(ranking, 1.0) for ranking in rankings], k)


# similar(query vector, ids best first) -> a score per id: the similarity vote of index/rerank.py (off by default)
Similar = Callable[[np.ndarray, list[str]], Mapping[str, float]]


class VectorSearch(Protocol):
    """The vector index seam (``VectorIndex``: FAISS flat or IVF): nearest ids, optionally among ``allowed``."""

    manifest: Manifest

    def search(
        self, queries: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]: ...


class Searcher:
    """Hybrid search: the embedder's query vector against a ``VectorSearch``, BM25 beside it, fused by RRF."""

    def __init__(
        self,
        store: Store,  # the whole Store: callers take ``searcher.store`` back as their connection (and close it)
        embedder: Embedder,
        vectors: VectorSearch,
        keyword: KeywordIndex,
        cfg: SearchConfig,
        votes: Votes | None = None,
        similarity: Similar | None = None,
    ) -> None:
        self.store = store
        self.documents = Documents(store)
        self.embeddings = Embeddings(store)
        self.tags = Tags(store)
        self.similarity = similarity
        self.votes = votes or Votes()
        self.embedder = embedder
        self.vectors = vectors
        self.keyword = keyword
        self.cfg = cfg
        self._facet_cache: dict[str, np.ndarray] | None = None
        self._position_cache: dict[str, int] | None = None

    def _positions(self) -> dict[str, int]:
        """Document id -> keyword-index position for every document, made on the first filtered search (an
        unfiltered one looks up its ~150 candidates in the index's own sorted ids instead)."""
        if self._position_cache is None:
            self._position_cache = {d: i for i, d in enumerate(self.keyword.doc_ids.as_list())}
        return self._position_cache

    def _facets(self) -> dict[str, np.ndarray]:
        """Per keyword-index position: published, source, kind and vec_id, loaded once, lazily."""
        if self._facet_cache is None:
            n = len(self.keyword.doc_ids)
            published = np.full(n, "", dtype="U20")
            source = np.full(n, "", dtype=object)
            kind = np.full(n, "", dtype="U5")
            vec = np.full(n, -1, dtype=np.int64)
            position = self._positions()
            for f in self.embeddings.facets():
                i = position.get(f.doc_id)
                if i is not None:
                    published[i], source[i], kind[i], vec[i] = f.published, f.source, f.kind, f.vec_id
            self._facet_cache = {"published": published, "source": source, "kind": kind, "vec": vec}
        return self._facet_cache

    def _allowed(self, filters: Filters) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(mask over keyword positions, allowed vec_ids), or (None, None) without filters."""
        if not filters.active:
            return None, None
        facets = self._facets()
        mask = np.ones(len(self.keyword.doc_ids), dtype=bool)
        since, until = filters.sql_bounds()
        if since:
            mask &= facets["published"] >= since
        if until:
            mask &= facets["published"] <= until
        if filters.sources:
            mask &= np.isin(facets["source"], list(filters.sources))
        if filters.kinds:
            mask &= np.isin(facets["kind"], list(filters.kinds))
        if filters.tags or filters.categories:
            if filters.tags:
                known = set(self.tags.known())
                unknown = [t for t in filters.tags if t not in known]
                if unknown:
                    valid = ", ".join(sorted(known)) or "none yet: run `radar tag` first"
                    raise IndexError_(f"no document has tag {', '.join(unknown)}; tags in use: {valid}")
            ids = self.documents.matching(tags=filters.tags, categories=filters.categories)
            keep = np.zeros_like(mask)
            position = self._positions()
            keep[[p for p in (position.get(d) for d in ids) if p is not None]] = True
            mask &= keep
        vec = facets["vec"][mask]
        return mask, vec[vec >= 0]

    def dense(self, query_vector: np.ndarray, k: int, allowed_vec: np.ndarray | None) -> list[str]:
        if allowed_vec is not None and len(allowed_vec) == 0:
            return []
        _, ids = self.vectors.search(query_vector[None, :], k, allowed_vec)
        found = [int(i) for i in ids[0] if i >= 0]
        mapping = self.embeddings.doc_ids_for_vectors(found)
        return [mapping[i] for i in found if i in mapping]

    def search(self, query: str, k: int = 10, filters: Filters = Filters()) -> list[Hit]:
        query = query.strip()
        if not query:
            raise IndexError_('the query is empty; give some words, e.g. radar search "GRPO variance"')
        allowed_mask, allowed_vec = self._allowed(filters)
        n = max(self.cfg.candidates, k)
        q = analyse(query, self.keyword, self.votes.acronyms)
        query_vector = self.embedder.embed([q.dense_text])[0]
        dense = self.dense(query_vector, n, allowed_vec)
        keyword = [d for d, _ in self.keyword.search(query, n, allowed_mask)]
        candidates = list(dict.fromkeys(dense + keyword))
        docs = self.documents.of(candidates)
        texts = {d: (doc.title, doc.abstract) for d, doc in docs.items()}
        vote = self.similarity if self.votes.similar else None
        similar = (lambda top: vote(query_vector, top)) if vote is not None else None
        ranked = rank(q, dense, keyword, texts, self.keyword, self.cfg.rrf_k, self.votes, similar)
        hits = self._hits(ranked[:k], docs)
        dense_rank = {d: r for r, d in enumerate(dense, 1)}
        keyword_rank = {d: r for r, d in enumerate(keyword, 1)}
        for hit in hits:
            hit.dense_rank, hit.keyword_rank = dense_rank.get(hit.id), keyword_rank.get(hit.id)
        return hits

    def similar(self, doc_id: str, k: int = 10, filters: Filters = Filters()) -> list[Hit]:
        stored = self.embeddings.vector_of(doc_id, self.vectors.manifest.model_id)
        if stored is None:
            if self.documents.get(doc_id) is None:
                raise IndexError_(f"no document {doc_id!r} in this workspace; find ids with `radar search`")
            raise IndexError_(f"{doc_id} is not embedded yet; run `radar index` first")
        vec_id = stored.vec_id
        vector = np.frombuffer(stored.vector, dtype=np.float32)
        _, allowed_vec = self._allowed(filters)
        scores, ids = self.vectors.search(vector[None, :], k + 1, allowed_vec)
        pairs = [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0 and i != vec_id][:k]
        mapping = self.embeddings.doc_ids_for_vectors([i for i, _ in pairs])
        return self._hits([(mapping[i], s) for i, s in pairs if i in mapping])

    def _hits(self, ranked: list[tuple[str, float]], docs: dict[str, Document] | None = None) -> list[Hit]:
        ids = [d for d, _ in ranked]
        docs = self.documents.of(ids) if docs is None else docs
        tags = self.tags.of(ids)
        return [
            Hit(d, docs[d].title, s, docs[d].published, docs[d].url, tags.get(d, []), docs[d].source)
            for d, s in ranked
            if d in docs
        ]
