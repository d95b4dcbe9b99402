"""Kind accuracy and per-kind precision/recall on labeled names, cross-validated with folds by name.

A labeled name's fold is decided by its group (all spellings of one name share a fold), so no name, nor an
alias of it, is in both the training and the test part of a fold; ``cross_validate`` asserts it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from radar.analysis.names.evidence import Corpus
from radar.analysis.names.kinds import KINDS, KindModel, features, rule_kind


@dataclass(frozen=True)
class Scores:
    n: int
    accuracy: float
    accuracy_ci: tuple[float, float]  # Wilson 95% interval
    precision: dict[str, float | None]  # None: the kind was never predicted
    recall: dict[str, float | None]  # None: the kind has no label
    predicted: tuple[str, ...]


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


def folds_by_name(groups: Sequence[str], k: int, seed: int = 0) -> list[int]:
    """A fold per labeled item such that items of one group share a fold."""
    unique = sorted(set(groups))
    random.Random(seed).shuffle(unique)
    fold = {g: i % k for i, g in enumerate(unique)}
    return [fold[g] for g in groups]


def cross_validate(
    corpus: Corpus, labels: Sequence[tuple[str, str]], k: int = 5, seed: int = 0, model: KindModel | None = None
) -> dict[str, Scores]:
    """Scores of the classifier ("model", k folds by name) and of the rules ("rules") on the labels."""
    names = [n for n, _ in labels]
    truth = [kind for _, kind in labels]
    groups = [group_of(corpus, n) for n in names]
    folds = folds_by_name(groups, k, seed)
    rows = [features(n, corpus.find(n)) for n in names]
    predicted = [""] * len(names)
    for f in range(k):
        train = [i for i in range(len(names)) if folds[i] != f]
        test = [i for i in range(len(names)) if folds[i] == f]
        overlap = {groups[i] for i in train} & {groups[i] for i in test}
        assert not overlap, f"names in both train and test of fold {f}: {sorted(overlap)[:5]}"
        if not test:
            continue
        fitted = KindModel(c=model.c if model else 1.0, method_margin=model.method_margin if model else 0.0)
        fitted.fit([rows[i] for i in train], [truth[i] for i in train])
        for i, (kind, _) in zip(test, fitted.predict([rows[i] for i in test]), strict=True):
            predicted[i] = kind
    rules = [rule_kind(n, corpus.find(n)) for n in names]
    return {"model": score(truth, predicted), "rules": score(truth, rules)}
