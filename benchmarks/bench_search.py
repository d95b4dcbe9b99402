"""Search as a lab lead uses it, on an indexed workspace (the demo's, built from the bundled snapshot): precision in
the top 5 of two sets of 25 lead-style queries judged by hand (tests/data/lead_search_queries.jsonl, the set the
rerank was developed on, and tests/data/lead_search_queries_heldout.jsonl, written before any ranking was run on
it), the known-item dev queries through the whole search path (tests/fixtures/dev_search_queries.jsonl: rank of
the one paper each query means) and milliseconds per query, for each ranking in the same run:

- plain: the hybrid search before names were tokens: bm25s's default word pattern (``\\w\\w+``: MXFP8 and FP8
  unrelated, Qwen2.5 cut to qwen2), dense + BM25 fused by reciprocal rank (k 60), nothing else; the baseline;
- names: names as whole tokens (index.keyword), titles weighted, and the votes for the query's names (the
  ranking before index/rerank.py);
- Radar: index.search.Searcher as `radar search` runs it (index/rerank.py), then each lever changed alone;
- the similarity votes (index/rerank.py's ``similar``, off in Radar), each over the fused top 50: the query against
  every title's vector (the corpus's titles embedded once before any query, as index time would), against the
  centroid of the fused top 5's stored vectors and the query (pseudo-relevance feedback, Rocchio), and with
  ``--sentences`` against each abstract sentence (the best; embedded when first asked for and cached: minutes of
  CPU, and its milliseconds are not a query's).
- the self-supervised re-rankers, trained on phrases of the corpus's titles and never on the judged queries: with
  ``--cross DIR/delta.pt`` a cross-encoder vote (benchmarks/cross_rerank.py: the packaged MiniLM reading query and
  abstract together, its top layers fine-tuned) over Radar's fused top 30 or 20, and with ``--ltr DIR/ltr.json`` a
  logistic regression over the rerank's evidence (benchmarks/ltr_rerank.py) ordering the top 30, alone or as a vote.

    nice -n 10 .venv/bin/python benchmarks/bench_search.py --workspace demo-workspace
    nice -n 10 .venv/bin/python benchmarks/bench_search.py --workspace demo-workspace --unjudged  # to judge
    nice -n 10 .venv/bin/python benchmarks/bench_search.py --workspace demo-workspace --sentences  # + sentence vote
    nice -n 10 .venv/bin/python benchmarks/bench_search.py --cross D/delta.pt --ltr D/ltr.json  # D: their --out

A document of a top 5 that was never judged counts as not relevant (the figure is a lower bound); ``--unjudged``
lists them pooled over all rankings (sorted by id, not by ranking) with their title and abstract for judging.

``--save-rankings FILE`` writes Radar's top 20 (ids and scores as `radar search --json` prints them) for every
query of the three sets, unfiltered and with a date, a category and a tag filter; ``--same-as FILE`` compares this
run's with a saved one and exits 1 on any difference (a speed change must leave every ranking as it was):

    .venv/bin/python benchmarks/bench_search.py --workspace demo-workspace --save-rankings before.json
    .venv/bin/python benchmarks/bench_search.py --workspace demo-workspace --same-as before.json
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "benchmarks"))

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
        docs = [(d.id, document_text(d.title, d.abstract)) for d in searcher.documents.scan()]
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
                docs = s.documents.of(order)
                in_title = [d for d in order if d in docs and set(named) <= set(terms(docs[d].title))]
                lists = [in_title + [d for d in order if d not in set(in_title)]]
                if in_title and len(having) <= 0.01 * max(len(s.keyword.doc_ids), 1):
                    lists.append(in_title)
                fused = rrf([dense, keyword, *lists], 60)
        return [d for d, _ in sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]


class TitleVotes:
    """The query's similarity to each title (the packaged encoder's title vectors, all made before any query)."""

    def __init__(self, searcher: Any) -> None:
        from radar.index.keyword import unlatex

        docs = [(d.id, unlatex(d.title)) for d in searcher.documents.scan()]
        started = time.process_time()
        self.vectors = searcher.embedder.embed([t for _, t in docs])
        self.cpu_s = time.process_time() - started
        self.at = {d: i for i, (d, _) in enumerate(docs)}

    def __call__(self, query_vector: np.ndarray, ids: list[str]) -> dict[str, float]:
        found = [d for d in ids if d in self.at]
        sims = self.vectors[[self.at[d] for d in found]] @ query_vector
        return dict(zip(found, map(float, sims), strict=True))


class FeedbackVotes:
    """Pseudo-relevance feedback (Rocchio): similarity to the query vector plus the mean stored vector of the fused
    top ``top`` (``beta`` times)."""

    def __init__(self, searcher: Any, top: int = 5, beta: float = 1.0) -> None:
        self.s, self.top, self.beta = searcher, top, beta

    def __call__(self, query_vector: np.ndarray, ids: list[str]) -> dict[str, float]:
        blobs = self.s.embeddings.current_vectors(ids, self.s.vectors.manifest.model_id)
        vecs = {d: np.frombuffer(b, dtype=np.float32) for d, b in blobs.items()}
        tops = [vecs[d] for d in ids[: self.top] if d in vecs]
        centroid = query_vector + self.beta * np.mean(tops, axis=0) if tops else query_vector
        return {d: float(v @ centroid) for d, v in vecs.items()}


class SentenceVotes:
    """The query's best similarity to a sentence of the abstract (or the title's vector), sentences embedded when
    first asked for and cached."""

    SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")

    def __init__(self, searcher: Any, titles: TitleVotes) -> None:
        self.s, self.titles, self.cache = searcher, titles, dict[str, np.ndarray]()

    def __call__(self, query_vector: np.ndarray, ids: list[str]) -> dict[str, float]:
        from radar.index.keyword import unlatex

        todo = [d for d in ids if d not in self.cache]
        docs = self.s.documents.of(todo)
        for d in todo:
            sentences = [x for x in self.SPLIT.split(unlatex(docs[d].abstract)) if len(x) > 20] if d in docs else []
            self.cache[d] = self.s.embedder.embed(sentences) if sentences else np.zeros((0, len(query_vector)))
        out = self.titles(query_vector, ids)
        for d in ids:
            if len(self.cache[d]):
                out[d] = max(out.get(d, -1.0), float((self.cache[d] @ query_vector).max()))
        return out


class CrossVotes:
    """The self-supervised cross-encoder's score of each paper's abstract against the query (benchmarks/
    cross_rerank.py), cached per (query, paper): the rows after the first reuse the scores of the first, whose
    milliseconds are the real ones. Radar's ``similar`` is given the query vector only; ``query`` is set before
    each search."""

    def __init__(self, delta: Path) -> None:
        from cross_rerank import CrossScorer, abstracts_of

        self.scorer, self.abstracts_of = CrossScorer(delta), abstracts_of
        self.query, self.cache = "", dict[tuple[str, str], float]()
        self.s: Any = None

    def __call__(self, query_vector: np.ndarray, ids: list[str]) -> dict[str, float]:
        todo = [d for d in ids if (self.query, d) not in self.cache]
        if todo:
            texts = self.abstracts_of(self.s.store, todo)
            found = [d for d in todo if d in texts]
            for d, x in zip(found, self.scorer.score(self.query, [texts[d] for d in found]), strict=True):
                self.cache[(self.query, d)] = x
        return {d: self.cache[(self.query, d)] for d in ids if (self.query, d) in self.cache}


def rankers(
    searcher: Any, sentences: bool = False, cross: Path | None = None, ltr: Path | None = None
) -> dict[str, Ranker]:
    """The baseline, the ranking before the rerank, Radar's, Radar's with one lever changed each, and the similarity
    votes (with ``sentences``, the abstract-sentence one too)."""
    from radar.index.keyword import TITLE_WEIGHT, KeywordIndex
    from radar.index.rerank import Votes

    def radar_with(
        votes: Votes | None = None,
        rrf_k: int | None = None,
        title_weight: int | None = None,
        latex: bool = True,
        similar: Any = None,
    ) -> Ranker:
        s = copy.copy(searcher)
        s.similarity = similar
        if votes is not None:
            s.votes = votes
        if rrf_k is not None:
            s.cfg = replace(s.cfg, rrf_k=rrf_k)
        if title_weight is not None or not latex:
            docs = [(d.id, d.title, d.abstract) for d in searcher.documents.scan()]
            s.keyword = KeywordIndex.build(docs, "bench", title_weight or TITLE_WEIGHT, latex)
        return lambda q, k: [h.id for h in s.search(q, k=k)]

    v = searcher.votes
    titles = TitleVotes(searcher)
    console.print(f"  {len(titles.at)} titles embedded in {titles.cpu_s:.0f} CPU-s", style="dim")
    out = {
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
        "+ title vote 0.5 (top 50)": radar_with(replace(v, similar=0.5), similar=titles),
        "+ title vote 1.0": radar_with(replace(v, similar=1.0), similar=titles),
        "+ title vote 1.0, top 30": radar_with(replace(v, similar=1.0, depth=30), similar=titles),
        "+ feedback vote 1.0 (top 50)": radar_with(replace(v, similar=1.0), similar=FeedbackVotes(searcher)),
        "+ feedback vote 2.0": radar_with(replace(v, similar=2.0), similar=FeedbackVotes(searcher)),
    }
    if ltr is not None:
        from ltr_rerank import LtrRanking

        out["learned order (LTR, top 30)"] = LtrRanking(searcher, ltr).search
        out["+ learned-order vote 1.0 (top 30)"] = LtrRanking(searcher, ltr, vote=1.0).search
    if cross is not None:
        ce = CrossVotes(cross)
        ce.s = searcher

        def with_query(ranker: Ranker) -> Ranker:
            def run(q: str, k: int) -> list[str]:
                ce.query = q
                return ranker(q, k)

            return run

        for w, depth in ((1.0, 30), (2.0, 30), (1.0, 20), (4.0, 20)):
            ranker = radar_with(replace(v, similar=w, depth=depth), similar=ce)
            out[f"+ cross-encoder vote {w} (top {depth})"] = with_query(ranker)
    if sentences:
        sent = SentenceVotes(searcher, titles)
        out["+ sentence vote 0.5 (top 50)"] = radar_with(replace(v, similar=0.5), similar=sent)
        out["+ sentence vote 1.0"] = radar_with(replace(v, similar=1.0), similar=sent)
    return out


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


def evaluate(
    workspace: Path,
    only: set[str] | None = None,
    sentences: bool = False,
    cross: Path | None = None,
    ltr: Path | None = None,
) -> dict[str, Any]:
    from radar.app import wiring
    from radar.app.context import Radar
    from radar.store import Workspace

    searcher = wiring.open_searcher(Radar(Workspace.open(workspace)))
    lead, held, dev = _jsonl(LEAD), _jsonl(HELDOUT), _jsonl(DEV)
    out: dict[str, Any] = {}
    for name, search in rankers(searcher, sentences, cross, ltr).items():
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
    out["_texts"] = searcher.documents.of(
        list({d for r in out.values() for s in ("lead", "heldout") for _, d in r[s]["unjudged"]})
    )
    searcher.store.close()
    return out


def show(results: dict[str, Any], n: dict[str, int]) -> None:
    rows = {k: v for k, v in results.items() if not k.startswith("_")}
    base = next(iter(rows.values()))
    table = Table(title=f"Lead-style search, top 5 ({n['lead']} dev + {n['heldout']} held-out queries), known items")
    cols = ("ranking", "dev set", "P@5", "vs plain", "held-out", "P@5", "vs plain", "known top 10", "MRR", "ms", "x")
    cols += ("unjudged",)
    for col in cols:
        table.add_column(col, justify="left" if col == "ranking" else "right")
    for name, r in rows.items():
        cells = [name]
        for s in ("lead", "heldout"):
            slots = r[s]["slots"]
            cells += [f"{slots}/{5 * n[s]}", f"{slots / (5 * n[s]):.2f}", f"{slots / max(base[s]['slots'], 1):.2f}"]
        cells += [f"{r['dev_recall10']}/{n['dev']}", f"{r['dev_mrr']:.3f}"]
        cells += [f"{r['ms']:.0f}", f"{r['ms'] / base['ms']:.1f}"]
        cells += [f"{len(r['lead']['unjudged'])} + {len(r['heldout']['unjudged'])}"]
        table.add_row(*cells)
    console.print(table)
    names = list(rows)
    for s in ("lead", "heldout"):
        for q in base[s]["per_query"]:
            console.print(f"  {q}: " + " ".join(f"{rows[m][s]['per_query'][q]}" for m in names), style="dim")
    todo = {(q, d) for r in rows.values() for s in ("lead", "heldout") for q, d in r[s]["unjudged"]}
    console.print(f"  {len(todo)} unjudged (query, document) pairs in the top 5s, counted as not relevant")
    for q, d in sorted(todo):
        console.print(f"    {q}: {d}", style="dim")


def radar_rankings(workspace: Path) -> dict[str, list[list[Any]]]:
    """Radar's top 20 (id, score rounded as --json) for every query of the three sets, unfiltered, published since
    2025-06-01, in cs.DC and tagged with the first tag in use (the filters go through the facets and the keyword index's
    positions)."""
    from radar.app import wiring
    from radar.app.context import Radar
    from radar.index.search import Filters, HitJson
    from radar.store import Workspace

    searcher = wiring.open_searcher(Radar(Workspace.open(workspace)))
    try:
        tags = searcher.tags.known()
        filters = {"": Filters(), "since 2025-06-01": Filters(since="2025-06-01")}
        filters["cs.DC"] = Filters(categories=("cs.DC",))
        if tags:
            filters[f"tag {tags[0]}"] = Filters(tags=(tags[0],))
        out: dict[str, list[list[Any]]] = {}
        for q in [x["q"] for path in (LEAD, HELDOUT, DEV) for x in _jsonl(path)]:
            for name, f in filters.items():
                hits = searcher.search(q, k=20, filters=f)
                out[f"{q} | {name}"] = [[h.id, h.score] for h in HitJson.of(hits)]
        return out
    finally:
        searcher.store.close()


def compare_rankings(found: dict[str, list[list[Any]]], saved: dict[str, list[list[Any]]]) -> int:
    """Print how many rankings are the same (ids, order and scores); 0 when all are, else 1."""
    differ = [key for key in saved if found.get(key) != saved[key]] + [key for key in found if key not in saved]
    console.print(f"{len(saved) - len(differ)}/{len(saved)} rankings the same (top 20: ids, order and scores)")
    for key in differ:
        console.print(f"  differs: {key}", style="red")
    return 1 if differ else 0


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
    ap.add_argument("--sentences", action="store_true", help="add the abstract-sentence vote (minutes of CPU)")
    ap.add_argument("--cross", type=Path, help="add the cross-encoder votes of this delta.pt (cross_rerank.py)")
    ap.add_argument("--ltr", type=Path, help="add the learned order of this ltr.json (ltr_rerank.py)")
    ap.add_argument("--save-rankings", type=Path, metavar="FILE", help="write Radar's top 20 for every query")
    ap.add_argument("--same-as", type=Path, metavar="FILE", help="compare Radar's top 20s with --save-rankings' file")
    args = ap.parse_args()
    if args.save_rankings or args.same_as:
        found = radar_rankings(args.workspace)
        if args.save_rankings:
            args.save_rankings.write_text(json.dumps(found, indent=0))
            console.print(f"{len(found)} rankings written to {args.save_rankings}")
        if args.same_as:
            sys.exit(compare_rankings(found, json.loads(args.same_as.read_text())))
        return
    only = set(args.only) if args.only else None
    results = evaluate(args.workspace, only, args.sentences, args.cross, args.ltr)
    if args.unjudged:
        show_unjudged(results)
        return
    show(results, {"lead": len(_jsonl(LEAD)), "heldout": len(_jsonl(HELDOUT)), "dev": len(_jsonl(DEV))})


if __name__ == "__main__":
    main()
