"""The multi-label tag model: per tag, two logistic regressions (one on the embedding, one on the
TF-IDF, keyword and boundary features) whose probabilities are averaged. Measured on the dev labels (nested
5-fold CV, two fold seeds): macro-F1 0.722 for the average vs 0.708 for one regression on all
features side by side; kernels-compilers gains most (0.57 -> 0.68). The alternatives tried since did not
beat it beyond noise: docs/benchmarks.md has the figures (benchmarks/bench_tagging.py). The fitted
regressions are kept as plain arrays (``Linear``), which persist.py saves without a pickle.

How each tag is decided, by the examples it has:
- ``model``: at least ``min_examples`` labeled positives (label files and user corrections) and
  as many negatives: the two regressions; their mean probability is the score and the threshold is the
  one that maximises F1 on out-of-fold probabilities of the training set (3-fold), taken as the
  middle of the thresholds within 2% of the best F1 so that a few examples do not pin it to a spike.
- ``weak`` (few labeled positives): documents whose title matches the tag's keywords, or whose
  abstract matches twice, are added as positives at half weight, with as many non-matching
  documents as negatives; the labeled examples keep full weight. Decisions carry origin "rule".
- ``zero-shot`` (no positives and no keyword matches): cosine similarity between the document and
  the tag's description, above ``zero_shot_threshold``. Origin "rule".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from threadpoolctl import threadpool_limits

from radar.analysis.tags.features import FeatureSpace

if TYPE_CHECKING:  # scikit-learn is imported where a model is fitted: not at every `radar` command's start
    from sklearn.linear_model import LogisticRegression

C = 10.0
WEAK_WEIGHT = 0.5
THRESHOLDS = np.linspace(0.02, 0.90, 45)


def best_threshold(probs: np.ndarray, truth: np.ndarray, min_precision: float = 0.0, min_recall: float = 0.0) -> float:
    """The middle of the thresholds whose F1 is within 2% of the best (0.5 if nothing is positive).

    With a preference (``min_precision`` or ``min_recall``, from [tagging] in radar.toml) only thresholds
    whose out-of-fold precision (recall) reaches it compete on F1; when none does, the threshold
    closest to it: the highest precision, or the highest recall, on these probabilities."""
    if not truth.any():
        return 0.5
    pred = probs[None, :] >= THRESHOLDS[:, None]
    tp = (pred & truth[None, :]).sum(axis=1).astype(float)
    n_pred = pred.sum(axis=1)
    precision = np.divide(tp, n_pred, out=np.zeros_like(tp), where=n_pred > 0)
    recall = tp / truth.sum()
    f1 = np.array([_f1(truth, p) for p in pred])
    ok = (precision >= min_precision) & (recall >= min_recall) & (n_pred > 0)
    if not ok.any():
        if min_precision > 0:
            return float(THRESHOLDS[int(np.argmax(np.where(n_pred > 0, precision, -1)))])
        return float(THRESHOLDS[int(np.argmax(recall))])
    allowed = np.where(ok, f1, -1.0)
    near = THRESHOLDS[allowed >= allowed.max() * 0.98]
    return float(np.median(near))


def _f1(truth: np.ndarray, pred: np.ndarray) -> float:
    tp = float(np.sum(truth & pred))
    denom = float(np.sum(truth) + np.sum(pred))
    return 2 * tp / denom if denom else 0.0


@dataclass
class Linear:
    """A fitted logistic regression as plain arrays: P(tag) = sigmoid(x @ coef + intercept)."""

    coef: np.ndarray  # (columns,) float32
    intercept: float

    def decision(self, x: sp.csr_matrix | np.ndarray) -> np.ndarray:
        return np.asarray(x @ self.coef, dtype=np.float64).ravel() + self.intercept


@dataclass
class PairClassifier:
    """Mean probability of a regression on the embedding columns and one on the text columns."""

    dim: int  # the embedding's width: columns [0, dim) are the embedding
    embedding: Linear
    text: Linear

    def probability(self, x: sp.csr_matrix) -> np.ndarray:
        return (expit(self.embedding.decision(x[:, : self.dim])) + expit(self.text.decision(x[:, self.dim :]))) / 2


def _linear(model: LogisticRegression) -> Linear:
    return Linear(np.asarray(model.coef_[0], dtype=np.float32), float(model.intercept_[0]))


def fit_classifier(
    x: sp.csr_matrix, y: np.ndarray, w: np.ndarray, dim: int, text_columns: np.ndarray | None = None
) -> PairClassifier:
    """``text_columns``: the text-side columns (counted after the embedding) this tag's text regression may
    use (features.FeatureSpace.text_columns); the others get weight 0."""
    # One BLAS thread: these fits are small, and on 2 shared cores a threaded BLAS made the embedding
    # regression 80x slower (2.8 s vs 0.03 s per fit, measured while other work ran).
    from sklearn.linear_model import LogisticRegression

    text_x = x[:, dim:] if text_columns is None else x[:, dim + text_columns]
    with threadpool_limits(1):
        emb = LogisticRegression(C=C, max_iter=2000).fit(x[:, :dim].toarray(), y, sample_weight=w)
        text = LogisticRegression(C=C, solver="liblinear", max_iter=2000).fit(text_x, y, sample_weight=w)
    text_linear = _linear(text)
    if text_columns is not None:
        full = np.zeros(x.shape[1] - dim, dtype=np.float32)
        full[text_columns] = text_linear.coef
        text_linear = Linear(full, text_linear.intercept)
    return PairClassifier(dim, _linear(emb), text_linear)


@dataclass
class TagRule:
    """How one tag is decided."""

    strategy: str  # model | weak | zero-shot
    threshold: float
    positives: int  # labeled positives it learned from
    classifier: PairClassifier | None = None
    description_vector: np.ndarray | None = None

    @property
    def origin(self) -> str:
        return "model" if self.strategy == "model" else "rule"


@dataclass
class TagModel:
    names: list[str]
    space: FeatureSpace
    rules: dict[str, TagRule] = field(default_factory=dict)
    version: str = ""

    def scores(self, features: sp.csr_matrix, vectors: np.ndarray) -> np.ndarray:
        """Per document and tag: the score that is compared with the tag's threshold (the classifier tags'
        regressions as two matrix products for all of them: one slicing of the features, not one per tag)."""
        out = np.zeros((features.shape[0], len(self.names)), dtype=np.float32)
        pairs = [(j, r.classifier) for j, r in enumerate(self.rules[n] for n in self.names) if r.classifier]
        if pairs:
            dim = pairs[0][1].dim
            emb_w = np.stack([c.embedding.coef for _, c in pairs], axis=1)
            text_w = np.stack([c.text.coef for _, c in pairs], axis=1)
            emb_b = np.array([c.embedding.intercept for _, c in pairs])
            text_b = np.array([c.text.intercept for _, c in pairs])
            emb = np.asarray(features[:, :dim] @ emb_w, dtype=np.float64) + emb_b
            text = np.asarray(features[:, dim:] @ text_w, dtype=np.float64) + text_b
            out[:, [j for j, _ in pairs]] = (expit(emb) + expit(text)) / 2
        for j, name in enumerate(self.names):
            rule = self.rules[name]
            if rule.classifier is None and rule.description_vector is not None:
                out[:, j] = np.asarray(vectors, dtype=np.float32) @ rule.description_vector
        return out

    def thresholds(self) -> np.ndarray:
        return np.array([self.rules[n].threshold for n in self.names], dtype=np.float32)


def fit_tag(
    x: sp.csr_matrix,
    y: np.ndarray,
    w: np.ndarray,
    labeled: np.ndarray,
    dim: int,
    min_precision: float = 0.0,
    min_recall: float = 0.0,
    text_columns: np.ndarray | None = None,
) -> tuple[PairClassifier, float]:
    """A classifier on all rows and a threshold from out-of-fold probabilities on the labeled rows
    (meeting ``min_precision`` / ``min_recall`` there when asked, see best_threshold).

    ``labeled`` marks rows with a human label (weak rows train but never pick the threshold)."""
    from sklearn.model_selection import StratifiedKFold

    lab = np.flatnonzero(labeled)
    folds = int(min(3, y[lab].sum(), (~y[lab]).sum()))
    if folds >= 2:
        oof = np.zeros(len(lab), dtype=np.float32)
        extra = np.flatnonzero(~labeled)
        for train, test in StratifiedKFold(folds, shuffle=True, random_state=0).split(lab, y[lab]):
            rows = np.concatenate([lab[train], extra])
            oof[test] = fit_classifier(x[rows], y[rows], w[rows], dim, text_columns).probability(x[lab[test]])
        threshold = best_threshold(oof, y[lab], min_precision, min_recall)
    else:
        threshold = 0.5
    return fit_classifier(x, y, w, dim, text_columns), threshold
