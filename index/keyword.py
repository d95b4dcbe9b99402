"""BM25 over title + abstract (bm25s), persisted beside the vector index and rebuilt when the
store's documents change (bm25s has no incremental add; a rebuild of 100k documents takes
seconds, see benchmarks/)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

import bm25s
import numpy as np

from radar.index.embedder import document_text

logging.getLogger("bm25s").setLevel(logging.WARNING)  # bm25s sets its logger to DEBUG on import


class KeywordIndex:
    def __init__(self, retriever: bm25s.BM25, doc_ids: list[str], fingerprint: str) -> None:
        self.retriever = retriever
        self.doc_ids = doc_ids
        self.position = {d: i for i, d in enumerate(doc_ids)}
        self.fingerprint = fingerprint

    @classmethod
    def build(cls, docs: list[tuple[str, str, str]], fingerprint: str) -> KeywordIndex:
        """docs: (id, title, abstract)."""
        ids = [d[0] for d in docs]
        texts = [document_text(d[1], d[2]) for d in docs]
        retriever = bm25s.BM25()
        if texts:
            tokens = bm25s.tokenize(texts, stopwords="en", show_progress=False)
            retriever.index(tokens, show_progress=False)
        return cls(retriever, ids, fingerprint)

    def search(self, query: str, k: int, allowed: np.ndarray | None = None) -> list[tuple[str, float]]:
        """Top-k (doc_id, score); ``allowed`` is a boolean mask over this index's positions."""
        if not self.doc_ids:
            return []
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:  # only stop-words or punctuation
            return []
        mask = None
        if allowed is not None:
            if not allowed.any():
                return []
            mask = allowed.astype(np.float32)
        k = min(k, len(self.doc_ids) if mask is None else int(mask.sum()))
        results, scores = self.retriever.retrieve(tokens, k=k, show_progress=False, weight_mask=mask)
        return [(self.doc_ids[int(i)], float(s)) for i, s in zip(results[0], scores[0], strict=True) if s > 0]

    def save(self, folder: Path) -> None:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".bm25.", dir=folder.parent))
        try:
            self.retriever.save(str(tmp))
            (tmp / "doc_ids.json").write_text(json.dumps({"fingerprint": self.fingerprint, "ids": self.doc_ids}))
            old = folder.with_name(folder.name + ".old")
            if folder.exists():
                shutil.rmtree(old, ignore_errors=True)
                os.replace(folder, old)
            os.replace(tmp, folder)
            shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    @classmethod
    def load(cls, folder: Path) -> KeywordIndex | None:
        meta = folder / "doc_ids.json"
        if not meta.is_file():
            return None
        try:
            data = json.loads(meta.read_text())
            retriever = bm25s.BM25.load(str(folder))
        except (OSError, ValueError):
            return None
        return cls(retriever, data["ids"], data["fingerprint"])
