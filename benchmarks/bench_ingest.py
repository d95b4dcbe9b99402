"""Ingest benchmarks: snapshot import throughput and feed parse throughput, each against a plain
baseline measured in the same run.

    .venv/bin/python benchmarks/bench_ingest.py [--corpus PATH] [--repeat 5]

Import: ``radar import`` (orjson, batched upserts, WAL) vs a plain loop (json.loads and one
INSERT OR REPLACE per paper in one transaction) on the same file. Feeds: ``crawler.feeds.parse_feed``
(feedparser without its HTML sanitizer, then our plain-text reduction) vs plain
``feedparser.parse`` with defaults, on the same recorded feeds.
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import sqlite3
import tempfile
import time
from pathlib import Path

import feedparser
from rich.console import Console
from rich.table import Table

from radar.crawler.feeds import parse_arxiv_rss, parse_feed
from radar.crawler.snapshot import import_snapshot
from radar.store import Workspace

ROOT = Path(__file__).resolve().parents[1]
SHARED_CORPUS = ROOT.parent / "shared" / "data" / "arxiv_corpus_full.jsonl.gz"
BUNDLED = ROOT / "data" / "snapshot.jsonl.gz"


def plain_import(path: Path, db: Path) -> int:
    conn = sqlite3.connect(db)
    conn.execute(
        "CREATE TABLE papers (id TEXT PRIMARY KEY, title TEXT, abstract TEXT, authors TEXT, "
        "categories TEXT, published TEXT)"
    )
    n = 0
    with gzip.open(path, "rt", encoding="utf-8") as fh, conn:
        for line in fh:
            r = json.loads(line)
            conn.execute(
                "INSERT OR REPLACE INTO papers VALUES (?, ?, ?, ?, ?, ?)",
                (
                    r["id"],
                    r["title"],
                    r["abstract"],
                    json.dumps(r["authors"]),
                    json.dumps(r["categories"]),
                    r["published"],
                ),
            )
            n += 1
    conn.close()
    return n


def bench_import(corpus: Path) -> list[tuple[str, float, float, str]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        n = plain_import(corpus, Path(tmp) / "plain.db")
        base = n / (time.perf_counter() - t)
        rows.append(("plain: json + INSERT per row (no checks, no indexes)", n, base, "1.00x"))
        ws, _ = Workspace.init(Path(tmp) / "ws")
        with ws.store() as store:
            for label in ("radar import (new workspace)", "radar import again (idempotent)"):
                t = time.perf_counter()
                res = import_snapshot(store, corpus)
                rate = res.counts.seen / (time.perf_counter() - t)
                rows.append((label, res.counts.seen, rate, f"{rate / base:.2f}x"))
    return rows


def feed_files() -> list[tuple[str, bytes]]:
    feeds = sorted((ROOT / "data" / "feeds").glob("*.xml"))
    feeds += sorted((ROOT / "tests" / "fixtures" / "feeds" / "tricky").glob("rssparser*.xml"))
    return [(p.name, p.read_bytes()) for p in feeds]


def bench_feeds(repeat: int) -> list[tuple[str, float, float, str]]:
    files = feed_files()
    t = time.perf_counter()
    n = 0
    for _ in range(repeat):
        for _name, body in files:
            n += len(feedparser.parse(body).entries)
    base = n / (time.perf_counter() - t)
    t = time.perf_counter()
    m = 0
    for _ in range(repeat):
        for name, body in files:
            fn = parse_arxiv_rss if name.startswith("arxiv_rss") else parse_feed
            m += len(fn(body, url="https://example.org/feed.xml", source="bench").documents)
    ours = m / (time.perf_counter() - t)
    return [
        ("plain feedparser.parse (defaults)", n, base, "1.00x"),
        ("radar parse_feed (to plain-text Documents)", m, ours, f"{ours / base:.2f}x"),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=SHARED_CORPUS if SHARED_CORPUS.exists() else BUNDLED)
    ap.add_argument("--repeat", type=int, default=5, help="passes over the feed files")
    args = ap.parse_args()
    console = Console()
    table = Table(title=f"Ingest throughput ({args.corpus.name}; feeds x{args.repeat})")
    for col in ("what", "items", "items/s", "vs plain"):
        table.add_column(col, justify="left" if col == "what" else "right")
    for label, n, rate, ratio in bench_import(args.corpus):
        table.add_row(label, f"{n:,}", f"{rate:,.0f}", ratio)
    table.add_section()
    for label, n, rate, ratio in bench_feeds(args.repeat):
        table.add_row(label, f"{n:,}", f"{rate:,.0f}", ratio)
    console.print(table)
    console.print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
