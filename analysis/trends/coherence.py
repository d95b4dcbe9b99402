"""Coherence of a term's documents: are they about one thing, or is the word spread over unrelated work?

A rising generic word ("lock", "carry", "live") can pass the count test because a handful of
unrelated papers happened to use it in one month; a real emergence ("GRPO", "test-time scaling")
has recent documents that share vocabulary beyond the term itself. Measured on the cached
document x term matrix only (no embeddings, so the backtest can use it):

- each document of the window is a TF-IDF vector of its terms (idf over the window's documents);
- for a term, every column whose words overlap the term's words or that the term abbreviates
  ("lock", "lock in", "lock free"; "GRPO" / "group relative policy optimization") is removed, the
  rows are L2-normalised again, and the **coherence** is the mean pairwise cosine of its documents;
- the baseline is the same statistic for ``samples`` sets of equally many random documents of the
  same window, drawn from the same strata (a term confined to one category is compared with that
  category, not with the whole corpus), with the same columns removed;
- ``lift = coherence / median of the random sets`` (the effect size) and the robust
  ``z = (coherence - median) / (1.4826 MAD)`` (the evidence; median and MAD because the random sets'
  coherence is heavy-tailed). Both are measured per run against that window's own documents, so no
  constant depends on one data set's vocabulary.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from radar.analysis.trends.term_table import TermTable


def _words(key: str) -> set[str]:
    return set(key[1:].lower().replace("-", " ").replace(".", " ").split() if key.startswith("@") else key.split())


def _initials(key: str) -> str:
    return "".join(w[0] for w in key.split()) if not key.startswith("@") and " " in key else ""


class Coherence:
    """TF-IDF rows of one window's documents (rows ``lo:hi`` of the table), and the stratum of each."""

    def __init__(self, table: TermTable, rows: tuple[int, int], samples: int, seed: int = 0) -> None:
        lo, hi = rows
        block = sp.csr_matrix(table.matrix[lo:hi], dtype=np.float64)
        n = block.shape[0]
        df = np.bincount(block.indices, minlength=block.shape[1]).astype(np.float64)
        idf = np.log((1 + n) / (1 + df)) + 1.0
        block.data = idf[block.indices]
        self.table, self.lo, self.block, self.samples = table, lo, block, samples
        self.sq = block.multiply(block).tocsr()
        self.norm2 = np.asarray(self.sq.sum(axis=1)).ravel()
        stratum = table.stratum[lo:hi] if len(table.stratum) >= hi else np.zeros(n, dtype=np.int32)
        self.order = np.argsort(stratum, kind="stable")
        ordered = stratum[self.order]
        self.start = np.searchsorted(ordered, stratum, side="left")  # per row: its stratum's block in order
        self.size = np.searchsorted(ordered, stratum, side="right") - self.start
        self.rng = np.random.default_rng(seed)
        self.keys: dict[int, str] = {}
        self.docs_of = sp.csc_matrix((n, 0))
        self.slot: dict[int, int] = {}

    def _masked_columns(self, docs: np.ndarray, keys: list[str]) -> np.ndarray:
        """Columns of these documents that spell the term: a shared word, or the term's acronym."""
        sub = self.block[docs]
        cols = np.unique(sub.indices)
        words = set().union(*(_words(k) for k in keys))
        acronyms = {k[1:].lower().replace("-", "") for k in keys if k.startswith("@")} | {_initials(k) for k in keys}
        acronyms |= {k for k in keys if not k.startswith("@") and " " not in k}  # "grpo" abbreviates too
        acronyms.discard("")
        out = []
        for c in cols.tolist():
            key = self.keys.get(c)
            if key is None:
                key = self.keys[c] = self.table.term(c)
            if _words(key) & words or (_initials(key) and _initials(key) in acronyms):
                out.append(c)
        return np.asarray(out, dtype=np.int64)

    def _mean_cosine(self, sets: np.ndarray, keep: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """sets: (R, k) row indices; mean cosine over pairs of different documents within each set, after
        removing the ``mask`` columns. A random set may draw a document twice (sampling is with replacement
        within small strata): such pairs are left out rather than counted as a perfect match."""
        r, k = sets.shape
        flat = sets.ravel()
        removed = np.asarray(self.sq[flat][:, mask].sum(axis=1)).ravel() if len(mask) else np.zeros(len(flat))
        norms = np.sqrt(np.maximum(self.norm2[flat] - removed, 0.0))
        weights = np.where(norms > 1e-12, 1.0 / np.maximum(norms, 1e-12), 0.0)
        pick = sp.csr_matrix((weights, (np.repeat(np.arange(r), k), flat)), shape=(r, self.block.shape[0]))
        summed = (pick @ self.block).tocsr()  # duplicate entries are summed: a row drawn m times weighs m
        summed.data *= keep[summed.indices]
        total = np.asarray(summed.multiply(summed).sum(axis=1)).ravel()
        self_pairs, all_pairs = np.zeros(r), np.zeros(r)
        nonzero = (norms > 1e-12).reshape(r, k)
        for i in range(r):  # sum of squared multiplicities: same-document pairs (self-pairs included)
            _, first, counts = np.unique(sets[i], return_index=True, return_counts=True)
            all_pairs[i] = float((counts**2).sum())
            self_pairs[i] = float((counts[nonzero[i][first]] ** 2).sum())
        return (total - self_pairs) / np.maximum(k * k - all_pairs, 1.0)

    def prepare(self, columns: np.ndarray) -> None:
        """Index the documents of the columns that will be scored (one slice instead of one per term)."""
        self.docs_of = sp.csc_matrix(self.block[:, np.asarray(columns, dtype=np.int64)])
        self.slot = {int(c): i for i, c in enumerate(columns)}

    def score(self, column: int, keys: list[str]) -> tuple[float, float, float]:
        """(coherence, median of random sets, robust z) of the window's documents containing ``column``."""
        at = self.slot[column]
        docs = self.docs_of.indices[self.docs_of.indptr[at] : self.docs_of.indptr[at + 1]].astype(np.int64)
        if len(docs) < 2:
            return 0.0, 0.0, 0.0
        mask = self._masked_columns(docs, keys)
        keep = np.ones(self.block.shape[1])
        keep[mask] = 0.0
        own = float(self._mean_cosine(docs[None, :], keep, mask)[0])
        draws = self.rng.random((self.samples, len(docs)))
        sets = self.order[self.start[docs] + (draws * self.size[docs]).astype(np.int64)]
        random = self._mean_cosine(sets, keep, mask)
        # median and MAD: a random set that happens to hold two versions of one paper is an outlier
        # that would inflate a standard deviation (sets of 5-10 documents are the early ones that matter)
        med = float(np.median(random))
        mad = 1.4826 * float(np.median(np.abs(random - med)))
        return own, med, (own - med) / max(mad, 1e-12)
