"""The term cache: which candidate terms each document contains, counted once and kept on disk.

A document-by-term 0/1 matrix (CSR, rows sorted by publication day) plus per-row day and
group (source, categories), saved as one file written atomically under ``WORKSPACE/index/trends/``. It is keyed by
the store's fingerprint (count, max rowid, max changed_at): when documents are added or changed,
only the rows changed since the cached ``max changed_at`` are re-tokenised; a deletion (the count
does not add up) rebuilds everything. Nothing here knows about dates of interest: ``--as-of``
filters rows at query time, so the cache never leaks later documents into an earlier answer.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import numpy as np
import orjson
import scipy.sparse as sp

from analysis.trends import terms
from analysis.trends.terms import NAME_PREFIX, document_terms
from store import Workspace
from store.db import Store

CACHE_VERSION = 2
# the cache is only valid for the term rules that built it
RULES = hashlib.blake2b(Path(terms.__file__).read_bytes(), digest_size=8).hexdigest()
EPOCH = date(1970, 1, 1).toordinal()
Progress = Callable[[int, int], None]


def day_number(iso: str) -> int:
    """Days since 1970-01-01 of a 'YYYY-MM-DD...' string."""
    return date.fromisoformat(iso[:10]).toordinal() - EPOCH


def day_date(day: int) -> date:
    return date.fromordinal(int(day) + EPOCH)


def group_of(source: str, primary_category: str, categories: str) -> str:
    """Source, primary category and every category (sorted): what the crawl selected a document by."""
    cats = " ".join(sorted(set(orjson.loads(categories or "[]")) - {primary_category}))
    return f"{source}\t{primary_category or '-'}\t{cats}"


def _blob(strings: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
    encoded = [s.encode() for s in strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64 if sum(map(len, encoded)) >= 2**31 else np.int32)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


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
    fingerprint: str = ""
    max_changed: str = ""
    _index: dict[str, int] | None = field(default=None, repr=False)

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

    def surfaces(self) -> dict[str, str]:
        return {self.vocab[int(c)]: self.surface_forms[i] for i, c in enumerate(self.surface_cols)}

    def column(self, key: str) -> int | None:
        if self._index is None:
            self._index = {k: i for i, k in enumerate(self.vocab.all())}
        return self._index.get(key)

    def rows_until(self, day: int) -> int:
        """Number of rows published on or before ``day`` (rows are sorted by day)."""
        return int(np.searchsorted(self.day, day, side="right"))

    def row_range(self, first_day: int, last_day: int) -> tuple[int, int]:
        return int(np.searchsorted(self.day, first_day, side="left")), self.rows_until(last_day)


def _cache_path(ws: Workspace):  # type: ignore[no-untyped-def]
    return ws.index_dir / "trends" / "terms.npz"


def _save(ws: Workspace, table: TermTable) -> None:
    ids_blob, ids_off = _blob(table.ids)
    groups_blob, groups_off = _blob(table.groups)
    meta = {"version": CACHE_VERSION, "rules": RULES, "fingerprint": table.fingerprint,
            "max_changed": table.max_changed, "shape": list(table.matrix.shape)}  # fmt: skip
    buf = io.BytesIO()
    np.savez(buf, ids_blob=ids_blob, ids_off=ids_off, groups_blob=groups_blob, groups_off=groups_off,
             day=table.day, group=table.group, indptr=table.matrix.indptr, indices=table.matrix.indices,
             vocab_blob=table.vocab.blob, vocab_off=table.vocab.offsets, first_row=table.first_row,
             surface_cols=table.surface_cols, surface_blob=table.surface_forms.blob,
             surface_off=table.surface_forms.offsets,
             meta=np.frombuffer(orjson.dumps(meta), dtype=np.uint8))  # fmt: skip
    ws.write_bytes_atomic(_cache_path(ws), buf.getvalue())


def _load(ws: Workspace) -> TermTable | None:
    path = _cache_path(ws)
    if not path.is_file():
        return None
    try:
        with np.load(path) as z:
            meta = orjson.loads(bytes(z["meta"]))
            if meta.get("version") != CACHE_VERSION or meta.get("rules") != RULES:
                return None
            indices = z["indices"]
            matrix = sp.csr_matrix((np.ones(len(indices), dtype=np.float32), indices, z["indptr"]),
                                   shape=tuple(meta["shape"]))  # fmt: skip
            return TermTable(
                ids=Strings(z["ids_blob"], z["ids_off"]).all(), day=z["day"], group=z["group"],
                groups=Strings(z["groups_blob"], z["groups_off"]).all(), matrix=matrix,
                vocab=Strings(z["vocab_blob"], z["vocab_off"]), surface_cols=z["surface_cols"],
                surface_forms=Strings(z["surface_blob"], z["surface_off"]),
                first_row=z["first_row"], fingerprint=meta["fingerprint"], max_changed=meta["max_changed"],
            )  # fmt: skip
    except (OSError, ValueError, KeyError, orjson.JSONDecodeError):
        return None  # unreadable or from another version: rebuilt from the store


def _first_rows(matrix: sp.csr_matrix) -> np.ndarray:
    csc = matrix.tocsc()
    csc.sort_indices()
    first = np.full(matrix.shape[1], -1, dtype=np.int32)
    nonempty = np.diff(csc.indptr) > 0
    first[nonempty] = csc.indices[csc.indptr[:-1][nonempty]]
    return first


def _tokenise(rows: list[tuple[str, ...]], vocab: dict[str, int], surfaces: dict[str, str],
              progress: Progress | None, done: int, total: int) -> tuple[list[list[int]], list[str]]:  # fmt: skip
    """Term columns of each row (new keys are appended to ``vocab``) and the max changed_at seen."""
    columns: list[list[int]] = []
    changed: list[str] = []
    for n, (_id, _pub, _src, _cat, _cats, title, abstract, changed_at) in enumerate(rows, 1):
        cols = []
        for key in document_terms(title, abstract, surfaces):
            col = vocab.get(key)
            if col is None:
                col = vocab[key] = len(vocab)
            cols.append(col)
        cols.sort()
        columns.append(cols)
        changed.append(changed_at)
        if progress and n % 2000 == 0:
            progress(done + n, total)
    return columns, changed


def _fingerprint(store: Store) -> str:
    """The store's fingerprint (count, max rowid, max changed_at) plus a hash of the documents changed
    in that last second: an edit within the same second as the previous change still shows."""
    base = store.fingerprint()
    last = base.split(":", 2)[2]
    h = hashlib.blake2b(digest_size=8)
    for row in sorted(store.text_rows(last)) if last else ():
        h.update("\x1f".join(map(str, row)).encode())
    return f"{base}:{h.hexdigest()}"


def term_table(ws: Workspace, store: Store, progress: Progress | None = None) -> TermTable:
    """The cached table, brought up to date with the store (incrementally when it can be)."""
    fingerprint = _fingerprint(store)
    cached = _load(ws)
    if cached is not None and cached.fingerprint == fingerprint:
        return cached
    changed_since = cached.max_changed if cached is not None else ""
    fresh = list(store.text_rows(changed_since))
    if cached is not None:
        fresh_ids = {r[0] for r in fresh}
        kept = np.array([i not in fresh_ids for i in cached.ids], dtype=bool)
        if int(kept.sum()) + len(fresh) != store.count_documents():
            cached, fresh = None, list(store.text_rows(""))  # something was deleted: start over
    if cached is None:
        vocab: dict[str, int] = {}
        surfaces: dict[str, str] = {}
        old_rows = 0
    else:
        vocab = {k: i for i, k in enumerate(cached.vocab.all())}
        surfaces = cached.surfaces()
        old_rows = int(kept.sum())
    columns, changed = _tokenise(fresh, vocab, surfaces, progress, 0, len(fresh))
    groups = list(cached.groups) if cached is not None else []
    group_index = {s: i for i, s in enumerate(groups)}
    new_group = []
    for r in fresh:
        key = group_of(r[2], r[3], r[4])
        if key not in group_index:
            group_index[key] = len(groups)
            groups.append(key)
        new_group.append(group_index[key])
    lengths = np.array([len(c) for c in columns], dtype=np.int64)
    indptr = np.zeros(len(columns) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    flat = np.fromiter((c for cols in columns for c in cols), dtype=np.int32, count=int(indptr[-1]))
    new = sp.csr_matrix((np.ones(len(flat), dtype=np.float32), flat, indptr), shape=(len(columns), len(vocab)))
    ids = [r[0] for r in fresh]
    day = np.array([day_number(r[1]) for r in fresh], dtype=np.int32)
    group = np.array(new_group, dtype=np.int32)
    max_changed = max(changed, default="")
    if cached is not None and old_rows:
        old = cached.matrix[kept]
        old = sp.csr_matrix((old.data, old.indices, old.indptr), shape=(old_rows, len(vocab)))
        new = sp.vstack([old, new], format="csr")
        ids = [i for i, k in zip(cached.ids, kept, strict=True) if k] + ids
        day = np.concatenate([cached.day[kept], day])
        group = np.concatenate([cached.group[kept], group])
        max_changed = max(max_changed, cached.max_changed)
    order = np.lexsort((np.array(ids, dtype=object).astype(str), day)) if len(ids) else np.zeros(0, dtype=np.int64)
    matrix = new[order]
    matrix.sort_indices()
    vocab_list = sorted(vocab, key=vocab.__getitem__)
    blob, offsets = _blob(vocab_list)
    surface_cols = np.array(sorted(vocab[k] for k in surfaces if surfaces[k] != k), dtype=np.int32)
    surface_forms = _blob(surfaces[vocab_list[c]] for c in surface_cols)
    table = TermTable(
        ids=[ids[i] for i in order], day=day[order].astype(np.int32), group=group[order].astype(np.int32),
        groups=groups, matrix=matrix, vocab=Strings(blob, offsets), surface_cols=surface_cols,
        surface_forms=Strings(*surface_forms),
        first_row=_first_rows(matrix), fingerprint=fingerprint, max_changed=max_changed,
        _index=vocab,
    )  # fmt: skip
    _save(ws, table)
    return table
