"""Search as a lab lead uses it, on an indexed workspace (the demo's): precision in the top 5 of the 25 lead-style
queries (tests/data/lead_search_queries.jsonl, judged by hand), the known-item dev queries through the whole
search path (tests/fixtures/dev_search_queries.jsonl: rank of the one paper each query means), and the time a
query takes, for today's ranking and Radar's in the same run.

- today's ranking: the hybrid search before names were tokens: bm25s's default word pattern (``\\w\\w+``: MXFP8 and
  FP8 unrelated, Qwen2.5 cut to qwen2), dense + BM25 fused by reciprocal rank, nothing else;
- Radar: index.search.Searcher as `radar search` runs it (index.keyword's tokens, titles weighted, the votes for
  the query's names).

    .venv/bin/python benchmarks/bench_index.py --lead [--workspace demo-workspace]
    .venv/bin/python benchmarks/search_quality.py [--workspace demo-workspace]

A document of a top 5 that was never judged counts as not relevant (the figure is a lower bound) and is listed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console
from rich.table import Table

LEAD = ROOT / "tests" / "data" / "lead_search_queries.jsonl"
DEV = ROOT / "tests" / "fixtures" / "dev_search_queries.jsonl"
console = Console(width=140)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class TodaysRanking:
    """The hybrid search before this change: bm25s default tokens, dense + BM25 by RRF."""

    def __init__(self, searcher: Any) -> None:
        import bm25s

        from radar.index.embedder import document_text

        self.s = searcher
        docs = [(d.id, document_text(d.title, d.abstract)) for d in searcher.store.iter_documents()]
        self.ids = [d for d, _ in docs]
        self.bm25 = bm25s.BM25()
        self.bm25.index(bm25s.tokenize([t for _, t in docs], stopwords="en", show_progress=False), show_progress=False)

    def search(self, query: str, k: int) -> list[str]:
        import bm25s

        from radar.index.search import rrf

        n = self.s.cfg.candidates
        dense = self.s.dense(self.s.embedder.embed([query])[0], n, None)
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        found, scores = self.bm25.retrieve(tokens, k=n, show_progress=False)
        keyword = [self.ids[int(i)] for i, x in zip(found[0], scores[0], strict=True) if x > 0]
        fused = rrf([dense, keyword], self.s.cfg.rrf_k)
        return [d for d, _ in sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]


def evaluate(workspace: Path) -> dict[str, Any]:
    from radar.app import steps
    from radar.app.context import Radar
    from radar.store import Workspace

    searcher = steps.open_searcher(Radar(Workspace.open(workspace)))
    today = TodaysRanking(searcher)
    rankers = {"today's ranking": today.search, "Radar": lambda q, k: [h.id for h in searcher.search(q, k=k)]}
    lead, dev = _jsonl(LEAD), _jsonl(DEV)
    out: dict[str, Any] = {}
    for name, search in rankers.items():
        search("warm-up query", 5)
        slots, full, unjudged, seconds = 0, 0, [], []
        per_query = {}
        for q in lead:
            started = time.perf_counter()
            top = search(q["q"], 5)
            seconds.append(time.perf_counter() - started)
            hits = sum(d in q["relevant"] for d in top)
            per_query[q["q"]] = hits
            slots += hits
            full += hits >= 4
            unjudged += [(q["q"], d) for d in top if d not in q["relevant"] and d not in q["not_relevant"]]
        ranks = []
        for q in dev:
            found = search(q["q"], 100)
            ranks.append(found.index(q["id"]) + 1 if q["id"] in found else 10**6)
        out[name] = {
            "slots": slots,
            "queries_4_of_5": full,
            "per_query": per_query,
            "unjudged": unjudged,
            "dev_recall10": sum(r <= 10 for r in ranks),
            "dev_mrr": statistics.mean(1 / r for r in ranks),
            "dev_ranks": ranks,
            "p50_s": statistics.median(seconds),
            "p95_s": sorted(seconds)[int(0.95 * (len(seconds) - 1))],
        }
    searcher.store.close()
    return out


def show(results: dict[str, Any], n_lead: int, n_dev: int) -> None:
    table = Table(title=f"Lead-style search ({n_lead} queries, top 5) and known items ({n_dev} dev queries)")
    for col in ("ranking", "relevant in top 5", "P@5", "queries >= 4/5", "dev found in top 10", "dev MRR", "p50 s"):
        table.add_column(col, justify="left" if col == "ranking" else "right")
    for name, r in results.items():
        table.add_row(
            name,
            f"{r['slots']}/{5 * n_lead}",
            f"{r['slots'] / (5 * n_lead):.2f}",
            f"{r['queries_4_of_5']}/{n_lead}",
            f"{r['dev_recall10']}/{n_dev}",
            f"{r['dev_mrr']:.3f}",
            f"{r['p50_s']:.3f}",
        )
    console.print(table)
    first = list(results)
    for q in results[first[0]]["per_query"]:
        console.print(f"  {q}: " + ", ".join(f"{n} {results[n]['per_query'][q]}/5" for n in first), style="dim")
    for name, r in results.items():
        for q, d in r["unjudged"]:
            console.print(f"  unjudged in {name}'s top 5 (counted as not relevant): {q!r}: {d}", style="yellow")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", type=Path, default=ROOT / "demo-workspace", help="an indexed workspace")
    args = ap.parse_args()
    show(evaluate(args.workspace), len(_jsonl(LEAD)), len(_jsonl(DEV)))


if __name__ == "__main__":
    main()
