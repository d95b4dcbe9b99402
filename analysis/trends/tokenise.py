"""The term cache's rows in chunks, in worker processes when there are many: ``document_terms`` is pure Python, and
the whole corpus is most of a cold `radar trends`.

A chunk's result is what one pass over its rows gives, in a form that merges in row order as one pass over all rows
would (``Chunk``): its keys in first-seen order with each row's positions among them (a CSR) and each key's 64-bit
hash (the term table's vocabulary index: hashed here, in parallel), and the readable spellings its rows give, by
position. ``merge_surfaces`` applies a chunk's spellings to those of the rows before it with the rule of
``terms.document_terms``: a key takes the first folded spelling seen, and reads as itself for good once it is seen
as itself after that.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from radar.analysis.trends.terms import document_terms


class _Spellings(dict[str, str]):
    """``document_terms``' ``surfaces`` for one chunk, also noting the keys seen as themselves while they had no
    spelling in the chunk yet (``in`` asked and answered no): before this chunk they may have had one."""

    def __init__(self) -> None:
        super().__init__()
        self.plain_first: set[str] = set()

    def __contains__(self, key: object) -> bool:
        found = dict.__contains__(self, key)
        if not found and isinstance(key, str):
            self.plain_first.add(key)
        return found


@dataclass
class Chunk:
    """One chunk of rows' terms: ``keys`` in first-seen order (``hashes``: ``key_hash`` of each); row r holds
    ``keys[i]`` for i in ``indices[indptr[r]:indptr[r + 1]]``. ``spellings``: key position -> its first folded
    spelling in the chunk (or the key, when seen as itself after that); ``plain_first``: positions of the keys seen
    as themselves while they had no spelling in the chunk yet."""

    keys: list[str]
    hashes: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    spellings: dict[int, str] = field(default_factory=dict)
    plain_first: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))


def key_hash(key: str) -> int:
    """A term key's 64-bit hash (the term table's vocabulary index)."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")


def chunk_terms(texts: Sequence[tuple[str, str]]) -> Chunk:
    """The terms of ``texts`` ((title, abstract) per row), as ``document_terms`` gives them (in a worker process)."""
    spellings = _Spellings()
    position: dict[str, int] = {}
    indptr = np.zeros(len(texts) + 1, dtype=np.int64)
    indices: list[int] = []
    for row, (title, abstract) in enumerate(texts):
        for key in sorted(document_terms(title, abstract, spellings)):  # a set: its order changes with the process
            at = position.get(key)
            if at is None:
                at = position[key] = len(position)
            indices.append(at)
        indptr[row + 1] = len(indices)
    keys = list(position)
    hashes = np.fromiter((key_hash(k) for k in keys), dtype=np.uint64, count=len(keys))
    forms = {position[k]: form for k, form in spellings.items()}
    plain = np.array(sorted(position[k] for k in spellings.plain_first), dtype=np.int32)
    return Chunk(keys, hashes, indptr, np.asarray(indices, dtype=np.int32), forms, plain)


def merge_surfaces(surfaces: dict[str, str], chunk: Chunk) -> None:
    """Apply ``chunk``'s readable spellings to ``surfaces`` (those of every row before it), as one pass would."""
    keys, plain = chunk.keys, {int(i) for i in chunk.plain_first}
    for at, form in chunk.spellings.items():
        key = keys[at]
        if key not in surfaces:
            surfaces[key] = form  # its first folded spelling, or itself when seen as itself after that
        elif form == key or at in plain:
            surfaces[key] = key  # seen as itself after a spelling was taken: reads as itself
    for at in plain:
        key = keys[at]
        if at not in chunk.spellings and key in surfaces:
            surfaces[key] = key
