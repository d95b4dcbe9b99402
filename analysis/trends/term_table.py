"""The term table: which candidate terms each document contains, as a sparse 0/1 matrix over documents sorted by
the day they entered the record, with its vocabulary as packed strings and a hash index from key to column (the
term cache, ``cache.py``, builds it, keeps it on disk and brings it up to date)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date

import numpy as np
import scipy.sparse as sp

from radar.analysis.trends.terms import NAME_PREFIX
from radar.analysis.trends.tokenise import key_hash

EPOCH = date(1970, 1, 1).toordinal()


def day_number(iso: str) -> int:
    """Days since 1970-01-01 of a 'YYYY-MM-DD...' string."""
    return date.fromisoformat(iso[:10]).toordinal() - EPOCH


def day_date(day: int) -> date:
    return date.fromordinal(int(day) + EPOCH)


def pack(strings: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
    """The strings' UTF-8 bytes end to end, and their offsets (encoded twice rather than held as bytes objects: the
    vocabulary of a 100k-document table is 3 million keys)."""
    strings = strings if isinstance(strings, list) else list(strings)
    lengths = np.fromiter((len(s.encode()) for s in strings), dtype=np.int64, count=len(strings))
    offsets = np.zeros(len(strings) + 1, dtype=np.int64 if int(lengths.sum()) >= 2**31 else np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return np.frombuffer("".join(strings).encode(), dtype=np.uint8), offsets


class Strings:
    """A list of strings stored as one byte blob and offsets; decoded only when asked."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray) -> None:
        self.blob, self.offsets = blob, offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> str:
        return bytes(self.blob[self.offsets[i] : self.offsets[i + 1]]).decode()

    def all(self) -> list[str]:
        data = bytes(self.blob)
        off = self.offsets.tolist()
        return [data[off[i] : off[i + 1]].decode() for i in range(len(off) - 1)]

    def pick(self, indices: np.ndarray) -> list[str]:
        """The strings at ``indices``, decoded in one pass (faster than one __getitem__ each)."""
        data = bytes(self.blob)
        starts, ends = self.offsets[indices].tolist(), self.offsets[np.asarray(indices) + 1].tolist()
        return [data[a:b].decode() for a, b in zip(starts, ends, strict=True)]


@dataclass
class TermTable:
    """Rows = documents sorted by (day, id); columns = term keys."""

    ids: list[str]
    day: np.ndarray  # int32 days since 1970
    group: np.ndarray  # int32 index into groups
    groups: list[str]  # "source<TAB>primary category<TAB>other categories"
    matrix: sp.csr_matrix  # 0/1, documents x terms
    vocab: Strings
    surface_cols: np.ndarray  # sorted int32 columns whose readable spelling differs from the key
    surface_forms: Strings
    first_row: np.ndarray  # int32 per term: first row (earliest document) containing it, -1 if none
    hashes: np.ndarray  # per row: the document's content hash (bytes), to skip unchanged re-reads
    vocab_hashes: np.ndarray  # sorted uint64 hashes of the keys ...
    vocab_order: np.ndarray  # ... and the column of each
    fingerprint: str = ""
    max_changed: str = ""
    _index: VocabIndex | None = field(default=None, repr=False)

    stratum: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))  # set by stratify()
    strata: list[str] = field(default_factory=list)

    def stratify(self, major: int, upto_row: int) -> None:
        """Strata = source x primary category x which of the ``major`` most common categories (among
        rows before ``upto_row``) a document is cross-listed in. A crawl that adds a category or a
        query changes which strata are filled, not the content of a stratum."""
        parts = [g.split("\t") for g in self.groups]
        counts: dict[str, int] = {}
        for gid, n in enumerate(np.bincount(self.group[:upto_row], minlength=len(self.groups))):
            if n:
                src, primary, cats = parts[gid]
                for c in [primary, *cats.split()]:
                    counts[c] = counts.get(c, 0) + int(n)
        keep = set(sorted(counts, key=lambda c: (-counts[c], c))[:major])
        index: dict[str, int] = {}
        mapping = np.zeros(len(self.groups), dtype=np.int32)
        for gid, (src, primary, cats) in enumerate(parts):
            key = "|".join([src, primary, *[c for c in cats.split() if c in keep]])
            mapping[gid] = index.setdefault(key, len(index))
        self.strata = sorted(index, key=index.__getitem__)
        self.stratum = mapping[self.group]

    def term(self, col: int) -> str:
        return self.vocab[col]

    def readable(self, col: int) -> str:
        """The term as a person reads it: names without their marker, n-grams unfolded."""
        key = self.vocab[col]
        if key.startswith(NAME_PREFIX):
            return key[1:]
        at = int(np.searchsorted(self.surface_cols, col))
        if at < len(self.surface_cols) and self.surface_cols[at] == col:
            return self.surface_forms[at]
        return key

    def index(self) -> VocabIndex:
        if self._index is None:
            self._index = VocabIndex(self.vocab, self.vocab_hashes, self.vocab_order)
        return self._index

    def column(self, key: str) -> int | None:
        return self.index().get(key)

    def rows_until(self, day: int) -> int:
        """Number of rows published on or before ``day`` (rows are sorted by day)."""
        return int(np.searchsorted(self.day, day, side="right"))

    def row_range(self, first_day: int, last_day: int) -> tuple[int, int]:
        return int(np.searchsorted(self.day, first_day, side="left")), self.rows_until(last_day)


def first_rows(matrix: sp.csr_matrix) -> np.ndarray:
    csc = matrix.tocsc()
    csc.sort_indices()
    first = np.full(matrix.shape[1], -1, dtype=np.int32)
    nonempty = np.diff(csc.indptr) > 0
    first[nonempty] = csc.indices[csc.indptr[:-1][nonempty]]
    return first


class VocabIndex:
    """Key -> column without a 3-million-entry dict: sorted 64-bit hashes of the keys, verified
    against the stored key on a hit (so a hash collision cannot merge two terms)."""

    def __init__(self, vocab: Strings, hashes: np.ndarray, order: np.ndarray) -> None:
        self.vocab, self.hashes, self.order = vocab, hashes, order

    @classmethod
    def build(cls, vocab: Strings, hashes: np.ndarray) -> VocabIndex:
        """The index of ``vocab``, whose keys hash to ``hashes`` (``key_hash``, in column order)."""
        order = np.argsort(hashes, kind="stable").astype(np.int32)
        return cls(vocab, hashes[order], order)

    def get(self, key: str) -> int | None:
        h = np.uint64(key_hash(key))
        i = int(np.searchsorted(self.hashes, h))
        while i < len(self.hashes) and self.hashes[i] == h:
            col = int(self.order[i])
            if self.vocab[col] == key:
                return col
            i += 1
        return None
