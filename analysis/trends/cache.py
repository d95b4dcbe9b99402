"""The term cache: which candidate terms each document contains, counted once and kept on disk.

A document-by-term 0/1 matrix (CSR, rows sorted by the day each document entered the record, store.dates) plus per-
row day and group (source, categories), saved as one file written atomically under ``WORKSPACE/index/trends/``. It
is keyed by the store's fingerprint (count, max rowid, max changed_at): when documents are added or changed, only
the rows changed since the cached ``max changed_at`` are re-tokenised; a deletion (the count does not add up)
rebuilds everything. Nothing here knows about dates of interest: ``--as-of`` filters rows at query time, so the
cache never leaks later documents into an earlier answer.
"""

from __future__ import annotations

import hashlib
import io
import os
import signal
from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import orjson
import scipy.sparse as sp

from radar.analysis.trends.term_table import Strings, TermTable, VocabIndex, day_number, first_rows, pack
from radar.analysis.trends.tokenise import Chunk, chunk_terms, merge_surfaces
from radar.crawler.documents import Documents, DocumentText
from radar.store.dates import entered
from radar.store.files import write_cache_atomic
from radar.store.table import Database

CACHE_VERSION = 4  # 4: a row's day is the day it entered the record (store.dates), not its v1 date
# the cache is only valid for the term rules that built it (terms.py and the stop words it reads)
RULES = hashlib.blake2b(
    b"".join(
        hashlib.blake2b((Path(__file__).parent / name).read_bytes()).digest() for name in ("terms.py", "stop_words.py")
    ),
    digest_size=8,
).hexdigest()
CHUNK_ROWS = 2000  # rows tokenised per chunk (per task of a worker process)
PARALLEL_MIN = 6000  # rows before worker processes pay off (each starts in about a second)
MAX_WORKERS = 4
Progress = Callable[[int, int], None]


def group_of(source: str, primary_category: str, categories: str) -> str:
    """Source, primary category and every category (sorted): what the crawl selected a document by."""
    cats = " ".join(sorted(set(orjson.loads(categories or "[]")) - {primary_category}))
    return f"{source}\t{primary_category or '-'}\t{cats}"


def _save(path: Path, table: TermTable) -> None:
    ids_blob, ids_off = pack(table.ids)
    groups_blob, groups_off = pack(table.groups)
    meta = {
        "version": CACHE_VERSION,
        "rules": RULES,
        "fingerprint": table.fingerprint,
        "max_changed": table.max_changed,
        "shape": list(table.matrix.shape),
    }
    buf = io.BytesIO()
    np.savez(
        buf,
        ids_blob=ids_blob,
        ids_off=ids_off,
        groups_blob=groups_blob,
        groups_off=groups_off,
        day=table.day,
        group=table.group,
        indptr=table.matrix.indptr,
        indices=table.matrix.indices,
        vocab_blob=table.vocab.blob,
        vocab_off=table.vocab.offsets,
        first_row=table.first_row,
        surface_cols=table.surface_cols,
        surface_blob=table.surface_forms.blob,
        surface_off=table.surface_forms.offsets,
        hashes=table.hashes,
        vocab_hashes=table.vocab_hashes,
        vocab_order=table.vocab_order,
        meta=np.frombuffer(orjson.dumps(meta), dtype=np.uint8),
    )
    write_cache_atomic(path, buf.getbuffer())  # not kept on a full or read-only disk: recomputed


def _load(path: Path) -> TermTable | None:
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = orjson.loads(bytes(z["meta"]))
            if meta.get("version") != CACHE_VERSION or meta.get("rules") != RULES:
                return None
            indices = z["indices"]
            matrix = sp.csr_matrix(
                (np.ones(len(indices), dtype=np.float32), indices, z["indptr"]), shape=tuple(meta["shape"])
            )
            return TermTable(
                ids=Strings(z["ids_blob"], z["ids_off"]).all(),
                day=z["day"],
                group=z["group"],
                groups=Strings(z["groups_blob"], z["groups_off"]).all(),
                matrix=matrix,
                vocab=Strings(z["vocab_blob"], z["vocab_off"]),
                surface_cols=z["surface_cols"],
                surface_forms=Strings(z["surface_blob"], z["surface_off"]),
                first_row=z["first_row"],
                hashes=z["hashes"],
                vocab_hashes=z["vocab_hashes"],
                vocab_order=z["vocab_order"],
                fingerprint=meta["fingerprint"],
                max_changed=meta["max_changed"],
            )
    except (OSError, ValueError, KeyError, orjson.JSONDecodeError):
        return None  # unreadable or from another version: rebuilt from the store


def documents_version(store: Database) -> str:
    """The store's fingerprint (count, max rowid, max changed_at) plus a hash of the documents changed
    in that last second: an edit within the same second as the previous change still shows."""
    base = Documents(store).fingerprint()
    last = base.split(":", 2)[2]
    h = hashlib.blake2b(digest_size=8)
    for row in Documents(store).content_hashes_since(last) if last else ():
        h.update(f"{row.doc_id}\x1f{row.content_hash}\x1e".encode())
    return f"{base}:{h.hexdigest()}"


@dataclass
class _Fresh:
    """The rows tokenised in this call, in the order read: what ``_assemble`` merges with the cached table."""

    ids: list[str] = field(default_factory=list)
    hashes: list[bytes] = field(default_factory=list)
    days: list[int] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    max_changed: str = ""
    lengths: list[np.ndarray] = field(default_factory=list)  # terms per row, chunk by chunk
    columns: list[np.ndarray] = field(default_factory=list)  # their columns, chunk by chunk
    new_keys: dict[str, int] = field(default_factory=dict)  # keys not in the cached table -> their new column
    new_hashes: list[np.ndarray] = field(default_factory=list)  # their hashes (key_hash), in column order


def _workers(rows: int) -> int:
    """Worker processes for tokenising ``rows`` rows (as analysis.contributions.update decides them)."""
    return min(os.cpu_count() or 1, MAX_WORKERS) if rows >= PARALLEL_MIN else 1


def _tokenise(
    rows: Iterator[DocumentText],
    total: int,
    index: VocabIndex | None,
    n_old_terms: int,
    surfaces: dict[str, str],
    progress: Progress | None,
) -> _Fresh:
    """Each row's term keys as columns (keys of the cached table keep theirs, new ones are appended in first-seen
    order), streamed chunk by chunk so that no row's keys are kept as strings; the readable spellings of folded keys
    seen are added to ``surfaces``. Chunks go to worker processes when there are many rows."""
    fresh = _Fresh()
    done = 0

    def take(chunk: Chunk) -> None:
        nonlocal done
        cols = np.empty(len(chunk.keys), dtype=np.int32)
        new: list[int] = []
        for i, key in enumerate(chunk.keys):
            col = fresh.new_keys.get(key)
            if col is None and index is not None:
                col = index.get(key)
            if col is None:
                col = fresh.new_keys[key] = n_old_terms + len(fresh.new_keys)
                new.append(i)
            cols[i] = col
        fresh.new_hashes.append(chunk.hashes[new])
        fresh.columns.append(cols[chunk.indices])
        fresh.lengths.append(np.diff(chunk.indptr))
        merge_surfaces(surfaces, chunk)
        done += len(chunk.indptr) - 1
        if progress:
            progress(done, total)

    def texts(batch: list[DocumentText]) -> list[tuple[str, str]]:
        for r in batch:
            fresh.ids.append(r.doc_id)
            fresh.hashes.append(r.content_hash.encode())
            fresh.days.append(day_number(entered(r.doc_id, r.published)))
            fresh.groups.append(group_of(r.source, r.primary_category, r.categories))
            fresh.max_changed = max(fresh.max_changed, r.changed_at)
        return [(r.title, r.abstract) for r in batch]

    batches = _batches(rows, CHUNK_ROWS)
    workers = _workers(total)
    if workers <= 1:
        for batch in batches:
            take(chunk_terms(texts(batch)))
        return fresh
    pool = _pool(workers)
    try:
        pending: list[Future[Chunk]] = []
        for batch in batches:
            pending.append(pool.submit(chunk_terms, texts(batch)))
            while len(pending) > 2 * workers:  # bounded memory: merge the oldest before reading more
                take(pending.pop(0).result())
        for future in pending:
            take(future.result())
    except BaseException:  # Ctrl-C, a worker's error: the chunks not started are not tokenised for nothing
        pool.shutdown(cancel_futures=True)
        raise
    pool.shutdown()
    return fresh


def _ignore_interrupts() -> None:
    """A worker's initializer: Ctrl-C is the parent's to handle (it cancels the pool), not a traceback per worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _pool(workers: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"), initializer=_ignore_interrupts)


def _batches(rows: Iterator[DocumentText], size: int) -> Iterator[list[DocumentText]]:
    batch: list[DocumentText] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def term_table(cache: Path, store: Database, progress: Progress | None = None) -> TermTable:
    """The table cached at ``cache``, brought up to date with the store (incrementally when it can be)."""
    fingerprint = documents_version(store)
    cached = _load(cache)
    if cached is not None and cached.fingerprint == fingerprint:
        return cached
    since = cached.max_changed if cached is not None else ""
    changed = Documents(store).content_hashes_since(since)
    kept: np.ndarray | None = None
    if cached is not None:
        known = dict(zip(cached.ids, cached.hashes.tolist(), strict=True))
        changed = [h for h in changed if known.get(h.doc_id) != h.content_hash.encode()]  # re-read, unchanged: skip
        changed_ids = {h.doc_id for h in changed}
        kept = np.array([i not in changed_ids for i in cached.ids], dtype=bool)
        if int(kept.sum()) + len(changed) != Documents(store).count():
            cached, kept, since = None, None, ""  # something was deleted: start over
            changed = Documents(store).content_hashes_since("")
    wanted = {h.doc_id for h in changed}
    rows = (r for r in Documents(store).text_rows(since) if r.doc_id in wanted)
    # the cached readable spellings go in first, so a key the new rows show as itself reads as itself, as it
    # would in a fresh build (which tokenises the old rows first)
    seeded = (
        dict(zip(cached.vocab.pick(cached.surface_cols), cached.surface_forms.all(), strict=True))
        if cached is not None
        else {}
    )
    surfaces = dict(seeded)
    index = cached.index() if cached is not None else None
    fresh = _tokenise(rows, len(wanted), index, len(cached.vocab) if cached is not None else 0, surfaces, progress)
    # the rows are read after the fingerprint (another process may write in between): the table is only known to be
    # current up to the fingerprint's last change, so the next update reads again from there (rows read since and
    # unchanged are skipped by their hash)
    snapshot = fingerprint.split(":", 2)[2].rsplit(":", 1)[0]
    fresh.max_changed = min(fresh.max_changed, snapshot)
    unfolded = {k for k, form in seeded.items() if surfaces.get(k) == k}
    return _assemble(cache, cached, kept, fresh, surfaces, fingerprint, unfolded, seeded.keys())


def _assemble(
    cache: Path,
    cached: TermTable | None,
    kept: np.ndarray | None,
    fresh: _Fresh,
    surfaces: dict[str, str],
    fingerprint: str,
    unfolded: set[str],
    seeded_keys: AbstractSet[str] = frozenset(),
) -> TermTable:
    """Merge the kept rows of ``cached`` with the freshly tokenised rows, sort by day, save. ``unfolded``: keys
    of ``cached`` whose readable spelling is dropped (the new rows show them as themselves); ``seeded_keys``: those
    of ``cached`` that had a readable spelling already."""
    index = cached.index() if cached is not None else None
    n_old_terms = len(cached.vocab) if cached is not None else 0
    new_keys = fresh.new_keys
    n_terms = n_old_terms + len(new_keys)
    groups = list(cached.groups) if cached is not None else []
    group_index = {g: i for i, g in enumerate(groups)}
    new_group = [group_index.setdefault(g, len(group_index)) for g in fresh.groups]
    groups = sorted(group_index, key=group_index.__getitem__)
    lengths = np.concatenate(fresh.lengths) if fresh.lengths else np.zeros(0, dtype=np.int64)
    indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    flat = np.concatenate(fresh.columns) if fresh.columns else np.zeros(0, dtype=np.int32)
    fresh.columns.clear()
    matrix = sp.csr_matrix((np.ones(len(flat), dtype=np.float32), flat, indptr), shape=(len(lengths), n_terms))
    ids = fresh.ids
    hashes = np.array(fresh.hashes, dtype="S32")
    day = np.array(fresh.days, dtype=np.int32)
    group = np.array(new_group, dtype=np.int32)
    max_changed = fresh.max_changed
    if cached is not None and kept is not None:
        old = cached.matrix[kept]
        old = sp.csr_matrix((old.data, old.indices, old.indptr), shape=(int(kept.sum()), n_terms))
        matrix = sp.vstack([old, matrix], format="csr")
        ids = [i for i, k in zip(cached.ids, kept, strict=True) if k] + ids
        hashes = np.concatenate([cached.hashes[kept].astype("S32"), hashes])
        day = np.concatenate([cached.day[kept], day])
        group = np.concatenate([cached.group[kept], group])
        max_changed = max(max_changed, cached.max_changed)
    order = np.lexsort((np.array(ids, dtype=object).astype(str), day)) if ids else np.zeros(0, dtype=np.int64)
    matrix = matrix[order]
    matrix.sort_indices()
    # vocabulary and readable spellings: appended, never rewritten
    added = sorted(new_keys, key=new_keys.__getitem__)
    blob, offsets = pack(added)
    added_forms = [(new_keys[k], surfaces[k]) for k in added if surfaces.get(k, k) != k]
    if index is not None:  # a kept key first seen folded now (it had no spelling of its own): as a fresh build
        for key, form in surfaces.items():
            if form != key and key not in new_keys and key not in seeded_keys:
                col = index.get(key)
                if col is not None:
                    added_forms.append((col, form))
    forms_blob, forms_off = pack(f for _, f in added_forms)
    if cached is not None:
        blob, offsets = np.concatenate([cached.vocab.blob, blob]), _join_offsets(cached.vocab.offsets, offsets)
        old_cols, old_forms = cached.surface_cols, cached.surface_forms
        if unfolded:
            keep = [i for i, key in enumerate(cached.vocab.pick(old_cols)) if key not in unfolded]
            old_cols, old_forms = old_cols[keep], Strings(*pack(old_forms[i] for i in keep))
        forms_blob = np.concatenate([old_forms.blob, forms_blob])
        forms_off = _join_offsets(old_forms.offsets, forms_off)
        surface_cols = np.concatenate([old_cols, np.array([c for c, _ in added_forms], dtype=np.int32)])
    else:
        surface_cols = np.array([c for c, _ in added_forms], dtype=np.int32)
    vocab = Strings(blob, offsets)
    forms = Strings(forms_blob, forms_off)
    if len(surface_cols) and np.any(np.diff(surface_cols) < 0):  # keep columns sorted for lookups
        perm = np.argsort(surface_cols, kind="stable")
        surface_cols, forms = surface_cols[perm], Strings(*pack(forms[int(i)] for i in perm))
    new_hashes = np.concatenate(fresh.new_hashes) if fresh.new_hashes else np.zeros(0, dtype=np.uint64)
    if cached is not None:
        extra = VocabIndex.build(vocab, new_hashes)
        extra_order = (extra.order + n_old_terms).astype(np.int32)
        merged_hashes = np.concatenate([cached.vocab_hashes, extra.hashes])
        perm = np.argsort(merged_hashes, kind="stable")
        vocab_hashes, vocab_order = merged_hashes[perm], np.concatenate([cached.vocab_order, extra_order])[perm]
    else:
        built = VocabIndex.build(vocab, new_hashes)
        vocab_hashes, vocab_order = built.hashes, built.order
    # the keys as Python strings are not needed any more: freed before the save needs its buffer (at 93k documents
    # they are 3 million strings, ~0.5 GB with their dicts)
    del added, added_forms
    new_keys.clear()
    surfaces.clear()
    table = TermTable(
        ids=[ids[i] for i in order],
        day=day[order].astype(np.int32),
        group=group[order].astype(np.int32),
        groups=groups,
        matrix=matrix,
        vocab=vocab,
        surface_cols=surface_cols.astype(np.int32),
        surface_forms=forms,
        first_row=first_rows(matrix),
        hashes=hashes[order],
        vocab_hashes=vocab_hashes,
        vocab_order=vocab_order.astype(np.int32),
        fingerprint=fingerprint,
        max_changed=max_changed,
    )
    _save(cache, table)
    return table


def _join_offsets(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    joined = np.concatenate([first.astype(np.int64), second[1:].astype(np.int64) + int(first[-1])])
    return joined.astype(np.int32) if joined[-1] < 2**31 else joined
