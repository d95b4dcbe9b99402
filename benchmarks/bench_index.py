"""Embedding and search benchmarks. Prints tables; every ratio is against a baseline run in the same process.

    .venv/bin/python benchmarks/bench_index.py [--docs 1000] [--quality-docs 2000] [--skip-1m]

1. Embedding speed on real abstracts (title + abstract): plain ``SentenceTransformer.encode`` with
   defaults (256 tokens, batch 32) vs Radar's embedder variants.
2. Quality, baseline vs Radar (dense retrieval only, so the embedder is what is compared):
   known-item recall@10 / MRR on the dev queries (10 queries, their papers among N distractors),
   and title -> abstract retrieval (every title a query, abstracts embedded alone) on N papers.
3. (--lead: only this) Search as a lab lead uses it: 25 lead-style queries, P@5, known items through the whole
   search path, today's ranking beside Radar's (benchmarks/bench_search.py).
4. Search latency p50/p95 at 10k / 100k (synthetic vectors, real BM25 over real papers, full
   hybrid path incl. query embedding) and FAISS alone at 1M vectors; IVF recall@10 vs exact.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from radar.crawler.documents import Documents
from radar.index.config import EmbeddingConfig, SearchConfig
from radar.index.embedder import document_text, make_embedder, resolve_model_dir
from radar.index.embeddings import Embeddings
from radar.index.vectors import VectorIndex

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "data" / "snapshot.jsonl.gz"
FULL = ROOT.parent / "shared" / "data" / "arxiv_corpus_full.jsonl.gz"
QUERIES = ROOT / "tests" / "fixtures" / "dev_search_queries.jsonl"
console = Console(width=140)
PLAIN = "plain ST.encode, 256 tok"
RADAR = "Radar default: ONNX int8, 2x128-tok windows"
FAST = "ONNX int8, one 128-tok window"


def load_papers(path: Path, n: int, step: int) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in itertools.islice(fh, 0, n * step, step)]


def timed(fn, *args):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t


class Baseline:
    """Plain sentence-transformers with defaults, as a user would call it."""

    model_id = "plain"
    device = "cpu"

    def __init__(self) -> None:
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(resolve_model_dir("default")), device="cpu")
        self.dim = 384

    def embed(self, texts: list[str]) -> np.ndarray:
        v = self.model.encode(texts, show_progress_bar=False)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def bench_embedding(texts: list[str], cache: Path) -> tuple[list[tuple], dict[str, object]]:
    variants = {
        PLAIN: Baseline(),
        "torch fp32, 2x128-tok windows": make_embedder(
            EmbeddingConfig(backend="torch", quantize=False), device="cpu", cache_dir=cache
        ),
        "ONNX fp32, 2x128-tok windows": make_embedder(EmbeddingConfig(), cache_dir=cache, precision="fp"),
        "ONNX int8, one 256-tok window": make_embedder(EmbeddingConfig(max_seq_length=256), cache_dir=cache),
        RADAR: make_embedder(EmbeddingConfig(), cache_dir=cache),
        FAST: make_embedder(EmbeddingConfig(max_tokens=128), cache_dir=cache),
    }
    for emb in variants.values():
        emb.embed(texts[:8])  # warm up
    rows, vectors = [], {}
    base_rate = None
    for name, emb in variants.items():
        vecs, secs = timed(emb.embed, texts)
        rate = len(texts) / secs
        base_rate = base_rate or rate
        vectors[name] = vecs
        rows.append((name, rate, rate / base_rate))
    return rows, {"variants": variants, "vectors": vectors}


def retrieval_quality(embedder, queries: list[str], targets: list[int], corpus: list[str]) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    doc_vecs = embedder.embed(corpus)
    q_vecs = embedder.embed(queries)
    scores = q_vecs @ doc_vecs.T
    ranks = [int((row > row[t]).sum()) + 1 for row, t in zip(scores, targets, strict=True)]
    return float(np.mean([r <= 10 for r in ranks])), float(np.mean([1.0 / r for r in ranks]))


def bench_quality(variants: dict, n_docs: int) -> list[tuple]:  # type: ignore[type-arg]
    dev = [json.loads(line) for line in QUERIES.read_text().splitlines() if line.strip()]
    targets = {q["id"] for q in dev}
    papers = [p for p in load_papers(SNAPSHOT, n_docs, 9) if p["id"] not in targets]
    with gzip.open(SNAPSHOT, "rt", encoding="utf-8") as fh:
        target_papers = {p["id"]: p for p in map(json.loads, fh) if p["id"] in targets}
    corpus_papers = list(target_papers.values()) + papers
    corpus = [document_text(p["title"], p["abstract"]) for p in corpus_papers]
    index_of = {p["id"]: i for i, p in enumerate(corpus_papers)}
    rows = []
    abstracts = [p["abstract"] for p in papers]
    titles = [p["title"] for p in papers]
    for name in (PLAIN, RADAR, FAST):
        emb = variants[name]
        r_dev, mrr_dev = retrieval_quality(emb, [q["q"] for q in dev], [index_of[q["id"]] for q in dev], corpus)
        r_t2a, mrr_t2a = retrieval_quality(emb, titles, list(range(len(titles))), abstracts)
        rows.append((name, r_dev, mrr_dev, r_t2a, mrr_t2a))
    r_dev, mrr_dev = hybrid_quality(variants[RADAR], [q["q"] for q in dev], [index_of[q["id"]] for q in dev], corpus)
    r_t2a, mrr_t2a = hybrid_quality(variants[RADAR], titles, list(range(len(titles))), abstracts)
    rows.append(("Radar search: default dense + BM25, RRF", r_dev, mrr_dev, r_t2a, mrr_t2a))
    return rows


def hybrid_quality(embedder, queries: list[str], targets: list[int], corpus: list[str]) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    from radar.index.keyword import KeywordIndex
    from radar.index.search import rrf

    keyword = KeywordIndex.build([(str(i), "", text) for i, text in enumerate(corpus)], "")
    doc_vecs = embedder.embed(corpus)
    q_vecs = embedder.embed(queries)
    recall, mrr = [], []
    for q, qv, t in zip(queries, q_vecs, targets, strict=True):
        dense = [str(i) for i in np.argsort(-(doc_vecs @ qv))[:100]]
        kw = [d for d, _ in keyword.search(q, 100)]
        fused = sorted(rrf([dense, kw], 60).items(), key=lambda kv: -kv[1])
        ranking = [d for d, _ in fused]
        rank = ranking.index(str(t)) + 1 if str(t) in ranking else 10**9
        recall.append(rank <= 10)
        mrr.append(1.0 / rank)
    return float(np.mean(recall)), float(np.mean(mrr))


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, ordered[int(0.95 * (len(ordered) - 1))] * 1000


def synthetic(n: int, dim: int = 384, seed: int = 0) -> np.ndarray:
    """Clustered unit vectors (a mixture, like real embeddings), not uniform noise."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(1000, dim)).astype(np.float32)
    out = np.empty((n, dim), np.float32)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        out[start : start + m] = centers[rng.integers(0, 1000, m)] + 0.8 * rng.normal(size=(m, dim)).astype(np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def ivf_recall(vectors: np.ndarray, queries: np.ndarray, nprobe: int) -> tuple[float, float, float]:
    ids = np.arange(len(vectors), dtype=np.int64)
    exact = VectorIndex.build("m", ids, vectors, exact_below=len(vectors) + 1)
    ivf = VectorIndex.build("m", ids, vectors, exact_below=1000, nprobe=nprobe)
    _, truth = exact.search(queries, 10)
    lat = []
    found = []
    for q in queries:
        t = time.perf_counter()
        _, got = ivf.search(q[None, :], 10)
        lat.append(time.perf_counter() - t)
        found.append(got[0])
    recall = float(np.mean([len(set(a) & set(t)) / 10 for a, t in zip(found, truth, strict=True)]))
    p50, p95 = percentiles(lat)
    return recall, p50, p95


def bench_latency(n_full: int, skip_1m: bool, real: np.ndarray) -> list[tuple]:  # type: ignore[type-arg]
    """Hybrid search end to end on a real workspace of n_full real papers with synthetic vectors."""
    from radar.index.keyword import KeywordIndex
    from radar.index.search import Filters, Searcher
    from radar.store import Workspace

    rows = []
    queries = [json.loads(line)["q"] for line in QUERIES.read_text().splitlines() if line.strip()]
    queries = (queries * 10)[:100]
    for size in (10_000, n_full):
        with tempfile.TemporaryDirectory() as tmp:
            ws, _ = Workspace.init(Path(tmp) / "ws")
            from radar.crawler.snapshot import import_snapshot

            with ws.store() as store:
                source = FULL if FULL.exists() else SNAPSHOT
                path = Path(tmp) / "cut.jsonl.gz"
                with gzip.open(source, "rb") as src, gzip.open(path, "wb") as dst:
                    dst.writelines(itertools.islice(src, size))
                import_snapshot(store, path)
                embedder = make_embedder(EmbeddingConfig(), cache_dir=ws.model_cache_dir)
                docs = [d.id for d in Documents(store).scan()]
                vecs = synthetic(len(docs), seed=size)
                Embeddings(store).save(
                    (d, embedder.model_id, h, v.tobytes())
                    for d, h, v in zip(docs, [Documents(store).meta(d).content_hash for d in docs], vecs, strict=True)
                )
                cfg = SearchConfig()
                ids = np.array(list(Embeddings(store).vec_ids_of(docs).values()), np.int64)
                vi = VectorIndex.build(embedder.model_id, ids, vecs, exact_below=cfg.exact_below, nprobe=cfg.nprobe)
                (kw, kw_secs) = timed(
                    KeywordIndex.build, [(d.id, d.title, d.abstract) for d in Documents(store).scan()], ""
                )
                searcher = Searcher(store, embedder, vi, kw, cfg)
                for q in queries[:5]:
                    searcher.search(q)
                for label, filt in (("hybrid", Filters()), ("hybrid + date filter", Filters(since="2025-06-01"))):
                    lat = []
                    for q in queries:
                        t = time.perf_counter()
                        searcher.search(q, 10, filt)
                        lat.append(time.perf_counter() - t)
                    p50, p95 = percentiles(lat)
                    rows.append(
                        (
                            f"{label}, {len(docs):,} real papers (BM25 build {kw_secs:.1f} s)",
                            vi.manifest.kind,
                            p50,
                            p95,
                            "",
                        )
                    )
    # FAISS alone at 1M (synthetic) and recall of IVF vs exact
    if not skip_1m:
        vecs = synthetic(1_000_000, seed=7)
        queries_v = vecs[:200] + 0.05 * np.random.default_rng(1).normal(size=(200, 384)).astype(np.float32)
        flat = VectorIndex.build("m", np.arange(len(vecs), dtype=np.int64), vecs, exact_below=10**9)
        lat = []
        for q in queries_v[:50]:
            t = time.perf_counter()
            flat.search(q[None, :], 10)
            lat.append(time.perf_counter() - t)
        p50, p95 = percentiles(lat)
        rows.append(("FAISS exact (flat), 1,000,000 synthetic vectors", "flat", p50, p95, "1.000"))
        recall, p50, p95 = ivf_recall(vecs, queries_v, SearchConfig().nprobe)
        rows.append(("FAISS IVF, 1,000,000 synthetic vectors", "ivf", p50, p95, f"{recall:.3f}"))
        del vecs, flat
    if len(real):
        q = real[:200]
        recall, p50, p95 = ivf_recall(real, q, SearchConfig().nprobe)
        rows.append(
            (
                f"FAISS IVF on {len(real):,} real embeddings (nprobe {SearchConfig().nprobe})",
                "ivf",
                p50,
                p95,
                f"{recall:.3f}",
            )
        )
    return rows


def real_vectors(workspace: Path | None) -> np.ndarray:
    if workspace is None or not (workspace / "radar.db").exists():
        return np.zeros((0, 384), np.float32)
    import sqlite3

    conn = sqlite3.connect(workspace / "radar.db")
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'embeddings'").fetchone():
        return np.zeros((0, 384), np.float32)
    blobs = [r[0] for r in conn.execute("SELECT vector FROM embeddings")]
    conn.close()
    return np.frombuffer(b"".join(blobs), np.float32).reshape(len(blobs), -1) if blobs else np.zeros((0, 384))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=1000, help="abstracts for the speed test")
    ap.add_argument("--quality-docs", type=int, default=2000, help="distractor papers for the quality test")
    ap.add_argument("--workspace", type=Path, default=ROOT / "demo-workspace", help="real embeddings for IVF recall")
    ap.add_argument("--full", type=int, default=100_000, help="papers for the large latency test")
    ap.add_argument("--skip-1m", action="store_true")
    ap.add_argument("--lead", action="store_true", help="only the lead-style queries on --workspace (bench_search)")
    args = ap.parse_args()
    if args.lead:
        import bench_search

        sys.argv = [sys.argv[0], "--workspace", str(args.workspace)]
        bench_search.main()
        return
    cache = Path(os.environ.get("RADAR_MODEL_CACHE", tempfile.mkdtemp()))
    papers = load_papers(FULL if FULL.exists() else SNAPSHOT, args.docs, 53)
    texts = [document_text(p["title"], p["abstract"]) for p in papers]

    speed, ctx = bench_embedding(texts, cache)
    t = Table(title=f"Embedding speed, {len(texts):,} real abstracts, {os.cpu_count()} cores")
    for c in ("embedder", "docs/s", "vs plain"):
        t.add_column(c, justify="left" if c == "embedder" else "right")
    for name, rate, ratio in speed:
        t.add_row(name, f"{rate:.1f}", f"{ratio:.2f}x")
    console.print(t)
    vectors = ctx["vectors"]
    base = vectors[PLAIN]  # type: ignore[index]
    for name in (RADAR, FAST):
        cos = (vectors[name] * base).sum(1)  # type: ignore[index]
        console.print(f"cosine to plain (256-token) vectors, {name}: min {cos.min():.3f}, mean {cos.mean():.3f}")

    q = Table(title=f"Retrieval quality (dense only), {args.quality_docs:,} distractor papers")
    for c in ("embedder", "dev recall@10", "dev MRR", "title->abstract recall@10", "title->abstract MRR"):
        q.add_column(c, justify="left" if c == "embedder" else "right")
    for name, r1, m1, r2, m2 in bench_quality(ctx["variants"], args.quality_docs):  # type: ignore[arg-type]
        q.add_row(name, f"{r1:.2f}", f"{m1:.3f}", f"{r2:.3f}", f"{m2:.3f}")
    console.print(q)

    real = real_vectors(args.workspace)
    lat = Table(title="Search latency (ms) and approximate-index recall@10 vs exact")
    for c in ("what", "index", "p50 ms", "p95 ms", "recall@10"):
        lat.add_column(c, justify="left" if c == "what" else "right")
    for row in bench_latency(args.full, args.skip_1m, real):
        lat.add_row(row[0], row[1], f"{row[2]:.1f}", f"{row[3]:.1f}", row[4])
    console.print(lat)
    console.print(
        "memory: 1,536 B per document in the FAISS index (384 float32) + 8 B id; the same again in the "
        "store's embeddings table"
    )
    console.print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
