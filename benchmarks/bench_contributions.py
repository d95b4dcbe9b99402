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

    .venv/bin/python benchmarks/bench_contributions.py --command WS [--weeks 2025-W39 ...] [--before DIR]
        [--repeats 3]

``--command``: no workspace is built; on the workspace WS as it is (read only: copy it first if the command would
decide new papers), ``radar methods --week W --json`` for each week beside the plain start-up of ``radar stats``,
each a fresh process, the rows in turn (``bench_startup.timed``: median wall and CPU seconds of the child after one
uncounted round), with ``--before DIR`` (a checkout of older code, e.g. ``git archive REV | tar -x -C DIR``) the same
commands from it in the same run; the load average before and after.
"""

from __future__ import annotations

import argparse
import gzip
import os
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
from radar.crawler.documents import Document, Documents
from radar.store import Workspace
from radar.store.config import DEFAULT_CONFIG_TEXT

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


def command_table(workspace: Path, weeks: list[str], before: Path | None, repeats: int) -> None:
    """``radar methods --week`` per week and ``radar stats`` on ``workspace``, this checkout's and ``before``'s."""
    from bench_startup import timed  # same folder

    checkouts = [("", ROOT)] + ([(" (before)", before.resolve())] if before else [])
    tables: list[list[tuple[str, list[str], Path]]] = []  # per checkout: its stats row first
    for label, cwd in checkouts:
        radar = [sys.executable, "-m", "radar.app.cli", "--workspace", str(workspace.resolve())]
        rows = [(f"radar stats --json{label}", [*radar, "stats", "--json"], cwd)]
        rows += [
            (f"radar methods --week {w} --json{label}", [*radar, "methods", "--week", w, "--json"], cwd) for w in weeks
        ]
        tables.append(rows)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average before: {load}")
    found = timed([row for rows in tables for row in rows], repeats)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"| command | wall s (median of {repeats}) | CPU s | x radar stats (CPU) |")
    print("| --- | ---: | ---: | ---: |")
    for rows in tables:
        base = found[rows[0][0]][1]
        for name, _, _ in rows:
            wall, cpu = found[name]
            print(f"| `{name}` | {wall:.2f} | {cpu:.2f} | {cpu / base:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/data/arxiv_corpus_full.jsonl.gz")
    ap.add_argument("--limit", type=int, default=0, help="read only the first N papers (0: all)")
    ap.add_argument("--workspace", type=Path, help="build the workspace here (default: a temporary folder)")
    ap.add_argument("--workers", type=int, default=0, help="processes deciding papers (0: one per core, up to 4)")
    ap.add_argument("--command", type=Path, metavar="WS", help="only time `radar methods --week` on this workspace")
    ap.add_argument("--weeks", nargs="+", default=["2025-W39"], help="the weeks --command times")
    ap.add_argument("--before", type=Path, metavar="DIR", help="with --command: older code, timed in the same run")
    ap.add_argument("--repeats", type=int, default=3, help="with --command: rounds per command")
    args = ap.parse_args()
    if args.command:
        command_table(args.command, args.weeks, args.before, args.repeats)
        return
    docs = read_corpus(args.corpus, args.limit)
    last_week = max(iso_week(d.published) for d in docs)
    held = [d for d in docs if iso_week(d.published) == last_week]
    first = [d for d in docs if iso_week(d.published) != last_week]
    root = args.workspace or Path(tempfile.mkdtemp(prefix="radar-bench-contrib-")) / "ws"
    ws, _ = Workspace.init(root, config_text=DEFAULT_CONFIG_TEXT)
    rows: list[tuple[str, int, float, float]] = []
    with ws.store() as store:
        Documents(store).upsert(first)
        words, wall, cpu = timed(lambda: plain_pass(Documents(store).scan()))
        rows.append(("plain pass (read + split into words)", len(first), wall, cpu))
        rep, wall, cpu = timed(lambda: update_contributions(store, workers=args.workers))
        rows.append((f"contributions (all papers, {args.workers or 'auto'} workers)", rep.decided, wall, cpu))
        cards, wall, cpu = timed(lambda: all_cards(store, repro_presets()))
        rows.append(("cards (every introduced name)", len(cards), wall, cpu))
        Documents(store).upsert(held)
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
