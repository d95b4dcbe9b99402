"""The index stage: document embeddings, the vector and keyword indexes, and hybrid search.

Flow, one module per step (file names follow it):

    store documents --embedder--> vectors (committed to the store chunk by chunk)
                    --vectors-->  FAISS index (exact below ``exact_below`` vectors, IVF above)
                    --keyword-->  BM25 index over title + abstract
    query --search--> dense + keyword candidates, filtered, fused by reciprocal rank

- ``config``: ``EmbeddingConfig`` and ``SearchConfig``, the ``[embedding]`` and ``[search]`` tables of radar.toml,
  validated at construction (the app parses radar.toml; this stage only receives the dataclasses).
- ``embedder``: the ``Embedder`` protocol and ``make_embedder``: ONNX Runtime on CPU (int8 by default, exported
  once by ``onnx_export``) or sentence-transformers on CUDA; the packaged all-MiniLM-L6-v2 unless configured.
  The model id names the weights, windowing and precision, so vectors of two models never share an index.
- ``pipeline``: ``run_index`` embeds what is new or changed and keeps both indexes in step with the store;
  ``stored_model`` picks the stored vectors that search, tagging and topics read. Where the indexes live
  comes in as ``IndexPaths`` from the workspace module.
- ``ray_engine``: the same embedding through Ray Data (``--engine ray``) for backfills beyond one machine.
- ``vectors``, ``keyword``: the persisted FAISS and BM25 indexes, each saved atomically with what it reflects
  (model id and embeddings generation, or the store fingerprint), so a stale index is rebuilt, never used.
- ``search``: ``Searcher`` (hybrid search, ``similar``) with ``Filters`` on dates, tags, sources, categories and kinds.
- ``errors``: ``IndexError_`` and its subclasses, each message naming the fix.

Depends on ``radar.store`` only (import rules in pyproject.toml); ``radar.app`` wires it to the other stages.
"""
