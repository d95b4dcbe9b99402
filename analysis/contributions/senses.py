"""Senses of a name: which of its meanings each paper naming it means.

One spelling can name unrelated things. On the full corpus GRPO is "Group Relative Policy Optimization" in
about 350 papers that spell it out and "Group Robust Preference Optimization" in one; QAE is a quantum
autoencoder, quantum amplitude estimation and Quantile Advantage Estimation. A paper that defines the
acronym says which (the long form stored with its mention, ``MentionRow.expansion``); a paper that does not
is given the sense the defining papers of its own area use (its contribution's area: an RL paper's QAE is the
RL one), their votes smoothed toward the sense most papers define. Long forms group by their words' stems ("Group
Relative Policy Optimisation" = "Group-Relative Policy Optimization").

A name several stored papers introduce afresh (SPARK: a policy-and-reward co-evolving framework, a KV-cache
pruning method, a tool-use RL policy, a creative-ideas system ...) is as many senses as papers, even when no
paper spells it out: each introducing paper heads a sense of its own, and a paper naming it joins the sense of the
latest introduction before it in its own area (else the latest before it). An introduction counts only where the
name was still new (fewer than ``NEW_BEFORE`` earlier papers of that sense named it: a paper re-defining GRPO
starts nothing).

A card counts only the papers of its own sense (``senses_of``, ``sense_with``); ``radar methods --name`` shows
the sense the lab's areas use most, then the one most papers use, and names the others. A long form only a few
papers give (one paper's "vision Large Language Model (vLLM)") does not name the papers that give none: those
stay a sense of their own (``MIN_DEFINERS``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from radar.analysis.contributions.labels import LAB_AREAS
from radar.analysis.contributions.table import MentionRow

_WORD = re.compile(r"[a-z0-9]+")


def _split(text: str) -> list[str]:
    return text.split()


_LINKING = frozenset(_split("a an the of for and with in to via on by from over under at as or based"))
STEM = 5  # letters of a word a sense compares (optimization = optimisation)
SAME_SENSE = 0.6  # word-set overlap (Jaccard) at which two long forms are one sense
PRIOR = 2.0  # pseudo-votes of the overall shares added to an area's own votes
NEW_BEFORE = 20  # earlier papers of a sense naming a name after which a paper "introducing" it starts no sense
# papers giving a long form, and their share of those naming the name, below which the long form does not speak
# for the papers that give none
MIN_DEFINERS = 3
MIN_DEFINED_SHARE = 0.05


@lru_cache(maxsize=1 << 16)  # a week's cards read the same long forms again and again (bounded: a dashboard lives long)
def sense_key(expansion: str) -> str:
    """The stems of a long form's words, linking words left out ("Group-Relative Policy Optimisation" ->
    "group relat polic optim"); '' when nothing is left."""
    return " ".join(w[:STEM] for w in _WORD.findall(expansion.lower()) if w not in _LINKING)


def same_sense(a: str, b: str) -> bool:
    """Whether two sense keys are one meaning: equal, or most of their stems shared."""
    if a == b:
        return True
    x, y = set(a.split()), set(b.split())
    return bool(x and y) and len(x & y) / len(x | y) >= SAME_SENSE


@dataclass(frozen=True, slots=True)
class Sense:
    """One meaning of a name and the papers that mean it (oldest first)."""

    key: str  # the sense key of its most frequent long form ('' when no paper spells the name out)
    expansion: str  # that long form as most papers write it
    mentions: tuple[MentionRow, ...]
    lab_papers: int  # of them, papers in the lab's areas

    @property
    def ids(self) -> frozenset[str]:
        return frozenset(m.doc_id for m in self.mentions)


def senses_of(mentions: Sequence[MentionRow], intros: Sequence[Intro] = ()) -> list[Sense]:
    """The senses of one name's mentions, the main one first: the most papers in the lab's areas, then the most
    papers. One sense (key '') when no paper spells the name out and at most one paper introduces it; ``intros``:
    the stored papers introducing the name (each may head a sense: the module's docstring)."""
    if not mentions:
        return []
    found = _by_long_form(mentions)
    if len(intros) > 1:
        found = [part for sense in found for part in _split_by_intros(sense, intros)]
    return sorted(found, key=lambda s: (-s.lab_papers, -len(s.mentions), s.key))


@dataclass(frozen=True, slots=True)
class Intro:
    """A stored paper introducing a name: its id, day and area."""

    doc_id: str
    published: str
    area: str


def _by_long_form(mentions: Sequence[MentionRow]) -> list[Sense]:
    keyed = [(m, sense_key(m.expansion)) for m in mentions]
    counts = Counter(k for _, k in keyed if k)
    definers = sum(counts.values())
    if not counts:
        return [_sense("", mentions)]
    first_day: dict[str, str] = {}
    for m, k in keyed:
        if k:
            first_day.setdefault(k, m.published)
    heads: list[str] = []  # one representative key per sense, most frequent first, then the earliest used
    head_of: dict[str, str] = {}
    for k, _ in sorted(counts.items(), key=lambda kv: (-kv[1], first_day[kv[0]], kv[0])):
        head = next((h for h in heads if same_sense(k, h)), None)
        if head is None:
            heads.append(k)
            head = k
        head_of[k] = head
    by_area: dict[str, Counter[str]] = {}
    overall: Counter[str] = Counter()
    for m, k in keyed:
        if k:
            by_area.setdefault(m.area, Counter())[head_of[k]] += 1
            overall[head_of[k]] += 1
    total = sum(overall.values())
    members: dict[str, list[MentionRow]] = {h: [] for h in heads}
    speaks = definers >= MIN_DEFINERS or definers >= MIN_DEFINED_SHARE * len(mentions)
    undefined: list[MentionRow] = []
    area_sense: dict[str, str] = {}  # an area's undefined mentions all go to one sense: decided once per area
    for m, k in keyed:
        if k:
            members[head_of[k]].append(m)
            continue
        if not speaks:  # a long form a handful of papers give does not name the many that give none (vLLM)
            undefined.append(m)
            continue
        # the sense the defining papers of its area use, their votes smoothed toward the overall shares (one
        # odd definer in an area does not take that area's undefined mentions)
        if m.area not in area_sense:
            votes = by_area.get(m.area, Counter())
            area_sense[m.area] = max(heads, key=lambda h: (votes[h] + PRIOR * overall[h] / total, -heads.index(h)))
        members[area_sense[m.area]].append(m)
    found = [_sense(h, ms) for h, ms in members.items() if ms]
    if undefined:
        found.append(_sense("", undefined))
    return found


def _split_by_intros(sense: Sense, intros: Sequence[Intro]) -> list[Sense]:
    """``sense`` split by the introducing papers among its mentions that started something new (fewer than
    ``NEW_BEFORE`` of its papers named it before): each heads a part; every other paper joins the part of the
    latest head on or before it in its own area, else the latest head before it, else the first."""
    ids = sense.ids
    ordered = sorted(sense.mentions, key=lambda m: (m.published, m.doc_id))
    position = {m.doc_id: i for i, m in enumerate(ordered)}
    heads = [i for i in sorted(intros, key=lambda x: (x.published, x.doc_id)) if i.doc_id in ids]
    heads = [h for h in heads if position[h.doc_id] < NEW_BEFORE]
    if len(heads) < 2:
        return [sense]
    parts: dict[str, list[MentionRow]] = {h.doc_id: [] for h in heads}
    for m in ordered:
        if m.doc_id in parts:
            parts[m.doc_id].append(m)
            continue
        before = [h for h in heads if (h.published, h.doc_id) <= (m.published, m.doc_id)]
        same = [h for h in before if h.area == m.area]
        head = (same or before or heads)[-1 if (same or before) else 0]
        parts[head.doc_id].append(m)
    return [_sense(f"{sense.key}@{doc_id}" if sense.key else f"@{doc_id}", ms) for doc_id, ms in parts.items()]


def _sense(key: str, mentions: Sequence[MentionRow]) -> Sense:
    spelled = Counter(m.expansion for m in mentions if m.expansion and sense_key(m.expansion))
    expansion = max(spelled, key=lambda e: (spelled[e], e[:1].isupper(), e)) if spelled else ""
    lab = sum(m.area in LAB_AREAS for m in mentions)
    return Sense(key, expansion, tuple(mentions), lab)


def sense_with(senses: Sequence[Sense], doc_id: str) -> Sense | None:
    """The sense whose papers include ``doc_id`` (None when none does)."""
    return next((s for s in senses if doc_id in s.ids), None)
