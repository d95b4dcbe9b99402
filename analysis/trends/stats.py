"""Mix-robust statistics: a stratified test of a recent window against a baseline, a stratified
share series, and Kleinberg's two-state burst automaton.

Every comparison is made *within strata* (source x primary category). A stratum that has no
baseline (a source or category that just started being crawled) adds as much to the expected
count as to the observed one, so a change in what is crawled cannot read as a trend; a stratum
that stopped adds nothing.

- ``stratified_test``: for each term, per stratum s with a_s recent and b_s baseline documents
  containing it (out of n_s and m_s), conditional on a_s + b_s the recent count is binomial with
  p_s = n_s / (n_s + m_s) under "no change". Observed O = sum a_s, expected E = sum (a_s+b_s) p_s
  (the Mantel-Haenszel / Cochran score test), z = (O - E) / sqrt(sum (a_s+b_s) p_s (1-p_s)),
  and the signed log-likelihood ratio G2 of O against E. The rate ratio is O over the baseline
  rates applied to the recent stratum sizes (indirect standardisation), with a 95% one-sided
  bound from the counts on both sides.
- ``fixed_effect_shares``: per-period shares from a Poisson model count ~ N * A_stratum *
  B_period fitted by iterative proportional fitting, reported at the overall stratum mix.
- ``kleinberg_active``: two-state automaton (Kleinberg 2002) on per-period counts with the
  expected rate from each period's stratum mix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Z95 = 1.645


@dataclass
class TestResult:
    observed: np.ndarray  # (C,) recent documents with the term, in comparable strata
    expected: np.ndarray  # (C,) what the baseline predicts for them
    z: np.ndarray
    llr: np.ndarray  # signed G2: > 0 rising, < 0 falling
    ratio: np.ndarray  # smoothed rate ratio recent / baseline
    ratio_low: np.ndarray  # 95% one-sided lower bound of the ratio
    ratio_high: np.ndarray  # 95% one-sided upper bound
    recent_docs: float  # documents in comparable strata, recent window
    expected_base: np.ndarray  # (C,) sum n_s * b_s / m_s: the baseline share at the recent mix, times docs


def comparable(n_recent: np.ndarray, m_base: np.ndarray, min_stratum_docs: int) -> np.ndarray:
    return (n_recent > 0) & (m_base >= min_stratum_docs)


def stratified_test(
    a: np.ndarray, n: np.ndarray, b: np.ndarray, m: np.ndarray, min_stratum_docs: int = 20
) -> TestResult:
    """a, b: (S, C) recent / baseline documents containing each term; n, m: (S,) documents."""
    keep = comparable(n, m, min_stratum_docs)
    a, b, n, m = a[keep].astype(np.float64), b[keep].astype(np.float64), n[keep].astype(np.float64), m[keep]
    m = m.astype(np.float64)
    p = (n / (n + m))[:, None] if len(n) else np.zeros((0, 1))
    total = a + b
    observed = a.sum(axis=0)
    expected = (total * p).sum(axis=0)
    var = (total * p * (1 - p)).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(var > 0, (observed - expected) / np.sqrt(var), 0.0)
        t = total.sum(axis=0)
        llr = 2 * (_xlogy(observed, expected) + _xlogy(t - observed, t - expected))
    llr = np.sign(observed - expected) * np.maximum(llr, 0.0)
    # indirect standardisation: baseline rates applied to the recent stratum sizes
    scale = (n / m)[:, None] if len(n) else np.zeros((0, 1))
    e_base = (b * scale).sum(axis=0)
    v_base = (b * scale**2).sum(axis=0)
    global_scale = n.sum() / m.sum() if len(n) and m.sum() else 1.0
    unit = np.where(e_base > 0, v_base / np.maximum(e_base, 1e-12), global_scale)  # e_base = unit * b_eff
    b_eff = np.where(unit > 0, e_base / unit, 0.0)
    ratio = (observed + 0.5) / (unit * (b_eff + 0.5))
    se = np.sqrt(1 / (observed + 0.5) + 1 / (b_eff + 0.5))
    return TestResult(
        observed=observed,
        expected=expected,
        z=z,
        llr=llr,
        ratio=ratio,
        ratio_low=ratio * np.exp(-Z95 * se),
        ratio_high=ratio * np.exp(Z95 * se),
        recent_docs=float(n.sum()),
        expected_base=e_base,
    )


def _xlogy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, x * np.log(np.where(x > 0, x, 1) / np.where(y > 0, y, 1e-12)), 0.0)


def fixed_effect_shares(counts: np.ndarray, docs: np.ndarray, iterations: int = 30) -> np.ndarray:
    """counts, docs: (P, S). Share per period at the overall stratum mix, free of mix changes.

    Fits counts[p, s] ~ docs[p, s] * A[s] * B[p]; returns B[p] * sum_s w_s A[s] (w = overall mix).
    A period with no documents gets NaN.
    """
    counts = counts.astype(np.float64)
    docs = docs.astype(np.float64)
    a = np.ones(docs.shape[1])
    b = np.ones(docs.shape[0])
    col_counts, row_counts = counts.sum(axis=0), counts.sum(axis=1)
    for _ in range(iterations):
        denom = docs @ a
        b = np.divide(row_counts, denom, out=np.zeros_like(row_counts), where=denom > 0)
        denom = docs.T @ b
        a = np.divide(col_counts, denom, out=np.zeros_like(col_counts), where=denom > 0)
    weights = docs.sum(axis=0)
    level = float(weights @ a / weights.sum()) if weights.sum() else 0.0
    shares = b * level
    shares[docs.sum(axis=1) == 0] = np.nan
    return shares


def kleinberg_active(
    counts: np.ndarray, docs: np.ndarray, base_rate: np.ndarray, s: float = 2.0, gamma: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Two-state burst automaton over periods, vectorised over terms.

    counts: (P, C) documents with the term; docs: (P,) documents; base_rate: (P, C) expected rate
    per period under the period's stratum mix. Returns (active in the last period (C,), index of
    the period the current burst started, -1 if none (C,)).
    """
    n_periods, n_terms = counts.shape
    if n_periods == 0:
        return np.zeros(n_terms, dtype=bool), np.full(n_terms, -1)
    p0 = np.clip(base_rate, 1e-9, 0.999)
    p1 = np.clip(base_rate * s, 1e-9, 0.999)
    d = docs[:, None].astype(np.float64)
    r = counts.astype(np.float64)
    cost0 = -(r * np.log(p0) + (d - r) * np.log1p(-p0))
    cost1 = -(r * np.log(p1) + (d - r) * np.log1p(-p1))
    up = gamma * np.log(max(n_periods, 2))
    best0, best1 = cost0[0].copy(), cost1[0] + up
    from0 = np.zeros((n_periods, n_terms), dtype=bool)  # state 1 at t reached from state 0 at t-1
    from1 = np.zeros((n_periods, n_terms), dtype=bool)  # state 0 at t reached from state 1 at t-1
    for t in range(1, n_periods):
        stay0, down = best0, best1
        new0 = np.minimum(stay0, down) + cost0[t]
        from1[t] = down < stay0
        go_up, stay1 = best0 + up, best1
        new1 = np.minimum(go_up, stay1) + cost1[t]
        from0[t] = go_up <= stay1
        best0, best1 = new0, new1
    active = best1 < best0
    start = np.full(n_terms, -1)
    for c in np.flatnonzero(active):
        t = n_periods - 1
        while t > 0 and not from0[t, c]:
            t -= 1
        start[c] = t
    return active, start
