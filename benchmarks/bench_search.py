"""Search as a lab lead uses it, on an indexed workspace (the demo's, built from the bundled snapshot): precision in
the top 5 of two sets of 25 lead-style queries judged by hand (tests/data/lead_search_queries.jsonl, the set the
rerank was developed on, and tests/data/lead_search_queries_heldout.jsonl, written before any ranking was run on
it), the known-item dev queries through the whole search path (tests/fixtures/dev_search_queries.jsonl: rank of
the one paper each query means) and milliseconds per query, for each ranking in the same run:

- plain: the hybrid search before names were tokens: bm25s's default word pattern (``\\w\\w+``: MXFP8 and FP8
  unrelated, Qwen2.5 cut to qwen2), dense + BM25 fused by reciprocal rank (k 60), nothing else; the baseline;
- names: names as whole tokens (index.keyword), titles weighted, and the votes for the query's names (the
  ranking before index/rerank.py);
- Radar: index.search.Searcher as `radar search` runs it (index/rerank.py), then each lever changed alone.

    nice -n 10 .venv/bin/python benchmarks/bench_search.py --workspace demo-workspace
    nice -n 10 .venv/bin/python benchmarks/bench_search.py --workspace demo-workspace --unjudged  # to judge

A document of a top 5 that was never judged counts as not relevant (the figure is a lower bound); ``--unjudged``
lists them pooled over all rankings (sorted by id, not by ranking) with their title and abstract for judging.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console
from rich.table import Table

LEAD = ROOT / "tests" / "data" / "lead_search_queries.jsonl"
HELDOUT = ROOT / "tests" / "data" / "lead_search_queries_heldout.jsonl"
DEV = ROOT / "tests" / "fixtures" / "dev_search_queries.jsonl"
console = Console(width=150)
Ranker = Callable[[str, int], list[str]]


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class PlainRanking:
    """The baseline: bm25s default tokens, dense + BM25 by RRF (k 60)."""

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
        fused = rrf([dense, keyword], 60)
        return [d for d, _ in sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]


class NamesRanking:
    """The ranking before index/rerank.py: names as tokens, titles weighted, RRF (k 60) of dense, BM25 and, for a
    query naming something with a digit, the candidates holding every name (title first) and, for a rare name,
    those naming it in their title."""

    def __init__(self, searcher: Any) -> None:
        self.s = searcher

    def search(self, query: str, k: int) -> list[str]:
        from radar.index.keyword import names, terms
        from radar.index.search import rrf

        s, n = self.s, self.s.cfg.candidates
        dense = s.dense(s.embedder.embed([query])[0], n, None)
        keyword = [d for d, _ in s.keyword.search(query, n)]
        fused = rrf([dense, keyword], 60)
        named = names(query)
        if named:
            sets = [set(s.keyword.positions([t]).tolist()) for t in named]
            having = {s.keyword.doc_ids[i] for i in set.intersection(*sets)} if sets else set()
            if having:
                order = [d for d, _ in sorted(fused.items(), key=lambda kv: (-kv[1], kv[0])) if d in having]
                docs = s.store.documents(order)
                in_title = [d for d in order if d in docs and set(named) <= set(terms(docs[d].title))]
                lists = [in_title + [d for d in order if d not in set(in_title)]]
                if in_title and len(having) <= 0.01 * max(len(s.keyword.doc_ids), 1):
                    lists.append(in_title)
                fused = rrf([dense, keyword, *lists], 60)
        return [d for d, _ in sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]


def rankers(searcher: Any) -> dict[str, Ranker]:
    """The baseline, the ranking before the rerank, Radar's, and Radar's with one lever changed each."""
    from radar.index.keyword import TITLE_WEIGHT, KeywordIndex
    from radar.index.rerank import Votes

    def radar_with(
        votes: Votes | None = None, rrf_k: int | None = None, title_weight: int | None = None, latex: bool = True
    ) -> Ranker:
        s = copy.copy(searcher)
        if votes is not None:
            s.votes = votes
        if rrf_k is not None:
            s.cfg = replace(s.cfg, rrf_k=rrf_k)
        if title_weight is not None or not latex:
            docs = [(d.id, d.title, d.abstract) for d in searcher.store.iter_documents()]
            s.keyword = KeywordIndex.build(docs, "bench", title_weight or TITLE_WEIGHT, latex)
        return lambda q, k: [h.id for h in s.search(q, k=k)]

    v = searcher.votes
    return {
        "plain (baseline)": PlainRanking(searcher).search,
        "names as tokens + name votes": NamesRanking(searcher).search,
        "Radar (rerank)": radar_with(),
        "- acronym expansion": radar_with(replace(v, acronyms=False)),
        "- coverage vote": radar_with(replace(v, coverage=0.0)),
        "- phrase votes": radar_with(replace(v, title_phrases=0.0, phrases=0.0)),
        "- title-name vote": radar_with(replace(v, names=0.0)),
        "- conflicts last": radar_with(replace(v, conflicts_last=False)),
        "- LaTeX words in BM25": radar_with(latex=False),
        "dense vote 0.5": radar_with(replace(v, dense=0.5)),
        "dense vote 1.0": radar_with(replace(v, dense=1.0)),
        "rrf k 60": radar_with(rrf_k=60),
        "title weight 1": radar_with(title_weight=1),
        "title weight 3": radar_with(title_weight=3),
    }


def score(search: Ranker, queries: list[dict[str, Any]]) -> dict[str, Any]:
    slots, seconds, per_query, unjudged = 0, [], {}, []
    for q in queries:
        started = time.perf_counter()
        top = search(q["q"], 5)
        seconds.append(time.perf_counter() - started)
        hits = sum(d in q["relevant"] for d in top)
        per_query[q["q"]] = hits
        slots += hits
        unjudged += [(q["q"], d) for d in top if d not in q["relevant"] and d not in q["not_relevant"]]
    return {"slots": slots, "per_query": per_query, "unjudged": unjudged, "seconds": seconds}


def evaluate(workspace: Path, only: set[str] | None = None) -> dict[str, Any]:
    from radar.app import wiring
    from radar.app.context import Radar
    from radar.store import Workspace

    searcher = wiring.open_searcher(Radar(Workspace.open(workspace)))
    lead, held, dev = _jsonl(LEAD), _jsonl(HELDOUT), _jsonl(DEV)
    out: dict[str, Any] = {}
    for name, search in rankers(searcher).items():
        if only and name not in only:
            continue
        search("warm-up query", 5)
        r: dict[str, Any] = {"lead": score(search, lead), "heldout": score(search, held)}
        ranks = []
        for q in dev:
            found = search(q["q"], 100)
            ranks.append(found.index(q["id"]) + 1 if q["id"] in found else 10**6)
        r["dev_recall10"] = sum(x <= 10 for x in ranks)
        r["dev_mrr"] = statistics.mean(1 / x for x in ranks)
        seconds = r["lead"]["seconds"] + r["heldout"]["seconds"]
        r["ms"] = 1000 * statistics.median(seconds)
        out[name] = r
    out["_texts"] = searcher.store.documents(
        list({d for r in out.values() for s in ("lead", "heldout") for _, d in r[s]["unjudged"]})
    )
    searcher.store.close()
    return out


def show(results: dict[str, Any], n: dict[str, int]) -> None:
    rows = {k: v for k, v in results.items() if not k.startswith("_")}
    base = next(iter(rows.values()))
    table = Table(title=f"Lead-style search, top 5 ({n['lead']} dev + {n['heldout']} held-out queries), known items")
    cols = ("ranking", "dev set", "P@5", "vs plain", "held-out", "P@5", "vs plain", "known top 10", "MRR", "ms", "x")
    for col in cols:
        table.add_column(col, justify="left" if col == "ranking" else "right")
    for name, r in rows.items():
        cells = [name]
        for s in ("lead", "heldout"):
            slots = r[s]["slots"]
            cells += [f"{slots}/{5 * n[s]}", f"{slots / (5 * n[s]):.2f}", f"{slots / max(base[s]['slots'], 1):.2f}"]
        cells += [f"{r['dev_recall10']}/{n['dev']}", f"{r['dev_mrr']:.3f}"]
        cells += [f"{r['ms']:.0f}", f"{r['ms'] / base['ms']:.1f}"]
        table.add_row(*cells)
    console.print(table)
    names = list(rows)
    for s in ("lead", "heldout"):
        for q in base[s]["per_query"]:
            console.print(f"  {q}: " + " ".join(f"{rows[m][s]['per_query'][q]}" for m in names), style="dim")
    todo = {(q, d) for r in rows.values() for s in ("lead", "heldout") for q, d in r[s]["unjudged"]}
    console.print(f"  {len(todo)} unjudged (query, document) pairs in the top 5s, counted as not relevant")


def show_unjudged(results: dict[str, Any]) -> None:
    texts = results["_texts"]
    todo: dict[str, set[str]] = {}
    for name, r in results.items():
        if not name.startswith("_"):
            for s in ("lead", "heldout"):
                for q, d in r[s]["unjudged"]:
                    todo.setdefault(q, set()).add(d)
    for q, ids in todo.items():
        print(f"\n## {q}")
        for d in sorted(ids):
            doc = texts.get(d)
            print(f"- {d}: {doc.title if doc else '?'}\n    {doc.abstract[:400] if doc else ''}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", type=Path, default=ROOT / "demo-workspace", help="an indexed workspace")
    ap.add_argument("--unjudged", action="store_true", help="print the unjudged documents of the top 5s to judge")
    ap.add_argument("--only", action="append", help="only this ranking (repeatable)")
    args = ap.parse_args()
    results = evaluate(args.workspace, set(args.only) if args.only else None)
    if args.unjudged:
        show_unjudged(results)
        return
    show(results, {"lead": len(_jsonl(LEAD)), "heldout": len(_jsonl(HELDOUT)), "dev": len(_jsonl(DEV))})


if __name__ == "__main__":
    main()
