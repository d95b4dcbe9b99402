"""Tagging benchmark: nested cross-validation on the shipped labels (dev + dev2), and tagging speed.

    .venv/bin/python benchmarks/bench_tagging.py [--seeds 3] [--folds 5] [--speed-docs 20000]

1. Quality, nested: the 1,500 labeled papers are split in --folds outer folds (each tag's positives
   spread evenly; --seeds different splits). Each outer test fold is scored by models trained on the
   other folds only (asserted: no test paper id is in the training rows); every threshold is chosen
   inside the training rows by the model's own inner 3-fold cross-validation. In the same run:
   - keyword baseline: a tag applies when any of its seed keywords appears (no training);
   - previous model: the tagger as it was before dev2 (same procedure, trained on the dev rows of
     the training folds only, i.e. what it could learn from the 750 labels it shipped with);
   - Radar: the tagger now (`fit_model`, trained on the dev and dev2 rows of the training folds).
   Per tag: precision, recall, F1 (mean over seeds); macro-F1 with its sd over seeds; the goals.
2. Across sets: trained on all of dev, scored on all of dev2, and the reverse (dev2 was drawn from
   keyword pools and cs.AR/DC/PF: a check that the model does not only fit one set's make-up).
3. Speed: documents/s of `decide` (features + model) on --speed-docs snapshot texts, and the
   projected time for 100k documents on this machine (store writes not included; see README).

Vectors are those `radar index` stores on a CPU (the packaged model, int8 ONNX), cached in the temp
folder (benchmarks/tagging_data.py), so a rerun does not embed again.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # small fits: threaded BLAS only fights other work on 2 cores

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tagging_data as data

from radar.analysis.tags.config import TaggingConfig
from radar.analysis.tags.evaluate import keyword_baseline, scores_table
from radar.analysis.tags.model import TagModel
from radar.analysis.tags.tagger import Corpus, decide, fit_model
from radar.analysis.tags.training import Examples

console = Console(width=150)
GOAL_MACRO, GOAL_TAG, GOAL_RL = 0.80, 0.65, 0.75


def examples_of(ls: data.LabeledSet, rows: np.ndarray) -> Examples:
    n = len(rows)
    return Examples(
        [ls.ids[i] for i in rows],
        [ls.titles[i] for i in rows],
        [ls.abstracts[i] for i in rows],
        ls.vectors[rows],
        ls.y[rows],
        np.ones((n, ls.y.shape[1]), dtype=bool),
        np.ones((n, ls.y.shape[1]), dtype=np.float32),
        np.zeros(n, dtype=bool),
    )


def no_describe(texts: Sequence[str]) -> np.ndarray:
    raise AssertionError("every tag has labeled examples here; no zero-shot description is embedded")


def fit(ls: data.LabeledSet, rows: np.ndarray, corpus: Corpus, cfg: TaggingConfig) -> TagModel:
    return fit_model(examples_of(ls, rows), ls.taxonomy, cfg, corpus, no_describe)


def predict(model: TagModel, ls: data.LabeledSet, rows: np.ndarray) -> np.ndarray:
    scores = decide(model, [ls.titles[i] for i in rows], [ls.abstracts[i] for i in rows], ls.vectors[rows])
    return np.asarray(scores >= model.thresholds())


def nested_cv(
    ls: data.LabeledSet, corpus: Corpus, cfg: TaggingConfig, seeds: int, folds: int
) -> dict[str, list[dict[str, Any]]]:
    runs: dict[str, list[dict[str, Any]]] = {"previous model (dev only)": [], "Radar (dev + dev2)": []}
    dev_rows = ls.source == 0
    for seed in range(seeds):
        start = time.perf_counter()
        pred = {name: np.zeros_like(ls.y) for name in runs}
        for test in data.multilabel_folds(ls.y, folds, seed):
            train = np.setdiff1d(np.arange(len(ls.ids)), test)
            data.check_disjoint(ls.ids, train, test)
            previous = train[dev_rows[train]]
            data.check_disjoint(ls.ids, previous, test)
            pred["previous model (dev only)"][test] = predict(fit(ls, previous, corpus, cfg), ls, test)
            pred["Radar (dev + dev2)"][test] = predict(fit(ls, train, corpus, cfg), ls, test)
        for name in runs:
            runs[name].append(scores_table(ls.names, ls.y, pred[name]))
        console.print(
            f"  seed {seed}: "
            + ", ".join(f"{name} {runs[name][-1]['macro_f1']:.3f}" for name in runs)
            + f" ({time.perf_counter() - start:.0f} s)"
        )
    return runs


def mean_table(runs: list[dict[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    tags = {
        n: {k: statistics.mean(r["tags"][n][k] for r in runs) for k in ("precision", "recall", "f1")} for n in names
    }
    macros = [r["macro_f1"] for r in runs]
    return {"tags": tags, "macro_f1": statistics.mean(macros), "sd": statistics.pstdev(macros)}


def print_quality(ls: data.LabeledSet, runs: dict[str, list[dict[str, Any]]], folds: int) -> None:
    base = scores_table(ls.names, ls.y, keyword_baseline(ls.taxonomy, ls.titles, ls.abstracts))
    columns: dict[str, dict[str, Any]] = {"keyword baseline": {**base, "sd": 0.0}}
    columns.update({name: mean_table(r, ls.names) for name, r in runs.items()})
    seeds = len(next(iter(runs.values())))
    table = Table(
        title=f"Tagging, nested {folds}-fold CV x {seeds} seed(s) on {len(ls.ids)} labels (dev + dev2): P / R / F1"
    )
    table.add_column("tag")
    table.add_column("support", justify="right")
    for name in columns:
        table.add_column(name, justify="right")
    for n in ls.names:
        cells = [
            f"{c['tags'][n]['precision']:.2f} / {c['tags'][n]['recall']:.2f} / {c['tags'][n]['f1']:.2f}"
            for c in columns.values()
        ]
        table.add_row(n, str(int(ls.y[:, ls.names.index(n)].sum())), *cells)
    table.add_row("[bold]macro-F1", "", *(f"[bold]{c['macro_f1']:.3f}[/] (sd {c['sd']:.3f})" for c in columns.values()))
    console.print(table)
    radar = columns["Radar (dev + dev2)"]
    f1s = {n: radar["tags"][n]["f1"] for n in ls.names}
    worst = min(f1s, key=lambda n: f1s[n])
    checks = [
        (f"macro-F1 {radar['macro_f1']:.3f} >= {GOAL_MACRO}", radar["macro_f1"] >= GOAL_MACRO),
        (f"every tag >= {GOAL_TAG} (lowest: {worst} {f1s[worst]:.2f})", f1s[worst] >= GOAL_TAG),
        (
            f"rl-policy-optimization {f1s['rl-policy-optimization']:.2f} >= {GOAL_RL}",
            f1s["rl-policy-optimization"] >= GOAL_RL,
        ),
    ]
    for text, ok in checks:
        console.print(f"goal {'met' if ok else '[bold red]NOT met[/]'}: {text}")


def across_sets(ls: data.LabeledSet, corpus: Corpus, cfg: TaggingConfig) -> None:
    table = Table(title="Across label sets (train on one, score the other): macro-F1, lowest tag")
    for col in ("trained on", "scored on", "keyword baseline", "Radar", "lowest tag"):
        table.add_column(col)
    for train_set, test_set in ((0, 1), (1, 0)):
        train, test = np.flatnonzero(ls.source == train_set), np.flatnonzero(ls.source == test_set)
        data.check_disjoint(ls.ids, train, test)
        result = scores_table(ls.names, ls.y[test], predict(fit(ls, train, corpus, cfg), ls, test))
        base = scores_table(
            ls.names,
            ls.y[test],
            keyword_baseline(ls.taxonomy, [ls.titles[i] for i in test], [ls.abstracts[i] for i in test]),
        )
        worst = min(ls.names, key=lambda n: result["tags"][n]["f1"])
        table.add_row(
            data.LABEL_FILES[train_set],
            data.LABEL_FILES[test_set],
            f"{base['macro_f1']:.3f}",
            f"{result['macro_f1']:.3f}",
            f"{worst} {result['tags'][worst]['f1']:.2f}",
        )
    console.print(table)


def speed(ls: data.LabeledSet, corpus: Corpus, cfg: TaggingConfig, n_docs: int) -> None:
    start = time.perf_counter()
    model = fit(ls, np.arange(len(ls.ids)), corpus, cfg)
    train_s = time.perf_counter() - start
    titles, abstracts = data.corpus_texts(n_docs, seed=1)
    vectors = ls.vectors[np.arange(len(titles)) % len(ls.ids)]  # speed does not depend on the vectors' values
    start, cpu = time.perf_counter(), time.process_time()
    for lo in range(0, len(titles), 4096):  # tag_documents' batch size
        decide(model, titles[lo : lo + 4096], abstracts[lo : lo + 4096], vectors[lo : lo + 4096])
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    rate, cpu_rate = len(titles) / took, len(titles) / cpu
    console.print(
        f"speed: training on {len(ls.ids)} labels {train_s:.1f} s; decide {len(titles):,} documents {took:.1f} s "
        f"({rate:,.0f} docs/s) -> 100k documents in {100_000 / rate / 60:.1f} min (goal < 10 min, 2 shared cores); "
        f"CPU time {cpu:.1f} s ({cpu_rate:,.0f} docs per CPU-second, one thread: the rate on one idle core) "
        f"-> 100k in {100_000 / cpu_rate / 60:.1f} CPU-min"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--speed-docs", type=int, default=20000)
    parser.add_argument("--skip-quality", action="store_true")
    args = parser.parse_args()
    ls = data.load_labeled()
    titles, abstracts = data.corpus_texts()
    corpus = Corpus(titles, abstracts, np.zeros((0, ls.vectors.shape[1]), dtype=np.float32))
    cfg = TaggingConfig()
    console.print(f"{len(ls.ids)} labeled papers, {len(titles):,} unlabeled snapshot papers for the TF-IDF vocabulary")
    if not args.skip_quality:
        runs = nested_cv(ls, corpus, cfg, args.seeds, args.folds)
        print_quality(ls, runs, args.folds)
        across_sets(ls, corpus, cfg)
    speed(ls, corpus, cfg, args.speed_docs)


if __name__ == "__main__":
    main()
