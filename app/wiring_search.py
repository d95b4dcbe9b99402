"""The search resolvers of ``wiring`` (which re-exports them), in a module of their own so that `radar search`,
`radar similar` and the dashboard's search import only the index stage: the rest of wiring brings in the tagger,
trends (SciPy), method cards and reproductions, about a second of start-up that a search does not use
(docs/benchmarks.md, command start-up)."""

from __future__ import annotations

from radar.app.context import Radar
from radar.index.embedder import Embedder, lazy_embedder, make_embedder
from radar.index.pipeline import IndexPaths, load_keyword, load_vectors, stored_model
from radar.index.prebuilt import PrebuiltVectors
from radar.index.search import Searcher
from radar.store import Store


def index_paths(radar: Radar) -> IndexPaths:
    return IndexPaths(vectors=radar.ws.vector_dir, keyword=radar.ws.keyword_dir)


def prebuilt_vectors(radar: Radar) -> list[PrebuiltVectors]:
    """The prebuilt-vectors files `radar import` placed in the workspace (index/prebuilt/*.npz), by name."""
    folder = radar.ws.prebuilt_dir
    return [PrebuiltVectors.open(p) for p in sorted(folder.glob("*.npz"))] if folder.is_dir() else []


def embedder(radar: Radar, *, device: str = "auto", precision: str | None = None, lazy: bool = False) -> Embedder:
    """The configured embedding model (ONNX on a CPU, torch on a GPU), exported once into the model cache;
    ``lazy``: loaded (and exported) on its first ``embed`` (`radar index` with nothing new to embed, a search)."""
    make = lazy_embedder if lazy else make_embedder
    return make(radar.settings.embedding, device=device, cache_dir=radar.ws.model_cache_dir, precision=precision)


def searcher(radar: Radar, store: Store, *, query_embedder: Embedder | None = None) -> Searcher:
    """Hybrid search over the stored vectors (FAISS) and the keyword index (BM25), on ``store`` (the whole Store:
    the searcher keeps it, and callers take ``searcher.store`` back as their connection).

    Queries are embedded like the stored vectors: same model and windowing, and the precision the index
    was built with (int8 on a CPU, float on a GPU machine)."""
    settings = radar.settings
    _, precision = stored_model(store, settings.embedding)
    emb = query_embedder or embedder(radar, device="cpu", precision=precision, lazy=True)  # `similar` embeds nothing
    vectors, _ = load_vectors(index_paths(radar), store, emb.model_id, emb.dim, settings.search, mmap=True)
    keyword, _ = load_keyword(index_paths(radar), store)
    return Searcher(store, emb, vectors, keyword, settings.search)


def open_searcher(radar: Radar) -> Searcher:
    """A hybrid searcher over the workspace on a connection of its own; the caller closes ``searcher.store``."""
    store = radar.store()
    try:
        return searcher(radar, store)
    except BaseException:
        store.close()
        raise
