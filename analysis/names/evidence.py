"""Corpus evidence per name: two passes over the documents.

Pass 1 counts the documents of every spelling key (cheap: tokens only); pass 2 reads the context of the
keys seen in at least ``min_docs`` documents (``extract.mentions``) per case form of the key (vLLM and VLLM
apart), keeps a case form apart whose context differs from the key's main form (``aliases.split_case_forms``),
merges aliases (``aliases.merge_keys``) and sums everything per name: documents, dates, the introducing
paper, comparisons, context features.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from radar.analysis.names.aliases import case_form, distinct_contexts, key_of, merge_keys
from radar.analysis.names.extract import _TOKEN, code_links, family_of, is_candidate, mentions
from radar.analysis.texts import DocumentText


class TextDocument(DocumentText, Protocol):
    """What find_names reads of a document (``radar.store.Document`` has it): its text and publication day."""

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
    area_docs: dict[str, int] = field(default_factory=dict)  # documents in each of the lab's areas (``AREAS``)
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
    # the case forms kept apart from their key's main form (``aliases.case_form`` -> group key): VLLM (vision
    # LLMs) is not vLLM; every other spelling is found by its case-folded key in ``lookup``
    cased: dict[str, str] = field(default_factory=dict)

    def find(self, surface: str) -> Evidence | None:
        """The evidence of a name by any of its spellings (Qwen-3.5, Qwen3.5-7B, LoRAs, ...)."""
        family = family_of(surface)
        group = None
        if self.cased:
            group = self.cased.get(case_form(family, plural=True)) or self.cased.get(case_form(family, plural=False))
        group = group or self.lookup.get(key_of(family)) or self.lookup.get(key_of(surface))
        return self.names.get(group) if group else None

    @staticmethod
    def earliest(docs: Sequence[int]) -> int | None:
        """Indices follow publication order: the earliest document is the smallest index."""
        return min(docs) if docs else None


# the lab's areas (the taxonomy's groups, analysis/tags/taxonomy.toml), told cheaply per document from words of
# its title and abstract (lower case) and its arXiv categories: RL post-training, and hardware & systems
AREAS: dict[str, tuple[str, ...]] = {
    "rl": (
        "reinforcement learning",
        "reward",
        "rlhf",
        "rlvr",
        "grpo",
        "policy optimi",
        "preference optimi",
        "preference alignment",
        "policy gradient",
    ),
    "hw": (
        "gpu",
        "accelerator",
        "fpga",
        "asic",
        "kernel",
        "compiler",
        "serving",
        "kv cache",
        "kv-cache",
        "quantiz",
        "hardware",
        "latency",
        "throughput",
        "distributed training",
        "parallelism",
        "chip",
        "processor",
        "memory bandwidth",
    ),
}
_SYSTEMS_CATEGORIES = frozenset(["cs.AR", "cs.DC", "cs.PF"])
# each word starts a word of the text ("serving", not "preserving"; "asic", not "basic"); it may go on ("rewards")
_AREA_WORDS = {area: re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + ")") for area, words in AREAS.items()}


def _areas(title: str, abstract: str, categories: Sequence[str]) -> int:
    """The lab's areas of one document as bits (1: RL post-training, 2: hardware & systems)."""
    text = f"{title} {abstract}".lower()
    bits = 1 if _AREA_WORDS["rl"].search(text) else 0
    if any(c in _SYSTEMS_CATEGORIES for c in categories) or _AREA_WORDS["hw"].search(text):
        bits |= 2
    return bits


def _keys(title: str, abstract: str) -> set[str]:
    return {key_of(family_of(tok)) for text in (title, abstract) for tok in _TOKEN.findall(text) if is_candidate(tok)}


def collect(documents: Iterable[TextDocument], as_of: str = "", min_docs: int = 3) -> Corpus:
    """Read the documents published on or before ``as_of`` (all when empty) and gather the evidence."""
    texts: list[tuple[str, str]] = []
    ids: list[str] = []
    dates: list[str] = []
    areas: list[int] = []
    df: Counter[str] = Counter()
    for doc in documents:
        day = doc.published[:10]
        if as_of and day > as_of:
            continue
        ids.append(doc.id)
        dates.append(day)
        texts.append((doc.title, doc.abstract))
        # a stored document has categories (``radar.store.Document``); a bare text document has none
        areas.append(_areas(doc.title, doc.abstract, getattr(doc, "categories", ())))
        df.update(_keys(doc.title, doc.abstract))
    # document indices in publication order, so the first index of a name is its earliest document
    order = sorted(range(len(ids)), key=lambda i: (dates[i], ids[i]))
    ids, dates, texts = [ids[i] for i in order], [dates[i] for i in order], [texts[i] for i in order]
    areas = [areas[i] for i in order]
    keep = {k for k, n in df.items() if n >= min_docs}
    # evidence per case form of a key (plurals with their singular): "vLLM" and "VLLMs" are read apart
    forms: dict[str, Evidence] = {}
    form_of: dict[str, tuple[str, str]] = {}  # family spelling -> (key of its singular, case form)
    code: dict[int, list[str]] = {}
    for i, (title, abstract) in enumerate(texts):
        touched: dict[str, set[str]] = {}
        for m in mentions(title, abstract, keep=lambda s: key_of(family_of(s)) in keep):
            unit_form = form_of.get(m.family)
            if unit_form is None:
                k = key_of(m.family)
                plural = _plural_of_kept(k, keep)
                unit_form = form_of[m.family] = (k[:-1] if plural else k, case_form(m.family, plural=plural))
            form = unit_form[1]
            ev = forms.get(form)
            if ev is None:
                ev = forms[form] = Evidence(key=unit_form[0])
            feats = touched.get(form)
            if feats is None:
                feats = touched[form] = set()
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
        for form, feats in touched.items():
            forms[form].features.update(feats)
    per_key, cased = _split_case_forms(forms, min_docs)
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
    for ev in names.values():
        rl = hw = 0
        for i in ev.docs:
            bits = areas[i]
            rl += bits & 1
            hw += bits >> 1
        ev.area_docs = {"rl": rl, "hw": hw}
    code = {i: c for i, c in code.items() if c}
    # every spelling key of pass 1 finds its group (a plural through its singular)
    for k in keep:
        if k not in groups:
            unit = k[:-1] if _plural_of_kept(k, keep) else k
            if unit in groups:
                groups[k] = groups[unit]
    return Corpus(ids=ids, dates=dates, names=names, lookup=groups, code=code, texts=texts, cased=cased)


def _plural_of_kept(key: str, keep: set[str]) -> bool:
    """Whether a key is the plural of another kept key (llms -> llm), as ``aliases.merge_keys`` reads plurals."""
    return len(key) >= 3 and key.endswith("s") and not key.endswith("ss") and key[:-1] in keep


def _split_case_forms(forms: dict[str, Evidence], min_docs: int) -> tuple[dict[str, Evidence], dict[str, str]]:
    """One evidence per key: its case forms summed, except a form whose context differs from the key's main
    form (``aliases.distinct_contexts``), kept as a name of its own under the key ``key~form``. Returns the
    evidence per key and the kept-apart forms' keys."""
    by_key: dict[str, list[tuple[str, Evidence]]] = {}
    for form, ev in forms.items():
        by_key.setdefault(ev.key, []).append((form, ev))
    per_key: dict[str, Evidence] = {}
    cased: dict[str, str] = {}
    for k, group in by_key.items():
        if len(group) == 1:
            per_key[k] = group[0][1]
            continue
        group.sort(key=lambda fe: (-len(fe[1].docs), fe[0]))
        main = group[0][1]
        apart = [
            (form, ev)
            for form, ev in group[1:]
            if len(ev.docs) >= min_docs and distinct_contexts(main.features, len(main.docs), ev.features, len(ev.docs))
        ]
        for form, ev in group[1:]:
            if all(form != f for f, _ in apart):
                _absorb(main, ev)
        per_key[k] = main
        for form, ev in apart:
            ev.key = f"{k}~{form}"
            per_key[ev.key] = ev
            cased[form] = ev.key
    return per_key, cased


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
