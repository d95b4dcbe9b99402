"""Active learning benchmark: what N reviewer corrections from the review queue buy, vs random ones.

    .venv/bin/python benchmarks/bench_tagging_review.py [--seeds 2] [--step 40] [--rounds 3]

A simulated reviewer answers with the dev2 labels (labeled with the same guide as dev, drawn from
keyword pools for the weak tags: the kind of papers a review queue surfaces). Per seed, dev2 is
split in two halves, a pool and a test half. The model starts from the dev labels; each round the
queue (``review.pick_uncertain``: least sure first, the lab's important tags in turn, one tag per
paper) picks --step (paper, tag) pairs from the pool, the reviewer confirms or removes each, and the
model is retrained with them as corrections (weight [tagging] correction_weight, only the answered
tag known for that paper), exactly as `radar tag fix` + `radar tag --retrain` do. The same number
of corrections on randomly picked pairs is the control; the pool fully labeled is the ceiling.
Scores on the test half, which neither strategy ever sees: macro-F1 and the mean F1 of the
important tags.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tagging_data as data
from bench_tagging import fit, no_describe, predict

from radar.analysis.tags.config import TaggingConfig
from radar.analysis.tags.evaluate import scores_table
from radar.analysis.tags.review import important_tags, pick_uncertain
from radar.analysis.tags.tagger import Corpus, decide, fit_model
from radar.analysis.tags.training import Examples

console = Console(width=150)


def with_corrections(
    ls: data.LabeledSet, base: np.ndarray, answers: list[tuple[int, str]], cfg: TaggingConfig
) -> Examples:
    """The base rows fully labeled, then one row per corrected paper with only its answered tags known."""
    names = ls.names
    papers = sorted({i for i, _ in answers})
    rows = np.concatenate([base, np.array(papers, dtype=int)])
    n, t = len(rows), len(names)
    known = np.zeros((n, t), dtype=bool)
    known[: len(base)] = True
    weight = np.ones((n, t), dtype=np.float32)
    at = {p: len(base) + k for k, p in enumerate(papers)}
    for i, tag in answers:
        known[at[i], names.index(tag)] = True
        weight[at[i], names.index(tag)] = cfg.correction_weight
    user = np.zeros(n, dtype=bool)
    user[len(base) :] = True
    return Examples(
        [ls.ids[i] for i in rows],
        [ls.titles[i] for i in rows],
        [ls.abstracts[i] for i in rows],
        ls.vectors[rows],
        ls.y[rows],
        known,
        weight,
        user,
    )


def score(ls: data.LabeledSet, model, test: np.ndarray, important: list[str]) -> tuple[float, float]:  # noqa: ANN001
    result = scores_table(ls.names, ls.y[test], predict(model, ls, test))
    return result.macro_f1, statistics.mean(result.tags[n].f1 for n in important)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--step", type=int, default=40, help="corrections per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    ls = data.load_labeled()
    titles, abstracts = data.corpus_texts()
    corpus = Corpus(titles, abstracts, np.zeros((0, ls.vectors.shape[1]), dtype=np.float32))
    cfg = TaggingConfig()
    important = important_tags(ls.taxonomy)
    dev, dev2 = np.flatnonzero(ls.source == 0), np.flatnonzero(ls.source == 1)
    checkpoints = [args.step * r for r in range(args.rounds + 1)]
    results: dict[str, dict[int, list[tuple[float, float]]]] = {
        "review queue": {},
        "random": {},
        "pool fully labeled": {},
    }
    for seed in range(args.seeds):
        halves = data.multilabel_folds(ls.y[dev2], 2, seed)
        pool, test = dev2[halves[0]], dev2[halves[1]]
        data.check_disjoint(ls.ids, np.concatenate([dev, pool]), test)
        start_model = fit(ls, dev, corpus, cfg)
        start = score(ls, start_model, test, important)
        full = score(ls, fit(ls, np.concatenate([dev, pool]), corpus, cfg), test, important)
        results["pool fully labeled"].setdefault(len(pool) * len(ls.names), []).append(full)
        rng = np.random.default_rng(seed)
        for strategy in ("review queue", "random"):
            model, answers = start_model, list[tuple[int, str]]()
            results[strategy].setdefault(0, []).append(start)
            position = {int(p): k for k, p in enumerate(pool)}
            for n in checkpoints[1:]:
                asked = set(answers)
                if strategy == "review queue":
                    texts = [ls.titles[i] for i in pool], [ls.abstracts[i] for i in pool]
                    scores = decide(model, *texts, ls.vectors[pool])
                    known = {(position[p], t) for p, t in answers}
                    chosen = pick_uncertain(model, scores, important, args.step, known=known)
                    picked = [(int(pool[r]), t) for r, t in chosen]
                else:
                    free = [(int(p), t) for p in pool for t in important if (int(p), t) not in asked]
                    picked = [free[k] for k in rng.choice(len(free), size=args.step, replace=False)]
                answers += picked
                examples = with_corrections(ls, dev, answers, cfg)
                model = fit_model(examples, ls.taxonomy, cfg, corpus, no_describe)
                results[strategy].setdefault(n, []).append(score(ls, model, test, important))
            trail = ", ".join(f"{m:.3f}/{i:.3f}" for m, i in (r[-1] for r in results[strategy].values()))
            console.print(f"seed {seed} {strategy} (macro-F1/important tags): {trail}")
    table = Table(
        title=f"Review queue vs random corrections ({args.seeds} seed(s); test: half of dev2, never reviewed)"
    )
    for col in ("strategy", "corrections", "macro-F1", "important tags mean F1"):
        table.add_column(col, justify="left" if col == "strategy" else "right")
    for strategy, by_n in results.items():
        for n, rows in by_n.items():
            table.add_row(
                strategy,
                f"{n:,}" + (" (all labels)" if strategy == "pool fully labeled" else ""),
                f"{statistics.mean(r[0] for r in rows):.3f}",
                f"{statistics.mean(r[1] for r in rows):.3f}",
            )
    console.print(table)


if __name__ == "__main__":
    main()
