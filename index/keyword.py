"""BM25 over title + abstract (bm25s), persisted beside the vector index and rebuilt when the
store's documents change (bm25s has no incremental add; a rebuild of 100k documents takes
seconds, see benchmarks/).

Tokens (``terms``, the same for documents and queries): names with digits and symbols are whole tokens, so a query
for FP8, H100, INT4, KV-cache or Qwen2.5 matches them and not their pieces alone. A word joined by ``.``, ``-``,
``+``, ``/`` or ``_`` is indexed whole (``qwen2.5``, ``kv-cache``, ``llama-3.1-8b``), with its leading parts
(``llama-3.1``) and as its parts (``qwen2``, ``kv``, ``cache``: "KV cache" written apart still matches); a
precision format named inside a longer one counts as that format too (MXFP8, E4M3 and E5M2 are FP8 formats; MXFP4
and NVFP4 are FP4). Parts of one character and English stop-words are left out. ``names`` are the query's tokens
with a letter and a digit: the hybrid search ranks the documents that contain all of them higher (index/search.py).
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import tempfile
from pathlib import Path

import bm25s
import numpy as np

logging.getLogger("bm25s").setLevel(logging.WARNING)  # bm25s sets its logger to DEBUG on import

TOKENIZER = 2  # saved indexes of another tokenizer are rebuilt (1: bm25s's default word pattern)
_WORD = re.compile(r"[^\W_]+(?:[.\-+/_][^\W_]+)*")
_JOIN = re.compile(r"[\-+/_]")
FORMATS = {  # a precision format named inside a longer name: also that format
    "mxfp8": "fp8",
    "e4m3": "fp8",
    "e5m2": "fp8",
    "mxfp6": "fp6",
    "mxfp4": "fp4",
    "nvfp4": "fp4",
    "mxint8": "int8",
}


def _stop_words() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN) | {"e.g", "i.e", "et", "al"}


STOP = _stop_words()


def terms(text: str) -> list[str]:
    """The BM25 tokens of ``text`` (see the module docstring)."""
    out: list[str] = []
    for m in _WORD.finditer(text.lower()):
        word = m.group(0)
        groups = _JOIN.split(word)
        # the whole name and its leading parts: llama-3.1-8b, llama-3.1 (a query for Llama-3.1 matches it)
        pieces = [word[: j.start()] for j in _JOIN.finditer(word)][1:] + [word] if len(groups) > 1 else []
        for group in groups:
            if "." in group and group[0].isalpha():  # qwen2.5 whole and qwen2; a number (1.5x) stays whole
                pieces += [group, *group.split(".")]
            else:
                pieces.append(group)
        for piece in dict.fromkeys(pieces):
            if len(piece) > 1 and piece not in STOP:
                out.append(piece)
                if piece in FORMATS:
                    out.append(FORMATS[piece])
    return out


TITLE_WEIGHT = 2  # a title's tokens count this many times: what a paper names in its title is what it is about


def document_terms(title: str, abstract: str) -> list[str]:
    """A document's BM25 tokens: its title's ``TITLE_WEIGHT`` times, then its abstract's."""
    return terms(title) * TITLE_WEIGHT + terms(abstract)


def names(query: str) -> list[str]:
    """The query's names: whole tokens that start with a letter and hold a digit (fp8, h100, qwen2.5, gpt-4o), in
    order, once; not the pieces of a longer one (qwen2 of qwen2.5)."""
    found = [t for t in terms(query) if t[0].isalpha() and any(c.isdigit() for c in t)]
    longer = [t for t in found if re.search(r"[.\-+/_]", t)]
    inside = {p for t in longer for p in re.split(r"[.\-+/_]", t) if p != t} | {
        g for t in longer for g in _JOIN.split(t) if g != t
    }
    return list(dict.fromkeys(t for t in found if t not in inside))


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
        retriever = bm25s.BM25()
        if docs:
            retriever.index([document_terms(d[1], d[2]) or ["\x00"] for d in docs], show_progress=False)
        return cls(retriever, ids, fingerprint)

    def search(self, query: str, k: int, allowed: np.ndarray | None = None) -> list[tuple[str, float]]:
        """Top-k (doc_id, score); ``allowed`` is a boolean mask over this index's positions."""
        if not self.doc_ids:
            return []
        tokens = terms(query)
        if not tokens:  # only stop-words or punctuation
            return []
        mask = None
        if allowed is not None:
            if not allowed.any():
                return []
            mask = allowed.astype(np.float32)
        k = min(k, len(self.doc_ids) if mask is None else int(mask.sum()))
        results, scores = self.retriever.retrieve([tokens], k=k, show_progress=False, weight_mask=mask)
        return [(self.doc_ids[int(i)], float(s)) for i, s in zip(results[0], scores[0], strict=True) if s > 0]

    def containing(self, tokens: list[str]) -> set[str] | None:
        """Ids of the documents that hold every token (from the index's own postings); None if it cannot tell."""
        try:
            vocab, scores = self.retriever.vocab_dict, self.retriever.scores
            indptr, indices = scores["indptr"], scores["indices"]
        except (AttributeError, KeyError, TypeError):
            return None
        found: set[int] | None = None
        for token in tokens:
            col = vocab.get(token)
            docs = set() if col is None else set(indices[indptr[col] : indptr[col + 1]].tolist())
            found = docs if found is None else found & docs
        return {self.doc_ids[i] for i in found or ()}

    def save(self, folder: Path) -> None:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".bm25.", dir=folder.parent))
        try:
            self.retriever.save(str(tmp))
            meta = {"fingerprint": self.fingerprint, "ids": self.doc_ids, "tokenizer": TOKENIZER}
            (tmp / "doc_ids.json").write_text(json.dumps(meta))
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
            if data.get("tokenizer") != TOKENIZER:  # built with other tokens: the caller rebuilds it
                return None
            retriever = bm25s.BM25.load(str(folder))
        except (OSError, ValueError):
            return None
        return cls(retriever, data["ids"], data["fingerprint"])
