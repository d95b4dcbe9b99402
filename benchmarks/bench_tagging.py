"""Tagging benchmark: cross-validated quality on the dev labels, and tagging speed given embeddings.

    .venv/bin/python benchmarks/bench_tagging.py [--workspace demo-workspace] [--seeds 3] [--speed-docs 20000]

1. Quality: 5-fold cross-validation of the whole training procedure on the 750 shipped dev labels
   (thresholds are chosen inside each training fold, so the test fold never picks them), repeated
   with --seeds different fold splits; per-tag F1 and macro-F1, beside the keyword baseline (a tag
   applies when any of its seed keywords appears) and an embedding-only model, all in this run.
2. Speed: documents/s to decide and store tags for embedded documents of the workspace (a scratch
   copy), against the keyword baseline alone (plain rule matching, no model) in the same run.

Needs a workspace with embeddings (`make demo` builds demo-workspace).
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from radar.analysis.tags.config import TaggingConfig
from radar.analysis.tags.evaluate import cross_validate, keyword_baseline, scores_table
from radar.analysis.tags.keywords import KeywordMatcher
from radar.analysis.tags.tagger import Corpus, gather_examples, load_taxonomy, tag_documents, workspace_vectors
from radar.store import Workspace

console = Console()


def quality(ws: Workspace, seeds: int) -> None:
    taxonomy = load_taxonomy(ws)
    cfg = TaggingConfig()
    with ws.store() as store:
        vectors = workspace_vectors(ws, store)
        examples = gather_examples(ws, store, taxonomy, dataclasses.replace(cfg), vectors)
        examples = examples.subset(np.flatnonzero(~examples.user)) if len(examples.user) else examples
        corpus = Corpus.sample(store, vectors.model_id)
    console.print(
        f"{len(examples)} labeled papers, {len(corpus.titles):,} unlabeled workspace papers; "
        f"5-fold CV x {seeds} seed(s)"
    )
    base = scores_table(taxonomy.names, examples.y, keyword_baseline(taxonomy, examples.titles, examples.abstracts))
    runs: dict[str, list[dict]] = {"radar": [], "embedding only": []}
    for seed in range(seeds):
        start = time.perf_counter()
        runs["radar"].append(cross_validate(examples, taxonomy, vectors, corpus, cfg, seed=seed))
        took = time.perf_counter() - start
        console.print(f"  seed {seed}: macro-F1 {runs['radar'][-1]['macro_f1']:.3f} ({took:.0f} s)")
    emb_only = dataclasses.replace(cfg, tfidf=False)
    runs["embedding only"].append(cross_validate(examples, taxonomy, vectors, corpus, emb_only, seed=0))

    table = Table(title="Tagging quality: 5-fold CV on the 750 dev labels (F1)")
    for col in ("tag", "support", "keyword baseline", "embedding+kw (seed 0)", f"Radar (mean of {seeds})", "Radar sd"):
        table.add_column(col, justify="left" if col == "tag" else "right")
    for name in taxonomy.names:
        f1s = [r["tags"][name]["f1"] for r in runs["radar"]]
        table.add_row(
            name,
            str(base["tags"][name]["support"]),
            f"{base['tags'][name]['f1']:.2f}",
            f"{runs['embedding only'][0]['tags'][name]['f1']:.2f}",
            f"{statistics.mean(f1s):.2f}",
            f"{statistics.pstdev(f1s):.2f}",
        )
    macros = [r["macro_f1"] for r in runs["radar"]]
    table.add_row(
        "[bold]macro-F1",
        "",
        f"{base['macro_f1']:.3f}",
        f"{runs['embedding only'][0]['macro_f1']:.3f}",
        f"[bold]{statistics.mean(macros):.3f}",
        f"{statistics.pstdev(macros):.3f}",
    )
    console.print(table)
    console.print(f"ratio Radar / keyword baseline macro-F1: {statistics.mean(macros) / base['macro_f1']:.2f}x")


def speed(ws: Workspace, n_docs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        shutil.copytree(ws.root, root, ignore=shutil.ignore_patterns("runs", "reports"))
        copy = Workspace.open(root)
        with copy.store() as store:
            store.conn.execute("DELETE FROM tag_state")
            taxonomy = load_taxonomy(copy)
            rows = store.conn.execute("SELECT title, abstract FROM documents LIMIT ?", (n_docs,)).fetchall()
            start = time.perf_counter()
            KeywordMatcher(taxonomy)
            keyword_baseline(taxonomy, [r[0] for r in rows], [r[1] for r in rows])
            kw_rate = len(rows) / (time.perf_counter() - start)
            cold = tag_documents(copy, store, retrain=True)
            store.conn.execute("DELETE FROM tag_state")
            warm = tag_documents(copy, store)
    table = Table(title=f"Tagging speed, {warm.decided:,} embedded documents (2 cores)")
    for col in ("path", "docs/s", "ratio vs keyword rules", "seconds"):
        table.add_column(col, justify="left" if col == "path" else "right")
    table.add_row(
        "keyword rules only (baseline, no store writes)", f"{kw_rate:,.0f}", "1.00x", f"{len(rows) / kw_rate:.1f}"
    )
    table.add_row(
        "radar tag (model loaded; decide + store)",
        f"{warm.docs_per_s:,.0f}",
        f"{warm.docs_per_s / kw_rate:.2f}x",
        f"{warm.seconds:.1f}",
    )
    table.add_row("radar tag --retrain: training", "", "", f"{cold.train_seconds:.1f}")
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspace", default="demo-workspace", help="a workspace with embeddings")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--speed-docs", type=int, default=20000)
    parser.add_argument("--skip-quality", action="store_true")
    args = parser.parse_args()
    ws = Workspace.open(Path(args.workspace).resolve())
    if not args.skip_quality:
        quality(ws, args.seeds)
    speed(ws, args.speed_docs)


if __name__ == "__main__":
    main()
