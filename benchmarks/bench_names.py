"""Names benchmark: kind accuracy and per-kind precision on the dev labels (cross-validated, folds by name),
beside the rule baseline, and the speed of finding names on the full corpus.

    .venv/bin/python benchmarks/bench_names.py [--corpus ../shared/data/arxiv_corpus_full.jsonl.gz]
        [--labels ../shared/labels/names_dev.jsonl] [--seeds 3] [--limit N]

1. Speed: ``evidence.collect`` (both passes over titles and abstracts) on the corpus, CPU seconds and
   documents/s on one core, and the classifier fit + prediction for every name.
2. Quality: 5-fold cross-validation over the labeled names, folds by name group (every spelling of a name in
   one fold; asserted), repeated with --seeds fold splits; accuracy (mean, range over splits, Wilson 95%
   interval) and per-kind precision/recall of three deciders in the same run: the rules of
   ``kinds.rule_kind`` (baseline), the previous classifier (``evaluate.PREVIOUS``: no method margin) and
   Radar's (``find.classify``: the method margin chosen by an inner 3-fold CV on each training part only,
   so the test fold never tunes it); unless --no-context, also "context": Radar with context vectors (the
   packaged sentence encoder over masked mention snippets, ``context.py``) for the names the evidence model
   leaves unsure, as ``find.classify(..., embed=...)`` does. The vectors are computed from the corpus alone
   (no label is read); every fit, margin and gate is decided on the training part of each fold.
"""

from __future__ import annotations

import argparse
import gzip
import resource
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import orjson
from rich.console import Console
from rich.table import Table

from radar.analysis.names.context import Embed, context_vectors
from radar.analysis.names.evaluate import cross_validate, group_of
from radar.analysis.names.evidence import collect
from radar.analysis.names.find import classify, load_labels
from radar.analysis.names.kinds import KINDS, MARGINS

console = Console(width=120)
ROOT = Path(__file__).resolve().parents[1]


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


class _Counted:
    """An ``Embed`` that counts the texts it embeds and the CPU seconds it spends."""

    def __init__(self, embed: Embed) -> None:
        self.embed, self.texts, self.cpu = embed, 0, 0.0

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        cpu = time.process_time()
        out = self.embed(texts)
        self.cpu += time.process_time() - cpu
        self.texts += len(texts)
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/data/arxiv_corpus_full.jsonl.gz")
    ap.add_argument("--labels", type=Path, default=ROOT.parent / "shared/labels/names_dev.jsonl")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="read only the first N papers (0: all)")
    ap.add_argument("--no-context", action="store_true", help="leave out the context vectors (no encoder)")
    ap.add_argument("--model-cache", type=Path, default=Path("/tmp/radar-bench-names/models"))
    args = ap.parse_args()
    embed: Embed | None = None
    if not args.no_context:
        from radar.index.config import EmbeddingConfig
        from radar.index.embedder import make_embedder

        # one thread: the CPU seconds printed are what one core spends
        encoder = make_embedder(EmbeddingConfig(threads=1), device="cpu", cache_dir=args.model_cache)
        embed = encoder.embed
    docs = []
    with gzip.open(args.corpus, "rb") as fh:
        for line in fh:
            d = orjson.loads(line)
            docs.append(SimpleNamespace(id=d["id"], title=d["title"], abstract=d["abstract"], published=d["published"]))
            if args.limit and len(docs) >= args.limit:
                break
    labels = load_labels(args.labels.read_text("utf-8"))
    cpu, wall = time.process_time(), time.perf_counter()
    corpus = collect(docs)
    cpu_collect, wall_collect = time.process_time() - cpu, time.perf_counter() - wall
    cpu = time.process_time()
    kinds = classify(corpus, labels)
    cpu_classify = time.process_time() - cpu
    cpu_context = 0.0
    if embed is not None:
        counted = _Counted(embed)
        cpu = time.process_time()
        kinds = classify(corpus, labels, counted)
        cpu_context = time.process_time() - cpu
        console.print(
            f"kinds with context vectors: {cpu_context:.1f} s CPU, {counted.texts:,} snippets embedded "
            f"({counted.cpu:.1f} s CPU in the encoder)"
        )
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    console.print(
        f"corpus {args.corpus.name}: {len(docs):,} papers, {len(corpus.names):,} names (>= 3 documents); "
        f"evidence {cpu_collect:.1f} s CPU ({wall_collect:.1f} s wall, {len(docs) / cpu_collect:,.0f} papers/s on "
        f"one core), kinds {cpu_classify:.1f} s CPU (evidence only), {cpu_context:.1f} s CPU (with context), "
        f"peak RSS {peak_mb:,.0f} MB"
    )
    by_kind: dict[str, int] = {}
    for kind, _ in kinds.values():
        by_kind[kind] = by_kind.get(kind, 0) + 1
    console.print("names per predicted kind: " + ", ".join(f"{k} {by_kind.get(k, 0):,}" for k in KINDS))

    missing = [n for n, _ in labels if corpus.find(n) is None]
    console.print(f"labels: {len(labels)} names, {len(missing)} not found as a name of the corpus {missing[:10]}")
    vectors = None
    if embed is not None:  # the labeled names' context vectors: from the corpus only, no label read
        found = [group_of(corpus, n) for n, _ in labels]
        keys = sorted({g for g in found if g in corpus.names})
        by_key = dict(zip(keys, context_vectors(corpus, keys, embed), strict=True))
        dim = next(iter(by_key.values())).shape[0] if by_key else 0
        vectors = np.stack([by_key.get(g, np.zeros(dim, dtype=np.float32)) for g in found])
    cpu = time.process_time()
    runs = [
        cross_validate(corpus, labels, k=5, seed=s, previous=True, curve=True, vectors=vectors)
        for s in range(args.seeds)
    ]
    cpu_cv = time.process_time() - cpu
    variants: tuple[str, ...] = ("rules", "previous", "model") + (("context",) if vectors is not None else ())
    title = {"rules": "rules", "previous": "previous", "model": "Radar", "context": "+context"}
    table = Table(
        title=f"Kinds on {args.labels.name}: 5-fold CV by name, {args.seeds} fold splits (mean); "
        "Radar = margin for method chosen by inner CV"
    )
    table.add_column("kind")
    table.add_column("labels", justify="right")
    for v in variants:
        table.add_column(f"{title[v]} P", justify="right")
        table.add_column(f"{title[v]} R", justify="right")

    def mean(vals: list[float | None]) -> float | None:
        got = [v for v in vals if v is not None]
        return statistics.fmean(got) if got else None

    truth = [k for _, k in labels]
    for kind in KINDS:
        cells = [kind, str(truth.count(kind))]
        for v in variants:
            cells.append(_fmt(mean([r[v].precision[kind] for r in runs])))
            cells.append(_fmt(mean([r[v].recall[kind] for r in runs])))
        table.add_row(*cells)
    console.print(table)
    acc = Table(title="Accuracy: mean over fold splits, \\[min, max] over splits, Wilson 95% interval (split 0)")
    for col in ("decider", "accuracy", "splits", "Wilson 95%", "method P", "method R", "vs rules"):
        acc.add_column(col, justify="left" if col == "decider" else "right")
    base = statistics.fmean(r["rules"].accuracy for r in runs)
    for v in variants:
        accs = [r[v].accuracy for r in runs]
        lo, hi = runs[0][v].accuracy_ci
        acc.add_row(
            title[v],
            f"{statistics.fmean(accs):.3f}",
            f"[{min(accs):.3f}, {max(accs):.3f}]",
            f"[{lo:.3f}, {hi:.3f}]",
            _fmt(mean([r[v].precision["method"] for r in runs])),
            _fmt(mean([r[v].recall["method"] for r in runs])),
            f"{statistics.fmean(accs) - base:+.3f}",
        )
    console.print(acc)
    trade = Table(title="The method margin's trade-off (same fits as Radar, the margin fixed instead of chosen)")
    for col in ("margin", "accuracy", "method P", "method R"):
        trade.add_column(col, justify="right")
    for m in MARGINS:
        key = f"margin={m:.2f}"
        trade.add_row(
            f"{m:.2f}",
            f"{statistics.fmean(r[key].accuracy for r in runs):.3f}",
            _fmt(mean([r[key].precision["method"] for r in runs])),
            _fmt(mean([r[key].recall["method"] for r in runs])),
        )
    console.print(trade)
    margins = [m for r in runs for m in r["model"].margins]
    console.print(
        f"method margins chosen by inner CV (per outer fold): {sorted(margins)}; cross-validation {cpu_cv:.0f} s CPU"
    )


if __name__ == "__main__":
    main()
