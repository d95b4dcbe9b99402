"""Hostile-input bounds: a flooded feed, and migration 9's clean-up of stored text, each against the plain way in
the same run.

    .venv/bin/python benchmarks/bench_untrusted.py [--entries 100000] [--corpus PATH]

Flooded feed: `radar crawl` of one file:// feed with ``--entries`` entries, with the default cap
([crawl] max_feed_entries = 2,000: the feed is cut at 4,000 entries before feedparser reads it) against the cap
off (max_feed_entries = 1,000,000: every entry parsed and stored, what Radar did before). Wall seconds of the
crawl command, peak memory of its process, and the database's size.

Migration 8 (bidi and zero-width characters out of stored titles, abstracts, authors): opening a database of
``--corpus`` (default: the bundled 20,000-paper snapshot) left one version older, against the same clean-up
written in plain SQL (GLOB to find the rows, nested replace() to clean them), on copies of one database.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from radar.crawler.documents import Documents
from radar.crawler.snapshot import import_snapshot
from radar.store import Store, Workspace
from radar.store.schema import LATEST_VERSION
from radar.store.text import INVISIBLE_CHARS

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "data" / "snapshot.jsonl.gz"


def flood_feed(path: Path, entries: int) -> None:
    items = "".join(
        f"<item><title>Post {i} about GRPO and KV caches</title><link>https://blog.example/p/{i}</link>"
        f"<description>Entry {i}: a paragraph about reinforcement learning and serving systems, as long as a "
        f"real post's summary.</description><pubDate>{1 + i % 28:02d} Jan 2024 {i % 24:02d}:{i % 60:02d}:00 GMT"
        "</pubDate></item>"
        for i in range(entries)
    )
    path.write_text(f'<?xml version="1.0"?><rss version="2.0"><channel><title>f</title>{items}</channel></rss>')


def crawl(root: Path, feed: Path, cap: int) -> tuple[float, float, float]:
    """(wall s, peak MB of the crawl process, database MB)."""
    toml = f'[crawl]\nmax_feed_entries = {cap}\n[[sources]]\nname = "flood"\ntype = "feed"\nurl = "{feed.as_uri()}"\n'
    Workspace.init(root, config_text=toml)
    code = (
        "import resource, sys; from radar.app.cli import main; rc = main(sys.argv[1:]); "
        "print('PEAK', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, "--workspace", str(root), "crawl"], capture_output=True, text=True, check=True
    ).stdout
    wall = time.perf_counter() - started
    peak = int(out.rsplit("PEAK", 1)[1]) / 1024
    size = sum(p.stat().st_size for p in root.glob("radar.db*")) / 1e6
    return wall, peak, size


def plain_clean(db: Path) -> float:
    conn = sqlite3.connect(db)
    expr = {c: c for c in ("title", "abstract", "authors")}
    for ch in INVISIBLE_CHARS:
        expr = {c: f"replace({e}, '{ch}', '')" for c, e in expr.items()}
    where = " OR ".join(f"{c} GLOB '*[{INVISIBLE_CHARS}]*'" for c in expr)
    started = time.perf_counter()
    with conn:
        conn.execute(f"UPDATE documents SET {', '.join(f'{c} = {e}' for c, e in expr.items())} WHERE {where}")
    conn.close()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--corpus", type=Path, default=BUNDLED)
    args = parser.parse_args()
    console = Console()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        feed = base / "flood.xml"
        flood_feed(feed, args.entries)
        table = Table(title=f"one feed of {args.entries:,} entries ({feed.stat().st_size / 1e6:.0f} MB), `radar crawl`")
        for col in ("cap", "wall s", "peak MB", "database MB", "vs plain (wall)"):
            table.add_column(col, justify="right")
        plain = crawl(base / "plain", feed, 1_000_000)
        capped = crawl(base / "capped", feed, 2000)
        table.add_row("off (1,000,000: all stored)", f"{plain[0]:.1f}", f"{plain[1]:.0f}", f"{plain[2]:.1f}", "1.00x")
        table.add_row(
            "2,000 (default)",
            f"{capped[0]:.1f}",
            f"{capped[1]:.0f}",
            f"{capped[2]:.1f}",
            f"{plain[0] / capped[0]:.1f}x faster",
        )
        console.print(table)

        ws, _ = Workspace.init(base / "corpus")
        with ws.store() as store:
            import_snapshot(store, args.corpus)
            papers = Documents(store).count()
        with sqlite3.connect(ws.db_path) as conn:
            conn.execute(f"PRAGMA user_version = {LATEST_VERSION - 1}")  # as an older radar left it (no clean-up yet)
        os.sync()
        copy = base / "plain.db"
        shutil.copy(ws.db_path, copy)
        started = time.perf_counter()
        Store(ws.db_path).close()
        ours = time.perf_counter() - started
        theirs = plain_clean(copy)
        mig = Table(title=f"migration 9 on {papers:,} stored papers")
        for col in ("clean-up", "seconds", "vs plain"):
            mig.add_column(col, justify="right")
        mig.add_row("plain SQL (GLOB + 14 nested replace)", f"{theirs:.2f}", "1.00x")
        mig.add_row("Radar (a registered function per row)", f"{ours:.2f}", f"{theirs / ours:.1f}x faster")
        console.print(mig)


if __name__ == "__main__":
    main()
