"""Tagging candidates under nested cross-validation on dev + dev2 (what was tried for issue 17).

    .venv/bin/python benchmarks/bench_tagging_candidates.py [--seeds 3]

Outer: 5 multilabel-stratified folds x --seeds (no test paper in training, asserted). Inner: 3 folds of
each outer training set give out-of-fold probabilities, from which every threshold (the tagger's
``best_threshold``), regularisation strength, block weight or stacker is chosen; the outer test fold
is only predicted. Blocks: ``emb`` (stored embedding), ``embd`` (embedding + cosine to each tag's
taxonomy description: label-aware features), ``text`` (TF-IDF of the training fold + snapshot
vocabulary, and keyword hits). Candidates: each block alone, the average of an embedding and a text
regression (the tagger's model) at C in {1, 4, 16}; C and block weight chosen per tag on the inner
folds; stacking over all tags' probabilities (hierarchical consistency: one tag's score may use the
others'). Probabilities of one run are cached (``RADAR_BENCH_CACHE``), so candidates are cheap to add.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import itertools
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tagging_data as data

from radar.analysis.tags.features import tfidf_text
from radar.analysis.tags.keywords import KeywordMatcher
from radar.analysis.tags.model import best_threshold

CS = (1, 4, 16)
Probs = dict[tuple[str, int], tuple[np.ndarray, np.ndarray]]  # (block, C) -> (inner oof, outer test)


def f1(truth: np.ndarray, pred: np.ndarray) -> float:
    denom = truth.sum() + pred.sum()
    return float(2 * (truth & pred).sum() / denom) if denom else 0.0


def fit_lr(x: np.ndarray | sp.csr_matrix, y: np.ndarray, c: float) -> LogisticRegression:
    if sp.issparse(x):
        return LogisticRegression(C=c, solver="liblinear", dual=True, max_iter=3000).fit(x, y)
    return LogisticRegression(C=c, max_iter=3000).fit(x, y)


def outer_probs(ls: data.LabeledSet, seeds: int) -> list[tuple[np.ndarray, np.ndarray, Probs]]:
    y, n_tags = ls.y, len(ls.names)
    descriptions = [f"{t.name.replace('-', ' ')}: {t.description}" for t in ls.taxonomy.tags]
    cos = ls.vectors @ data.embed_cached(descriptions)[0].T
    hits = np.log1p(KeywordMatcher(ls.taxonomy).matrix(ls.titles, ls.abstracts))
    texts = [tfidf_text(t, a) for t, a in zip(ls.titles, ls.abstracts, strict=True)]
    extra = [tfidf_text(t, a) for t, a in zip(*data.corpus_texts(3000), strict=True)]
    out = []
    for seed in range(seeds):
        for test in data.multilabel_folds(y, 5, seed):
            train = np.setdiff1d(np.arange(len(y)), test)
            data.check_disjoint(ls.ids, train, test)
            vec = TfidfVectorizer(
                ngram_range=(1, 2), min_df=2, max_df=0.3, sublinear_tf=True, stop_words="english", max_features=60000
            ).fit([texts[i] for i in train] + extra)
            blocks = {
                "emb": ls.vectors,
                "embd": np.hstack([ls.vectors, cos * 3]),
                "text": sp.hstack([vec.transform(texts), sp.csr_matrix(hits)], format="csr"),
            }
            inner = data.multilabel_folds(y[train], 3, 100 + seed)
            probs: Probs = {}
            for (name, x), c in itertools.product(blocks.items(), CS):
                oof, held = np.zeros((len(train), n_tags)), np.zeros((len(test), n_tags))
                for j in range(n_tags):
                    for part in inner:
                        rest = np.setdiff1d(np.arange(len(train)), part)
                        model = fit_lr(x[train[rest]], y[train[rest], j], c)
                        oof[part, j] = model.predict_proba(x[train[part]])[:, 1]
                    held[:, j] = fit_lr(x[train], y[train, j], c).predict_proba(x[test])[:, 1]
                probs[name, c] = (oof, held)
            out.append((train, test, probs))
            print(f"  seed {seed} fold {len(out)}", flush=True)
    return out


def save_runs(path: Path, runs: list[tuple[np.ndarray, np.ndarray, Probs]]) -> None:
    """Numbers only (a cache in the shared temp folder must not be a pickle: loading one can run code)."""
    arrays: dict[str, np.ndarray] = {}
    for k, (train, test, probs) in enumerate(runs):
        arrays[f"{k}/train"], arrays[f"{k}/test"] = train, test
        for (block, c), (oof, held) in probs.items():
            arrays[f"{k}/{block}/{c}/oof"], arrays[f"{k}/{block}/{c}/held"] = oof, held
    np.savez(path, **arrays)


def load_runs(path: Path) -> list[tuple[np.ndarray, np.ndarray, Probs]]:
    with np.load(path, allow_pickle=False) as z:
        runs = []
        for k in range(sum(key.endswith("/train") for key in z.files)):
            probs: Probs = {}
            for key in z.files:
                parts = key.split("/")
                if parts[0] == str(k) and len(parts) == 4 and parts[3] == "oof":
                    probs[parts[1], int(parts[2])] = (z[key], z[f"{k}/{parts[1]}/{parts[2]}/held"])
            runs.append((z[f"{k}/train"], z[f"{k}/test"], probs))
    return runs


Combine = Callable[[Probs, np.ndarray], tuple[np.ndarray, np.ndarray]]


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-5, 1 - 1e-5)
    return np.asarray(np.log(p / (1 - p)))


def evaluate(ls: data.LabeledSet, runs: list, seeds: int, name: str, combine: Combine) -> None:
    per_seed = [np.zeros_like(ls.y) for _ in range(seeds)]
    for k, (train, test, probs) in enumerate(runs):
        oof, held = combine(probs, train)
        for j in range(len(ls.names)):
            per_seed[k // 5][test, j] = held[:, j] >= best_threshold(oof[:, j], ls.y[train, j])
    scores = np.array([[f1(ls.y[:, j], p[:, j]) for j in range(len(ls.names))] for p in per_seed])
    mean = scores.mean(axis=0)
    print(
        f"{name:34s} macro-F1 {mean.mean():.3f} (sd {scores.mean(axis=1).std():.3f}) lowest {mean.min():.2f} | "
        + " ".join(f"{v:.2f}" for v in mean),
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    ls = data.load_labeled()
    cache = data.cache_dir() / f"candidates-{args.seeds}.npz"
    if cache.is_file():
        runs = load_runs(cache)
    else:
        runs = outer_probs(ls, args.seeds)
        save_runs(cache, runs)
    y = ls.y

    def avg(emb: str, ce: int, ct: int, w: float = 0.5) -> Combine:
        return lambda p, _: tuple(w * p[emb, ce][i] + (1 - w) * p["text", ct][i] for i in (0, 1))  # type: ignore[return-value]

    def tuned(p: Probs, train: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        oof, held = np.zeros_like(p["text", 1][0]), np.zeros_like(p["text", 1][1])
        for j in range(y.shape[1]):
            best = -1.0
            for ce, ct, w in itertools.product(CS, CS, (0.3, 0.5, 0.7)):
                o, h = avg("embd", ce, ct, w)(p, train)
                s = f1(y[train, j], o[:, j] >= best_threshold(o[:, j], y[train, j]))
                if s > best:
                    best, oof[:, j], held[:, j] = s, o[:, j], h[:, j]
        return oof, held

    def stacked(p: Probs, train: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lo = np.hstack([logit(p[k][0]) for k in sorted(p)])
        lh = np.hstack([logit(p[k][1]) for k in sorted(p)])
        oof, held = np.zeros((len(train), y.shape[1])), np.zeros((len(lh), y.shape[1]))
        inner = data.multilabel_folds(y[train], 3, 7)
        for j in range(y.shape[1]):
            for part in inner:
                rest = np.setdiff1d(np.arange(len(train)), part)
                m = LogisticRegression(C=0.1, max_iter=1000).fit(lo[rest], y[train][rest, j])
                oof[part, j] = m.predict_proba(lo[part])[:, 1]
            held[:, j] = LogisticRegression(C=0.1, max_iter=1000).fit(lo, y[train, j]).predict_proba(lh)[:, 1]
        return oof, held

    print(" " * 34, " ".join(n[:6] for n in ls.names))
    for c in CS:
        for block in ("emb", "embd", "text"):
            evaluate(ls, runs, args.seeds, f"{block} C={c}", lambda p, _, b=block, c=c: p[b, c])
        evaluate(ls, runs, args.seeds, f"avg emb+text C={c} (the tagger)", avg("emb", c, c))
        evaluate(ls, runs, args.seeds, f"avg embd+text C={c}", avg("embd", c, c))
    evaluate(ls, runs, args.seeds, "C and weight per tag (inner CV)", tuned)
    evaluate(ls, runs, args.seeds, "stacked over tags x blocks x C", stacked)


if __name__ == "__main__":
    main()
