"""Corpus evidence per name: two passes over the documents.

Pass 1 counts the documents of every spelling key (cheap: tokens only); pass 2 reads the context of the
keys seen in at least ``min_docs`` documents (``extract.mentions``), merges aliases (``aliases.merge_keys``)
and sums everything per name: documents, dates, the introducing paper, comparisons, context features.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from radar.analysis.names.aliases import key_of, merge_keys
from radar.analysis.names.extract import _TOKEN, code_links, family_of, is_candidate, mentions


class TextDocument(Protocol):
    """What find_names reads of a document (``radar.store.Document`` has it)."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def abstract(self) -> str: ...
    @property
    def published(self) -> str: ...


@dataclass
class Evidence:
    """Everything the corpus says about one name (a group of alias keys)."""

    key: str
    spellings: Counter[str] = field(default_factory=Counter)  # family spellings -> documents
    variants: Counter[str] = field(default_factory=Counter)  # full surfaces with a variant suffix
    docs: list[int] = field(default_factory=list)  # sorted, unique document indices
    intro_docs: list[int] = field(default_factory=list)  # papers that introduce it ("X: ...", "we propose X")
    claim_docs: list[int] = field(default_factory=list)  # those and looser claims ("we study X, a ..."): kind evidence
    compared_docs: list[int] = field(default_factory=list)
    features: Counter[str] = field(default_factory=Counter)  # documents whose mentions carry each feature
    intro_features: frozenset[str] = frozenset()  # the features of its mention in the first claiming paper

    @property
    def name(self) -> str:
        return max(self.spellings.items(), key=lambda kv: (kv[1], kv[0]))[0] if self.spellings else self.key

    @property
    def n_docs(self) -> int:
        return len(self.docs)


@dataclass
class Corpus:
    """The documents read (in the order given) and the evidence of every name with enough documents."""

    ids: list[str]
    dates: list[str]  # YYYY-MM-DD
    names: dict[str, Evidence]  # group key -> evidence
    lookup: dict[str, str]  # every spelling key -> group key
    code: dict[int, list[str]]  # document index -> code links (documents that introduce a name)
    texts: list[tuple[str, str]] = field(default_factory=list)  # (title, abstract) per document index

    def find(self, surface: str) -> Evidence | None:
        """The evidence of a name by any of its spellings (Qwen-3.5, Qwen3.5-7B, LoRAs, ...)."""
        group = self.lookup.get(key_of(family_of(surface))) or self.lookup.get(key_of(surface))
        return self.names.get(group) if group else None

    @staticmethod
    def earliest(docs: Sequence[int]) -> int | None:
        """Indices follow publication order: the earliest document is the smallest index."""
        return min(docs) if docs else None


def _keys(title: str, abstract: str) -> set[str]:
    return {key_of(family_of(tok)) for text in (title, abstract) for tok in _TOKEN.findall(text) if is_candidate(tok)}


def collect(documents: Iterable[TextDocument], as_of: str = "", min_docs: int = 3) -> Corpus:
    """Read the documents published on or before ``as_of`` (all when empty) and gather the evidence."""
    texts: list[tuple[str, str]] = []
    ids: list[str] = []
    dates: list[str] = []
    df: Counter[str] = Counter()
    for doc in documents:
        day = doc.published[:10]
        if as_of and day > as_of:
            continue
        ids.append(doc.id)
        dates.append(day)
        texts.append((doc.title, doc.abstract))
        df.update(_keys(doc.title, doc.abstract))
    # document indices in publication order, so the first index of a name is its earliest document
    order = sorted(range(len(ids)), key=lambda i: (dates[i], ids[i]))
    ids, dates, texts = [ids[i] for i in order], [dates[i] for i in order], [texts[i] for i in order]
    keep = {k for k, n in df.items() if n >= min_docs}
    per_key: dict[str, Evidence] = {k: Evidence(key=k) for k in keep}
    code: dict[int, list[str]] = {}
    for i, (title, abstract) in enumerate(texts):
        touched: dict[str, set[str]] = {}
        for m in mentions(title, abstract, keep=lambda s: key_of(family_of(s)) in keep):
            k = key_of(m.family)
            ev = per_key[k]
            feats = touched.get(k)
            if feats is None:
                feats = touched[k] = set()
                ev.docs.append(i)
                ev.spellings[m.family] += 1
            feats.update(m.features)
            if m.surface != m.family:
                ev.variants[m.surface] += 1
            if m.claimed and (not ev.claim_docs or ev.claim_docs[-1] != i):
                if not ev.claim_docs:
                    ev.intro_features = frozenset(m.features)
                ev.claim_docs.append(i)
            if m.introduced and (not ev.intro_docs or ev.intro_docs[-1] != i):
                ev.intro_docs.append(i)
                if i not in code:
                    code[i] = code_links(abstract)
            if m.compared and (not ev.compared_docs or ev.compared_docs[-1] != i):
                ev.compared_docs.append(i)
        for k, feats in touched.items():
            per_key[k].features.update(feats)
    groups = merge_keys(
        {k: ev.docs for k, ev in per_key.items()},
        {k: ev.name for k, ev in per_key.items()},
        {k: ev.features for k, ev in per_key.items()},
    )
    names: dict[str, Evidence] = {}
    for k, ev in per_key.items():
        g = groups[k]
        if g == k:
            names[k] = ev
    for k, ev in per_key.items():
        g = groups[k]
        if g != k:
            _absorb(names[g], ev)
    code = {i: c for i, c in code.items() if c}
    return Corpus(ids=ids, dates=dates, names=names, lookup=groups, code=code, texts=texts)


def _absorb(into: Evidence, other: Evidence) -> None:
    """Add an alias's evidence to its name's (documents that mention both count once)."""
    if other.claim_docs and (not into.claim_docs or other.claim_docs[0] < into.claim_docs[0]):
        into.intro_features = other.intro_features
    into.spellings.update(other.spellings)
    into.variants.update(other.variants)
    shared = set(into.docs).intersection(other.docs)
    into.docs = sorted(set(into.docs).union(other.docs))
    into.intro_docs = sorted(set(into.intro_docs).union(other.intro_docs))
    into.claim_docs = sorted(set(into.claim_docs).union(other.claim_docs))
    into.compared_docs = sorted(set(into.compared_docs).union(other.compared_docs))
    # features of shared documents may be counted twice: cap each at the number of documents
    into.features.update(other.features)
    if shared:
        n = len(into.docs)
        for f, c in into.features.items():
            if c > n:
                into.features[f] = n
