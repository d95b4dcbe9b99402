"""Hybrid search: dense (FAISS) and keyword (BM25) candidates fused by reciprocal rank fusion,
with filters on date, tag, source, category and kind applied inside both retrievers."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from index.config import SearchConfig
from index.embedder import Embedder
from index.errors import IndexError_
from index.keyword import KeywordIndex
from index.vectors import VectorIndex
from store import Store


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
        return {"id": self.id, "title": self.title, "score": round(self.score, 6), "published": self.published[:10],
                "tags": self.tags, "url": self.url}  # fmt: skip


def rrf(rankings: list[list[str]], k: int) -> dict[str, float]:
    """Reciprocal rank fusion (Cormack et al. 2009): sum over lists of 1 / (k + rank)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, doc_id in enumerate(ranking, start=1):
            scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (k + rank)
    return scores


class Searcher:
    def __init__(self, store: Store, embedder: Embedder, vectors: VectorIndex, keyword: KeywordIndex,
                 cfg: SearchConfig) -> None:  # fmt: skip
        self.store = store
        self.embedder = embedder
        self.vectors = vectors
        self.keyword = keyword
        self.cfg = cfg

    def _allowed(self, filters: Filters) -> tuple[list[str] | None, np.ndarray | None]:
        if not filters.active:
            return None, None
        if filters.tags:
            known = set(self.store.known_tags())
            unknown = [t for t in filters.tags if t not in known]
            if unknown:
                valid = ", ".join(sorted(known)) or "none yet: run `radar tag` first"
                raise IndexError_(f"no document has tag {', '.join(unknown)}; tags in use: {valid}")
        since, until = filters.sql_bounds()
        doc_ids = self.store.filter_documents(since=since, until=until, tags=filters.tags, sources=filters.sources,
                                              categories=filters.categories, kinds=filters.kinds)  # fmt: skip
        vec_ids = np.array(list(self.store.vec_ids_of(doc_ids).values()), dtype=np.int64)
        return doc_ids, vec_ids

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
            raise IndexError_("the query is empty; give some words, e.g. radar search \"GRPO variance\"")
        allowed_docs, allowed_vec = self._allowed(filters)
        n = max(self.cfg.candidates, k)
        dense = self.dense(self.embedder.embed([query])[0], n, allowed_vec)
        keyword = [d for d, _ in self.keyword.search(query, n, allowed_docs)]
        fused = rrf([dense, keyword], self.cfg.rrf_k)
        ranked = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
        hits = self._hits(ranked)
        dense_rank = {d: r for r, d in enumerate(dense, 1)}
        keyword_rank = {d: r for r, d in enumerate(keyword, 1)}
        for hit in hits:
            hit.dense_rank, hit.keyword_rank = dense_rank.get(hit.id), keyword_rank.get(hit.id)
        return hits

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
        return [Hit(d, docs[d].title, s, docs[d].published, docs[d].url, tags.get(d, []), docs[d].source)
                for d, s in ranked if d in docs]  # fmt: skip
