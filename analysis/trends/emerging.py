"""Emerging and declining terms: stratified test of the recent window against the trailing
baseline, near-duplicates merged, bursts marked.

Flow: count recent and baseline documents per stratum for every term -> keep terms with enough
recent documents (or enough expected ones, for declines) -> ``stratified_test`` -> a term is
emerging when z >= min_z, its rate ratio's lower bound >= min_ratio, it has min_count recent
documents and is in a burst (Kleinberg) that began before the last period, or began in it with
z >= min_z + spike_extra_z (a one-period spike needs more evidence). A rise that continues: a term
whose burst began g = 1 .. rise_periods - 1 periods before the last one is also tested against the
baseline that ends where its burst began (the same thresholds), so its own first months do not hide
it. Declining mirrors the test -> rank by the log-likelihood ratio -> merge near-duplicates (terms
found in the same recent documents with related spellings: "GRPO" / "relative policy optimization")
-> model families (family.py): launches and successor declines join the lists.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import msgspec
import numpy as np
import scipy.sparse as sp
from msgspec import UNSET, UnsetType

from radar.analysis.trends.coherence import Coherence
from radar.analysis.trends.config import TrendsConfig, Windows, earlier_baseline, period_label, span
from radar.analysis.trends.counts import day_rows, period_stratum_counts, stratum_counts
from radar.analysis.trends.result import Burst, TermTrend
from radar.analysis.trends.stats import TestResult, comparable, kleinberg_active, stratified_test
from radar.analysis.trends.term_table import TermTable, day_date

MERGE_OVERLAP = 0.8  # share of the smaller term's recent documents that also contain the other ...
MERGE_JACCARD = 0.7  # ... or documents in common over documents of either, for unrelated spellings


@dataclass
class Scored:
    columns: np.ndarray
    test: TestResult
    recent_total: np.ndarray  # recent documents containing the term, all strata
    docs: np.ndarray = field(default_factory=lambda: np.zeros(0))  # per column: recent documents compared
    gap: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # periods left out before recent

    def __post_init__(self) -> None:
        if len(self.docs) != len(self.columns):
            self.docs = np.full(len(self.columns), self.test.recent_docs)
        if len(self.gap) != len(self.columns):
            self.gap = np.zeros(len(self.columns), dtype=np.int64)


def take(parts: list[tuple[Scored, np.ndarray]]) -> Scored:
    """The rows ``idx`` of each scored set, as one (each column keeps the test that chose it)."""

    def cat(get: Callable[[Scored], np.ndarray]) -> np.ndarray:
        return np.concatenate([get(s)[i] for s, i in parts]) if parts else np.zeros(0)

    test = TestResult(
        observed=cat(lambda s: s.test.observed),
        expected=cat(lambda s: s.test.expected),
        z=cat(lambda s: s.test.z),
        llr=cat(lambda s: s.test.llr),
        ratio=cat(lambda s: s.test.ratio),
        ratio_low=cat(lambda s: s.test.ratio_low),
        ratio_high=cat(lambda s: s.test.ratio_high),
        recent_docs=0.0,
        expected_base=cat(lambda s: s.test.expected_base),
    )
    return Scored(
        cat(lambda s: s.columns).astype(np.int64),
        test,
        cat(lambda s: s.recent_total),
        cat(lambda s: s.docs),
        cat(lambda s: s.gap).astype(np.int64),
    )


RecentCounts = tuple[sp.csr_matrix, np.ndarray]


def recent_counts(table: TermTable, win: Windows) -> RecentCounts:
    return stratum_counts(table, *day_rows(table, win.recent_start, win.as_of))


class Segments:
    """Stratum counts of row ranges that share boundaries, each segment between two boundaries counted once
    (the baselines of the gap tests overlap by all but a period)."""

    def __init__(self, table: TermTable, bounds: list[int]) -> None:
        self.table, self.bounds = table, sorted(set(bounds))
        self.done: dict[int, RecentCounts] = {}

    def __call__(self, lo: int, hi: int) -> RecentCounts:
        if lo not in self.bounds or hi not in self.bounds:
            return stratum_counts(self.table, lo, hi)
        parts = []
        for i in range(self.bounds.index(lo), self.bounds.index(hi)):
            if i not in self.done:
                self.done[i] = stratum_counts(self.table, self.bounds[i], self.bounds[i + 1])
            parts.append(self.done[i])
        if not parts:
            return stratum_counts(self.table, lo, hi)
        total, docs = parts[0]
        for counts, n in parts[1:]:
            total, docs = total + counts, docs + n
        return sp.csr_matrix(total), docs


def score_terms(
    table: TermTable,
    win: Windows,
    cfg: TrendsConfig,
    recent_n: RecentCounts | None = None,
    segments: Segments | None = None,
) -> Scored:
    recent, n = recent_n if recent_n is not None else recent_counts(table, win)
    rows = day_rows(table, win.baseline_start, win.baseline_last)
    base, m = segments(*rows) if segments is not None else stratum_counts(table, *rows)
    return score_counts(recent, n, base, m, cfg)


def score_counts(recent: Any, n: np.ndarray, base: Any, m: np.ndarray, cfg: TrendsConfig) -> Scored:
    """The stratified test of every column with enough documents: recent (strata x columns) against base."""
    keep = comparable(n, m, cfg.min_stratum_docs)
    observed = np.asarray(recent[keep].sum(axis=0)).ravel()
    scale = np.where(keep, n / np.maximum(m, 1), 0.0)
    expected = np.asarray(base.T @ scale).ravel()
    columns = np.flatnonzero((observed >= cfg.min_count) | (expected >= 2 * cfg.min_count))
    test = stratified_test(recent[:, columns].toarray(), n, base[:, columns].toarray(), m, cfg.min_stratum_docs)
    total = np.asarray(recent[:, columns].sum(axis=0)).ravel()
    return Scored(columns, test, total)


def score_columns(
    table: TermTable, win: Windows, cfg: TrendsConfig, columns: np.ndarray, groups: np.ndarray | None = None
) -> Scored:
    """The test of a few columns (or groups of columns, see ``counts.column_block``) in a window; ``columns``
    of the result are the given columns (the group indices 0 .. n - 1 with ``groups``)."""
    recent, n = stratum_counts(table, *day_rows(table, win.recent_start, win.as_of), columns, groups)
    base, m = stratum_counts(table, *day_rows(table, win.baseline_start, win.baseline_last), columns, groups)
    test = stratified_test(recent.toarray(), n, base.toarray(), m, cfg.min_stratum_docs)
    labels = np.arange(recent.shape[1]) if groups is not None else np.asarray(columns, dtype=np.int64)
    return Scored(labels, test, np.asarray(recent.sum(axis=0)).ravel())


Scorer = Callable[[Windows, "np.ndarray | None"], Scored]


def rising(
    table: TermTable,
    win: Windows,
    cfg: TrendsConfig,
    window: str,
    starts: list[date],
    score_at: Scorer,
    burst_of: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    score: Scored | None = None,
    gap_first: bool = False,
) -> tuple[Scored, np.ndarray, np.ndarray]:
    """The terms that pass the rise rule: (their scores, burst active, burst start period).

    Gap 0 is the usual rule (the baseline right before the recent window; a burst that began in the
    last period needs z >= min_z + spike_extra_z). A continuing rise: a term whose burst began g periods
    before the last (1 <= g < rise_periods) passes when the recent window passes against the baseline
    that ends where the burst began, and the burst's first period passed against the same baseline (it
    was a rise when it began: a slow drift is not). ``score_at(window, columns)`` scores every candidate
    (columns None) or the given ones; ``burst_of(columns)`` gives their bursts. ``gap_first``: a term
    that passes both ways is judged against the baseline before its burst (a launch is measured against
    the months before it), else against the usual one.
    """
    score = score if score is not None else score_at(win, None)
    last = len(starts) - 1
    tries = [(score, _pick(score, cfg, True)[: cfg.max_terms * 8])]
    for gap in range(1, min(cfg.rise_periods, len(starts))):
        earlier = score_at(earlier_baseline(win, starts[last - gap], window, cfg), None)
        earlier.gap = np.full(len(earlier.columns), gap, dtype=np.int64)
        tries.append((earlier, _pick(earlier, cfg, True)[: cfg.max_terms * 8]))
    cols = np.unique(np.concatenate([s.columns[p] for s, p in tries]))
    active, since = burst_of(cols)
    age = {int(c): last - int(s) for c, a, s in zip(cols, active, since, strict=True) if a}
    chosen: dict[int, tuple[int, int]] = {}
    for t in [*range(1, len(tries)), 0] if gap_first else range(len(tries)):
        s, picked = tries[t]
        gap = t
        waiting = []
        for i in picked.tolist():
            col = int(s.columns[i])
            got = age.get(col)
            if col in chosen or got is None:
                continue
            if gap == 0 and (got >= 1 or s.test.z[i] >= cfg.min_z + cfg.spike_extra_z):
                chosen[col] = (t, i)
            elif gap > 0 and got == gap:
                waiting.append(i)
        if waiting:  # the burst's first period against the same baseline
            began = starts[last - gap]
            end = min(starts[last - gap + 1], win.recent_start) - timedelta(days=1)
            first = score_at(span(began, end, window, cfg), s.columns[waiting])
            ok = _pick(first, cfg, True)
            for k in ok.tolist():
                chosen[int(s.columns[waiting[k]])] = (t, waiting[k])
    parts = [
        (tries[t][0], np.array([i for tt, i in chosen.values() if tt == t], dtype=np.int64)) for t in range(len(tries))
    ]
    out = take(parts)
    out = take([(out, np.argsort(-out.test.llr, kind="stable"))])
    where = {int(c): k for k, c in enumerate(cols.tolist())}
    idx = np.array([where[int(c)] for c in out.columns], dtype=np.int64)
    return out, active[idx], since[idx]


def _pick(scored: Scored, cfg: TrendsConfig, rising: bool) -> np.ndarray:
    t = scored.test
    if rising:
        ok = (t.z >= cfg.min_z) & (t.ratio_low >= cfg.min_ratio) & (t.observed >= cfg.min_count)
        order = np.argsort(-t.llr[ok], kind="stable")
    else:
        ok = (t.z <= -cfg.min_z) & (t.ratio_high <= 1 / cfg.min_ratio) & (t.expected_base >= 2 * cfg.min_count)
        order = np.argsort(t.llr[ok], kind="stable")
    return np.flatnonzero(ok)[order]


def _tokens(key: str) -> list[str]:
    return key[1:].lower().replace("-", " ").split() if key.startswith("@") else key.split()


def _related(a: str, b: str) -> bool:
    """Spelling relations that make two co-occurring terms one: containment, acronym, same word."""
    ta, tb = _tokens(a), _tokens(b)
    short, long_ = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
    if any(long_[i : i + len(short)] == short for i in range(len(long_) - len(short) + 1)):
        return True
    for name, other in ((a, tb), (b, ta)):
        if name.startswith("@") and len(other) > 1 and "".join(w[0] for w in other) == name[1:].lower():
            return True
    return False


def _merge(
    table: TermTable, picked: np.ndarray, scored: Scored, rows: tuple[int, int], limit: int
) -> list[tuple[int, list[int]]]:
    """Greedy: a term joins a better-ranked kept term when both are found in nearly the same recent
    documents and their spellings are related (or their documents are nearly identical)."""
    head = picked[: limit * 4]
    cols = scored.columns[head]
    keys = [table.term(int(c)) for c in cols]
    block = sp.csr_matrix(table.matrix[rows[0] : rows[1]][:, cols], dtype=np.float32)
    co = np.asarray((block.T @ block).todense())
    df = np.diag(co)
    kept: list[tuple[int, list[int]]] = []  # (index into head, merged indices)
    for i in range(len(head)):
        home = None
        for k, (j, members) in enumerate(kept):
            smaller = min(df[i], df[j])
            jaccard = co[i, j] / max(df[i] + df[j] - co[i, j], 1)
            if any(_tokens(keys[i]) == _tokens(keys[x]) for x in members):  # DeepSeek-R1 / Deepseek-R1
                home = k
                break
            related = any(_related(keys[i], keys[x]) for x in members)
            if smaller and ((related and co[i, j] / smaller >= MERGE_OVERLAP) or jaccard >= MERGE_JACCARD):
                home = k
                break
        if home is None:
            if len(kept) < limit:
                kept.append((i, [i]))
        else:
            kept[home][1].append(i)
    out = []
    for i, members in kept:
        out.append((int(head[_lead(keys, df, i, members)]), [int(head[m]) for m in members]))
    return [(lead, [m for m in members if m != lead]) for lead, members in out]


def _lead(keys: list[str], df: np.ndarray, best: int, members: list[int]) -> int:
    """The name a person reads: a method name over its own spelling or expansion, else the longest
    phrase that contains the best-ranked one and is nearly as frequent ("test time scaling")."""
    for m in members:
        if keys[m].startswith("@") and _related(keys[m], keys[best]):
            return m
    longer = [m for m in members if df[m] >= 0.8 * df[best] and " ".join(_tokens(keys[best])) in keys[m]]
    return max(longer, key=lambda m: (len(keys[m]), df[m]), default=best)


def _examples(table: TermTable, col: int, lo: int, hi: int, k: int = 3) -> list[str]:
    rows = np.flatnonzero(np.asarray(table.matrix[lo:hi][:, [col]].todense()).ravel())
    return [table.ids[lo + int(r)] for r in rows[::-1][:k]]


def term_lists(
    table: TermTable, win: Windows, cfg: TrendsConfig, window: str, starts: list[date]
) -> tuple[list[TermTrend], list[TermTrend]]:
    """(emerging, declining) in the trends JSON shape."""
    recent_n = recent_counts(table, win)
    last = len(starts) - 1
    gaps = [earlier_baseline(win, starts[last - g], window, cfg) for g in range(1, min(cfg.rise_periods, len(starts)))]
    bounds = [b for w in [win, *gaps] for b in day_rows(table, w.baseline_start, w.baseline_last)]
    segments = Segments(table, bounds)
    scored = score_terms(table, win, cfg, recent_n, segments)
    rows = day_rows(table, win.recent_start, win.as_of)
    base_rows = day_rows(table, win.baseline_start, win.baseline_last)
    out = []
    for up in (True, False):
        if up:
            # a rise must also be a burst, a burst of a single period (a spike) needs stronger evidence,
            # and a rise that continues is compared with the baseline before its burst
            chosen, active, since = rising(
                table,
                win,
                cfg,
                window,
                starts,
                lambda w, cols: (
                    score_terms(table, w, cfg, recent_n, segments)
                    if cols is None
                    else score_columns(table, w, cfg, cols)
                ),
                lambda cols: bursts(table, cols, starts, win.as_of),
                scored,
            )
            picked = np.arange(len(chosen.columns))
        else:
            chosen = scored
            picked = _pick(scored, cfg, False)[: cfg.max_terms * 8]
            active, since = bursts(table, scored.columns[picked], starts, win.as_of)
        burst = {
            int(p): (bool(a), period_label(starts[int(s)], window) if a else None)
            for p, a, s in zip(picked, active, since, strict=True)
        }
        picked, coherent = _coherent(table, chosen, picked, rows if up else base_rows, cfg)
        merged = _merge(table, picked, chosen, rows if up else base_rows, cfg.max_terms)
        items = []
        for lead, aliases in merged:
            gap = int(chosen.gap[lead])
            item = _item(table, chosen, lead, aliases, rows, base_rows, up)
            items.append(
                msgspec.structs.replace(
                    item,
                    burst=Burst(*burst[lead]),
                    coherence=coherent.get(lead),
                    rule=("continuing rise" if gap else "rise") if up else "fall",
                    baseline_end=(
                        earlier_baseline(win, starts[len(starts) - 1 - gap], window, cfg).baseline_last.isoformat()
                        if gap
                        else UNSET
                    ),
                )
            )
        out.append(items)
    return out[0], out[1]


def _coherent(
    table: TermTable, scored: Scored, picked: np.ndarray, rows: tuple[int, int], cfg: TrendsConfig
) -> tuple[np.ndarray, dict[int, dict[str, float]]]:
    """The picked terms whose window documents are more alike than random ones of the same strata
    (``min_coherence_lift`` and ``min_coherence_z``), and each checked term's {value, random, lift, z}.
    Only the head that merging can use is checked (a few dozen terms)."""
    if cfg.min_coherence_z <= 0 or not len(picked):
        return picked, {}
    check = Coherence(table, rows, cfg.coherence_samples)
    head = picked[: cfg.max_terms * 4]
    check.prepare(scored.columns[head])
    kept, found = [], {}
    for p in head.tolist():
        col = int(scored.columns[p])
        own, random, z = check.score(col, [table.term(col)])
        lift = own / random if random > 0 else float("inf") if own > 0 else 0.0
        found[p] = {
            "value": round(own, 4),
            "random": round(random, 4),
            "lift": round(min(lift, 1e6), 2),
            "z": round(min(z, 1e6), 2),
        }
        if lift >= cfg.min_coherence_lift and z >= cfg.min_coherence_z:
            kept.append(p)
    return np.asarray(kept, dtype=picked.dtype), found


def _item(
    table: TermTable,
    scored: Scored,
    idx: int,
    aliases: list[int],
    rows: tuple[int, int],
    base_rows: tuple[int, int],
    rising: bool,
) -> TermTrend:
    col = int(scored.columns[idx])
    first = int(table.first_row[col])
    lo, hi = rows if rising else base_rows
    return trend_item(
        scored,
        idx,
        rising,
        term=table.readable(col),
        aliases=[table.readable(int(scored.columns[a])) for a in aliases],
        keys=[table.term(col), *[table.term(int(scored.columns[a])) for a in aliases]],  # term cache keys
        first_seen=day_date(int(table.day[first])).isoformat() if first >= 0 else None,
        example_ids=_examples(table, col, lo, hi),
    )


def bursts(
    table: TermTable, columns: np.ndarray, starts: list[date], as_of: date, groups: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Kleinberg burst state of each column (or group of columns) in the last period, and the period index
    it began."""
    if not len(columns):
        return np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64)
    counts, docs = period_stratum_counts(table, starts, as_of, np.asarray(columns, dtype=np.int64), groups)
    per_stratum_rate = counts.sum(axis=0) / np.maximum(docs.sum(axis=0), 1)[:, None]  # (S, C)
    period_docs = docs.sum(axis=1)
    base = (docs @ per_stratum_rate) / np.maximum(period_docs, 1)[:, None]  # expected rate per period at its mix
    return kleinberg_active(counts.sum(axis=1), period_docs, base)


def trend_item(
    scored: Scored,
    idx: int,
    rising: bool,
    *,
    term: str,
    aliases: list[str],
    keys: list[str],
    first_seen: str | None,
    example_ids: list[str],
    coherence: dict[str, float] | None | UnsetType = UNSET,
    family: str | UnsetType = UNSET,
) -> TermTrend:
    """A trend item (terms and families alike) with the test's statistics of its scored column."""
    t = scored.test
    docs = max(float(scored.docs[idx]), 1.0)
    return TermTrend(
        term=term,
        aliases=aliases,
        keys=keys,
        score=round(float(t.llr[idx]), 2),
        z=round(float(t.z[idx]), 2),
        ratio=round(float(t.ratio[idx]), 3),
        ratio_bound=round(float(t.ratio_low[idx] if rising else t.ratio_high[idx]), 3),
        recent_count=int(scored.recent_total[idx]),
        compared_count=int(t.observed[idx]),
        expected_count=round(float(t.expected_base[idx]), 2),
        recent_share=round(float(t.observed[idx]) / docs, 6),
        baseline_share=round(float(t.expected_base[idx]) / docs, 6),
        first_seen=first_seen,
        example_ids=example_ids,
        coherence=coherence,
        family=family,
    )
