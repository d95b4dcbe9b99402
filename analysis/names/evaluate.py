"""Kind accuracy and per-kind precision/recall on labeled names, cross-validated with folds by name.

A labeled name's fold is decided by its group (all spellings of one name share a fold), so no name, nor an
alias of it, is in both the training and the test part of a fold; ``cross_validate`` asserts it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from radar.analysis.names.evidence import Corpus
from radar.analysis.names.kinds import (
    KINDS,
    MARGINS,
    Decider,
    KindModel,
    choose_method_margin,
    decide,
    features,
    folds_by_name,
    rule_kind,
)


@dataclass(frozen=True)
class Scores:
    n: int
    accuracy: float
    accuracy_ci: tuple[float, float]  # Wilson 95% interval
    precision: dict[str, float | None]  # None: the kind was never predicted
    recall: dict[str, float | None]  # None: the kind has no label
    predicted: tuple[str, ...]
    margins: tuple[float, ...] = ()  # the method margins chosen by inner CV (one per outer fold)


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


# the model before issue 15's round 2 (every feature kept, tighter tolerance, no method margin): the benchmark
# prints it beside the current one
PREVIOUS = KindModel(min_feature_names=1, tol=1e-4, method_margin=0.0)


def _rows_of(matrix: np.ndarray) -> Callable[[list[int]], np.ndarray]:
    return lambda indices: matrix[indices]


def cross_validate(
    corpus: Corpus,
    labels: Sequence[tuple[str, str]],
    k: int = 5,
    seed: int = 0,
    model: KindModel | None = None,
    *,
    previous: bool = False,
    curve: bool = False,
    vectors: np.ndarray | None = None,
) -> dict[str, Scores]:
    """Scores on the labels, k folds by name: "model" (the classifier as ``find.classify`` fits it: the
    ``method`` margin chosen by inner cross-validation on each training part only, unless ``model`` fixes
    one), "rules" (``rule_kind``), with ``previous`` "previous" (``PREVIOUS``), and with ``curve`` the "model"
    fits decided at every fixed margin of ``MARGINS`` ("margin=0.10", ...); with ``vectors`` (the context
    vectors of the labeled names, one row per label, computed without the labels) "context": the ``Decider``
    with its context model, fitted and gated on each training part only."""
    names = [n for n, _ in labels]
    truth = [kind for _, kind in labels]
    groups = [group_of(corpus, n) for n in names]
    folds = folds_by_name(groups, k, seed)
    rows = [features(n, corpus.find(n)) for n in names]
    variants = {"model": model}
    if previous:
        variants["previous"] = PREVIOUS
    predicted = {v: [""] * len(names) for v in variants}
    if vectors is not None:
        predicted["context"] = [""] * len(names)
    if curve:
        predicted.update({f"margin={m:.2f}": [""] * len(names) for m in MARGINS})
    margins: list[float] = []
    for f in range(k):
        train = [i for i in range(len(names)) if folds[i] != f]
        test = [i for i in range(len(names)) if folds[i] == f]
        overlap = {groups[i] for i in train} & {groups[i] for i in test}
        assert not overlap, f"names in both train and test of fold {f}: {sorted(overlap)[:5]}"
        if not test:
            continue
        x_train, y_train = [rows[i] for i in train], [truth[i] for i in train]
        for variant, fixed in variants.items():
            if fixed is None:
                margin = choose_method_margin(x_train, y_train, [groups[i] for i in train], seed=seed)
                margins.append(margin)
                fitted = KindModel(method_margin=margin)
            else:
                fitted = replace(fixed, _vec=None, _keep=None, _clf=None)
            fitted.fit(x_train, y_train)
            classes, proba = fitted.proba([rows[i] for i in test])
            for i, (kind, _) in zip(test, decide(classes, proba, fitted.method_margin), strict=True):
                predicted[variant][i] = kind
            if fixed is None and vectors is not None:
                decider = Decider.fit(x_train, y_train, [groups[i] for i in train], vectors[train], seed=seed)
                got = decider.predict([rows[i] for i in test], _rows_of(vectors[test]))
                for i, (kind, _) in zip(test, got, strict=True):
                    predicted["context"][i] = kind
            if fixed is None and curve:
                for m in MARGINS:  # the same fit at every margin: the precision/recall trade-off
                    for i, (kind, _) in zip(test, decide(classes, proba, m), strict=True):
                        predicted[f"margin={m:.2f}"][i] = kind
    rules = [rule_kind(n, corpus.find(n)) for n in names]
    out = {v: score(truth, p) for v, p in predicted.items()}
    out["rules"] = score(truth, rules)
    if margins:
        out["model"] = replace(out["model"], margins=tuple(margins))
    return out
