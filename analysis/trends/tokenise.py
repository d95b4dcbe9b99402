"""The term cache's rows in chunks, in worker processes when there are many: ``document_terms`` is pure Python, and
the whole corpus is most of a cold `radar trends`.

A chunk's result is what one pass over its rows gives, in a form that merges in row order as one pass over all rows
would (``Chunk``): its keys in first-seen order with each row's positions among them (a CSR), and the readable
spellings its rows give. ``merge_surfaces`` applies a chunk's spellings to those of the rows before it with the
rule of ``terms.document_terms``: a key takes the first folded spelling seen, and reads as itself for good once it
is seen as itself after that.
"""

from __future__ import annotations

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
    """One chunk of rows' terms: ``keys`` in first-seen order; row r holds ``keys[i]`` for i in
    ``indices[indptr[r]:indptr[r + 1]]``."""

    keys: list[str]
    indptr: np.ndarray
    indices: np.ndarray
    spellings: dict[str, str] = field(default_factory=dict)
    plain_first: set[str] = field(default_factory=set)


def chunk_terms(texts: Sequence[tuple[str, str]]) -> Chunk:
    """The terms of ``texts`` ((title, abstract) per row), as ``document_terms`` gives them (in a worker process)."""
    spellings = _Spellings()
    position: dict[str, int] = {}
    indptr = np.zeros(len(texts) + 1, dtype=np.int64)
    indices: list[int] = []
    for row, (title, abstract) in enumerate(texts):
        for key in document_terms(title, abstract, spellings):
            at = position.get(key)
            if at is None:
                at = position[key] = len(position)
            indices.append(at)
        indptr[row + 1] = len(indices)
    return Chunk(list(position), indptr, np.asarray(indices, dtype=np.int32), dict(spellings), spellings.plain_first)


def merge_surfaces(surfaces: dict[str, str], chunk: Chunk) -> None:
    """Apply ``chunk``'s readable spellings to ``surfaces`` (those of every row before it), as one pass would."""
    for key, form in chunk.spellings.items():
        if key not in surfaces:
            surfaces[key] = form  # its first folded spelling, or itself when seen as itself after that
        elif form == key or key in chunk.plain_first:
            surfaces[key] = key  # seen as itself after a spelling was taken: reads as itself
    for key in chunk.plain_first:
        if key in surfaces and key not in chunk.spellings:
            surfaces[key] = key
