"""BM25 over title + abstract, built by bm25s, persisted beside the vector index as memory-mapped arrays
(index/postings.py: opened without bm25s, SciPy or a Python object per document) and rebuilt when the store's
documents change (bm25s has no incremental add; a rebuild of 100k documents takes seconds, see benchmarks/).

Tokens (``terms``, the same for documents and queries): names with digits and symbols are whole tokens, so a query
for FP8, H100, INT4, KV-cache or Qwen2.5 matches them and not their pieces alone. A word joined by ``.``, ``-``,
``+``, ``/`` or ``_`` is indexed whole (``qwen2.5``, ``kv-cache``, ``llama-3.1-8b``), with its leading parts
(``llama-3.1``) and as its parts (``qwen2``, ``kv``, ``cache``: "KV cache" written apart still matches); a
precision format named inside a longer one counts as that format too (MXFP8, E4M3 and E5M2 are FP8 formats; MXFP4
and NVFP4 are FP4). Parts of one character and English stop-words are left out. ``names`` are the query's tokens
with a letter and a digit (index/rerank.py ranks the papers naming them in their title higher). The index also keeps
the corpus's acronyms and their long forms (index/acronyms.py), mined when it is built.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

import msgspec
import numpy as np

from radar.index.acronyms import mine
from radar.index.postings import LAYOUT, Postings, Strings

TOKENIZER = 4  # saved indexes of another format are rebuilt (1: bm25s's words; 2: no acronyms; 3: LaTeX in tokens)
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


# bm25s's English stop-words, as bm25s.stopwords.STOPWORDS_EN holds them (tests/test_search.py checks): importing any
# part of bm25s loads SciPy, which a search no longer needs
STOPWORDS_EN = (
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of",
    "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with",
)  # fmt: skip
STOP = frozenset(STOPWORDS_EN) | {"e.g", "i.e", "et", "al"}


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
_LATEXISH = re.compile(r"[\\$]")
_COMMAND_ARG = re.compile(r"\\[A-Za-z]+\*?\s*\{([^{}]*)\}")
_COMMAND = re.compile(r"\\[A-Za-z]+\*?")


def unlatex(text: str) -> str:
    """``text`` with its LaTeX markup's words joined back: ``$\\textbf{D}$ynamic s$\\textbf{A}$mpling`` ->
    ``Dynamic sAmpling`` (``\\cmd{x}`` -> x, innermost first; other commands, ``$`` and braces dropped). A word cut
    by markup is otherwise two tokens that match nothing. Unchanged when it has no markup. (The report's text goes
    through reports/text.py's pylatexenc conversion; tokens need only the words, and this is ~100x faster.)"""
    if not _LATEXISH.search(text):
        return text
    for _ in range(5):  # nested \cmd{\cmd{x}}
        text, n = _COMMAND_ARG.subn(lambda m: m.group(1), text)
        if not n:
            break
    text = _COMMAND.sub(" ", text)
    return text.replace("$", "").replace("{", "").replace("}", "")


def document_terms(title: str, abstract: str, title_weight: int = TITLE_WEIGHT, latex: bool = True) -> list[str]:
    """A document's BM25 tokens: its title's ``title_weight`` times, then its abstract's; with ``latex``, of the text
    without its LaTeX markup (``unlatex``)."""
    if latex:
        title, abstract = unlatex(title), unlatex(abstract)
    return terms(title) * title_weight + terms(abstract)


def names(query: str) -> list[str]:
    """The query's names: whole tokens that start with a letter and hold a digit (fp8, h100, qwen2.5, gpt-4o), in
    order, once; not the pieces of a longer one (qwen2 of qwen2.5)."""
    found = [t for t in terms(query) if t[0].isalpha() and any(c.isdigit() for c in t)]
    longer = [t for t in found if re.search(r"[.\-+/_]", t)]
    inside = {p for t in longer for p in re.split(r"[.\-+/_]", t) if p != t} | {
        g for t in longer for g in _JOIN.split(t) if g != t
    }
    return list(dict.fromkeys(t for t in found if t not in inside))


def _fsync_folder(folder: Path) -> None:
    """fsync every file in ``folder``, then the folder itself."""
    for path in folder.iterdir():
        with open(path, "rb") as fh:
            os.fsync(fh.fileno())
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class KeywordMeta(msgspec.Struct, frozen=True):
    """keyword.json: what the saved index reflects and how it was cut into tokens (decoded with its types
    checked: a file missing a key, as an older layout's, is not this index's)."""

    fingerprint: str  # the store's documents fingerprint when it was built
    tokenizer: int  # TOKENIZER
    layout: int  # index.postings.LAYOUT
    num_docs: int


class KeywordIndex:
    """BM25 over the documents' ``document_terms``: built by bm25s, searched from its arrays (index.postings), which
    a saved index memory-maps."""

    def __init__(
        self,
        postings: Postings,
        doc_ids: Strings,
        fingerprint: str,
        acronyms: dict[str, list[str]] | None = None,
        *,
        layout: int = LAYOUT,
    ) -> None:
        self.postings = postings
        self.doc_ids = doc_ids  # position -> document id (a Sequence; ``index_of`` for the way back)
        self.fingerprint = fingerprint
        self.acronyms = acronyms or {}  # short form -> long forms (index.acronyms.mine)
        self.layout = layout  # an older layout is read as well; `radar index` saves it again in this one

    @classmethod
    def build(
        cls, docs: list[tuple[str, str, str]], fingerprint: str, title_weight: int = TITLE_WEIGHT, latex: bool = True
    ) -> KeywordIndex:
        """docs: (id, title, abstract); ``title_weight`` and ``latex`` as ``document_terms`` (benchmarks vary them)."""
        import bm25s  # defers scipy: only building needs bm25s, a search reads the arrays it built

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # bm25s sets its logger to DEBUG on import

        ids = Strings.of(d[0] for d in docs)
        acronyms = mine(unlatex(f"{d[1]}. {d[2]}") for d in docs)
        if not docs:
            return cls(Postings.empty(), ids, fingerprint, acronyms)
        retriever = bm25s.BM25()
        tokens = [document_terms(d[1], d[2], title_weight, latex) or ["\x00"] for d in docs]
        retriever.index(tokens, show_progress=False)
        sc = retriever.scores
        postings = Postings.of_bm25s(sc["data"], sc["indices"], sc["indptr"], retriever.vocab_dict, sc["num_docs"])
        return cls(postings, ids, fingerprint, acronyms)

    def __len__(self) -> int:
        return len(self.doc_ids)

    def position(self, doc_id: str) -> int | None:
        """The index position of ``doc_id``, or None when the index does not hold it."""
        return self.doc_ids.index_of(doc_id)

    def doc_freq(self, token: str) -> int:
        """Documents holding ``token`` (from the index's postings; 0 if unknown)."""
        return self.postings.doc_freq(token)

    def positions(self, tokens: Iterable[str]) -> np.ndarray:
        """Index positions of the documents holding any of ``tokens`` (from the index's postings), sorted."""
        return self.postings.positions(tokens)

    def containing(self, tokens: list[str]) -> set[str]:
        """Ids of the documents that hold every token (from the index's own postings)."""
        found: np.ndarray | None = None
        for token in tokens:
            at = self.positions([token])
            found = at if found is None else np.intersect1d(found, at)
        return {self.doc_ids[int(i)] for i in (found if found is not None else ())}

    def search(self, query: str, k: int, allowed: np.ndarray | None = None) -> list[tuple[str, float]]:
        """Top-k (doc_id, score); ``allowed`` is a boolean mask over this index's positions."""
        if not len(self.doc_ids):
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
        found, scores = self.postings.top(tokens, k, mask)
        return [(self.doc_ids[int(i)], float(s)) for i, s in zip(found, scores, strict=True) if s > 0]

    def save(self, folder: Path) -> None:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".bm25.", dir=folder.parent))
        try:
            self.postings.save(tmp)
            self.doc_ids.save(tmp, "ids")
            (tmp / "acronyms.json").write_text(json.dumps(self.acronyms))
            meta = KeywordMeta(self.fingerprint, TOKENIZER, LAYOUT, len(self.doc_ids))
            (tmp / "keyword.json").write_bytes(msgspec.json.encode(meta))
            _fsync_folder(tmp)  # every file on disk before the rename: a crash leaves the old index or the new one
            old = folder.with_name(folder.name + ".old")
            if folder.exists():
                shutil.rmtree(old, ignore_errors=True)
                os.replace(folder, old)
            os.replace(tmp, folder)
            shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self.layout = LAYOUT

    @classmethod
    def load(cls, folder: Path) -> KeywordIndex | None:
        """The saved index (its arrays memory-mapped), or None when there is none, it is unreadable (or this user
        cannot read it) or its tokens are of another ``TOKENIZER`` (the caller rebuilds it). An index saved by bm25s
        itself (before ``LAYOUT``) is read from bm25s's files, more slowly: `radar index` saves it again."""
        try:
            if (folder / "keyword.json").is_file():
                meta = msgspec.json.decode((folder / "keyword.json").read_bytes(), type=KeywordMeta)
                if meta.tokenizer != TOKENIZER or meta.layout != LAYOUT:
                    return None
                postings = Postings.load(folder, meta.num_docs)
                ids, layout, fingerprint = Strings.load(folder, "ids"), LAYOUT, meta.fingerprint
            elif (folder / "doc_ids.json").is_file():
                old = json.loads((folder / "doc_ids.json").read_text())  # bm25s's own file
                if old.get("tokenizer") != TOKENIZER:  # built with other tokens
                    return None
                postings, ids, layout = Postings.from_bm25s_files(folder), Strings.of(old["ids"]), 0
                fingerprint = old["fingerprint"]
            else:
                return None
            acronyms = json.loads((folder / "acronyms.json").read_text())
        except (OSError, EOFError, ValueError, KeyError, TypeError):  # EOFError: an empty .npy
            return None
        if postings.num_docs != len(ids) or not postings.consistent() or not ids.consistent():
            return None
        return cls(postings, ids, fingerprint, acronyms, layout=layout)
