"""Active learning from corrections: the papers the tag model is least sure about, for a reviewer.

The dashboard's review queue shows, for the lab's most important tags (every group but "other"
unless the caller names the tags), the embedded papers whose score sits nearest the tag's threshold,
measured in log-odds so that 0.50 vs 0.45 and 0.05 vs 0.04 are not treated alike. Each confirm or
remove is a correction (`radar tag fix`, ``record_correction``) that the next retrain learns from.
Papers already labeled or corrected for a tag are not asked again. The queue takes tags in turn so
that one tag does not fill it. benchmarks/bench_tagging_review.py measures the gain per correction
against corrections on randomly picked papers.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from radar.analysis.tags.errors import TaggingError
from radar.analysis.tags.model import TagModel
from radar.analysis.tags.tagger import decide, labeled_pairs, saved_model, train
from radar.analysis.tags.taxonomy import Taxonomy
from radar.index.embeddings import Embeddings
from radar.store.table import Database

if TYPE_CHECKING:
    from radar.analysis.tags.tagger import TagEnv

POOL = 5000  # embedded papers scored to fill the queue (a fixed pseudo-random sample of the store)


@dataclass(frozen=True)
class ReviewItem:
    doc_id: str
    title: str
    tag: str
    score: float
    threshold: float

    @property
    def tagged(self) -> bool:
        """Whether the model gives the tag now (the reviewer confirms or removes it)."""
        return self.score >= self.threshold


def important_tags(taxonomy: Taxonomy) -> list[str]:
    """The tags of every group but "other" (the taxonomy's order); all tags when nothing else is left."""
    tags = [t.name for t in taxonomy.tags if t.group != "other"]
    return tags or list(taxonomy.names)


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.asarray(np.log(p / (1 - p)))


def uncertainty(model: TagModel, scores: np.ndarray) -> np.ndarray:
    """Per document and tag, the distance of the score from the threshold (smaller = less sure):
    log-odds for classifier tags, the cosine difference times 10 for zero-shot tags."""
    out = np.zeros(scores.shape, dtype=np.float64)
    for j, name in enumerate(model.names):
        rule = model.rules[name]
        if rule.classifier is not None:
            out[:, j] = np.abs(_logit(scores[:, j]) - _logit(np.array(rule.threshold)))
        else:
            out[:, j] = np.abs(scores[:, j] - rule.threshold) * 10
    return out


def pick_uncertain(
    model: TagModel,
    scores: np.ndarray,
    tags: Sequence[str],
    k: int,
    *,
    known: Collection[tuple[int, str]] = (),
) -> list[tuple[int, str]]:
    """Up to ``k`` (row, tag) pairs, least sure first, taking ``tags`` in turn, one tag per row at most;
    pairs in ``known`` (already labeled or corrected) are skipped."""
    unknown = sorted(set(tags) - set(model.names))
    if unknown:
        raise TaggingError(f"unknown tag(s) {', '.join(unknown)} for the review queue; valid: {', '.join(model.names)}")
    margin = uncertainty(model, scores)
    known = set(known)
    orders = {t: iter(np.argsort(margin[:, model.names.index(t)], kind="stable").tolist()) for t in tags}
    picked: list[tuple[int, str]] = []
    used: set[int] = set()
    while len(picked) < k and orders:
        for tag in list(orders):
            for row in orders[tag]:
                if row not in used and (row, tag) not in known:
                    picked.append((row, tag))
                    used.add(row)
                    break
            else:
                del orders[tag]  # this tag has nothing left to ask
            if len(picked) >= k:
                break
    return picked


def review_queue(
    store: Database, env: TagEnv, *, k: int = 20, tags: Sequence[str] | None = None, pool: int = POOL
) -> list[ReviewItem]:
    """The ``k`` papers to review next: embedded papers of the store (a fixed sample of ``pool``) whose
    tag the current model (trained now if there is none) is least sure about, in ``tags`` (default:
    ``important_tags``); papers with a label or a correction for that tag are skipped."""

    if k <= 0:
        return []
    rows = Embeddings(store).sample_embedded(env.vectors.model_id, pool)
    if not rows:
        raise TaggingError("nothing is embedded yet; run `radar index` and `radar tag` before reviewing tags")
    model = saved_model(env) or train(store, env)
    vectors = np.stack([np.frombuffer(r.vector, dtype=np.float32) for r in rows])
    scores = decide(model, [r.title for r in rows], [r.abstract for r in rows], vectors)
    row_of = {r.doc_id: i for i, r in enumerate(rows)}
    known = {(row_of[d], t) for d, t in labeled_pairs(store, env) if d in row_of}
    wanted = list(tags) if tags is not None else important_tags(env.taxonomy)
    return [
        ReviewItem(
            rows[i].doc_id, rows[i].title, tag, float(scores[i, model.names.index(tag)]), model.rules[tag].threshold
        )
        for i, tag in pick_uncertain(model, scores, wanted, k, known=known)
    ]
