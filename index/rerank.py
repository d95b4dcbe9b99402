"""Re-ranking of the hybrid search's candidates by what a short query names.

A lab lead types a few words ("GRPO variance reduction", "FP8 training stability", "expert parallelism for MoE
training"): every word is a condition, and a paper is about them when its title and abstract hold all of them, its
title holds the query's phrases, and its title does not name a sibling instead (FP4 for FP8, inference for
training). The dense and keyword rankings are fused with these rankings of the same candidates, each a vote in the
reciprocal rank fusion:

- coverage: the share of the query's words (each weighted by its IDF in the keyword index) that the title + abstract
  hold: a plural or singular form counts (bubbles, bubble), a compound by its parts (KV-cache as KV and cache) and an
  acronym by its long form from the corpus (MoE as mixture of experts: index/acronyms.py);
- phrases: the share of the query's adjacent word pairs ("variance reduction", "code generation") found as phrases,
  in the title (a strong vote) and in the title + abstract (a weak one);
- names: the papers whose title names every name of the query (FP8, H100, Qwen2.5) first;
- conflicts: a paper whose title names a sibling of a query's name and not the name (FP4, INT6 for FP8, INT4) or only
  the other phase (inference, serving for training) goes after every paper that does not.

- similar (off by default): the fused top ``depth`` ordered by a similarity the caller computes from the query's
  vector (``Searcher(similarity=...)``: query to stored title vectors, to abstract sentences, to the top's centroid);
  measured in benchmarks/bench_search.py and left at weight 0, none lifted both query sets.

The dense query also carries the long forms of the query's acronyms ("RL" -> "reinforcement learning").
The weights (``Votes``) were set on the 25 development queries of tests/data/lead_search_queries.jsonl; the 25
held-out queries beside it (lead_search_queries_heldout.jsonl) and the known-item queries check them, each vote
left out in turn (benchmarks/bench_search.py; figures in docs/benchmarks.md)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from radar.index.acronyms import expand
from radar.index.keyword import STOP, KeywordIndex, names, terms, unlatex


@dataclass(frozen=True)
class Votes:
    """Weights of the rankings in the fusion (reciprocal rank fusion, constant ``SearchConfig.rrf_k``); a weight of
    0 leaves that ranking out. ``acronyms``: the long forms count (coverage, dense query); ``conflicts_last``: a
    paper naming a sibling instead goes last."""

    dense: float = 0.75
    keyword: float = 1.0
    coverage: float = 4.0
    title_phrases: float = 1.5
    phrases: float = 0.5
    names: float = 1.0
    similar: float = 0.0  # the caller's similarity vote over the fused top ``depth`` (rank's ``similar``)
    depth: int = 50
    acronyms: bool = True
    conflicts_last: bool = True


_WORD = re.compile(r"[^\W_]+(?:[.\-+/_][^\W_]+)*")  # a query word, a compound name whole (as keyword.terms)
_TOKEN = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")  # words of a phrase: hyphens split (KV-cache -> kv cache)
_GAPS = str.maketrans({c: " " for c in map(chr, range(128)) if not (c.isascii() and (c.isalnum() or c == "."))})
_NAME = re.compile(r"^([a-z]+)\d[\w.]*$")  # fp8 -> fp, int4 -> int, h100 -> h, qwen2.5 -> qwen
PHASES = {
    "training": frozenset({"training", "train", "trained", "pre-training", "pretraining", "fine-tuning", "finetuning"}),
    "inference": frozenset({"inference", "serving", "serve", "decoding", "deployment"}),
}


def singular(word: str) -> str:
    """A plural's singular by its suffix alone (Harman's S-stemmer, JASIS 1991): bubbles -> bubble, models ->
    model, policies -> policy; loss, status and analysis stay."""
    if len(word) > 4 and word.endswith("ies") and word[-4] not in "ae":
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("es") and word[-3] not in "aeo":
        return word[:-1]
    if len(word) > 3 and word.endswith("s") and word[-2] not in "us":
        return word[:-1]
    return word


def inflections(word: str) -> tuple[str, ...]:
    """The word and the forms whose ``singular`` is its singular: model, models; policy, policies."""
    base = singular(word)
    forms = [word, base, base + "s", base + "es"]
    if base.endswith("y"):
        forms.append(base[:-1] + "ies")
    return tuple(dict.fromkeys(forms))


def plain(text: str) -> str:
    """Lower case, words separated by single spaces, a space at each end: how phrases are looked up. A full stop
    ends a word (a decimal point does not: qwen2.5)."""
    return " " + " ".join(text.lower().translate(_GAPS).replace(". ", " ").rstrip(".").split()) + " "


def _pattern(words: list[str]) -> re.Pattern[str]:
    """Consecutive words, each in any of its inflections, in a ``plain`` text."""
    return re.compile(" " + " ".join("(?:" + "|".join(map(re.escape, inflections(w))) + ")" for w in words) + " ")


@dataclass(frozen=True)
class Concept:
    word: str  # as typed, lower case: grpo, kv-cache, qwen2.5
    parts: tuple[str, ...]  # a compound's parts (kv, cache), else ()
    long_forms: tuple[str, ...]  # an acronym's long forms as the corpus writes them (mixture of experts)
    weight: float  # IDF in the keyword index


@dataclass(frozen=True)
class Query:
    text: str
    concepts: tuple[Concept, ...]
    phrases: tuple[tuple[str, str], ...]  # adjacent content words
    names: tuple[str, ...]  # index.keyword.names
    phase: str  # "training", "inference" or "" (none or both)

    @property
    def dense_text(self) -> str:
        """The text the dense retriever embeds: the query and the first long form of each of its acronyms."""
        extra = [c.long_forms[0] for c in self.concepts if c.long_forms]
        return " ".join([self.text, *extra])


def _phase(tokens: set[str]) -> set[str]:
    return {p for p, words in PHASES.items() if tokens & words}


def analyse(query: str, keyword: KeywordIndex, acronyms: bool = True) -> Query:
    """The query's concepts (words with their IDF, parts and, with ``acronyms``, acronym long forms), phrases, names
    and phase."""
    n = len(keyword.doc_ids)
    concepts = []
    for word in dict.fromkeys(m.group(0) for m in _WORD.finditer(query.lower())):
        if len(word) < 2 or word in STOP:
            continue
        toks = terms(word) or [word]
        df = min(keyword.doc_freq(t) for t in toks)
        parts = tuple(t for t in toks if t != word)
        long_forms = tuple(expand(keyword.acronyms, word)) if acronyms else ()
        concepts.append(Concept(word, parts, long_forms, math.log((n + 1) / (df + 0.5))))
    raw = _TOKEN.findall(query.lower().replace("-", " "))
    phrases = tuple(dict.fromkeys((a, b) for a, b in zip(raw, raw[1:], strict=False) if STOP.isdisjoint((a, b))))
    phase = _phase(set(terms(query)))
    return Query(query, tuple(concepts), phrases, tuple(names(query)), phase.pop() if len(phase) == 1 else "")


@dataclass(frozen=True)
class Evidence:
    coverage: float  # IDF-weighted share of the query's concepts in title + abstract
    phrases: float  # share of the query's phrases in title + abstract
    title_phrases: float  # ... in the title
    names_in_title: bool  # the title names every name of the query
    conflict: bool  # the title names a sibling of a query name instead, or only the other phase


def evidence(q: Query, keyword: KeywordIndex, texts: Mapping[str, tuple[str, str]]) -> dict[str, Evidence]:
    """What each paper's title and abstract hold of the query. ``texts``: id -> (title, abstract) of the papers,
    which must be in the keyword index (a concept's words are looked up in its postings). LaTeX markup is read as
    its words (index.keyword.unlatex), as the index reads it."""
    texts = {d: (unlatex(t), unlatex(a)) for d, (t, a) in texts.items()}
    found = {d: keyword.position(d) for d in texts}
    docs = [d for d, i in found.items() if i is not None]
    at = np.array([found[d] for d in docs], dtype=np.int64)
    looks_up = bool(q.phrases) or any(c.long_forms for c in q.concepts)
    plains = {d: (t := plain(texts[d][0]), t + plain(texts[d][1]) if looks_up else "") for d in docs}
    total = sum(c.weight for c in q.concepts) or 1.0
    covered = dict.fromkeys(docs, 0.0)
    for c in q.concepts:
        held = np.isin(at, keyword.positions(inflections(c.word)))
        if c.parts:
            held |= np.logical_and.reduce([np.isin(at, keyword.positions(inflections(p))) for p in c.parts])
        forms = [_pattern(lf.split()) for lf in c.long_forms]
        for d, has in zip(docs, held, strict=True):
            if has or any(f.search(plains[d][1]) for f in forms):
                covered[d] += c.weight / total
    phrases = [_pattern(list(p)) for p in q.phrases]
    out = {}
    for d in docs:
        title_toks = set(terms(texts[d][0])) if q.names or q.phase else set()
        in_title = sum(bool(p.search(plains[d][0])) for p in phrases)
        anywhere = sum(bool(p.search(plains[d][1])) for p in phrases)
        out[d] = Evidence(
            covered[d],
            anywhere / len(phrases) if phrases else 0.0,
            in_title / len(phrases) if phrases else 0.0,
            bool(q.names) and set(q.names) <= title_toks,
            _conflicts(q, title_toks),
        )
    return out


def _conflicts(q: Query, title_toks: set[str]) -> bool:
    for name in q.names:
        family = _NAME.match(name)
        if (
            family
            and name not in title_toks
            and any((m := _NAME.match(t)) and m.group(1) == family.group(1) for t in title_toks - {name})
        ):
            return True
    phases = _phase(title_toks)
    return bool(q.phase and phases and q.phase not in phases)


def rrf(rankings: Sequence[tuple[Sequence[str], float]], k: int) -> dict[str, float]:
    """Weighted reciprocal rank fusion (Cormack et al. 2009): sum over lists of weight / (k + rank)."""
    scores: dict[str, float] = {}
    for ranking, weight in rankings:
        for rank, doc_id in enumerate(ranking, start=1):
            scores[doc_id] = scores.get(doc_id, 0.0) + weight / (k + rank)
    return scores


def _order(scores: Mapping[str, float]) -> list[str]:
    return sorted(scores, key=lambda d: (-scores[d], d))


def rank(
    q: Query,
    dense: Sequence[str],
    keyword: Sequence[str],
    texts: Mapping[str, tuple[str, str]],
    index: KeywordIndex,
    k: int,
    votes: Votes = Votes(),
    similar: Callable[[list[str]], Mapping[str, float]] | None = None,
) -> list[tuple[str, float]]:
    """Every candidate (the dense and keyword rankings' documents) with its fused score, best first; with
    ``votes.conflicts_last`` the papers with a conflict come last whatever their score. ``texts``: id -> (title,
    abstract) of the candidates. ``similar``, given the fused top ``votes.depth`` best first, scores them; with
    ``votes.similar`` they get one more vote, in the order of that score (a paper it does not score last)."""
    base = _order(rrf([(dense, votes.dense), (keyword, votes.keyword)], k))
    place = {d: i for i, d in enumerate(base)}
    ev = evidence(q, index, {d: texts[d] for d in base if d in texts})

    def by(key: str) -> list[str]:  # the candidates by one kind of evidence, the fused order breaking ties
        return sorted(ev, key=lambda d: (-float(getattr(ev[d], key)), place[d]))

    lists = [(dense, votes.dense), (keyword, votes.keyword), (by("coverage"), votes.coverage)]
    lists += [(by("title_phrases"), votes.title_phrases), (by("phrases"), votes.phrases)]
    lists += [(by("names_in_title"), votes.names)]
    scores = rrf([(ranking, w) for ranking, w in lists if w], k)
    ranked = _order(scores)
    if votes.similar and similar is not None:
        top = ranked[: votes.depth]
        sims = similar(top)
        by_sim = sorted(top, key=lambda d: (-sims.get(d, -math.inf), place.get(d, 0)))
        for d, score in rrf([(by_sim, votes.similar)], k).items():
            scores[d] += score
        ranked = _order(scores)
    last = {d for d in ranked if d in ev and ev[d].conflict} if votes.conflicts_last else set()
    return [(d, scores[d]) for d in ranked if d not in last] + [(d, scores[d]) for d in ranked if d in last]
