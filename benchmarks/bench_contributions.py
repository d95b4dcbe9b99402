"""Contributions and method cards benchmark: what every paper of the full corpus introduces, and the cards,
beside a plain pass over the same texts.

    .venv/bin/python benchmarks/bench_contributions.py [--corpus ../shared/data/arxiv_corpus_full.jsonl.gz]
        [--limit N] [--workspace DIR]

A workspace is built in a temporary folder (or DIR) with every paper of the corpus except its last ISO week,
then, each timed (wall and CPU seconds of this process):
1. plain pass: every stored paper read back and its title and abstract split into words (the floor any
   per-paper stage pays);
2. contributions: ``update_contributions`` on every paper (candidates, the model, the stored rows and mentions),
   by worker processes when many papers wait (their CPU seconds are counted);
3. cards: ``all_cards`` (every introduced name, its adoption from the mentions table);
4. a new week: the held-back last week imported, then ``update_contributions`` again (only its papers);
5. ``radar methods --week W --json`` as a user runs it (a fresh process, median of 3), for the last week.
"""

from __future__ import annotations

import argparse
import gzip
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import orjson
from rich.console import Console
from rich.table import Table

from radar.analysis.contributions.cards import all_cards, iso_week
from radar.analysis.contributions.update import update_contributions
from radar.analysis.contributions.week import week_cards
from radar.app.wiring import repro_presets
from radar.store import Workspace
from radar.store.config import DEFAULT_CONFIG_TEXT
from radar.store.models import Document

console = Console(width=120)
_WORDS = re.compile(r"\w+")


def read_corpus(path: Path, limit: int) -> list[Document]:
    out = []
    with gzip.open(path, "rb") as fh:
        for line in fh:
            r = orjson.loads(line)
            out.append(
                Document(
                    id=r["id"],
                    kind="paper",
                    source="corpus",
                    title=r["title"],
                    abstract=r.get("abstract") or "",
                    published=r["published"][:10] + "T00:00:00Z",
                    categories=tuple(r.get("categories") or ()),
                )
            )
            if limit and len(out) >= limit:
                break
    return out


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (the worker processes)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    wall, cpu = time.perf_counter(), _cpu()
    out = fn()
    return out, time.perf_counter() - wall, _cpu() - cpu


def plain_pass(docs: Iterator[Document]) -> int:
    return sum(len(_WORDS.findall(d.title)) + len(_WORDS.findall(d.abstract)) for d in docs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/data/arxiv_corpus_full.jsonl.gz")
    ap.add_argument("--limit", type=int, default=0, help="read only the first N papers (0: all)")
    ap.add_argument("--workspace", type=Path, help="build the workspace here (default: a temporary folder)")
    ap.add_argument("--workers", type=int, default=0, help="processes deciding papers (0: one per core, up to 4)")
    args = ap.parse_args()
    docs = read_corpus(args.corpus, args.limit)
    last_week = max(iso_week(d.published) for d in docs)
    held = [d for d in docs if iso_week(d.published) == last_week]
    first = [d for d in docs if iso_week(d.published) != last_week]
    root = args.workspace or Path(tempfile.mkdtemp(prefix="radar-bench-contrib-")) / "ws"
    ws, _ = Workspace.init(root, config_text=DEFAULT_CONFIG_TEXT)
    rows: list[tuple[str, int, float, float]] = []
    with ws.store() as store:
        store.upsert_documents(first)
        words, wall, cpu = timed(lambda: plain_pass(store.iter_documents()))
        rows.append(("plain pass (read + split into words)", len(first), wall, cpu))
        rep, wall, cpu = timed(lambda: update_contributions(store, workers=args.workers))
        rows.append((f"contributions (all papers, {args.workers or 'auto'} workers)", rep.decided, wall, cpu))
        cards, wall, cpu = timed(lambda: all_cards(store, repro_presets()))
        rows.append(("cards (every introduced name)", len(cards), wall, cpu))
        store.upsert_documents(held)
        new, wall, cpu = timed(lambda: update_contributions(store))
        rows.append((f"a new week ({last_week}: its papers only)", new.decided, wall, cpu))
        week, wall, cpu = timed(lambda: week_cards(store, last_week, repro_presets()))
        rows.append((f"week_cards {last_week} (in process)", len(week), wall, cpu))
    cli = []
    for _ in range(3):
        started = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "radar.app.cli", "-w", str(root), "methods", "--week", last_week, "--json"],
            capture_output=True,
            check=True,
        )
        cli.append(time.perf_counter() - started)
    listed = len(orjson.loads(out.stdout))
    rows.append((f"radar methods --week {last_week} --json (median of 3)", listed, statistics.median(cli), 0.0))
    base_cpu = rows[0][3]
    table = Table(title=f"Contributions and cards, {len(docs):,} papers ({date.today().isoformat()})")
    for col in ("step", "items", "wall s", "CPU s", "items/s", "x plain pass (CPU)"):
        table.add_column(col, justify="left" if col == "step" else "right")
    for name, n, wall, cpu in rows:
        ratio = f"{cpu / base_cpu:.1f}" if cpu and base_cpu else "-"
        table.add_row(name, f"{n:,}", f"{wall:.2f}", f"{cpu:.2f}" if cpu else "-", f"{n / wall:,.0f}", ratio)
    console.print(table)
    total_cpu = rows[1][3] + rows[2][3]
    console.print(
        f"contributions + cards: {total_cpu:.1f} s CPU ({rows[1][2] + rows[2][2]:.1f} s wall); words read {words:,}"
    )
    console.print(f"workspace: {root}")


if __name__ == "__main__":
    main()
