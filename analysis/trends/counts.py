"""Counting documents per stratum and period from the term table (sparse products, no Python loops)."""

from __future__ import annotations

from datetime import date

import numpy as np
import scipy.sparse as sp

from radar.analysis.trends.term_table import TermTable, day_number


def day_rows(table: TermTable, first: date, last: date) -> tuple[int, int]:
    """Row slice [lo, hi) of documents published in [first, last]."""
    return table.row_range(day_number(first.isoformat()), day_number(last.isoformat()))


def column_block(
    table: TermTable, lo: int, hi: int, columns: np.ndarray | None = None, groups: np.ndarray | None = None
) -> sp.csr_matrix:
    """Rows [lo, hi) of the table, all columns or ``columns``; with ``groups`` (a group index per column)
    one 0/1 column per group: the documents containing any of its columns (a family of names)."""
    block = table.matrix[lo:hi]
    if columns is None:
        return block
    block = block[:, columns]
    if groups is None:
        return block
    n_groups = int(groups.max()) + 1 if len(groups) else 0
    member = sp.csr_matrix((np.ones(len(columns), dtype=np.float32), (np.arange(len(columns)), groups)))
    member.resize((len(columns), n_groups))
    out = sp.csr_matrix(block @ member)
    out.data[:] = 1
    return out


def stratum_counts(
    table: TermTable, lo: int, hi: int, columns: np.ndarray | None = None, groups: np.ndarray | None = None
) -> tuple[sp.csr_matrix, np.ndarray]:
    """(S x V or S x len(columns)) documents containing each term, and (S,) documents, for rows [lo, hi)
    (per group of columns when ``groups`` is given: see ``column_block``)."""
    n_strata = len(table.strata)
    strata = table.stratum[lo:hi]
    block = column_block(table, lo, hi, columns, groups)
    group = sp.csr_matrix((np.ones(hi - lo, dtype=np.float32), (strata, np.arange(hi - lo))), shape=(n_strata, hi - lo))
    return (group @ block).tocsr(), np.bincount(strata, minlength=n_strata).astype(np.float64)


def period_stratum_counts(
    table: TermTable, starts: list[date], as_of: date, columns: np.ndarray, groups: np.ndarray | None = None
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
    block = column_block(table, lo, hi, columns, groups)
    width = block.shape[1] if len(columns) else 0
    counts = np.asarray((group @ block).todense()) if width else np.zeros((n_keys, 0))
    docs = np.bincount(key, minlength=n_keys).astype(np.float64)
    return counts.reshape(len(starts), n_strata, width), docs.reshape(len(starts), n_strata)
