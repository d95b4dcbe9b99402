"""Rank a period's papers by relevance to the lab's profile, novelty and recency.

- relevance: the mean of the parts the profile defines: tags the paper carries (profile weight x the
  tagger's confidence), profile
  terms found in its title (full weight) or abstract (half), and TF-IDF cosine similarity to the
  liked papers (weighted). Each part is in [0, 1].
- novelty: 1 - the highest TF-IDF cosine similarity to any paper of the trailing weeks (a paper
  unlike anything recent is novel), plus 0.2 when the trends name it as an example of an emerging
  term or a new method; capped at 1.
- recency: where in the period it entered the record (store.dates; 0 = first day, 1 = last day).

score = relevance_weight * relevance + novelty_weight * novelty + recency_weight * recency.
Every ranked paper carries the reasons ("tag grpo", "term 'KV cache'", "like 2503.14476") so a
reader sees why it is there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime

import msgspec
import numpy as np

from radar.crawler.documents import Document
from radar.reports.config import Profile, ReportConfig
from radar.reports.period import Period
from radar.store.dates import entered


class PaperRow(msgspec.Struct, frozen=True):
    """A ranked paper as report.json lists it (``PaperRow.of``: the scores to 4 places)."""

    id: str
    title: str
    url: str
    published: str
    kind: str
    source: str
    tags: list[str]
    score: float
    relevance: float
    novelty: float
    recency: float
    why: list[str]
    summary: str

    def __post_init__(self) -> None:
        for name in ("score", "relevance", "novelty", "recency"):
            msgspec.structs.force_setattr(self, name, round(float(getattr(self, name)), 4))

    @classmethod
    def of(cls, r: Ranked, *, title: str) -> PaperRow:
        """``r`` listed under ``title`` (the report shows titles as plain text)."""
        d = r.doc
        return cls(d.id, title, d.url, d.published, d.kind, d.source, r.tags, *r.scores, r.why, r.summary)


@dataclass
class Ranked:
    doc: Document
    tags: list[str]
    score: float = 0.0
    relevance: float = 0.0
    novelty: float = 0.0
    recency: float = 0.0
    why: list[str] = field(default_factory=list)
    summary: str = ""

    @property
    def scores(self) -> tuple[float, float, float, float]:
        """score, relevance, novelty, recency."""
        return self.score, self.relevance, self.novelty, self.recency


def _text(doc: Document) -> str:
    return f"{doc.title}. {doc.abstract}"


def term_pattern(term: str, *, exact_case: bool = False) -> re.Pattern[str]:
    """Whole-word match; case-insensitive unless ``exact_case`` (acronyms: OPD is not "opd")."""
    flags = 0 if exact_case else re.IGNORECASE
    return re.compile(r"(?<![A-Za-z0-9])" + re.escape(term) + r"(?![A-Za-z0-9])", flags)


def _recency(doc: Document, period: Period) -> float:
    try:
        when = datetime.fromisoformat(entered(doc.id, doc.published).replace("Z", "+00:00")).date()
    except ValueError:
        return 0.0
    span = max(period.days - 1, 1)
    return min(max((when - period.start).days / span, 0.0), 1.0)


def rank(
    docs: Sequence[Document],
    tags: Mapping[str, Mapping[str, float]],
    *,
    period: Period,
    profile: Profile,
    cfg: ReportConfig,
    baseline: Sequence[Document] = (),
    liked: Sequence[Document] = (),
    flagged_ids: AbstractSet[str] = frozenset(),
) -> list[Ranked]:
    """All of ``docs`` ranked best first."""
    if not docs:
        return []
    ranked = [Ranked(d, sorted(tags.get(d.id, {}))) for d in docs]
    corpus = [_text(d) for d in docs] + [_text(d) for d in baseline] + [_text(d) for d in liked]
    from sklearn.feature_extraction.text import TfidfVectorizer  # here, not at every command's start

    try:
        matrix = TfidfVectorizer(
            stop_words="english",
            sublinear_tf=True,
            max_features=50000,
            dtype=np.float32,
            token_pattern=r"(?u)\b[^\W\d_][\w\-]{2,}\b",
        ).fit_transform(corpus)
    except ValueError:  # only stop words
        matrix = None
    n, nb = len(docs), len(baseline)
    novelty: np.ndarray = np.ones(n, dtype=np.float32)
    liked_sim = np.zeros((n, max(len(liked), 1)), dtype=np.float32)
    if matrix is not None:
        current = matrix[:n]
        if nb:
            novelty = 1.0 - np.asarray((current @ matrix[n : n + nb].T).max(axis=1).todense()).ravel()
        if liked:
            liked_sim = np.asarray((current @ matrix[n + nb :].T).todense())
    tag_max = max(profile.tags.values(), default=1.0)
    term_max = max(profile.terms.values(), default=1.0)
    like_w = np.array([profile.liked.get(d.id, 1.0) for d in liked] or [1.0], dtype=np.float32)
    like_w = like_w / like_w.max()
    patterns = {t: term_pattern(t) for t in profile.terms}
    for i, r in enumerate(ranked):
        parts = []
        if profile.tags:
            hit = [t for t in r.tags if t in profile.tags]
            confidence = tags.get(r.doc.id, {})
            parts.append(min(1.0, sum(profile.tags[t] * min(1.0, confidence[t]) for t in hit) / tag_max))
            r.why += [f"tag {t}" for t in hit]
        if profile.terms:
            score = 0.0
            for term, pat in patterns.items():
                if pat.search(r.doc.title):
                    score += profile.terms[term]
                    r.why.append(f"term '{term}'")
                elif pat.search(r.doc.abstract):
                    score += 0.5 * profile.terms[term]
                    r.why.append(f"term '{term}'")
            parts.append(min(1.0, score / term_max))
        if profile.liked:
            if liked:
                weighted = liked_sim[i] * like_w
                j = int(weighted.argmax())
                parts.append(float(weighted[j]))
                if weighted[j] >= 0.15:
                    r.why.append(f"like {liked[j].id} ({liked_sim[i, j]:.2f})")
            else:
                parts.append(0.0)
        r.relevance = float(sum(parts) / len(parts)) if parts else 0.0
        r.novelty = float(min(1.0, max(0.0, novelty[i]) + (0.2 if r.doc.id in flagged_ids else 0.0)))
        if r.doc.id in flagged_ids:
            r.why.append("named by the trends")
        r.recency = _recency(r.doc, period)
        r.score = cfg.relevance_weight * r.relevance + cfg.novelty_weight * r.novelty + cfg.recency_weight * r.recency
    ranked.sort(key=lambda r: (-r.score, r.doc.id))
    return ranked
