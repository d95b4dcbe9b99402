"""Rank papers for one person: a linear model learned from their feedback, else the profile rules.

Learned (arxiv-sanity's per-user SVM, with zotero-arxiv-daily's embedding similarity as a feature): a
logistic regression on [stored embedding | TF-IDF of title and abstract], trained on liked papers (positive)
against papers marked not-for-me (negative, weight 3) and "skipped" papers (a fixed sample of other stored
papers the person did not like: negative, weight 1). Scores are the model's probability, so a cut-off means
the same thing from one week to the next. With fewer than ``MIN_LIKES`` liked papers it falls back to the
rule-based relevance of reports.ranking (profile tags, terms, TF-IDF similarity to the liked papers).

Both ways, a paper naming one of the person's negative terms is left out, and a followed author or
institution lifts it (+``FOLLOW_BOOST``); papers the person already rated are not shown again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from radar.crawler.documents import Document
from radar.reports.config import Profile, ReportConfig
from radar.reports.people.repository import PersonProfile
from radar.reports.period import Period
from radar.reports.ranking import rank, term_pattern

MIN_LIKES = 5  # fewer liked papers than this: the profile rules rank
DISLIKE_WEIGHT = 3.0  # an explicit not-for-me counts as three skipped papers
N_SKIPPED = 600  # "skipped" negatives sampled from the store
FOLLOW_BOOST = 0.25
TFIDF_WEIGHT = 0.5  # the TF-IDF block's share next to the (unit-norm) embedding


def _text(doc: Document) -> str:
    return f"{doc.title}. {doc.abstract}"


@dataclass
class Example:
    doc: Document
    vector: np.ndarray | None  # unit-norm embedding, None when the document has none yet


@dataclass
class PersonScore:
    doc: Document
    score: float
    why: list[str] = field(default_factory=list)


class LearnedModel:
    """Logistic regression on [embedding | TF-IDF]; ``fit`` on positives and weighted negatives."""

    def __init__(self, dim: int) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer  # here, not at every command's start
        from sklearn.linear_model import LogisticRegression

        self.dim = dim
        self.tfidf = TfidfVectorizer(
            stop_words="english",
            sublinear_tf=True,
            max_features=30000,
            dtype=np.float32,
            token_pattern=r"(?u)\b[^\W\d_][\w\-]{2,}\b",
        )
        self.clf = LogisticRegression(C=1.0, class_weight="balanced", max_iter=2000)

    def _features(self, examples: Sequence[Example]) -> sparse.csr_matrix:
        dense = np.zeros((len(examples), self.dim), dtype=np.float32)
        for i, ex in enumerate(examples):
            if ex.vector is not None:
                dense[i] = ex.vector
        words = self.tfidf.transform([_text(ex.doc) for ex in examples]) * TFIDF_WEIGHT
        return sparse.hstack([sparse.csr_matrix(dense), words], format="csr")

    @classmethod
    def fit(
        cls, positives: Sequence[Example], negatives: Sequence[Example], negative_weights: Sequence[float], dim: int
    ) -> LearnedModel:
        model = cls(dim)
        train = [*positives, *negatives]
        model.tfidf.fit([_text(ex.doc) for ex in train])
        y = np.array([1] * len(positives) + [0] * len(negatives))
        weights = np.array([1.0] * len(positives) + list(negative_weights))
        model.clf.fit(model._features(train), y, sample_weight=weights)
        return model

    def score(self, examples: Sequence[Example]) -> np.ndarray:
        if not examples:
            return np.zeros(0)
        return np.asarray(self.clf.predict_proba(self._features(examples))[:, 1])


def unit(blob: bytes | None) -> np.ndarray | None:
    if blob is None:
        return None
    v = np.frombuffer(blob, dtype=np.float32)
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


@dataclass
class Training:
    """What a person's model learns from."""

    liked: list[Example]
    disliked: list[Example]
    skipped: list[Example]

    @property
    def learnable(self) -> bool:
        return len(self.liked) >= MIN_LIKES and bool(self.disliked or self.skipped)


def learned_scores(training: Training, candidates: Sequence[Example]) -> list[PersonScore]:
    dim = next((ex.vector.shape[0] for ex in [*training.liked, *candidates] if ex.vector is not None), 0)
    negatives = [*training.disliked, *training.skipped]
    weights = [DISLIKE_WEIGHT] * len(training.disliked) + [1.0] * len(training.skipped)
    model = LearnedModel.fit(training.liked, negatives, weights, dim)
    probs = model.score(candidates)
    liked_vecs = [(ex.doc.id, ex.vector) for ex in training.liked if ex.vector is not None]
    liked_matrix = np.stack([v for _, v in liked_vecs]) if liked_vecs else None
    basis = f"learned from {len(training.liked)} liked, {len(training.disliked)} not-for-me"
    out = []
    for ex, p in zip(candidates, probs, strict=True):
        why = [basis]
        if liked_matrix is not None and ex.vector is not None:
            sims = liked_matrix @ ex.vector
            j = int(sims.argmax())
            if sims[j] >= 0.4:
                why.append(f"like {liked_vecs[j][0]} ({sims[j]:.2f})")
        out.append(PersonScore(ex.doc, float(p), why))
    return out


def rule_scores(
    candidates: Sequence[Document],
    tags: Mapping[str, Mapping[str, float]],
    profile: PersonProfile,
    liked: Sequence[Document],
    period: Period,
    cfg: ReportConfig,
) -> list[PersonScore]:
    """reports.ranking's relevance for the person's tags, terms and liked papers."""
    rules = Profile(tags=dict(profile.tags), terms=dict(profile.terms), liked={d.id: 1.0 for d in liked})
    if rules.empty:
        return [PersonScore(d, 0.0, ["no profile yet: add tags, terms or liked papers"]) for d in candidates]
    ranked = rank(candidates, tags, period=period, profile=rules, cfg=cfg, liked=liked)
    return [PersonScore(r.doc, r.relevance, ["profile rules", *r.why]) for r in ranked]


def _mentions(doc: Document, names: Sequence[str], *, authors_only: bool) -> list[str]:
    hay = [a.lower() for a in doc.authors]
    text = " ".join([*doc.authors, doc.abstract, *doc.extra.values()])
    hits = []
    for name in names:
        if authors_only:
            if any(name.lower() == a or name.lower() in a for a in hay):
                hits.append(name)
        elif term_pattern(name).search(text):
            hits.append(name)
    return hits


def adjust(scores: list[PersonScore], profile: PersonProfile) -> tuple[list[PersonScore], int]:
    """Negative terms drop a paper; followed authors and institutions lift it. Returns (kept, dropped)."""
    negatives = {t: term_pattern(t) for t in profile.negative_terms}
    kept, dropped = [], 0
    for s in scores:
        if any(p.search(s.doc.title) or p.search(s.doc.abstract) for p in negatives.values()):
            dropped += 1
            continue
        for who in _mentions(s.doc, profile.authors, authors_only=True):
            s.score += FOLLOW_BOOST
            s.why.append(f"author {who}")
        for where in _mentions(s.doc, profile.institutions, authors_only=False):
            s.score += FOLLOW_BOOST
            s.why.append(f"institution {where}")
        kept.append(s)
    kept.sort(key=lambda s: (-s.score, s.doc.id))
    return kept, dropped
