"""Senses of a name: which of its meanings each paper naming it means.

One spelling can name unrelated things. On the full corpus GRPO is "Group Relative Policy Optimization" in
about 350 papers that spell it out and "Group Robust Preference Optimization" in one; QAE is a quantum
autoencoder, quantum amplitude estimation and Quantile Advantage Estimation. A paper that defines the
acronym says which (the long form stored with its mention, ``MentionRow.expansion``); a paper that does not
is given the sense the defining papers of its own area use (its contribution's area: an RL paper's QAE is the
RL one), their votes smoothed toward the sense most papers define. Long forms group by their words' stems ("Group
Relative Policy Optimisation" = "Group-Relative Policy Optimization").

A card counts only the papers of its own sense (``senses_of``, ``sense_with``); ``radar methods --name`` shows
the sense the lab's areas use most, then the one most papers use, and names the others.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from radar.analysis.contributions.labels import LAB_AREAS
from radar.store.contributions import MentionRow

_WORD = re.compile(r"[a-z0-9]+")


def _split(text: str) -> list[str]:
    return text.split()


_LINKING = frozenset(_split("a an the of for and with in to via on by from over under at as or based"))
STEM = 5  # letters of a word a sense compares (optimization = optimisation)
SAME_SENSE = 0.6  # word-set overlap (Jaccard) at which two long forms are one sense
PRIOR = 2.0  # pseudo-votes of the overall shares added to an area's own votes


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


def senses_of(mentions: Sequence[MentionRow]) -> list[Sense]:
    """The senses of one name's mentions, the main one first: the most papers in the lab's areas, then the most
    papers. One sense (key '') when no paper spells the name out."""
    if not mentions:
        return []
    keyed = [(m, sense_key(m.expansion)) for m in mentions]
    counts = Counter(k for _, k in keyed if k)
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
    for m, k in keyed:
        if k:
            members[head_of[k]].append(m)
            continue
        # the sense the defining papers of its area use, their votes smoothed toward the overall shares (one
        # odd definer in an area does not take that area's undefined mentions)
        votes = by_area.get(m.area, Counter())
        members[max(heads, key=lambda h: (votes[h] + PRIOR * overall[h] / total, -heads.index(h)))].append(m)
    found = [_sense(h, ms) for h, ms in members.items() if ms]
    return sorted(found, key=lambda s: (-s.lab_papers, -len(s.mentions), s.key))


def _sense(key: str, mentions: Sequence[MentionRow]) -> Sense:
    spelled = Counter(m.expansion for m in mentions if m.expansion and sense_key(m.expansion))
    expansion = max(spelled, key=lambda e: (spelled[e], e[:1].isupper(), e)) if spelled else ""
    lab = sum(m.area in LAB_AREAS for m in mentions)
    return Sense(key, expansion, tuple(mentions), lab)


def sense_with(senses: Sequence[Sense], doc_id: str) -> Sense | None:
    """The sense whose papers include ``doc_id`` (None when none does)."""
    return next((s for s in senses if doc_id in s.ids), None)
