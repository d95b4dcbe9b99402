"""`radar index`: embed what is new or changed, keep the vector and keyword indexes in step.

Vectors are committed to the store chunk by chunk; the FAISS index is updated in memory and saved
every few chunks and at the end, stamped with the store's embeddings generation. A run killed
midway loses at most the chunk in flight: the next run embeds only what is still missing, and an
index whose stamp does not match the store is rebuilt from the stored vectors (seconds), so the
index never disagrees with the store.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec
import numpy as np
from msgspec.structs import force_setattr

from radar.crawler.documents import Documents
from radar.index.config import EmbeddingConfig, SearchConfig
from radar.index.embedder import Embedder, document_text, model_id_for, resolve_model_dir
from radar.index.embeddings import Embeddings
from radar.index.errors import IndexError_, NothingIndexed
from radar.index.keyword import KeywordIndex
from radar.index.postings import LAYOUT
from radar.index.prebuilt import PrebuiltVectors
from radar.index.vectors import VectorIndex, vectors_from_blobs
from radar.store.table import Database

CHUNK = 256
SAVE_EVERY_S = 30.0

# progress(done, total)
Progress = Callable[[int, int], None]
# embed(list of (doc_id, text)) -> iterator of (doc_ids, vectors) in any order
BatchEmbedder = Callable[[list[tuple[str, str]]], Iterator[tuple[list[str], np.ndarray]]]


@dataclass
class IndexReport:
    model_id: str
    embedded: int
    vectors: int
    kind: str
    seconds: float
    keyword_rebuilt: bool
    vector_rebuilt: bool
    reused: int = 0  # vectors taken from prebuilt files instead of embedded

    @property
    def docs_per_s(self) -> float:
        return self.embedded / self.seconds if self.seconds > 0 else 0.0


class IndexReportJson(msgspec.Struct, frozen=True):
    """`radar index --json` (which adds the device and engine): a view msgspec fills from an ``IndexReport``'s
    attributes (``of``), seconds to 2 places and the rate to 1."""

    model_id: str
    embedded: int
    vectors: int
    kind: str
    seconds: float
    docs_per_s: float
    keyword_rebuilt: bool
    vector_rebuilt: bool
    reused: int

    def __post_init__(self) -> None:
        force_setattr(self, "seconds", round(self.seconds, 2))
        force_setattr(self, "docs_per_s", round(self.docs_per_s, 1))

    @classmethod
    def of(cls, report: IndexReport) -> IndexReportJson:
        return msgspec.convert(report, cls, from_attributes=True)


@dataclass(frozen=True)
class IndexPaths:
    """Where the vector and keyword indexes live (the workspace names them; see store.workspace)."""

    vectors: Path
    keyword: Path


def load_vectors(
    paths: IndexPaths, store: Database, model_id: str, dim: int, cfg: SearchConfig, *, mmap: bool = False
) -> tuple[VectorIndex, bool]:
    """The saved index if it matches the store (``mmap``: memory-mapped, read-only, for a search); otherwise one
    rebuilt from the stored vectors."""
    saved = VectorIndex.load(paths.vectors, cfg.nprobe, mmap=mmap)
    generation = Embeddings(store).generation()
    if saved is not None and saved.manifest.model_id == model_id and saved.manifest.generation == generation:
        return saved, False
    ids, vectors = _all_vectors(store, model_id, dim)
    return VectorIndex.build(
        model_id, ids, vectors, exact_below=cfg.exact_below, nprobe=cfg.nprobe, generation=generation
    ), True


def load_keyword(paths: IndexPaths, store: Database, *, rebuild_if_stale: bool = True) -> tuple[KeywordIndex, bool]:
    fingerprint = Documents(store).fingerprint()
    saved = KeywordIndex.load(paths.keyword)
    if saved is not None and (saved.fingerprint == fingerprint or not rebuild_if_stale):
        return saved, False
    docs = [(d.id, d.title, d.abstract) for d in Documents(store).scan()]
    return KeywordIndex.build(docs, fingerprint), True


def local_batches(embedder: Embedder) -> BatchEmbedder:
    def run(items: list[tuple[str, str]]) -> Iterator[tuple[list[str], np.ndarray]]:
        for start in range(0, len(items), CHUNK):
            chunk = items[start : start + CHUNK]
            yield [i for i, _ in chunk], embedder.embed([t for _, t in chunk])

    return run


def run_index(
    paths: IndexPaths,
    store: Database,
    *,
    model_id: str,
    dim: int,
    batches: BatchEmbedder,
    search_cfg: SearchConfig,
    progress: Progress | None = None,
    prebuilt: Sequence[PrebuiltVectors] = (),
) -> IndexReport:
    """Embed the documents with no current vector from ``model_id`` (vectors of ``prebuilt`` files whose
    model id and content hash match are stored instead of embedding) and bring both indexes in step."""
    started = time.perf_counter()
    embeddings = Embeddings(store)
    pending = embeddings.pending(model_id)
    hashes = {p.doc_id: p.content_hash for p in pending}
    vi, rebuilt = load_vectors(paths, store, model_id, dim, search_cfg)
    reused = _reuse(store, vi, model_id, prebuilt, list(hashes.items()))
    items = [(p.doc_id, document_text(p.title, p.abstract)) for p in pending if p.doc_id not in reused]
    if progress:
        progress(0, len(items))
    done = 0
    last_save = time.monotonic()
    for doc_ids, vectors in batches(items):
        embeddings.save(
            (d, model_id, hashes[d], v.astype(np.float32).tobytes()) for d, v in zip(doc_ids, vectors, strict=True)
        )
        vec_ids = embeddings.vec_ids_of(doc_ids)
        vi.upsert(np.array([vec_ids[d] for d in doc_ids], dtype=np.int64), vectors)
        vi.manifest.generation = embeddings.generation()
        done += len(doc_ids)
        if progress:
            progress(done, len(items))
        if time.monotonic() - last_save > SAVE_EVERY_S:
            vi.save(paths.vectors)
            last_save = time.monotonic()
    # switch between exact and approximate when the size crosses the threshold
    wants_ivf = len(vi) >= search_cfg.exact_below
    if wants_ivf != (vi.manifest.kind == "ivf"):
        vi = VectorIndex.build(
            model_id,
            *_all_vectors(store, model_id, dim),
            exact_below=search_cfg.exact_below,
            nprobe=search_cfg.nprobe,
            generation=embeddings.generation(),
        )
    vi.save(paths.vectors)
    keyword, keyword_rebuilt = load_keyword(paths, store)
    if keyword_rebuilt or keyword.layout != LAYOUT:  # an index of an older layout is saved again, not rebuilt
        keyword.save(paths.keyword)
    return IndexReport(
        model_id, done, len(vi), vi.manifest.kind, time.perf_counter() - started, keyword_rebuilt, rebuilt, len(reused)
    )


def _reuse(
    store: Database,
    vi: VectorIndex,
    model_id: str,
    prebuilt: Sequence[PrebuiltVectors],
    wanted: list[tuple[str, str]],
) -> set[str]:
    """Store the prebuilt vectors of ``wanted`` (doc id, content hash) that match; returns their ids."""
    taken: set[str] = set()
    embeddings = Embeddings(store)
    for source in prebuilt:
        rest = [(d, h) for d, h in wanted if d not in taken]
        doc_ids, vectors = source.take(model_id, rest)
        hashes = dict(rest)
        for start in range(0, len(doc_ids), 4096):
            ids, vecs = doc_ids[start : start + 4096], vectors[start : start + 4096]
            embeddings.save((d, model_id, hashes[d], v.tobytes()) for d, v in zip(ids, vecs, strict=True))
            vec_ids = embeddings.vec_ids_of(ids)
            vi.upsert(np.array([vec_ids[d] for d in ids], dtype=np.int64), vecs)
            vi.manifest.generation = embeddings.generation()
        taken.update(doc_ids)
    return taken


def _all_vectors(store: Database, model_id: str, dim: int) -> tuple[np.ndarray, np.ndarray]:
    parts = [vectors_from_blobs(rows, dim) for rows in Embeddings(store).iter_vectors(model_id)]
    if not parts:
        return np.zeros(0, np.int64), np.zeros((0, dim), np.float32)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def stored_model(store: Database, cfg: EmbeddingConfig) -> tuple[str, str]:
    """(model id, "int8" or "fp") of the stored vectors that radar.toml's model produced; when both
    precisions are stored, the one with more vectors. Search, tagging and topics all read these.

    Raises NothingIndexed when nothing is embedded, IndexError_ when the vectors are another model's."""
    models = Embeddings(store).models()
    if not models:
        raise NothingIndexed("nothing is indexed yet; run `radar index` first")
    model_dir = resolve_model_dir(cfg.model)
    wanted = {model_id_for(cfg, model_dir, int8=True): "int8", model_id_for(cfg, model_dir, int8=False): "fp"}
    present = [m for m in wanted if m in models]
    if not present:
        raise IndexError_(
            f"the index was built with {', '.join(models)} but radar.toml now asks for "
            f"{' or '.join(wanted)}; run `radar index` to re-embed"
        )
    chosen = max(present, key=lambda m: models[m])
    return chosen, wanted[chosen]
