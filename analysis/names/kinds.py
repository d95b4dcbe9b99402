"""The kind of a name (method, model, benchmark, system, hardware, metric, org, generic) from corpus evidence.

Two deciders over the same evidence (``evidence.Evidence``):
- ``rule_kind``: hand-written cues (the baseline): "X: a benchmark for ...", "X-7B", "X score", a
  Title-Case-Hyphen phrase, ...;
- ``KindModel``: a logistic regression over the evidence as features (shares of the name's documents whose
  mentions carry each context cue, the acronym's expansion, the introducing title's words, the name's shape
  and character n-grams), fitted on labeled names (the shipped ``labels/names_dev.jsonl``).

Optionally (``Decider`` with context vectors, ``context.py``): a second regression that also reads the sentence
encoder's vector of the words around the name's mentions decides the names the first leaves unsure.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from radar.analysis.names.evidence import Evidence

if TYPE_CHECKING:  # scikit-learn is imported where a model is fitted, not at every `radar` command's start
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

KINDS = ("method", "model", "benchmark", "system", "hardware", "metric", "org", "generic")
# the context prefixes whose rare values still count (one paper's title or apposition says a lot)
_STRONG = ("sub:", "app:", "exp:", "explast:", "title_prefix", "intro", "sized", "variant")

# rule cues: words in the introducing title, the apposition, the acronym's expansion or right after the name
_CUES: dict[str, frozenset[str]] = {
    "benchmark": frozenset(
        [
            "benchmark",
            "benchmarks",
            "dataset",
            "datasets",
            "corpus",
            "corpora",
            "suite",
            "leaderboard",
            "testbed",
            "bench",
            "collection",
            "evaluating",
            "evaluation",
            "questions",
            "challenge",
            "arena",
            "database",
        ]
    ),
    "metric": frozenset(
        ["metric", "metrics", "score", "scores", "measure", "index", "rate", "coefficient", "error", "distance"]
    ),
    "org": frozenset(
        [
            "university",
            "institute",
            "laboratory",
            "lab",
            "inc",
            "company",
            "corporation",
            "conference",
            "association",
            "agency",
            "administration",
            "foundation",
            "organization",
        ]
    ),
    "hardware": frozenset(
        ["gpu", "gpus", "accelerator", "accelerators", "chip", "chips", "processor", "npu", "npus", "tpu", "device"]
    ),
    "system": frozenset(
        [
            "library",
            "toolkit",
            "engine",
            "platform",
            "system",
            "framework-based",
            "open-source",
            "serving",
            "runtime",
            "compiler",
            "agent",
            "simulator",
        ]
    ),
    "model": frozenset(["model", "models", "llm", "llms", "checkpoint", "checkpoints", "family", "vlm", "foundation"]),
}
_CUE_PREFIXES = ("sub:", "app:", "explast:", "R:")
_HYPHEN_LOWER = re.compile(r"-[a-z]+$")
_TITLE_WORDS = re.compile(r"^[A-Z][a-z]+(?:-[A-Z][a-z]+)+$")


def shape(name: str) -> str:
    """The name's letter classes, runs collapsed: GRPO -> X, DeepSeek-R1 -> XxXx-Xd, Qwen2.5 -> Xxd.d."""
    out: list[str] = []
    for c in name:
        cls = "X" if c.isupper() else "x" if c.islower() else "d" if c.isdigit() else c
        if not out or out[-1] != cls:
            out.append(cls)
    return "".join(out)


def name_features(name: str) -> dict[str, float]:
    feats: dict[str, float] = {"shape=" + shape(name): 1.0}
    parts = name.split("-")
    feats["n_parts=" + str(min(len(parts), 3))] = 1.0
    if _HYPHEN_LOWER.search(name):
        feats["last_part_lower"] = 1.0
        feats["last_part=" + parts[-1]] = 1.0
    if _TITLE_WORDS.match(name):
        feats["title_words"] = 1.0
    if name.isupper():
        feats["all_caps"] = 1.0
    if any(c.isdigit() for c in name):
        feats["digit"] = 1.0
    if len(name) >= 3 and name.endswith("s") and (name[-2].isupper() or name[-2].isdigit()):
        feats["plural"] = 1.0
    feats["len=" + str(min(len(name), 8))] = 1.0
    low = f"<{name.lower()}>"
    for n in (3, 4):
        for i in range(len(low) - n + 1):
            feats["cg=" + low[i : i + n]] = 0.5
    return feats


def evidence_features(ev: Evidence | None) -> dict[str, float]:
    if ev is None:
        return {"no_evidence": 1.0}
    n = max(ev.n_docs, 1)
    feats: dict[str, float] = {
        "log_docs": math.log1p(n) / 5,
        "intro_share": math.sqrt(len(ev.intro_docs) / n),
        "compared_share": math.sqrt(len(ev.compared_docs) / n),
        "n_spellings": min(len(ev.spellings), 4) / 4,
    }
    for feat, c in ev.features.items():
        if c >= 2 or feat.startswith(_STRONG):
            feats["ctx=" + feat] = math.sqrt(c / n)
    for feat in ev.intro_features:
        if feat.startswith(_STRONG) or feat.startswith("R:"):
            feats["intro=" + feat] = 1.0
    for kind in _CUES:
        feats["cue=" + kind] = math.sqrt(_cue_share(ev, kind))
        feats["intro_cue=" + kind] = float(any(f.split(":", 1)[-1] in _CUES[kind] for f in ev.intro_features))
    feats["rule=" + rule_kind(ev.name, ev)] = 1.0
    return feats


def features(name: str, ev: Evidence | None) -> dict[str, float]:
    return {**name_features(ev.name if ev is not None else name), **evidence_features(ev)}


def _cue_share(ev: Evidence, kind: str) -> float:
    words = _CUES[kind]
    n = max(ev.n_docs, 1)
    best = 0.0
    for prefix in _CUE_PREFIXES:
        best = max(best, max((ev.features.get(prefix + w, 0) for w in words), default=0) / n)
    return best


# accelerator product names (A100, H100, H20, L40S, MI300X, GB200, RTX3090, Ascend910B, Gaudi2): ``hardware``
# whatever the classifier says (it has one hardware label to learn from). P-numbers are left out: P90/P99
# are percentiles, P300 an ERP component; so is a bare L4: in the bundled snapshot 1 of its 5 papers means the
# GPU, 2 introduce systems named L4, the others are levels (L4 driving autonomy, reasoning level L4).
HARDWARE = re.compile(
    r"^(?:[AHVB]\d{2,3}|L40S?|MI\d{3}[AX]?|G[BH]\d{3}|[RG]TX-?\d{3,4}(?:Ti)?|Ascend-?\d{3}[A-Z]?|Gaudi-?\d)$"
)


def rule_kind(name: str, ev: Evidence | None) -> str:
    """The baseline: shape rules, then the strongest cue in the evidence, then 'introduced' means method."""
    shown = ev.name if ev is not None else name
    if HARDWARE.match(shown):
        return "hardware"
    if _HYPHEN_LOWER.search(shown) or _TITLE_WORDS.match(shown):
        return "generic"
    low = shown.lower()
    if low.endswith(("bench", "qa", "eval")) or "bench-" in low:
        return "benchmark"
    if ev is None:
        return "generic"
    n = max(ev.n_docs, 1)
    if (ev.features.get("sized", 0) + ev.features.get("variant", 0)) / n >= 0.2:
        return "model"
    shares = {kind: _cue_share(ev, kind) for kind in _CUES}
    kind, share = max(shares.items(), key=lambda kv: kv[1])
    if share >= 0.2:
        return kind
    if len(ev.intro_docs) / n >= 0.1 or ev.features.get("title_prefix", 0):
        return "method"
    return "generic"


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
    """

    c: float = 1.0
    method_margin: float = 0.0
    min_feature_names: int = MIN_FEATURE_NAMES
    tol: float = 1e-3
    _vec: DictVectorizer | None = None
    _keep: np.ndarray | None = None
    _clf: LogisticRegression | None = None

    def fit(self, rows: Sequence[dict[str, float]], kinds: Sequence[str]) -> KindModel:
        from sklearn.feature_extraction import DictVectorizer
        from sklearn.linear_model import LogisticRegression

        self._vec = DictVectorizer()
        x = self._vec.fit_transform(rows)
        self._keep = np.flatnonzero(np.asarray((x != 0).sum(axis=0)).ravel() >= self.min_feature_names)
        self._clf = LogisticRegression(C=self.c, max_iter=3000, tol=self.tol, class_weight="balanced")
        self._clf.fit(x[:, self._keep], list(kinds))
        return self

    @property
    def fitted(self) -> bool:
        return self._clf is not None

    def proba(self, rows: Sequence[dict[str, float]]) -> tuple[list[str], np.ndarray]:
        """The classes and the probability of each class per row."""
        if self._vec is None or self._clf is None or self._keep is None:
            raise RuntimeError("KindModel.predict before fit")
        classes = [str(k) for k in self._clf.classes_]
        if not rows:
            return classes, np.zeros((0, len(classes)))
        return classes, self._clf.predict_proba(self._vec.transform(rows)[:, self._keep])

    def predict(self, rows: Sequence[dict[str, float]]) -> list[tuple[str, float]]:
        classes, proba = self.proba(rows)
        return decide(classes, proba, self.method_margin)


def decide(classes: Sequence[str], proba: np.ndarray, method_margin: float) -> list[tuple[str, float]]:
    """(kind, probability) per row: the most probable kind, except that ``method`` must beat the runner-up
    by ``method_margin`` (else the runner-up is said)."""
    out = []
    for p in proba:
        order = np.argsort(-p, kind="stable")
        best = int(order[0])
        if classes[best] == "method" and len(order) > 1 and p[best] - p[order[1]] < method_margin:
            best = int(order[1])
        out.append((classes[best], float(p[best])))
    return out


def folds_by_name(groups: Sequence[str], k: int, seed: int = 0) -> list[int]:
    """A fold per labeled item such that items of one group (the spellings of one name) share a fold."""
    unique = sorted(set(groups))
    random.Random(seed).shuffle(unique)
    fold = {g: i % k for i, g in enumerate(unique)}
    return [fold[g] for g in groups]


def choose_method_margin(
    rows: Sequence[dict[str, float]],
    kinds: Sequence[str],
    groups: Sequence[str] | None = None,
    *,
    target: float = METHOD_PRECISION,
    k: int = 3,
    seed: int = 0,
    c: float = 1.0,
) -> float:
    """The margin for ``method`` from out-of-fold predictions (``k`` folds by name group over these labeled
    rows only): among the ``MARGINS`` that cost at most ``MAX_ACCURACY_LOSS`` of accuracy against no margin,
    the smallest whose ``method`` precision reaches ``target``, else the most precise one; 0 when there are
    too few labeled methods to tell (fewer than 2 per fold)."""
    truth = list(kinds)
    if truth.count("method") < 2 * k or len(set(truth)) < 2:
        return 0.0
    folds = folds_by_name(list(groups) if groups is not None else [str(i) for i in range(len(rows))], k, seed)
    oof: list[tuple[list[str], np.ndarray]] = []
    index: list[list[int]] = []
    for f in range(k):
        train = [i for i in range(len(rows)) if folds[i] != f]
        test = [i for i in range(len(rows)) if folds[i] == f]
        if not test or len({truth[i] for i in train}) < 2:
            continue
        model = KindModel(c=c).fit([rows[i] for i in train], [truth[i] for i in train])
        oof.append(model.proba([rows[i] for i in test]))
        index.append(test)
    curve = []  # (margin, method precision, accuracy)
    for margin in MARGINS:
        said = hit = right = total = 0
        for (classes, proba), test in zip(oof, index, strict=True):
            for i, (kind, _) in zip(test, decide(classes, proba, margin), strict=True):
                said += kind == "method"
                hit += kind == "method" == truth[i]
                right += kind == truth[i]
                total += 1
        curve.append((margin, hit / said if said else 0.0, right / max(total, 1)))
    allowed = [(m, p) for m, p, acc in curve if acc >= curve[0][2] - MAX_ACCURACY_LOSS]
    for margin, precision in allowed:
        if precision >= target:
            return margin
    return max(allowed, key=lambda mp: (mp[1], -mp[0]))[0]


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
        margin = choose_method_margin(rows, kinds, groups, seed=seed)
        evidence = KindModel(method_margin=margin).fit(rows, kinds)
        if vectors is None:
            return cls(evidence)
        both = [with_context(r, v) for r, v in zip(rows, vectors, strict=True)]
        margin = choose_method_margin(both, kinds, groups, seed=seed)
        return cls(evidence, KindModel(method_margin=margin).fit(both, kinds))

    def predict(
        self, rows: Sequence[dict[str, float]], vectors_of: Callable[[list[int]], np.ndarray] | None = None
    ) -> list[tuple[str, float]]:
        """(kind, probability) per row; ``vectors_of(indices)`` gives the context vectors of the unsure rows
        (called once, only when this decider has a context model)."""
        classes, proba = self.evidence.proba(rows)
        out = decide(classes, proba, self.evidence.method_margin)
        if self.context is None or vectors_of is None:
            return out
        unsure = [i for i in range(len(rows)) if proba[i].max() < CONTEXT_GATE]
        if unsure:
            vectors = vectors_of(unsure)
            got = self.context.predict([with_context(rows[i], v) for i, v in zip(unsure, vectors, strict=True)])
            for i, decided in zip(unsure, got, strict=True):
                out[i] = decided
        return out
