"""The keyword index on disk, read without rebuilding a Python object per document or per word.

bm25s builds the index (``keyword.KeywordIndex.build``): one column of precomputed BM25 weights per word, as a
compressed sparse column matrix (``data``, ``indices``, ``indptr``). A search needs only those three arrays, the
word -> column table and the position -> document id table. Here all five are NumPy arrays saved as ``.npy`` files
and memory-mapped on load: opening an index reads a few small headers, whatever the corpus's size, where
``bm25s.BM25.load`` parses a JSON object of every word (112k at 20k papers) and bm25s's import loads SciPy. The
strings are UTF-8 bytes end to end in one array with their offsets (``Strings``), looked up by binary search over
their sorted order.

``Postings.top`` scores a query exactly as bm25s's ``retrieve`` does with its NumPy backend (the query's columns
summed with ``np.add.at`` in the query's order, the weight mask multiplied in, ``np.argpartition`` then a flipped
``np.argsort`` for the top k), so rankings and scores are bit for bit the same (tests/test_search.py compares them
with bm25s on random corpora).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

LAYOUT = 1  # the files below; a folder of another layout is read by keyword.KeywordIndex.load's older reader


def _load(path: Path, mmap: bool) -> np.ndarray:
    """The array in ``path``; with ``mmap`` a plain ndarray over the file's pages (np.memmap's Python-level indexing
    would cost more than the lookups it serves)."""
    found = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    return found.view(np.ndarray) if mmap else found


class Strings(Sequence[str]):
    """Strings by position (``strings[i]``) and positions by string (``index_of``), kept in three arrays: the
    UTF-8 bytes end to end, each string's start offset (and the end), and the positions in sorted byte order."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray, order: np.ndarray) -> None:
        self._blob, self._offsets, self._order = blob, offsets, order

    @classmethod
    def of(cls, strings: Iterable[str]) -> Strings:
        encoded = [s.encode("utf-8") for s in strings]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        order = np.array(sorted(range(len(encoded)), key=encoded.__getitem__), dtype=np.int64)
        return cls(np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets, order)

    def _bytes(self, i: int) -> bytes:
        return self._blob[int(self._offsets[i]) : int(self._offsets[i + 1])].tobytes()

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, i: int) -> str:  # type: ignore[override]  # positions only, no slices
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        return self._bytes(i % len(self)).decode("utf-8")

    def index_of(self, key: str) -> int | None:
        """The position of ``key``, or None (a binary search over the sorted order)."""
        want, lo, hi = key.encode("utf-8"), 0, len(self)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._bytes(int(self._order[mid])) < want:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(self) and self._bytes(int(self._order[lo])) == want:
            return int(self._order[lo])
        return None

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.index_of(key) is not None

    def as_list(self) -> list[str]:
        return [self._bytes(i).decode("utf-8") for i in range(len(self))]

    def consistent(self) -> bool:
        """The arrays agree in length and the offsets end within the bytes (O(1): a damaged folder is caught on
        load, not as an IndexError in a search)."""
        offsets = self._offsets
        return (
            self._blob.ndim == offsets.ndim == self._order.ndim == 1
            and len(offsets) >= 1
            and len(self._order) == len(offsets) - 1
            and int(offsets[0]) == 0
            and 0 <= int(offsets[-1]) <= len(self._blob)
        )

    def save(self, folder: Path, name: str) -> None:
        np.save(folder / f"{name}.bytes.npy", np.ascontiguousarray(self._blob))
        np.save(folder / f"{name}.offsets.npy", self._offsets)
        np.save(folder / f"{name}.order.npy", self._order)

    @classmethod
    def load(cls, folder: Path, name: str, *, mmap: bool = True) -> Strings:
        blob, offsets, order = (_load(folder / f"{name}.{part}.npy", mmap) for part in ("bytes", "offsets", "order"))
        return cls(blob, offsets, order)


@dataclass(frozen=True)
class Postings:
    """BM25 weights per word (compressed sparse columns, as bm25s builds them) and the word -> column table."""

    data: np.ndarray  # float32: the BM25 weight of each (word, document) pair, column by column
    indices: np.ndarray  # int32: the document position of each weight
    indptr: np.ndarray  # column c's pairs are [indptr[c], indptr[c + 1])
    vocab: Strings  # column -> word
    num_docs: int

    @classmethod
    def empty(cls) -> Postings:
        zero = np.zeros(1, dtype=np.int64)
        return cls(np.zeros(0, np.float32), np.zeros(0, np.int32), zero, Strings.of([]), 0)

    def columns(self, tokens: Iterable[str]) -> list[int]:
        """The columns of the tokens the index knows, in the tokens' order (repeats kept, as bm25s keeps them)."""
        return [c for c in (self.vocab.index_of(t) for t in tokens) if c is not None]

    def doc_freq(self, token: str) -> int:
        col = self.vocab.index_of(token)
        return 0 if col is None else int(self.indptr[col + 1] - self.indptr[col])

    def positions(self, tokens: Iterable[str]) -> np.ndarray:
        """Positions of the documents holding any of ``tokens``, sorted."""
        cols = self.columns(tokens)
        if not cols:
            return np.zeros(0, dtype=np.int64)
        held = np.zeros(self.num_docs, dtype=bool)  # a mark per document: no sort of a common word's long postings
        for c in cols:
            held[self.indices[self.indptr[c] : self.indptr[c + 1]]] = True
        return np.flatnonzero(held)

    def scores(self, tokens: Iterable[str], mask: np.ndarray | None = None) -> np.ndarray:
        """Every document's BM25 score for the query's tokens (bm25s's ``get_scores_from_ids``), times ``mask``."""
        cols = np.asarray(self.columns(tokens), dtype=np.int32)
        starts, ends = self.indptr[cols], self.indptr[cols + 1]
        out = np.zeros(self.num_docs, dtype=self.data.dtype)
        for start, end in zip(starts, ends, strict=True):
            np.add.at(out, self.indices[start:end], self.data[start:end])
        if mask is not None:
            out *= mask
        return out

    def top(self, tokens: list[str], k: int, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(positions, scores) of the ``k`` best, best first: bm25s's NumPy top-k, ties broken as it breaks them."""
        scores = self.scores(tokens, mask) if tokens else np.zeros(self.num_docs, dtype=self.data.dtype)
        part = np.argpartition(scores, -k)
        part = part[len(part) - k :]  # bm25s: .take(indices=range(-k, 0))
        part_scores = np.take(scores, part)
        order = np.flip(np.argsort(part_scores))
        return part[order], part_scores[order]

    def consistent(self) -> bool:
        """The arrays agree in length (O(1)): the last column ends where the weights do, one pointer per column."""
        indptr = self.indptr
        return (
            self.data.ndim == self.indices.ndim == indptr.ndim == 1
            and len(indptr) == len(self.vocab) + 1
            and int(indptr[0]) == 0
            and int(indptr[-1]) == len(self.data) == len(self.indices)
            and self.vocab.consistent()
        )

    def save(self, folder: Path) -> None:
        for name in ("data", "indices", "indptr"):
            np.save(folder / f"{name}.npy", np.ascontiguousarray(getattr(self, name)))
        self.vocab.save(folder, "vocab")

    @classmethod
    def load(cls, folder: Path, num_docs: int, *, mmap: bool = True) -> Postings:
        data, indices, indptr = (_load(folder / f"{name}.npy", mmap) for name in ("data", "indices", "indptr"))
        return cls(data, indices, indptr, Strings.load(folder, "vocab", mmap=mmap), num_docs)

    @classmethod
    def of_bm25s(
        cls, data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, vocab: dict[str, int], num_docs: int
    ) -> Postings:
        """bm25s's arrays and word -> column dict (whose "" word bm25s adds after the last column is left out)."""
        words = [""] * (len(indptr) - 1)
        for word, col in vocab.items():
            if col < len(words):
                words[col] = word
        return cls(data, indices, indptr, Strings.of(words), num_docs)

    @classmethod
    def from_bm25s_files(cls, folder: Path) -> Postings:
        """The arrays and vocabulary as ``bm25s.BM25.save`` wrote them (the layout before this one)."""
        params = json.loads((folder / "params.index.json").read_text(encoding="utf-8"))
        if params.get("method", "lucene") not in ("lucene", "robertson", "atire"):
            raise ValueError(f"bm25s method {params.get('method')!r} keeps a non-occurrence array; rebuild")
        vocab = json.loads((folder / "vocab.index.json").read_text(encoding="utf-8"))
        files = (folder / f"{name}.csc.index.npy" for name in ("data", "indices", "indptr"))
        data, indices, indptr = (_load(path, False) for path in files)
        return cls.of_bm25s(data, indices, indptr, vocab, int(params["num_docs"]))
