"""Kind accuracy and per-kind precision/recall on labeled names, cross-validated with folds by name.

A labeled name's fold is decided by its group (all spellings of one name share a fold), so no name, nor an
alias of it, is in both the training and the test part of a fold; ``cross_validate`` asserts it. The lexicon
(a labeled name keeps its label) plays no part in these figures: a test name is never in its fold's labels,
and the neighbour features of every row read the training part's labels only.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from radar.analysis.names.aliases import surface_key
from radar.analysis.names.evidence import Corpus, Evidence
from radar.analysis.names.features import (
    AREA_FEATURES,
    EXPANSION_FEATURES,
    FREQUENT,
    HARDWARE,
    USE_FEATURES,
    features,
    neighbour_features,
    neighbours,
    rule_kind,
)
from radar.analysis.names.kinds import (
    KINDS,
    MARGINS,
    C,
    Decider,
    KindModel,
    decide,
    folds_by_name,
    tuned_model,
)


@dataclass(frozen=True)
class Scores:
    n: int
    accuracy: float
    accuracy_ci: tuple[float, float]  # Wilson 95% interval
    precision: dict[str, float | None]  # None: the kind was never predicted
    recall: dict[str, float | None]  # None: the kind has no label
    predicted: tuple[str, ...]
    margins: tuple[tuple[float, float], ...] = ()  # method margins (rare, frequent names) by inner CV per fold


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def score(truth: Sequence[str], predicted: Sequence[str]) -> Scores:
    n = len(truth)
    right = sum(t == p for t, p in zip(truth, predicted, strict=True))
    prec: dict[str, float | None] = {}
    rec: dict[str, float | None] = {}
    for kind in KINDS:
        said = sum(p == kind for p in predicted)
        true = sum(t == kind for t in truth)
        hit = sum(t == p == kind for t, p in zip(truth, predicted, strict=True))
        prec[kind] = hit / said if said else None
        rec[kind] = hit / true if true else None
    return Scores(n, right / n if n else 0.0, wilson(right, n), prec, rec, tuple(predicted))


def group_of(corpus: Corpus, name: str) -> str:
    ev = corpus.find(name)
    return ev.key if ev is not None else "missing:" + name.lower()


# papers of the full corpus from which a name is in the shared frequent pool (names_dev2.jsonl and its held-out
# half): the extra training names stay below it (``bench_names.py`` asserts it). Fixed by the shared labels, unlike
# ``features.FREQUENT`` (the frequent-name features' threshold, a lever), which happens to equal it.
FREQUENT_POOL = 30


@dataclass(frozen=True)
class Variant:
    """A decider to cross-validate: Radar's (the defaults) or Radar without some of its levers."""

    expansions: bool = True  # the expansion-shape and cue features (``features.EXPANSION_FEATURES``)
    frequent: bool = True  # a frequent name's evidence once more under "hi:"
    neighbours: bool = True  # the kinds of the labeled names written next to it
    balanced: bool = False  # balanced class weights
    c: float = C  # the regression's inverse regularisation
    margin: float | None = None  # the method margin; None: chosen by inner CV on each training part
    context: bool = False  # the context model for unsure names (needs ``vectors``)
    uses: bool = True  # the use cues: software, device, measured quantity (``features.USE_FEATURES``)
    areas: bool = True  # the share of the name's papers in the lab's areas (``features.AREA_FEATURES``)
    # levers measured and left off (``LEVERS``): two stages, name or generic term then the kind
    # among the names (``KindModel.two_stage``), decided by the product or a threshold on P(name) (``gate``);
    # soft class weights (``KindModel.balance``); a hyphenated expansion's head word (``features.with_heads``)
    two_stage: bool = False
    gate: float | None = None
    balance: float = 0.0
    heads: bool = False
    frequent_from: int = FREQUENT  # papers from which a name gets the frequent-name ("hi:") features


RADAR = Variant()
# the decider before the frequent names' labels (balanced class weights, none of the levers below); the one
# before this round's use-cue and lab-area features; the use cues added; Radar (the area shares too)
VARIANTS: dict[str, Variant] = {
    "previous": Variant(expansions=False, frequent=False, neighbours=False, balanced=True, uses=False, areas=False),
    "round 2": Variant(uses=False, areas=False),
    "+uses": Variant(areas=False),
    "Radar": RADAR,
}
# levers measured beside Radar and left off (``benchmarks/bench_names.py --levers``; docs/names.md)
LEVERS: dict[str, Variant] = {
    "two-stage": Variant(two_stage=True),
    **{f"two-stage, P(name) >= {g}": Variant(two_stage=True, gate=g) for g in (0.3, 0.4, 0.5, 0.6)},
    "two-stage, balanced kinds": Variant(two_stage=True, balanced=True),
    **{f"class weights ^{w}": Variant(balance=w) for w in (0.25, 0.5, 0.75, 1.0)},
    "expansion heads": Variant(heads=True),
    "no frequent-name features": Variant(frequent=False),
    **{f"frequent-name features from {n} papers": Variant(frequent_from=n) for n in (10, 15, 20)},
}


def _keep(variant: Variant) -> Callable[[str], bool]:
    def keep(feature: str) -> bool:
        if not variant.frequent and (feature == "hi" or feature.startswith("hi:")):
            return False
        base = feature[3:] if feature.startswith("hi:") else feature
        if not variant.uses and base.startswith(USE_FEATURES):
            return False
        if not variant.areas and base.startswith(AREA_FEATURES):
            return False
        return variant.expansions or not base.startswith(EXPANSION_FEATURES)

    return keep


def _row(
    base: dict[str, float],
    ev: Evidence | None,
    near: Counter[str] | None,
    lexicon: Mapping[str, str],
    keep: Callable[[str], bool],
) -> dict[str, float]:
    row = {key: v for key, v in base.items() if keep(key)}
    if ev is not None and near is not None:
        row.update(neighbour_features(ev, near, lexicon))
    return row


def _rows_of(matrix: np.ndarray) -> Callable[[list[int]], np.ndarray]:
    return lambda indices: matrix[indices]


@dataclass
class CrossValidation:
    """Out-of-fold kinds per variant (aligned with the labels) and the margins chosen by inner CV."""

    names: list[str]
    truth: list[str]
    groups: list[str]
    predicted: dict[str, list[str]] = field(default_factory=dict)
    margins: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # (rare, frequent) per fold

    def scores(self, subset: Sequence[int] | None = None) -> dict[str, Scores]:
        """Scores per variant on all labels or on the ``subset`` (indices: a pool, the focus names)."""
        idx = list(range(len(self.truth))) if subset is None else list(subset)
        truth = [self.truth[i] for i in idx]
        out = {}
        for variant, predicted in self.predicted.items():
            s = score(truth, [predicted[i] for i in idx])
            out[variant] = Scores(**{**s.__dict__, "margins": tuple(self.margins.get(variant, ()))})
        return out


def check_disjoint(test: set[str], train: set[str], lexicon: Mapping[str, str], fold: int) -> None:
    """The evaluated fold's names (groups: all their spellings) are neither among the classifier's training
    names nor in the lexicon its rows read (a labeled name keeps its label; the neighbour kinds): else the
    fold's figures would measure the labels, not the model."""
    for what, seen in (("the classifier's training", train), ("the lexicon", set(lexicon))):
        overlap = sorted(test & seen)
        if overlap:
            raise AssertionError(f"fold {fold}: {len(overlap)} evaluated names in {what}: {overlap[:5]}")


def cross_validate(
    corpus: Corpus,
    labels: Sequence[tuple[str, str]],
    k: int = 5,
    seed: int = 0,
    variants: Mapping[str, Variant] | None = None,
    *,
    curve: bool = False,
    vectors: np.ndarray | None = None,
    extra: Sequence[tuple[str, str]] = (),
) -> CrossValidation:
    """Out-of-fold kinds of the labels, k folds by name, for "rules" (``rule_kind``) and each variant
    (default: Radar's decider as ``find.classify`` fits it, ``RADAR``); with ``curve`` also Radar's fits decided at
    every fixed margin of ``MARGINS`` ("margin=0.10", ...); with ``vectors`` (the context vectors of the labeled
    names, one row per label and then per extra label found, computed without the labels) "+context": Radar with
    its context model, fitted and gated on each training part only. Accelerator names (``features.HARDWARE``)
    are ``hardware`` in every variant but the rules, as in ``find.classify``.

    ``extra``: (name, kind) labels added to every fold's training part and lexicon and never evaluated (the
    extra training names, ``find.EXTRA_LABEL_FILES``); those not found in the corpus are left out, and one whose
    group is a group of ``labels`` is refused (``check_extra``)."""
    variants = dict(variants or {"Radar": RADAR})
    if vectors is not None:
        variants["+context"] = Variant(context=True)
    extra = check_extra(corpus, labels, extra)
    n_eval = len(labels)
    if vectors is not None and len(vectors) != n_eval + len(extra):
        raise ValueError("vectors: one row per label, then one per extra label found in the corpus")
    names = [n for n, _ in labels] + [n for n, _ in extra]
    truth = [kind for _, kind in labels] + [kind for _, kind in extra]
    groups = [group_of(corpus, n) for n in names]
    evidence = [corpus.find(n) for n in names]
    near = [neighbours(ev, corpus.lookup) if ev is not None else None for ev in evidence]
    bases = {
        (heads, often): [features(n, ev, heads=heads, frequent=often) for n, ev in zip(names, evidence, strict=True)]
        for heads, often in {(v.heads, v.frequent_from) for v in variants.values()}
    }
    hardware = [HARDWARE.match(ev.name if ev else n) is not None for n, ev in zip(names, evidence, strict=True)]
    folds = folds_by_name(groups[:n_eval], k, seed) + [-1] * len(extra)  # the extra names: in no fold
    cv = CrossValidation(names[:n_eval], truth[:n_eval], groups[:n_eval])
    cv.predicted = {v: [""] * n_eval for v in variants}
    if curve:
        cv.predicted.update({f"margin={m:.2f}": [""] * n_eval for m in MARGINS})
    for f in range(k):
        train = [i for i in range(len(names)) if folds[i] != f]
        test = [i for i in range(n_eval) if folds[i] == f]
        if not test:
            continue
        lexicon = {groups[i]: truth[i] for i in train}  # the training part's labels only (and the extra ones)
        check_disjoint({groups[i] for i in test}, {groups[i] for i in train}, lexicon, f)
        assert all(i < n_eval for i in test), "an extra training name was evaluated"
        y_train = [truth[i] for i in train]
        for name, variant in variants.items():
            keep = _keep(variant)
            base = bases[variant.heads, variant.frequent_from]
            around = near if variant.neighbours else [None] * len(names)
            x_train = [_row(base[i], evidence[i], around[i], lexicon, keep) for i in train]
            x_test = [_row(base[i], evidence[i], around[i], lexicon, keep) for i in test]
            if variant.context:
                assert vectors is not None
                decider = Decider.fit(x_train, y_train, [groups[i] for i in train], vectors[train], seed=seed)
                got = decider.predict(x_test, _rows_of(vectors[test]))
                decided = [kind for kind, _ in got]
            else:
                levers = KindModel(
                    c=variant.c,
                    balanced=variant.balanced,
                    two_stage=variant.two_stage,
                    gate=variant.gate,
                    balance=variant.balance,
                )
                if variant.margin is None:
                    model = tuned_model(x_train, y_train, [groups[i] for i in train], seed=seed, template=levers)
                    often = model.method_margin if model.frequent_margin is None else model.frequent_margin
                    cv.margins.setdefault(name, []).append((model.method_margin, often))
                else:
                    model = replace(levers, method_margin=variant.margin).fit(x_train, y_train)
                classes, proba = model.proba(x_test)
                decided = [kind for kind, _ in decide(classes, proba, model.margins(x_test))]
                if curve and variant == RADAR:
                    for m in MARGINS:  # the same fit at every margin: the precision/recall trade-off
                        for i, (kind, _) in zip(test, decide(classes, proba, m), strict=True):
                            cv.predicted[f"margin={m:.2f}"][i] = "hardware" if hardware[i] else kind
            for i, kind in zip(test, decided, strict=True):
                cv.predicted[name][i] = "hardware" if hardware[i] else kind
    cv.predicted["rules"] = [rule_kind(n, ev) for n, ev in zip(names[:n_eval], evidence[:n_eval], strict=True)]
    return cv


def check_extra(
    corpus: Corpus, labels: Sequence[tuple[str, str]], extra: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The extra training labels found in the corpus, after checking that none of them is one of the evaluated
    names: neither its group (all its spellings) nor its spelling key (``aliases.surface_key``) is a labeled
    one's. An extra label that is an evaluated name would put that name in every fold's training."""
    groups = {group_of(corpus, n) for n, _ in labels}
    spellings = {surface_key(n) for n, _ in labels}
    clash = sorted(n for n, _ in extra if group_of(corpus, n) in groups or surface_key(n) in spellings)
    if clash:
        raise AssertionError(f"{len(clash)} extra training names are evaluated names: {clash[:5]}")
    return [(n, kind) for n, kind in extra if corpus.find(n) is not None]
