"""Scoring tag decisions against labels: `radar tag eval` and the cross-validation in benchmarks/.

Documents the model was trained on are scored out of fold: they are split in five folds and each
fold is predicted by a model trained without it, so evaluating on the shipped dev labels does not
score the model on its own training set. Documents it never saw (a held-out file) are scored by
the model `radar tag` uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from radar.analysis.tags.config import TaggingConfig
from radar.analysis.tags.errors import TaggingError
from radar.analysis.tags.keywords import KeywordMatcher
from radar.analysis.tags.tagger import (
    Corpus,
    TagEnv,
    Vectors,
    decide,
    fit_model,
    gather_examples,
    load_model,
    train,
)
from radar.analysis.tags.taxonomy import Taxonomy
from radar.analysis.tags.training import Examples, read_label_file, shipped_papers
from radar.crawler.documents import Documents
from radar.store.table import Database

FOLDS = 5


@dataclass(frozen=True, slots=True)
class TagScore:
    precision: float  # to 3 places, as recall and f1
    recall: float
    f1: float
    support: int
    predicted: int


@dataclass(frozen=True, slots=True)
class Scores:
    """Per-tag scores and their macro-F1 (``scores_table``)."""

    tags: dict[str, TagScore]
    macro_f1: float


@dataclass(frozen=True, slots=True, kw_only=True)
class TagEvaluation(Scores):
    """``evaluate_file``: `radar tag eval --json` (``msgspec.to_builtins``)."""

    documents: int
    unknown_ids: list[str]  # labeled ids not in the workspace (skipped)
    out_of_fold: int  # documents the model trained on, scored out of fold
    model_version: str
    notes: list[str]
    keyword_baseline: Scores


def scores_table(names: Sequence[str], truth: np.ndarray, pred: np.ndarray) -> Scores:
    """Per-tag precision, recall, F1 and support, and their macro-F1 (tags with support only)."""
    tags: dict[str, TagScore] = {}
    for j, name in enumerate(names):
        tp = int(np.sum(truth[:, j] & pred[:, j]))
        n_pred, support = int(pred[:, j].sum()), int(truth[:, j].sum())
        precision = tp / n_pred if n_pred else 0.0
        recall = tp / support if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        tags[name] = TagScore(round(precision, 3), round(recall, 3), round(f1, 3), support, n_pred)
    scored = [v.f1 for v in tags.values() if v.support]
    return Scores(tags, round(float(np.mean(scored)), 3) if scored else 0.0)


def keyword_baseline(taxonomy: Taxonomy, titles: Sequence[str], abstracts: Sequence[str]) -> np.ndarray:
    """A tag applies when any of its keywords appears in the title or abstract."""
    hits = KeywordMatcher(taxonomy).matrix(titles, abstracts)
    n = len(taxonomy.names)
    return (hits[:, :n] + hits[:, n:]) > 0


def evaluate_file(store: Database, env: TagEnv, path: Path) -> TagEvaluation:
    """Scores against a label file. ``env.vectors`` may be the model `radar index` would use when nothing
    is embedded yet: eval works on an imported, unindexed workspace (it embeds the few documents it needs)."""
    taxonomy, cfg, vectors = env.taxonomy, env.config, env.vectors
    labels = read_label_file(path, taxonomy)
    stored = Documents(store).of(labels)
    texts = {i: (d.title, d.abstract) for i, d in stored.items()}
    shipped = shipped_papers()
    texts.update({i: shipped[i] for i in labels if i not in texts and i in shipped})
    ids = [i for i in labels if i in texts]
    unknown = [i for i in labels if i not in texts]
    if not ids:
        raise TaggingError(
            f"none of the {len(labels)} ids in {path} is in this workspace; import or crawl those "
            "papers first (e.g. `radar import FILE`)"
        )
    names = taxonomy.names
    truth = np.array([[n in labels[i] for n in names] for i in ids], dtype=bool)
    titles, abstracts = [texts[i][0] for i in ids], [texts[i][1] for i in ids]
    vecs = vectors.for_texts(store, ids, texts)
    model, note = load_model(env)
    model = model or train(store, env)
    pred = decide(model, titles, abstracts, vecs) >= model.thresholds()
    examples = gather_examples(store, env)
    trained_on = set(examples.ids)
    seen = np.array([k for k, i in enumerate(ids) if i in trained_on], dtype=int)
    if len(seen):  # out-of-fold predictions for documents the model trained on
        corpus = Corpus.sample(store, vectors.model_id)
        shuffled = np.random.default_rng(0).permutation(seen)
        for rows in np.array_split(shuffled, min(FOLDS, len(seen))):
            fold = {ids[r] for r in rows}
            keep = np.array([r for r, doc_id in enumerate(examples.ids) if doc_id not in fold])
            fold_model = fit_model(examples.subset(keep), taxonomy, cfg, corpus, vectors.embed)
            pred[rows] = (
                decide(fold_model, [titles[r] for r in rows], [abstracts[r] for r in rows], vecs[rows])
                >= fold_model.thresholds()
            )
    baseline = keyword_baseline(taxonomy, titles, abstracts)
    found = scores_table(names, truth, pred)
    return TagEvaluation(
        tags=found.tags,
        macro_f1=found.macro_f1,
        documents=len(ids),
        unknown_ids=unknown,
        out_of_fold=len(seen),
        model_version=model.version,
        notes=[note] if note else [],
        keyword_baseline=scores_table(names, truth, baseline),
    )


def cross_validate(
    examples: Examples,
    taxonomy: Taxonomy,
    vectors: Vectors,
    corpus: Corpus,
    cfg: TaggingConfig | None = None,
    folds: int = FOLDS,
    seed: int = 0,
) -> Scores:
    """K-fold cross-validated scores of the full training procedure (thresholds chosen inside each fold)."""
    cfg = cfg or TaggingConfig()
    pred = np.zeros(examples.y.shape, dtype=bool)
    from sklearn.model_selection import KFold

    for train_rows, test_rows in KFold(folds, shuffle=True, random_state=seed).split(examples.ids):
        model = fit_model(examples.subset(train_rows), taxonomy, cfg, corpus, vectors.embed)
        part = examples.subset(test_rows)
        pred[test_rows] = decide(model, part.titles, part.abstracts, part.vectors) >= model.thresholds()
    return scores_table(taxonomy.names, examples.y, pred)
