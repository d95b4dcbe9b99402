"""Counting documents per stratum and period from the term table (sparse products, no Python loops)."""

from __future__ import annotations

from datetime import date

import numpy as np
import scipy.sparse as sp

from radar.analysis.trends.cache import TermTable, day_number


def day_rows(table: TermTable, first: date, last: date) -> tuple[int, int]:
    """Row slice [lo, hi) of documents published in [first, last]."""
    return table.row_range(day_number(first.isoformat()), day_number(last.isoformat()))


def stratum_counts(
    table: TermTable, lo: int, hi: int, columns: np.ndarray | None = None
) -> tuple[sp.csr_matrix, np.ndarray]:
    """(S x V or S x len(columns)) documents containing each term, and (S,) documents, for rows [lo, hi)."""
    n_strata = len(table.strata)
    strata = table.stratum[lo:hi]
    block = table.matrix[lo:hi]
    if columns is not None:
        block = block[:, columns]
    group = sp.csr_matrix((np.ones(hi - lo, dtype=np.float32), (strata, np.arange(hi - lo))), shape=(n_strata, hi - lo))
    return (group @ block).tocsr(), np.bincount(strata, minlength=n_strata).astype(np.float64)


def period_stratum_counts(
    table: TermTable, starts: list[date], as_of: date, columns: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(P, S, C) documents containing each column's term and (P, S) documents, per period.

    Period p covers [starts[p], starts[p+1]) and the last one ends at as_of.
    """
    n_strata = len(table.strata)
    bounds = [day_number(s.isoformat()) for s in starts] + [day_number(as_of.isoformat()) + 1]
    lo = table.row_range(bounds[0], bounds[0])[0]
    hi = table.rows_until(bounds[-1] - 1)
    period = np.searchsorted(np.array(bounds[1:]), table.day[lo:hi], side="right")
    key = period * n_strata + table.stratum[lo:hi]
    n_keys = len(starts) * n_strata
    group = sp.csr_matrix((np.ones(hi - lo, dtype=np.float32), (key, np.arange(hi - lo))), shape=(n_keys, hi - lo))
    counts = np.asarray((group @ table.matrix[lo:hi][:, columns]).todense()) if len(columns) else np.zeros((n_keys, 0))
    docs = np.bincount(key, minlength=n_keys).astype(np.float64)
    return counts.reshape(len(starts), n_strata, len(columns)), docs.reshape(len(starts), n_strata)
