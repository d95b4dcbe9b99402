"""A learning-to-rank re-ranker over the rerank's own evidence, trained on the corpus's pseudo-queries
(benchmarks/cross_rerank.py's ``pseudo.jsonl``: title spans, their source paper the one positive; never the judged
queries, checked by ``cross_rerank.disjoint``), measured on the judged lead-style sets beside Radar.

Features of each of Radar's top 30 for a query: its Radar rank, dense and BM25 ranks (reciprocal, 0 when absent),
the query-paper cosine of the stored vectors, and index/rerank.py's evidence (coverage, phrases, title phrases,
names in the title, conflict). A logistic regression (scikit-learn) scores them; the top 30 are re-ordered by its
score (``LtrRanking``), or its order joins Radar's as one more reciprocal-rank vote; benchmarks/bench_search.py's
``--ltr DIR/ltr.json`` measures both.

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/ltr_rerank.py --workspace WS --pseudo DIR/pseudo.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from cross_rerank import _jsonl, disjoint, judged  # noqa: E402

DEPTH = 30
NAMES = ("radar", "dense", "bm25", "cosine", "coverage", "phrases", "title_phrases", "names_in_title", "conflict")


def features(s: Any, query: str) -> tuple[list[str], np.ndarray]:
    """Radar's top ``DEPTH`` for the query (best first) and their features (rows in that order)."""
    from radar.index.rerank import analyse, evidence, rank

    q = analyse(query, s.keyword, s.votes.acronyms)
    vector = s.embedder.embed([q.dense_text])[0]
    n = s.cfg.candidates
    dense = s.dense(vector, n, None)
    keyword = [d for d, _ in s.keyword.search(query, n, None)]
    docs = s.documents.of(list(dict.fromkeys(dense + keyword)))
    texts = {d: (doc.title, doc.abstract) for d, doc in docs.items()}
    top = [d for d, _ in rank(q, dense, keyword, texts, s.keyword, s.cfg.rrf_k, s.votes)][:DEPTH]
    ev = evidence(q, s.keyword, {d: texts[d] for d in top})
    blobs = s.embeddings.current_vectors(top, s.vectors.manifest.model_id)
    dr = {d: i for i, d in enumerate(dense, 1)}
    kr = {d: i for i, d in enumerate(keyword, 1)}
    rows = []
    for i, d in enumerate(top, 1):
        e = ev[d]
        cos = float(np.frombuffer(blobs[d], dtype=np.float32) @ vector) if d in blobs else 0.0
        rows.append(
            [1 / i, 1 / dr[d] if d in dr else 0.0, 1 / kr[d] if d in kr else 0.0, cos, e.coverage, e.phrases]
            + [e.title_phrases, float(e.names_in_title), float(e.conflict)]
        )
    return top, np.asarray(rows, dtype=np.float64)


class LtrRanking:
    """Radar's top ``DEPTH`` re-ordered by the model's score (``vote`` 0), or by Radar's reciprocal-rank score plus
    ``vote`` times the model order's; the rest of Radar's ranking after them."""

    def __init__(self, searcher: Any, weights: Path, vote: float = 0.0) -> None:
        w = json.loads(weights.read_text(encoding="utf-8"))
        assert w["names"] == list(NAMES), "features changed: train again"
        self.s, self.coef, self.intercept, self.vote = searcher, np.asarray(w["coef"]), w["intercept"], vote

    def search(self, query: str, k: int) -> list[str]:
        top, x = features(self.s, query)
        by_ltr = [top[i] for i in np.argsort(-(x @ self.coef + self.intercept), kind="stable")]
        if self.vote:
            score = {d: 1 / (self.s.cfg.rrf_k + i) for i, d in enumerate(top, 1)}
            for i, d in enumerate(by_ltr, 1):
                score[d] += self.vote / (self.s.cfg.rrf_k + i)
            by_ltr = sorted(top, key=lambda d: (-score[d], d))
        if k <= len(by_ltr):
            return by_ltr[:k]
        rest = [h.id for h in self.s.search(query, k=k) if h.id not in set(by_ltr)]
        return (by_ltr + rest)[:k]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--pseudo", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=1500)
    args = ap.parse_args()
    from sklearn.linear_model import LogisticRegression

    from radar.app import wiring
    from radar.app.context import Radar
    from radar.store import Workspace

    evaluation, _ = judged()
    data = _jsonl(args.pseudo)[: args.queries]
    check = disjoint([d["q"] for d in data], evaluation)
    print(f"{len(data)} pseudo-queries; overlap with judged: {check}")
    if any(check.values()):
        raise SystemExit("a pseudo-query overlaps a judged query")
    s = wiring.open_searcher(Radar(Workspace.open(args.workspace)))
    started = time.process_time()
    xs, ys = [], []
    for d in data:
        top, x = features(s, d["q"])
        xs.append(x)
        ys.append(np.array([t == d["pos"] for t in top], dtype=np.int64))
    print(f"features of {len(data)} pseudo-queries in {time.process_time() - started:.0f} CPU-s")
    model = LogisticRegression(C=1.0, max_iter=2000, class_weight="balanced")
    model.fit(np.vstack(xs), np.concatenate(ys))
    print("weights: " + ", ".join(f"{n} {w:+.2f}" for n, w in zip(NAMES, model.coef_[0], strict=True)))

    out = args.pseudo.parent / "ltr.json"
    weights = {"names": list(NAMES), "coef": model.coef_[0].tolist(), "intercept": float(model.intercept_[0])}
    out.write_text(json.dumps(weights), encoding="utf-8")
    print(f"written {out}")
    s.store.close()


if __name__ == "__main__":
    main()
