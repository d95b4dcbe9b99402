"""Model families: the versioned names of one release (Qwen3, Qwen3-VL, Qwen3-Coder, Qwen3-8B) read as one.

A launch spreads over its variants, and a successor (Qwen3 after Qwen2.5) replaces a whole family, so
both are judged on the family: the documents that mention any of its member names.

- ``family_key``: a versioned name's family, lower case, hyphens folded: the letters before the first
  version number, the number with its minor part, and a one-letter tag glued to it (``GPT-4o`` is not
  ``GPT-4``); what follows after a hyphen is a variant of that release. Qwen3-VL, Qwen3-Coder -> qwen3;
  Qwen3.5-VL -> qwen3.5; Llama-4-Scout -> llama4; DeepSeek-V3.1-Terminus -> deepseekv3.1; GPT-4o-mini
  -> gpt4o. Names without a version number (GRPO, LoRA) have no family.
- ``stem_version``: the family's stem and version (qwen, (2, 5)), so a successor is the same stem with
  a higher version (qwen3 after qwen2.5, gpt5 after gpt4o, llama4 after llama3.1).
"""

from __future__ import annotations

import re
from datetime import date

import msgspec
import numpy as np
from msgspec import UNSET

from radar.analysis.trends.config import TrendsConfig, Windows, earlier_baseline, period_label, span
from radar.analysis.trends.counts import day_rows, stratum_counts
from radar.analysis.trends.emerging import (
    RecentCounts,
    Scored,
    bursts,
    rising,
    score_columns,
    score_counts,
    trend_item,
)
from radar.analysis.trends.result import Burst, TermTrend
from radar.analysis.trends.term_table import TermTable, day_date
from radar.analysis.trends.terms import NAME_PREFIX

# stem (letters, inner hyphens), version (digits, minor parts), an optional one-letter tag, then a variant tail
_FAMILY = re.compile(r"([A-Za-z][A-Za-z-]*?)-?(\d{1,3}(?:\.\d{1,2})?)([A-Za-z])?(?=$|[-_])")
MIN_STEM = 2  # "o3", "V2" are too short to name a family


def family_key(name: str) -> str | None:
    """The family of a versioned name (``@``-marked term key or surface), None for a name without a version."""
    name = name.removeprefix(NAME_PREFIX)
    found = _FAMILY.match(name)
    if found is None:
        return None
    stem, version, tag = found.group(1).rstrip("-"), found.group(2), found.group(3) or ""
    if len(stem.replace("-", "")) < MIN_STEM:
        return None
    return f"{stem.replace('-', '').lower()}{version}{tag.lower()}"


def stem_version(key: str) -> tuple[str, tuple[int, ...], str]:
    """(stem, version numbers, tag) of a family key: qwen2.5 -> ("qwen", (2, 5), ""), gpt4o -> ("gpt", (4,), "o")."""
    found = re.fullmatch(r"([a-z]+?)(\d{1,3}(?:\.\d{1,2})?)([a-z]?)", key)
    if found is None:
        return key, (), ""
    return found.group(1), tuple(int(p) for p in found.group(2).split(".")), found.group(3)


def successor_of(key: str, candidates: list[str]) -> list[str]:
    """The candidate families that succeed ``key``: same stem, a higher version (the tag alone does not count)."""
    stem, version, _ = stem_version(key)
    if not version:
        return []
    return [c for c in candidates if (sv := stem_version(c))[0] == stem and sv[1] and sv[1] > version]


def families(table: TermTable, columns: np.ndarray) -> dict[str, np.ndarray]:
    """Family key -> its member columns, among ``columns`` (term-table columns of names)."""
    out: dict[str, list[int]] = {}
    for col in columns.tolist():
        key = table.term(int(col))
        if key.startswith(NAME_PREFIX) and any(ch.isdigit() for ch in key):
            fam = family_key(key)
            if fam is not None:
                out.setdefault(fam, []).append(int(col))
    return {k: np.asarray(v, dtype=np.int64) for k, v in out.items()}


class Families:
    """The versioned names with a document between ``first`` and as_of, grouped into families."""

    def __init__(self, table: TermTable, first: date, as_of: date) -> None:
        lo, hi = day_rows(table, first, as_of)
        self.df = np.bincount(table.matrix[lo:hi].indices, minlength=table.matrix.shape[1])  # documents per column
        starts, ends = table.vocab.offsets[:-1], table.vocab.offsets[1:]
        cols = np.flatnonzero((self.df > 0) & (ends > starts))
        cols = cols[table.vocab.blob[starts[cols]] == ord(NAME_PREFIX)]
        groups = families(table, cols[_has_digit(table, cols)])
        self.table = table
        self.keys = list(groups)
        self.members = [groups[k] for k in self.keys]
        self.columns = np.concatenate(self.members) if self.members else np.zeros(0, np.int64)
        self.group = np.repeat(np.arange(len(self.keys)), [len(m) for m in self.members]).astype(np.int64)

    def select(self, fams: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Member columns of the families ``fams`` and their group index 0 .. len(fams) - 1."""
        if not len(fams):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        cols = [self.members[int(f)] for f in fams]
        return np.concatenate(cols), np.repeat(np.arange(len(fams)), [len(c) for c in cols]).astype(np.int64)

    def counts(self, lo: int, hi: int) -> RecentCounts:
        if not len(self.keys):
            return stratum_counts(self.table, lo, hi, np.zeros(0, np.int64))
        return stratum_counts(self.table, lo, hi, self.columns, self.group)


def _has_digit(table: TermTable, cols: np.ndarray) -> np.ndarray:
    """Which of these columns' keys contain a digit (vectorised over their bytes)."""
    if not len(cols):
        return np.zeros(0, dtype=bool)
    first = table.vocab.offsets[:-1][cols].astype(np.int64)
    length = table.vocab.offsets[1:][cols].astype(np.int64) - first
    at = np.repeat(first - np.concatenate([[0], np.cumsum(length)[:-1]]), length) + np.arange(int(length.sum()))
    byte = table.vocab.blob[at]
    digit = ((byte >= ord("0")) & (byte <= ord("9"))).astype(np.int64)
    return np.add.reduceat(digit, np.concatenate([[0], np.cumsum(length)[:-1]])) > 0


def score_families(fams: Families, win: Windows, cfg: TrendsConfig, recent_n: RecentCounts) -> Scored:
    """``emerging.score_terms`` for families: "columns" are family indices."""
    recent, n = recent_n
    base, m = fams.counts(*day_rows(fams.table, win.baseline_start, win.baseline_last))
    return score_counts(recent, n, base, m, cfg)


def family_lists(
    table: TermTable, win: Windows, cfg: TrendsConfig, window: str, starts: list[date]
) -> tuple[list[TermTrend], list[TermTrend]]:
    """(launches, successor declines) as emerging/declining items.

    A launch: a family that passes the rise rule (``emerging.rising``, continuing rises included) and was
    all but absent before: fewer than ``min_count`` documents expected from the baseline it was compared
    with. It needs no coherence check (a release is mentioned across topics; a versioned name is no generic
    word). A successor decline: a family whose share fell significantly (z <= -min_z, the rate ratio's
    upper bound <= 1 / successor_ratio, at least 2 * min_count expected documents) while a successor
    family (same stem, higher version) rose (z >= min_z against the same baseline).
    """
    last = len(starts) - 1
    # a replacement is gradual: judged over the last rise_periods periods against the baseline before them
    long = span(min(starts[max(0, last - cfg.rise_periods + 1)], win.recent_start), win.as_of, window, cfg)
    earliest = min(
        [win.baseline_start, long.baseline_start]
        + [
            earlier_baseline(win, starts[last - g], window, cfg).baseline_start
            for g in range(1, min(cfg.rise_periods, len(starts)))
        ]
    )
    fams = fams_long = Families(table, earliest, win.as_of)
    if not fams.keys:
        return [], []
    r_lo, r_hi = day_rows(table, win.recent_start, win.as_of)
    recent_n = fams.counts(r_lo, r_hi)

    def burst_of(idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cols, groups = fams.select(idx)
        return bursts(table, cols, starts, win.as_of, groups)

    def score_at(w: Windows, idx: np.ndarray | None) -> Scored:
        if idx is None:
            return score_families(fams, w, cfg, recent_n)
        cols, groups = fams.select(idx)
        scored = score_columns(table, w, cfg, cols, groups)
        scored.columns = np.asarray(idx, dtype=np.int64)
        return scored

    score = score_families(fams, win, cfg, recent_n)
    up, active, since = rising(table, win, cfg, window, starts, score_at, burst_of, score, gap_first=True)
    launches = []
    for i in np.flatnonzero(up.test.expected_base < cfg.min_count).tolist():
        item = _item(fams, up, i, win, window, starts, r_lo, r_hi)
        # a launch that continues: compared with the baseline before its burst
        before = earlier_baseline(win, starts[last - int(up.gap[i])], window, cfg) if up.gap[i] else None
        launches.append(
            msgspec.structs.replace(
                item,
                rule="family launch",
                baseline_end=before.baseline_last.isoformat() if before else UNSET,
                burst=Burst(bool(active[i]), period_label(starts[int(since[i])], window)),
            )
        )
    score = score_families(fams_long, long, cfg, fams_long.counts(*day_rows(table, long.recent_start, win.as_of)))
    t = score.test
    falling = np.flatnonzero(
        (t.z <= -cfg.min_z) & (t.ratio_high <= 1 / cfg.successor_ratio) & (t.expected_base >= 2 * cfg.min_count)
    )
    z_of = {fams_long.keys[int(c)]: float(z) for c, z in zip(score.columns, t.z, strict=True)}
    risen = [k for k, z in z_of.items() if z >= cfg.min_z]
    b_lo, b_hi = day_rows(table, long.baseline_start, long.baseline_last)
    declines = []
    for i in falling.tolist():
        after = successor_of(fams_long.keys[int(score.columns[i])], risen)
        if not after:
            continue
        item = _item(fams_long, score, i, long, window, starts, b_lo, b_hi)
        declines.append(
            msgspec.structs.replace(
                item,
                rule="successor",
                baseline_end=long.baseline_last.isoformat(),
                successor=_display(fams_long, fams_long.keys.index(max(after, key=z_of.__getitem__))),
                burst=Burst(False, None),
            )
        )
    return launches, declines


def _members(fams: Families, fam: int) -> np.ndarray:
    """The family's member columns, the one spelled as the family itself first (Qwen3 before Qwen3-VL),
    then by documents."""
    members = fams.members[fam]
    table, key = fams.table, fams.keys[fam]
    rank = [(_fold(table.term(int(c))).replace(" ", "") != key, -int(fams.df[int(c)])) for c in members]
    return members[sorted(range(len(members)), key=rank.__getitem__)]


def _display(fams: Families, fam: int) -> str:
    return fams.table.readable(int(_members(fams, fam)[0]))


def _item(
    fams: Families, scored: Scored, idx: int, win: Windows, window: str, starts: list[date], lo: int, hi: int
) -> TermTrend:
    table = fams.table
    fam = int(scored.columns[idx])
    members = _members(fams, fam)
    first_rows = table.first_row[members]
    first = int(first_rows[first_rows >= 0].min()) if (first_rows >= 0).any() else -1
    cols, _ = fams.select(np.array([fam]))
    block = table.matrix[lo:hi][:, cols]
    rows = np.flatnonzero(np.asarray(block.sum(axis=1)).ravel())
    return trend_item(
        scored,
        idx,
        bool(scored.test.llr[idx] >= 0),
        term=table.readable(int(members[0])),
        aliases=[table.readable(int(c)) for c in members[1:]],
        keys=[table.term(int(c)) for c in members],
        first_seen=day_date(int(table.day[first])).isoformat() if first >= 0 else None,
        example_ids=[table.ids[lo + int(r)] for r in rows[::-1][:3]],
        coherence=None,
        family=fams.keys[fam],
    )


def join(items: list[TermTrend], family: list[TermTrend], limit: int, rising: bool) -> list[TermTrend]:
    """Family items join a list: one whose members include a listed term adds its members to that term's
    aliases and keys (and its family and successor; the listed term keeps its own rule, score and counts);
    the others are listed by score."""
    out = list(items)
    for fam in family:
        spelled = {_fold(k) for k in fam.keys}
        at = next((i for i, it in enumerate(out) if spelled & {_fold(k) for k in it.keys}), None)
        if at is None:
            out.append(fam)
            continue
        home = out[at]
        keys, aliases = list(home.keys), list(home.aliases)
        for key, alias in zip(fam.keys, [fam.term, *fam.aliases], strict=True):
            if key not in keys:
                keys.append(key)
                aliases.append(alias)
        successor = fam.successor if fam.successor is not UNSET else home.successor
        out[at] = msgspec.structs.replace(home, keys=keys, aliases=aliases, family=fam.family, successor=successor)
    return sorted(out, key=lambda it: -it.score if rising else it.score)[:limit]


def _fold(key: str) -> str:
    """A term key as a spelling: DINOv3 (name) and "dinov3" (n-gram) are one."""
    return re.sub(r"[-\s]+", " ", key.removeprefix(NAME_PREFIX).lower())
