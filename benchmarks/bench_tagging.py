"""Tagging benchmark: nested cross-validation on the shipped labels (dev + dev2 + dev3), what each boundary
feature and the dev3 labels add, a learning curve, and tagging speed.

    .venv/bin/python benchmarks/bench_tagging.py [--seeds 3] [--folds 5] [--speed-docs 20000]
        [--skip-quality] [--skip-boundaries] [--skip-curve] [--curve-seeds 3]

1. Quality, nested: the 1,898 labeled papers are split in --folds outer folds, stratified by every tag and by
   label set (each fold holds about 1/k of each tag's positives and of dev, dev2 and dev3: dev3's 398 boundary
   papers are spread, not one fold's block); --seeds different splits. Each outer test fold is scored by models
   trained on the other folds only (asserted: no test paper id is in the training rows; the most similar
   train/test pair by embedding is printed, a check for near-duplicates across folds); every threshold is
   chosen inside the training rows by the model's own inner 3-fold cross-validation. Scored on all papers, on
   dev + dev2 (sampled like the lab's papers) and on dev3 (sampled at the old tagger's boundaries: the hard
   cases), beside, in the same run:
   - keyword baseline: a tag applies when any of its seed keywords appears (no training);
   - without dev3: the same procedure trained on the dev and dev2 rows of the training folds only;
   - no boundary features: the taxonomy without its `boundaries` (features.py / boundaries.py);
   - Radar: the tagger now (`fit_model` with the default taxonomy).
2. Per boundary (the sentence-level features of boundaries.py): Radar without that boundary, and
   judge-contribution added to reward-modeling (not in the default taxonomy): the boundary's tag F1 overall,
   on dev + dev2, and on the dev3 papers sampled for that tag.
3. Learning curve: each outer training fold subsampled to 25/50/75/100% (--curve-seeds splits x subsamples),
   scored on the whole outer test fold: macro-F1 and the three weak tags; a line fitted to macro-F1 against
   log2(labels) says how many labels 0.80 would take if the curve keeps its slope.
4. Speed: documents/s of `decide` (features + model) on --speed-docs snapshot texts, beside the keyword
   rules alone in the same run, and the projected time for 100k documents (store writes not included).

Vectors are the shipped ones (what `radar tag` trains on); predictions are cached per variant and split in
the temp folder (tagging_data.cache_dir), keyed by the labels, the taxonomy and the tagger's source, so a
rerun after a change recomputes only what changed.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # small fits: threaded BLAS only fights other work on 2 cores

import argparse
import hashlib
import statistics
import sys
import time
from collections.abc import Callable, Sequence
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
from radar.analysis.tags.taxonomy import DEFAULT_TAXONOMY, Taxonomy, parse_taxonomy
from radar.analysis.tags.training import Examples

console = Console(width=160)
GOAL_MACRO, GOAL_TAG, GOAL_RL = 0.80, 0.65, 0.75
WEAK = ("rl-policy-optimization", "accelerator-hardware", "reward-modeling")
FRACTIONS = (0.25, 0.5, 0.75, 1.0)
SUBSETS = ("all", "dev + dev2", "dev3")
SOURCE = Path(__file__).resolve().parents[1] / "analysis" / "tags"


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


def fit(
    ls: data.LabeledSet, rows: np.ndarray, corpus: Corpus, cfg: TaggingConfig, taxonomy: Taxonomy | None = None
) -> TagModel:
    return fit_model(examples_of(ls, rows), taxonomy or ls.taxonomy, cfg, corpus, no_describe)


def predict(model: TagModel, ls: data.LabeledSet, rows: np.ndarray) -> np.ndarray:
    scores = decide(model, [ls.titles[i] for i in rows], [ls.abstracts[i] for i in rows], ls.vectors[rows])
    return np.asarray(scores >= model.thresholds())


# -- taxonomies of the variants ---------------------------------------------------------------------------


def taxonomy_with(boundaries: dict[str, list[str]]) -> Taxonomy:
    """The default taxonomy with each named tag's `boundaries = [...]` line replaced (or added)."""
    lines = DEFAULT_TAXONOMY.read_text().splitlines()
    out: list[str] = []
    tag = ""
    for line in lines:
        if line.startswith("name = "):
            tag = line.split('"')[1]
            out.append(line)
            if tag in boundaries and boundaries[tag]:
                out.append("boundaries = [" + ", ".join(f'"{b}"' for b in boundaries[tag]) + "]")
            continue
        if line.startswith("boundaries = ") and tag in boundaries:
            continue
        out.append(line)
    return parse_taxonomy("\n".join(out) + "\n", f"default taxonomy with {boundaries}")


def default_boundaries(taxonomy: Taxonomy) -> dict[str, list[str]]:
    return {t.name: list(t.boundaries) for t in taxonomy.tags if t.boundaries}


# -- cross-validated predictions, cached ------------------------------------------------------------------


def folds_of(ls: data.LabeledSet, k: int, seed: int) -> list[np.ndarray]:
    """Outer folds stratified by every tag and by label set (dev / dev2 / dev3)."""
    sets = np.eye(len(data.LABEL_FILES), dtype=bool)[ls.source]
    return data.multilabel_folds(np.hstack([ls.y, sets]), k, seed)


def code_digest(ls: data.LabeledSet) -> str:
    h = hashlib.sha1()
    for path in sorted(SOURCE.glob("*.py")) + [DEFAULT_TAXONOMY]:
        h.update(path.read_bytes())
    h.update(ls.y.tobytes())
    h.update("".join(ls.ids).encode())
    return h.hexdigest()[:12]


def cv_predictions(
    name: str,
    ls: data.LabeledSet,
    corpus: Corpus,
    taxonomy: Taxonomy,
    seed: int,
    folds: int,
    keep: Callable[[np.ndarray, int], np.ndarray] = lambda train, k: train,
) -> np.ndarray:
    """Out-of-fold decisions (n, tags) of the tagger trained on ``keep(train rows, fold)`` of each outer fold."""
    digest = hashlib.sha1(f"{name}|{seed}|{folds}|{taxonomy.digest}|{code_digest(ls)}".encode()).hexdigest()[:16]
    path = data.cache_dir() / f"cv-{digest}.npy"
    if path.is_file():
        return np.load(path, allow_pickle=False)
    pred = np.zeros_like(ls.y)
    started = time.perf_counter()
    for k, test in enumerate(folds_of(ls, folds, seed)):
        train = keep(np.setdiff1d(np.arange(len(ls.ids)), test), k)
        data.check_disjoint(ls.ids, train, test)
        pred[test] = predict(fit(ls, train, corpus, TaggingConfig(), taxonomy), ls, test)
    console.print(f"  {name}, split {seed}: {time.perf_counter() - started:.0f} s")
    np.save(path, pred)
    return pred


def subset_rows(ls: data.LabeledSet) -> dict[str, np.ndarray]:
    return {
        "all": np.arange(len(ls.ids)),
        "dev + dev2": np.flatnonzero(ls.source < data.BOUNDARY),
        "dev3": np.flatnonzero(ls.source == data.BOUNDARY),
    }


def scored(ls: data.LabeledSet, preds: list[np.ndarray]) -> dict[str, dict[str, Any]]:
    """Per subset: per-tag P/R/F1 means over splits, macro-F1 mean and sd."""
    out: dict[str, dict[str, Any]] = {}
    for subset, rows in subset_rows(ls).items():
        runs = [scores_table(ls.names, ls.y[rows], p[rows]) for p in preds]
        tags = {
            n: {k: statistics.mean(getattr(r.tags[n], k) for r in runs) for k in ("precision", "recall", "f1")}
            for n in ls.names
        }
        macros = [r.macro_f1 for r in runs]
        out[subset] = {"tags": tags, "macro_f1": statistics.mean(macros), "sd": statistics.pstdev(macros)}
    return out


# -- 1. quality -------------------------------------------------------------------------------------------


def nearest_across_folds(ls: data.LabeledSet, folds: int) -> float:
    """The highest cosine between a paper and one in another outer fold (split 0): near-duplicates would leak."""
    fold = np.zeros(len(ls.ids), dtype=int)
    for k, test in enumerate(folds_of(ls, folds, 0)):
        fold[test] = k
    sim = ls.vectors @ ls.vectors.T
    sim[fold[:, None] == fold[None, :]] = -1.0
    return float(sim.max())


def quality(ls: data.LabeledSet, corpus: Corpus, seeds: int, folds: int) -> dict[str, list[np.ndarray]]:
    console.print(
        f"outer folds stratified by tag and label set; most similar papers in different folds: cosine "
        f"{nearest_across_folds(ls, folds):.3f} (no near-duplicates across folds)"
    )
    plain = taxonomy_with({t: [] for t in default_boundaries(ls.taxonomy)})
    dev12 = ls.source < data.BOUNDARY
    variants: dict[str, tuple[Taxonomy, Callable[[np.ndarray, int], np.ndarray]]] = {
        "without dev3": (ls.taxonomy, lambda train, k: train[dev12[train]]),
        "no boundary features": (plain, lambda train, k: train),
        "Radar": (ls.taxonomy, lambda train, k: train),
    }
    preds = {
        name: [cv_predictions(name, ls, corpus, tax, s, folds, keep) for s in range(seeds)]
        for name, (tax, keep) in variants.items()
    }
    base = keyword_baseline(ls.taxonomy, ls.titles, ls.abstracts)
    columns = {"keyword baseline": scored(ls, [base]), **{name: scored(ls, p) for name, p in preds.items()}}
    for subset, rows in subset_rows(ls).items():
        table = Table(
            title=f"Tagging on {subset} ({len(rows)} papers), nested {folds}-fold CV x {seeds} split(s): P / R / F1"
        )
        table.add_column("tag")
        table.add_column("support", justify="right")
        for name in columns:
            table.add_column(name, justify="right")
        for n in ls.names:
            cells = []
            for c in columns.values():
                t = c[subset]["tags"][n]
                cells.append(f"{t['precision']:.2f} / {t['recall']:.2f} / {t['f1']:.2f}")
            table.add_row(n, str(int(ls.y[rows, ls.names.index(n)].sum())), *cells)
        table.add_row(
            "[bold]macro-F1",
            "",
            *(f"[bold]{c[subset]['macro_f1']:.3f}[/] (sd {c[subset]['sd']:.3f})" for c in columns.values()),
        )
        console.print(table)
    radar = columns["Radar"]["all"]
    f1s = {n: radar["tags"][n]["f1"] for n in ls.names}
    worst = min(f1s, key=lambda n: f1s[n])
    for text, ok in (
        (f"macro-F1 {radar['macro_f1']:.3f} >= {GOAL_MACRO}", radar["macro_f1"] >= GOAL_MACRO),
        (f"every tag >= {GOAL_TAG} (lowest: {worst} {f1s[worst]:.2f})", f1s[worst] >= GOAL_TAG),
        (
            f"rl-policy-optimization {f1s['rl-policy-optimization']:.2f} >= {GOAL_RL}",
            f1s["rl-policy-optimization"] >= GOAL_RL,
        ),
    ):
        console.print(f"goal (all 1,898, nested CV) {'met' if ok else '[bold red]NOT met[/]'}: {text}")
    return preds


# -- 2. per boundary --------------------------------------------------------------------------------------


def per_boundary(ls: data.LabeledSet, corpus: Corpus, seeds: int, folds: int, radar: list[np.ndarray]) -> None:
    default = default_boundaries(ls.taxonomy)
    cases: list[tuple[str, str, Taxonomy, bool]] = []  # (boundary, tag, other taxonomy, other = with it)
    for tag, names in default.items():
        for b in names:
            cases.append((b, tag, taxonomy_with({**default, tag: [x for x in names if x != b]}), False))
    cases.append(
        (
            "judge-contribution",
            "reward-modeling",
            taxonomy_with({**default, "reward-modeling": ["judge-contribution"]}),
            True,
        )
    )
    table = Table(title=f"What each boundary feature adds: F1 of its tag without / with it ({seeds} split(s))")
    for col in ("boundary", "tag", "all papers", "dev + dev2", "dev3 sampled for the tag", "macro-F1 (all)"):
        table.add_column(col, justify="left" if col in ("boundary", "tag") else "right")
    rows = subset_rows(ls)
    for boundary, tag, taxonomy, other_has_it in cases:
        other = [
            cv_predictions(f"boundary {boundary} {other_has_it}", ls, corpus, taxonomy, s, folds) for s in range(seeds)
        ]
        without, with_ = (radar, other) if other_has_it else (other, radar)
        j = ls.names.index(tag)
        pool = np.array([any(x.startswith(tag + ":") for x in ls.sampled_as[i]) for i in range(len(ls.ids))])
        cells = []
        for idx in (rows["all"], rows["dev + dev2"], np.flatnonzero(pool)):
            a, b = (statistics.mean(_f1(ls.y[idx, j], p[idx, j]) for p in preds) for preds in (without, with_))
            cells.append(f"{a:.2f} -> {b:.2f} ({b - a:+.2f})")
        macro = [statistics.mean(scores_table(ls.names, ls.y, p).macro_f1 for p in preds) for preds in (without, with_)]
        cells.append(f"{macro[0]:.3f} -> {macro[1]:.3f}")
        table.add_row(boundary + ("" if not other_has_it else " (not in the default)"), tag, *cells)
    console.print(table)


def _f1(truth: np.ndarray, pred: np.ndarray) -> float:
    denom = truth.sum() + pred.sum()
    return float(2 * (truth & pred).sum() / denom) if denom else 0.0


# -- 3. learning curve ------------------------------------------------------------------------------------


def curve(ls: data.LabeledSet, corpus: Corpus, seeds: int, folds: int) -> None:
    weak = [ls.names.index(n) for n in WEAK]
    table = Table(title=f"Learning curve: nested CV, each training fold subsampled ({seeds} split(s) x subsample)")
    for col in ("labels", "share", "macro-F1 (sd)", *WEAK, "dev3 macro-F1"):
        table.add_column(col, justify="right")
    sizes, macros = [], []
    for fraction in FRACTIONS:
        runs = []
        for s in range(seeds):

            def keep(train: np.ndarray, k: int, s: int = s, fraction: float = fraction) -> np.ndarray:
                rng = np.random.default_rng(1000 * s + k)
                return np.sort(rng.permutation(train)[: int(round(fraction * len(train)))])

            name = "Radar" if fraction == 1.0 else f"curve {fraction}"
            runs.append(cv_predictions(name, ls, corpus, ls.taxonomy, s, folds, keep))
        score = scored(ls, runs)
        n_labels = int(round(fraction * len(ls.ids) * (folds - 1) / folds))
        sizes.append(n_labels)
        macros.append(score["all"]["macro_f1"])
        table.add_row(
            f"{n_labels:,}",
            f"{fraction:.0%}",
            f"{score['all']['macro_f1']:.3f} ({score['all']['sd']:.3f})",
            *(f"{score['all']['tags'][ls.names[j]]['f1']:.2f}" for j in weak),
            f"{score['dev3']['macro_f1']:.3f}",
        )
    console.print(table)
    slope, intercept = np.polyfit(np.log2(sizes), macros, 1)
    need = 2 ** ((GOAL_MACRO - intercept) / slope) if slope > 0 else float("inf")
    half = np.polyfit(np.log2(sizes[1:]), macros[1:], 1)[0]
    console.print(
        f"macro-F1 gains {slope:.3f} per doubling of the labels (last three points: {half:.3f}); if it keeps "
        f"that slope, {GOAL_MACRO} takes about {need:,.0f} labels of this kind ({need / sizes[-1]:.1f}x the "
        f"{sizes[-1]:,} each fold trains on)"
    )


# -- 4. speed ---------------------------------------------------------------------------------------------


def speed(ls: data.LabeledSet, corpus: Corpus, n_docs: int) -> None:
    start = time.perf_counter()
    model = fit(ls, np.arange(len(ls.ids)), corpus, TaggingConfig())
    train_s = time.perf_counter() - start
    titles, abstracts = data.corpus_texts(n_docs, seed=1)
    vectors = ls.vectors[np.arange(len(titles)) % len(ls.ids)]  # speed does not depend on the vectors' values
    start, cpu = time.perf_counter(), time.process_time()
    for lo in range(0, len(titles), 4096):  # tag_documents' batch size
        decide(model, titles[lo : lo + 4096], abstracts[lo : lo + 4096], vectors[lo : lo + 4096])
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    base_start, base_cpu = time.perf_counter(), time.process_time()
    keyword_baseline(ls.taxonomy, titles, abstracts)
    base_took, base_cpu = time.perf_counter() - base_start, time.process_time() - base_cpu
    rate, cpu_rate = len(titles) / took, len(titles) / cpu
    console.print(
        f"speed: training on {len(ls.ids):,} labels {train_s:.1f} s; decide {len(titles):,} documents {took:.1f} s "
        f"({rate:,.0f} docs/s) -> 100k documents in {100_000 / rate / 60:.1f} min (goal < 10 min, 2 shared cores); "
        f"CPU time {cpu:.1f} s ({cpu_rate:,.0f} docs per CPU-second, one thread) -> 100k in "
        f"{100_000 / cpu_rate / 60:.1f} CPU-min; keyword rules alone, same run: {base_took:.1f} s "
        f"({len(titles) / base_cpu:,.0f} docs per CPU-second; the tagger takes {cpu / base_cpu:.1f}x their CPU)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--curve-seeds", type=int, default=3)
    parser.add_argument("--speed-docs", type=int, default=20000)
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--skip-boundaries", action="store_true")
    parser.add_argument("--skip-curve", action="store_true")
    args = parser.parse_args()
    ls = data.load_labeled()
    titles, abstracts = data.corpus_texts()
    corpus = Corpus(titles, abstracts, np.zeros((0, ls.vectors.shape[1]), dtype=np.float32))
    sets = ", ".join(f"{(ls.source == k).sum()} {f}" for k, f in enumerate(data.LABEL_FILES))
    console.print(f"{len(ls.ids):,} labeled papers ({sets}), {len(titles):,} snapshot papers for the TF-IDF vocabulary")
    if not args.skip_quality:
        preds = quality(ls, corpus, args.seeds, args.folds)
        if not args.skip_boundaries:
            per_boundary(ls, corpus, args.seeds, args.folds, preds["Radar"])
    if not args.skip_curve:
        curve(ls, corpus, args.curve_seeds, args.folds)
    speed(ls, corpus, args.speed_docs)


if __name__ == "__main__":
    main()
