"""Hybrid search: dense (FAISS) and keyword (BM25) candidates fused by reciprocal rank fusion,
with filters on date, tag, source, category and kind applied inside both retrievers. When the query names
something with a digit (FP8, H100, INT4, Qwen2.5: index.keyword.names), the candidates that contain every such
name get a third vote in the fusion, and those with a rare name in their title a fourth: a lead who types FP8
wants the FP8 papers first (measured on 25 lead-style queries, benchmarks/bench_index.py --lead)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from radar.index.config import SearchConfig
from radar.index.embedder import Embedder
from radar.index.errors import IndexError_
from radar.index.keyword import KeywordIndex, names, terms
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

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "title": self.title,
            "score": round(self.score, 6),
            "published": self.published[:10],
            "tags": self.tags,
            "url": self.url,
        }


RARE_NAME = 0.01  # a query's name in at most this share of the documents is a topic, not a tool every paper uses


def rrf(rankings: list[list[str]], k: int) -> dict[str, float]:
    """Reciprocal rank fusion (Cormack et al. 2009): sum over lists of 1 / (k + rank)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, doc_id in enumerate(ranking, start=1):
            scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (k + rank)
    return scores


class VectorSearch(Protocol):
    """The vector index seam (``VectorIndex``: FAISS flat or IVF): nearest ids, optionally among ``allowed``."""

    manifest: Manifest

    def search(
        self, queries: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]: ...


class Searcher:
    """Hybrid search: the embedder's query vector against a ``VectorSearch``, BM25 beside it, fused by RRF."""

    def __init__(
        self, store: Store, embedder: Embedder, vectors: VectorSearch, keyword: KeywordIndex, cfg: SearchConfig
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.vectors = vectors
        self.keyword = keyword
        self.cfg = cfg
        self._facet_cache: dict[str, np.ndarray] | None = None

    def _facets(self) -> dict[str, np.ndarray]:
        """Per keyword-index position: published, source, kind and vec_id, loaded once, lazily."""
        if self._facet_cache is None:
            n = len(self.keyword.doc_ids)
            published = np.full(n, "", dtype="U20")
            source = np.full(n, "", dtype=object)
            kind = np.full(n, "", dtype="U5")
            vec = np.full(n, -1, dtype=np.int64)
            position = self.keyword.position
            for doc_id, pub, src, knd, vec_id in self.store.facets():
                i = position.get(doc_id)
                if i is not None:
                    published[i], source[i], kind[i], vec[i] = pub, src, knd, vec_id
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
                known = set(self.store.known_tags())
                unknown = [t for t in filters.tags if t not in known]
                if unknown:
                    valid = ", ".join(sorted(known)) or "none yet: run `radar tag` first"
                    raise IndexError_(f"no document has tag {', '.join(unknown)}; tags in use: {valid}")
            ids = self.store.filter_documents(tags=filters.tags, categories=filters.categories)
            keep = np.zeros_like(mask)
            keep[[p for p in (self.keyword.position.get(d) for d in ids) if p is not None]] = True
            mask &= keep
        vec = facets["vec"][mask]
        return mask, vec[vec >= 0]

    def dense(self, query_vector: np.ndarray, k: int, allowed_vec: np.ndarray | None) -> list[str]:
        if allowed_vec is not None and len(allowed_vec) == 0:
            return []
        _, ids = self.vectors.search(query_vector[None, :], k, allowed_vec)
        found = [int(i) for i in ids[0] if i >= 0]
        mapping = self.store.doc_ids_for_vectors(found)
        return [mapping[i] for i in found if i in mapping]

    def search(self, query: str, k: int = 10, filters: Filters = Filters()) -> list[Hit]:
        query = query.strip()
        if not query:
            raise IndexError_('the query is empty; give some words, e.g. radar search "GRPO variance"')
        allowed_mask, allowed_vec = self._allowed(filters)
        n = max(self.cfg.candidates, k)
        dense = self.dense(self.embedder.embed([query])[0], n, allowed_vec)
        keyword = [d for d, _ in self.keyword.search(query, n, allowed_mask)]
        fused = rrf([dense, keyword], self.cfg.rrf_k)
        named = names(query)
        having = self.keyword.containing(named) if named else None
        if having:  # a name the query gives (FP8, H100, Qwen2.5): the candidates that hold it get a third vote
            fused = rrf([dense, keyword, *self._naming(fused, having, named)], self.cfg.rrf_k)
        ranked = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
        hits = self._hits(ranked)
        dense_rank = {d: r for r, d in enumerate(dense, 1)}
        keyword_rank = {d: r for r, d in enumerate(keyword, 1)}
        for hit in hits:
            hit.dense_rank, hit.keyword_rank = dense_rank.get(hit.id), keyword_rank.get(hit.id)
        return hits

    def _naming(self, fused: dict[str, float], having: set[str], named: list[str]) -> list[list[str]]:
        """Extra rankings for the fusion: the candidates that contain every name (those naming them in their title
        first); and, for a rare name (in at most ``RARE_NAME`` of the documents: FP8, INT4, not Qwen2.5, which
        hundreds of papers merely use), the candidates whose title names it, a fourth vote: a paper with FP8 in
        its title is about FP8."""
        order = [d for d, _ in sorted(fused.items(), key=lambda kv: (-kv[1], kv[0])) if d in having]
        docs = self.store.documents(order)
        in_title = [d for d in order if d in docs and set(named) <= set(terms(docs[d].title))]
        titled = set(in_title)
        lists = [in_title + [d for d in order if d not in titled]]
        if in_title and len(having) <= RARE_NAME * max(len(self.keyword.doc_ids), 1):
            lists.append(in_title)
        return lists

    def similar(self, doc_id: str, k: int = 10, filters: Filters = Filters()) -> list[Hit]:
        stored = self.store.vector_of(doc_id, self.vectors.manifest.model_id)
        if stored is None:
            if self.store.get_document(doc_id) is None:
                raise IndexError_(f"no document {doc_id!r} in this workspace; find ids with `radar search`")
            raise IndexError_(f"{doc_id} is not embedded yet; run `radar index` first")
        vec_id, blob = stored
        vector = np.frombuffer(blob, dtype=np.float32)
        _, allowed_vec = self._allowed(filters)
        scores, ids = self.vectors.search(vector[None, :], k + 1, allowed_vec)
        pairs = [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0 and i != vec_id][:k]
        mapping = self.store.doc_ids_for_vectors([i for i, _ in pairs])
        return self._hits([(mapping[i], s) for i, s in pairs if i in mapping])

    def _hits(self, ranked: list[tuple[str, float]]) -> list[Hit]:
        ids = [d for d, _ in ranked]
        docs = self.store.documents(ids)
        tags = self.store.tags_of(ids)
        return [
            Hit(d, docs[d].title, s, docs[d].published, docs[d].url, tags.get(d, []), docs[d].source)
            for d, s in ranked
            if d in docs
        ]
