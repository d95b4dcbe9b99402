"""New methods: what papers of the last ``new_method_days`` introduce (method cards), with how fast they spread.

The composition root hands in the introductions (``TrendsEnv.introductions``: the method cards of
analysis.contributions, for a span of days): a name is new when a paper published within ``new_method_days`` of
as_of introduces it (and after the first ``burn_in_days`` of the data, where a card cannot tell a reused name from
a new one), its kind is a method, system or hardware design, it is in the lab's areas and at most ``MAX_PRIOR``
stored papers named it before (else its later mentions are not adoption of this paper's method). Its documents are the
introducing paper and the later papers naming it, those in the record by as_of only; ``count`` is how many,
``recent_count`` those of the recent window, ``growth`` the stratified rate ratio of the recent window over the
baseline (as for terms), ``series`` the documents per period since the introduction. Listed most-named first.

Without introductions (a trends environment built without the contributions stage), the plain baseline the
backtest compares with: names (acronyms, named systems) first seen recently in at least ``min_method_count``
documents (``first_seen_names``). Spellings that differ only in case are one name there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import date, timedelta

import numpy as np
import scipy.sparse as sp

from radar.analysis.contributions.cards import MethodCard
from radar.analysis.contributions.update import name_key
from radar.analysis.trends.config import TrendsConfig, Windows, period_label
from radar.analysis.trends.counts import day_rows, period_stratum_counts, stratum_counts
from radar.analysis.trends.result import NewMethod, PeriodCount
from radar.analysis.trends.stats import stratified_test
from radar.analysis.trends.term_table import TermTable, day_date, day_number
from radar.analysis.trends.terms import phrase_key

# the kinds a trends list calls methods: a hardware design too (the report keeps it for a hardware profile)
KINDS = ("method", "system", "hardware")
EXAMPLES = 3
# a name more stored papers named before its introduction is an acronym already in use (CIFAR-10, MDP, DRAM, a
# second RPO): the later papers naming it are not adopting what this paper introduced, so it is not listed
MAX_PRIOR = 2
# (first day, last day) -> the cards of the names papers published in those days introduce (the composition root
# binds the store, as it does for ``kind_of``: bringing the contributions up to date writes tables trends never reads)
Introductions = Callable[[str, str], Sequence[MethodCard]]


def spelling_key(term: str) -> str:
    """One key for the spellings of a name: case, hyphens, underscores and spaces ignored (Qwen-3 = Qwen3)."""
    return re.sub(r"[-_ ]+", "", term.lower())


def introduction_span(table: TermTable, win: Windows, cfg: TrendsConfig) -> tuple[date, date] | None:
    """The days whose papers' introductions are new as of ``win.as_of``; None when the data is too young."""
    if not len(table.day):
        return None
    first = max(win.as_of - timedelta(days=cfg.new_method_days - 1), day_date(int(table.day[0]) + cfg.burn_in_days))
    return (first, win.as_of) if first <= win.as_of else None


def phrase_prior(table: TermTable, cards: Sequence[MethodCard], row_of: dict[str, int]) -> dict[tuple[str, str], int]:
    """For each card named by a phrase of plain words ("Preference Optimization", "Expert Race"), by (name,
    introducing paper): the documents before its introducing paper's row that hold the phrase in any case. A card
    counts its earlier mentions by spelling key (one token) and reads phrases only from its paper's day on, so a
    phrase in use for years ("preference optimization") would otherwise look new; the term table holds every
    document's n-grams. Two papers introducing one name each count what came before their own."""
    wanted: dict[tuple[str, str], tuple[int, int]] = {}  # (name, paper) -> (column, introducing row)
    for card in cards:
        key = phrase_key(card.name)
        intro = row_of.get(card.introduced_by or "")
        col = table.column(key) if key is not None and intro is not None else None
        if col is not None and intro is not None and 0 <= table.first_row[col] < intro:
            wanted[(card.name, card.introduced_by or "")] = (col, intro)
    if not wanted:
        return {}
    cards_of = list(wanted)
    columns = table.matrix[:, [wanted[c][0] for c in cards_of]].tocsc()
    out = {}
    for j, card_key in enumerate(cards_of):
        rows = columns.indices[columns.indptr[j] : columns.indptr[j + 1]]
        out[card_key] = int(np.count_nonzero(rows < wanted[card_key][1]))
    return out


def _strata(table: TermTable, lo: int, hi: int, block: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """(S x C) documents of rows [lo, hi) in each column of ``block`` (rows x C, 0/1), and (S,) documents."""
    n_strata = len(table.strata)
    strata = table.stratum[lo:hi]
    group = sp.csr_matrix((np.ones(hi - lo, dtype=np.float32), (strata, np.arange(hi - lo))), shape=(n_strata, hi - lo))
    counts = np.asarray((group @ block[lo:hi]).todense()) if block.shape[1] else np.zeros((n_strata, 0))
    return counts, np.bincount(strata, minlength=n_strata).astype(np.float64)


def introduced_names(
    table: TermTable, win: Windows, cfg: TrendsConfig, window: str, starts: list[date], cards: Sequence[MethodCard]
) -> list[NewMethod]:
    """The new methods among ``cards`` (the introductions of ``introduction_span``), most-named first."""
    as_of_day = day_number(win.as_of.isoformat())
    end = table.rows_until(as_of_day)  # rows in the record by as_of
    row_of = {doc_id: i for i, doc_id in enumerate(table.ids[:end])}
    earlier = phrase_prior(table, cards, row_of)
    picked: list[tuple[MethodCard, np.ndarray]] = []
    seen: set[str] = set()
    for card in sorted(cards, key=lambda c: (c.introduced_on, c.introduced_by or "")):
        key = name_key(card.name)
        intro = row_of.get(card.introduced_by or "")
        prior = max(card.prior_mentions, earlier.get((card.name, card.introduced_by or ""), 0))
        if card.kind not in KINDS or intro is None or key in seen or prior > MAX_PRIOR:
            continue  # another kind, its paper not in the record by as_of, a second paper of the name, or in use
        rows = np.array(sorted({intro, *(row_of[i] for i in card.used_by if i in row_of)}), dtype=np.int64)
        if len(rows) >= cfg.min_method_count:
            seen.add(key)
            picked.append((card, rows))
    if not picked:
        return []
    columns = np.concatenate([np.full(len(rows), j) for j, (_, rows) in enumerate(picked)])
    block = sp.csr_matrix(
        (np.ones(len(columns), dtype=np.float32), (np.concatenate([r for _, r in picked]), columns)),
        shape=(len(table.ids), len(picked)),
    )
    r_lo, r_hi = day_rows(table, win.recent_start, win.as_of)
    b_lo, b_hi = day_rows(table, win.baseline_start, win.recent_start - timedelta(days=1))
    recent, n = _strata(table, r_lo, r_hi, block)
    base, m = _strata(table, b_lo, b_hi, block)
    test = stratified_test(recent, n, base, m, cfg.min_stratum_docs)
    bounds = np.array([day_number(s.isoformat()) for s in starts[1:]] + [as_of_day + 1])
    first_period = day_number(starts[0].isoformat()) if starts else as_of_day + 1
    out: list[tuple[tuple[int, int, int, float, str], NewMethod]] = []
    for j, (card, rows) in enumerate(picked):
        days = table.day[rows]
        in_recent = rows[(rows >= r_lo) & (rows < r_hi)]
        since = day_number(card.introduced_on) if card.introduced_on else int(days[0])
        period = np.searchsorted(bounds, days[days >= first_period], side="right")
        per_period = np.bincount(period, minlength=len(starts))
        series = [
            PeriodCount(period_label(s, window), int(c))
            for s, c in zip(starts, per_period, strict=True)
            if day_number(s.isoformat()) >= since - 31
        ]
        later = [table.ids[int(r)] for r in rows[::-1] if table.ids[int(r)] != card.introduced_by]
        item = NewMethod(
            name=card.name,
            first_seen=card.introduced_on,
            first_id=card.introduced_by or "",
            count=len(rows),
            recent_count=len(in_recent),
            growth=round(float(test.ratio[j]), 3),
            example_ids=[card.introduced_by or "", *later][:EXAMPLES],
            series=series,
            kind=card.kind,
            area=card.area,
            title=card.title,
            changes=card.changes,
        )
        # most-named first, then the most named lately, then the newer (as many papers in less time), the surest
        out.append(((-len(rows), -len(in_recent), -since, -card.score, card.name.lower()), item))
    out.sort(key=lambda pair: pair[0])
    return [item for _, item in out[: cfg.max_methods]]


def name_columns(table: TermTable) -> np.ndarray:
    starts = table.vocab.offsets[:-1]
    nonempty = table.vocab.offsets[1:] > starts
    first_byte = np.zeros(len(starts), dtype=np.uint8)
    first_byte[nonempty] = table.vocab.blob[starts[nonempty]]
    return np.flatnonzero(first_byte == ord("@"))


def first_seen_names(
    table: TermTable, win: Windows, cfg: TrendsConfig, window: str, starts: list[date]
) -> list[NewMethod]:
    """The plain baseline: names first seen within ``new_method_days`` of as_of in ``min_method_count`` documents."""
    if not len(table.day):
        return []
    as_of_day = day_number(win.as_of.isoformat())
    horizon = as_of_day - cfg.new_method_days
    data_start = int(table.day[0])
    names = name_columns(table)
    first = table.first_row[names]
    seen = first >= 0
    names, first = names[seen], first[seen]
    first_day = table.day[first]
    # A name is new when no spelling of it was seen before (Qwen-3 after Qwen3, GPT5 after GPT-5 are not new).
    keys = [spelling_key(table.term(int(col))) for col in names]
    earliest: dict[str, int] = {}
    for key, day in zip(keys, first_day.tolist(), strict=True):
        earliest[key] = min(day, earliest.get(key, day))
    first_day = np.array([earliest[key] for key in keys], dtype=first_day.dtype)
    fresh = (first_day > horizon) & (first_day <= as_of_day) & (first_day >= data_start + cfg.burn_in_days)
    names, first = names[fresh], first[fresh]
    if not len(names):
        return []
    lo, hi = day_rows(table, day_date(horizon + 1), win.as_of)
    counts = np.asarray(table.matrix[lo:hi][:, names].sum(axis=0)).ravel()
    names, first, counts = (
        names[counts >= cfg.min_method_count],
        first[counts >= cfg.min_method_count],
        counts[counts >= cfg.min_method_count],
    )
    # one method per spelling (case, hyphens, spaces): the most frequent spelling wins
    best: dict[str, int] = {}
    for i, col in enumerate(names):
        key = spelling_key(table.term(int(col)))
        if key not in best or counts[i] > counts[best[key]]:
            best[key] = i
    keep = np.array(sorted(best.values()), dtype=np.int64)
    if not len(keep):
        return []
    names, first, counts = names[keep], first[keep], counts[keep]
    r_lo, r_hi = day_rows(table, win.recent_start, win.as_of)
    b_lo, b_hi = day_rows(table, win.baseline_start, win.recent_start - timedelta(days=1))
    recent, n = stratum_counts(table, r_lo, r_hi, names)
    base, m = stratum_counts(table, b_lo, b_hi, names)
    test = stratified_test(recent.toarray(), n, base.toarray(), m, cfg.min_stratum_docs)
    recent_total = np.asarray(recent.sum(axis=0)).ravel()
    order = np.lexsort((-recent_total, -counts))[: cfg.max_methods]
    period_counts, _ = period_stratum_counts(table, starts, win.as_of, names[order])
    per_period = period_counts.sum(axis=1)
    out: list[NewMethod] = []
    for rank, i in enumerate(order):
        col = int(names[i])
        rows = np.flatnonzero(np.asarray(table.matrix[r_lo:r_hi][:, [col]].todense()).ravel())
        since = first_day_of = int(table.day[first[i]])
        out.append(
            NewMethod(
                name=table.readable(col),
                first_seen=day_date(first_day_of).isoformat(),
                first_id=table.ids[int(first[i])],
                count=int(counts[i]),
                recent_count=int(recent_total[i]),
                growth=round(float(test.ratio[i]), 3),
                example_ids=[table.ids[r_lo + int(r)] for r in rows[::-1][:3]],
                series=[
                    PeriodCount(period_label(s, window), int(c))
                    for s, c in zip(starts, per_period[:, rank], strict=True)
                    if day_number(s.isoformat()) >= since - 31
                ],
            )
        )
    return out
