"""Sparse logistic regression over string features, stored as JSON (never pickle).

Fitted with scikit-learn (imported only when fitting); scored with plain dict look-ups, so scoring a paper
costs microseconds and loading a model needs no scikit-learn.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypedDict


class LinearJson(TypedDict):
    """``Linear.as_dict()``: one model of the stored ``model.json``."""

    classes: list[str]
    bias: list[float]
    weights: dict[str, list[float]]


@dataclass(frozen=True, slots=True)
class Linear:
    """Weights per feature and class; ``classes`` has two entries for a binary model (weights of the second)."""

    classes: tuple[str, ...]
    weights: dict[str, tuple[float, ...]]  # feature -> one weight per class (binary: one weight)
    bias: tuple[float, ...]

    @property
    def binary(self) -> bool:
        return len(self.classes) == 2

    def logits(self, features: Iterable[str]) -> list[float]:
        """Bias plus the weights of the features present, summed exactly (``math.fsum``): the result does not
        depend on the order a set yields its features in, which differs between processes."""
        rows = [row for row in map(self.weights.get, features) if row is not None]
        if not rows:
            return list(self.bias)
        return [math.fsum((b, *col)) for b, col in zip(self.bias, zip(*rows, strict=True), strict=True)]

    def probability(self, features: Iterable[str]) -> float:
        """Binary models: the probability of the second class."""
        z = self.logits(features)[0]
        return 1.0 / (1.0 + math.exp(-z)) if z > -500 else 0.0

    def distribution(self, features: Iterable[str]) -> dict[str, float]:
        """Probability per class."""
        if self.binary:
            p = self.probability(features)
            return {self.classes[0]: 1 - p, self.classes[1]: p}
        z = self.logits(features)
        top = max(z)
        e = [math.exp(v - top) for v in z]
        s = sum(e)
        return {c: v / s for c, v in zip(self.classes, e, strict=True)}

    def predict(self, features: Iterable[str]) -> tuple[str, float]:
        dist = self.distribution(features)
        best = max(dist, key=lambda c: (dist[c], c))
        return best, dist[best]

    def as_dict(self) -> LinearJson:
        return {
            "classes": list(self.classes),
            "bias": [round(b, 6) for b in self.bias],
            "weights": {f: [round(v, 6) for v in row] for f, row in sorted(self.weights.items())},
        }

    @classmethod
    def from_dict(cls, data: LinearJson) -> Linear:  # read from model.json: each value converted
        return cls(
            classes=tuple(str(c) for c in data["classes"]),
            weights={str(f): tuple(float(v) for v in row) for f, row in data["weights"].items()},
            bias=tuple(float(b) for b in data["bias"]),
        )


def fit(
    rows: Sequence[Iterable[str]],
    labels: Sequence[str],
    *,
    c: float = 1.0,
    min_count: int = 2,
    class_weight: str | None = None,
) -> Linear:
    """L2-regularised logistic regression on binary features seen in at least ``min_count`` rows."""
    import numpy as np
    from scipy.sparse import csr_matrix
    from sklearn.linear_model import LogisticRegression

    sets = [sorted(set(r)) for r in rows]
    df = Counter(f for s in sets for f in s)
    vocab = {f: i for i, f in enumerate(sorted(f for f, n in df.items() if n >= min_count))}
    indptr: list[int] = [0]
    indices: list[int] = []
    for s in sets:
        indices.extend(vocab[f] for f in s if f in vocab)
        indptr.append(len(indices))
    x = csr_matrix((np.ones(len(indices)), indices, indptr), shape=(len(sets), max(len(vocab), 1)))
    classes = sorted(set(labels))
    if len(classes) == 1:  # a degenerate fold: a constant model
        return Linear((classes[0], "_"), {}, (-20.0,))
    clf = LogisticRegression(C=c, max_iter=2000, class_weight=class_weight)
    clf.fit(x, list(labels))
    coef = clf.coef_
    names = sorted(vocab, key=vocab.__getitem__)
    weights = {
        f: tuple(float(v) for v in coef[:, j]) for j, f in enumerate(names) if any(abs(v) > 1e-6 for v in coef[:, j])
    }
    return Linear(tuple(str(k) for k in clf.classes_), weights, tuple(float(b) for b in clf.intercept_))
