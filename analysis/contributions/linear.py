"""Sparse logistic regression over string features, stored as JSON (never pickle).

Fitted with scikit-learn (imported only when fitting); scored with plain dict look-ups, so scoring a paper
costs microseconds and loading a model needs no scikit-learn.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar, TypeVar

import msgspec

from radar.analysis.contributions.errors import ContributionsError


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

    def rounded(self) -> Linear:
        """As a model file stores it: weights and bias to 6 places, features sorted."""
        return Linear(
            self.classes,
            {f: tuple(round(v, 6) for v in row) for f, row in sorted(self.weights.items())},
            tuple(round(b, 6) for b in self.bias),
        )


class ModelFile(msgspec.Struct, frozen=True, dict=True):
    """A model that is its own file record (msgspec): ``model.json``'s ``ContributionModel`` and
    ``consequence.json``'s ``ConsequenceModel`` subclass it with their settings and ``Linear`` models as fields and
    ``code_version`` (defaulted to their code's). Fitted or decoded (``decode``, which validates every type), a model
    keeps floats to 6 places and each ``Linear`` ``rounded``: what its file holds, so its bytes (``encode``, keys
    sorted) and the version hashed from them depend on nothing else. ``dict=True``: what a model derives from its
    fields (its version, summed weights) is a ``cached_property`` beside them, never stored."""

    WHAT: ClassVar[str] = "model"  # how errors name the file
    REBUILD: ClassVar[str] = ""  # the command that rebuilds it

    def __post_init__(self) -> None:
        for name in self.__struct_fields__:
            value = getattr(self, name)
            if isinstance(value, float):
                msgspec.structs.force_setattr(self, name, round(value, 6))
            elif isinstance(value, Linear):
                msgspec.structs.force_setattr(self, name, value.rounded())

    @classmethod
    def decode(cls: type[F], data: bytes) -> F:
        """The model in ``data``, its types checked; ``ContributionsError`` naming ``REBUILD`` when it is damaged or
        was written for another code version."""
        code_version = next(f.default for f in msgspec.structs.fields(cls) if f.name == "code_version")
        try:
            found = msgspec.json.decode(data, type=_Version).code_version
        except msgspec.MsgspecError:
            found = None
        if found is not None and found != code_version:
            raise ContributionsError(
                f"the {cls.WHAT} was built for code version {found!r}, not {code_version!r}; rebuild it with "
                f"{cls.REBUILD}"
            )
        try:
            return msgspec.json.decode(data, type=cls)
        except msgspec.MsgspecError:
            raise ContributionsError(f"the {cls.WHAT} file is damaged; rebuild it with {cls.REBUILD}") from None


def encode(model: ModelFile) -> bytes:
    """A model's file: its fields as JSON, keys sorted."""
    return msgspec.json.encode(model, order="sorted")


class _Version(msgspec.Struct):
    code_version: str | None = None


F = TypeVar("F", bound=ModelFile)


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
