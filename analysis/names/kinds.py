"""The kind of a name (method, model, benchmark, system, hardware, metric, org, generic): the classifier.

``KindModel``: a logistic regression over ``features.features`` (and ``features.neighbour_features``), fitted
on labeled names (the shipped ``labels/names_dev*.jsonl``), with a margin that ``method`` must beat the
runner-up by (``choose_method_margin``: by inner cross-validation on the training labels, for a target
precision). Optionally (``Decider`` with context vectors, ``context.py``): a second regression that also reads
the sentence encoder's vector of the words around the name's mentions decides the names the first leaves unsure.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # scikit-learn is imported where a model is fitted, not at every `radar` command's start
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.multiclass import OneVsRestClassifier

# the regression's inverse regularisation (liblinear, one model per kind)
C = 3.0
KINDS = ("method", "model", "benchmark", "system", "hardware", "metric", "org", "generic")
# ``method`` precision the decision margin aims at (issue 15: >= 0.90), and the margins tried by inner CV
METHOD_PRECISION = 0.90
MARGINS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6)
# a feature seen in fewer training names than this is dropped (rare character n-grams and context words:
# no weight to learn, and the fit is 2-3x faster without them)
MIN_FEATURE_NAMES = 2
# the accuracy (out-of-fold, all kinds) a method margin may cost: beyond it the margin buys method precision
# with more errors elsewhere (measured: a margin of 0.6 lifts method precision 0.73 -> 0.82 and costs 0.05)
MAX_ACCURACY_LOSS = 0.01


@dataclass
class KindModel:
    """Logistic regression over ``features``; ``fit`` on labeled names, ``predict`` kinds with probabilities.

    ``method_margin``: ``method`` is said only when its probability beats the runner-up's by this much, else
    the runner-up is (``choose_method_margin`` picks it by inner cross-validation for a target precision).

    Levers measured and left off (docs/names.md; ``evaluate.LEVERS``): ``two_stage`` (a name or a generic
    term first, then the kind among the names), ``gate`` (the two-stage decision by a threshold on P(name)),
    ``balance`` (soft class weights).
    """

    c: float = C
    method_margin: float = 0.0
    frequent_margin: float | None = None  # the margin for frequent names' rows (``is_frequent``); None: the same
    min_feature_names: int = MIN_FEATURE_NAMES
    tol: float = 1e-3
    balanced: bool = False  # class weights inverse to the kinds' frequencies (the model before the frequent labels)
    # two regressions: "name" (a specific thing) or "generic", then the kind among the labeled names only (the
    # rare kinds compete with each other, not with the generic terms' labels); P(kind) = P(name) P(kind | name)
    two_stage: bool = False
    # the two-stage decision as a threshold instead: a name when P(name) >= gate, then its most probable kind
    # (``proba`` then gives 1.0 for generic or the kind's probability among the names: decision scores)
    gate: float | None = None
    # soft class weights: each kind's one-vs-rest regression weighs its own labels by (others / own) ** balance
    balance: float = 0.0
    _vec: DictVectorizer | None = None
    _keep: np.ndarray | None = None
    _clf: OneVsRestClassifier | WeightedOneVsRest | None = None
    _gate: OneVsRestClassifier | None = None  # the two-stage model's first regression: "name" or "generic"

    def fit(self, rows: Sequence[dict[str, float]], kinds: Sequence[str]) -> KindModel:
        from sklearn.feature_extraction import DictVectorizer

        self._vec = DictVectorizer()
        x = self._vec.fit_transform(rows)
        self._keep = np.flatnonzero(np.asarray((x != 0).sum(axis=0)).ravel() >= self.min_feature_names)
        x = x[:, self._keep]
        y = list(kinds)
        named = [i for i, kind in enumerate(y) if kind != "generic"]
        self._gate = None
        if self.two_stage and len(named) < len(y) and len({y[i] for i in named}) >= 2:
            self._gate = self._regression(balanced=False).fit(x, ["generic" if k == "generic" else "name" for k in y])
            self._clf = self._kinds().fit(x[named], [y[i] for i in named])
        else:
            self._clf = self._kinds().fit(x, y)
        return self

    def _regression(self, *, balanced: bool) -> OneVsRestClassifier:
        from sklearn.linear_model import LogisticRegression
        from sklearn.multiclass import OneVsRestClassifier

        # one binary regression per kind (liblinear): 30x faster than the multinomial fit on these rows
        # (0.1 s instead of 3.5 s of CPU for 726 labeled names of the bundled snapshot), the same accuracy
        weights = "balanced" if balanced else None
        return OneVsRestClassifier(LogisticRegression(C=self.c, solver="liblinear", tol=self.tol, class_weight=weights))

    def _kinds(self) -> OneVsRestClassifier | WeightedOneVsRest:
        if self.balance and not self.balanced:
            return WeightedOneVsRest(self.c, self.tol, self.balance)
        return self._regression(balanced=self.balanced)

    @property
    def fitted(self) -> bool:
        return self._clf is not None

    def proba(self, rows: Sequence[dict[str, float]]) -> tuple[list[str], np.ndarray]:
        """The classes and the probability of each class per row."""
        if self._vec is None or self._clf is None or self._keep is None:
            raise RuntimeError("KindModel.predict before fit")
        classes = [str(k) for k in self._clf.classes_]
        if self._gate is not None:
            classes.append("generic")
        if not rows:
            return classes, np.zeros((0, len(classes)))
        x = self._vec.transform(rows)[:, self._keep]
        proba = self._clf.predict_proba(x)
        if self._gate is None:
            return classes, proba
        named = self._gate.predict_proba(x)[:, list(self._gate.classes_).index("name")]
        if self.gate is not None:
            named = (named >= self.gate).astype(float)
        return classes, np.column_stack([proba * named[:, None], 1.0 - named])

    def margins(self, rows: Sequence[dict[str, float]]) -> list[float]:
        frequent = self.method_margin if self.frequent_margin is None else self.frequent_margin
        return [frequent if is_frequent(r) else self.method_margin for r in rows]

    def predict(self, rows: Sequence[dict[str, float]]) -> list[tuple[str, float]]:
        classes, proba = self.proba(rows)
        return decide(classes, proba, self.margins(rows))


class WeightedOneVsRest:
    """One binary regression per kind (liblinear) whose own labels weigh (other labels / own) ** ``power``
    (at least 1): a rare kind's few labels count more against the rest; probabilities normalised per row as
    scikit-learn's ``OneVsRestClassifier`` does."""

    def __init__(self, c: float, tol: float, power: float) -> None:
        self.c, self.tol, self.power = c, tol, power
        self.classes_ = np.array([], dtype=object)
        self.estimators_: list[Any] = []

    def fit(self, x: Any, y: Sequence[str]) -> WeightedOneVsRest:
        from sklearn.linear_model import LogisticRegression

        labels = np.asarray(y, dtype=object)
        self.classes_ = np.array(sorted(set(labels.tolist())), dtype=object)
        self.estimators_ = []
        for kind in self.classes_:
            own = labels == kind
            weight = max(((len(labels) - own.sum()) / max(own.sum(), 1)) ** self.power, 1.0)
            binary = LogisticRegression(C=self.c, solver="liblinear", tol=self.tol, class_weight={0: 1.0, 1: weight})
            self.estimators_.append(binary.fit(x, own.astype(int)))
        return self

    def predict_proba(self, x: Any) -> np.ndarray:
        p = np.column_stack([e.predict_proba(x)[:, 1] for e in self.estimators_])
        return p / p.sum(axis=1, keepdims=True)


def decide(
    classes: Sequence[str], proba: np.ndarray, method_margin: float | Sequence[float]
) -> list[tuple[str, float]]:
    """(kind, probability) per row: the most probable kind, except that ``method`` must beat the runner-up
    by ``method_margin`` (one for all rows, or one per row; else the runner-up is said)."""
    out = []
    margins = [method_margin] * len(proba) if isinstance(method_margin, float | int) else list(method_margin)
    for p, margin in zip(proba, margins, strict=True):
        order = np.argsort(-p, kind="stable")
        best = int(order[0])
        if classes[best] == "method" and len(order) > 1 and p[best] - p[order[1]] < margin:
            best = int(order[1])
        out.append((classes[best], float(p[best])))
    return out


def folds_by_name(groups: Sequence[str], k: int, seed: int = 0) -> list[int]:
    """A fold per labeled item such that items of one group (the spellings of one name) share a fold."""
    unique = sorted(set(groups))
    random.Random(seed).shuffle(unique)
    fold = {g: i % k for i, g in enumerate(unique)}
    return [fold[g] for g in groups]


def is_frequent(row: dict[str, float]) -> bool:
    """Whether a feature row is a frequent name's (``features.FREQUENT`` documents or more)."""
    return row.get("hi", 0.0) > 0


def choose_method_margin(
    rows: Sequence[dict[str, float]],
    kinds: Sequence[str],
    groups: Sequence[str] | None = None,
    *,
    target: float = METHOD_PRECISION,
    k: int = 3,
    seed: int = 0,
    c: float = C,
    among: Sequence[bool] | None = None,
    template: KindModel | None = None,
) -> float:
    """The margin for ``method`` from out-of-fold predictions (``k`` folds by name group over these labeled
    rows only): among the ``MARGINS`` that cost at most ``MAX_ACCURACY_LOSS`` of accuracy against no margin,
    the smallest whose ``method`` precision reaches ``target``, else the most precise one; 0 when there are
    too few labeled methods to tell (fewer than 2 per fold). ``among``: measure precision and accuracy on
    these rows only (the frequent names, say), all rows fitting the folds' models. ``template``: the model
    the folds fit (its margins unused; default ``KindModel(c=c)``)."""
    return choose_margins(rows, kinds, groups, [among], target=target, k=k, seed=seed, c=c, template=template)[0]


def choose_margins(
    rows: Sequence[dict[str, float]],
    kinds: Sequence[str],
    groups: Sequence[str] | None,
    subsets: Sequence[Sequence[bool] | None],
    *,
    target: float = METHOD_PRECISION,
    k: int = 3,
    seed: int = 0,
    c: float = C,
    template: KindModel | None = None,
) -> list[float]:
    """``choose_method_margin`` for each of ``subsets`` (None: all rows) from one set of out-of-fold fits."""
    template = template or KindModel(c=c)
    truth = list(kinds)
    folds = folds_by_name(list(groups) if groups is not None else [str(i) for i in range(len(rows))], k, seed)
    oof: list[tuple[list[str], np.ndarray]] = []
    index: list[list[int]] = []
    if truth.count("method") >= 2 * k and len(set(truth)) >= 2:
        for f in range(k):
            train = [i for i in range(len(rows)) if folds[i] != f]
            test = [i for i in range(len(rows)) if folds[i] == f]
            if not test or len({truth[i] for i in train}) < 2:
                continue
            model = replace(template, method_margin=0.0, frequent_margin=None)
            model.fit([rows[i] for i in train], [truth[i] for i in train])
            oof.append(model.proba([rows[i] for i in test]))
            index.append(test)
    out = []
    for subset in subsets:
        inside = [True] * len(rows) if subset is None else list(subset)
        if sum(truth[i] == "method" for i in range(len(rows)) if inside[i]) < 2 * k or not oof:
            out.append(0.0)
            continue
        curve = []  # (margin, method precision, accuracy)
        for margin in MARGINS:
            said = hit = right = total = 0
            for (classes, proba), test in zip(oof, index, strict=True):
                for i, (kind, _) in zip(test, decide(classes, proba, margin), strict=True):
                    if inside[i]:
                        said += kind == "method"
                        hit += kind == "method" == truth[i]
                        right += kind == truth[i]
                        total += 1
            curve.append((margin, hit / said if said else 0.0, right / max(total, 1)))
        allowed = [(m, p) for m, p, acc in curve if acc >= curve[0][2] - MAX_ACCURACY_LOSS]
        chosen = next((m for m, p in allowed if p >= target), None)
        out.append(chosen if chosen is not None else max(allowed, key=lambda mp: (mp[1], -mp[0]))[0])
    return out


def tuned_model(
    rows: Sequence[dict[str, float]],
    kinds: Sequence[str],
    groups: Sequence[str] | None = None,
    *,
    seed: int = 0,
    c: float = C,
    balanced: bool = False,
    template: KindModel | None = None,
) -> KindModel:
    """A ``KindModel`` fitted on the rows with two method margins chosen by inner CV on them: one for the rare
    names' rows, one for the frequent names' (``is_frequent``), each for ``METHOD_PRECISION`` on its own rows.
    ``template``: the model to tune (its levers; default ``KindModel(c=c, balanced=balanced)``); the inner CV
    fits it, except that a one-stage ``balanced`` model's margins come from unweighted fits (the previous model,
    as it was measured)."""
    model = template or KindModel(c=c, balanced=balanced)
    inner = model if model.two_stage else replace(model, balanced=False)
    frequent = [is_frequent(r) for r in rows]
    subsets = [[not f for f in frequent], frequent]
    rare, often = choose_margins(rows, kinds, groups, subsets, seed=seed, c=model.c, template=inner)
    return replace(model, method_margin=rare, frequent_margin=often).fit(rows, kinds)


# context vectors (``context.context_vectors``): the names whose most probable kind from the evidence alone is
# below this probability are decided by the model that also reads their context vector (about 30% of the full
# corpus's names, 18% of the labeled ones: the encoder's cost stays within a minute of CPU on 93k papers)
CONTEXT_GATE = 0.5
# the weight of the context vector's components beside the evidence features (a unit vector: components ~0.05)
CONTEXT_WEIGHT = 3.0


def with_context(row: dict[str, float], vector: np.ndarray) -> dict[str, float]:
    """Evidence features plus the (weighted) context vector's components."""
    return {**row, **{f"ctx_vec={j}": float(CONTEXT_WEIGHT * x) for j, x in enumerate(vector) if x}}


@dataclass
class Decider:
    """The evidence model, and with context vectors a second model for the names the first leaves unsure.

    Both carry a ``method`` margin chosen by inner cross-validation on the training labels only."""

    evidence: KindModel
    context: KindModel | None = None

    @classmethod
    def fit(
        cls,
        rows: Sequence[dict[str, float]],
        kinds: Sequence[str],
        groups: Sequence[str] | None = None,
        vectors: np.ndarray | None = None,
        *,
        seed: int = 0,
    ) -> Decider:
        evidence = tuned_model(rows, kinds, groups, seed=seed)
        if vectors is None:
            return cls(evidence)
        both = [with_context(r, v) for r, v in zip(rows, vectors, strict=True)]
        return cls(evidence, tuned_model(both, kinds, groups, seed=seed))

    def predict(
        self, rows: Sequence[dict[str, float]], vectors_of: Callable[[list[int]], np.ndarray] | None = None
    ) -> list[tuple[str, float]]:
        """(kind, probability) per row; ``vectors_of(indices)`` gives the context vectors of the unsure rows
        (called once, only when this decider has a context model)."""
        classes, proba = self.evidence.proba(rows)
        out = decide(classes, proba, self.evidence.margins(rows))
        if self.context is None or vectors_of is None:
            return out
        unsure = [i for i in range(len(rows)) if proba[i].max() < CONTEXT_GATE]
        if unsure:
            vectors = vectors_of(unsure)
            got = self.context.predict([with_context(rows[i], v) for i, v in zip(unsure, vectors, strict=True)])
            for i, decided in zip(unsure, got, strict=True):
                out[i] = decided
        return out
