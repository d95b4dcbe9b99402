"""Core commands: init, import, crawl, stats, demo."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from app.output import console, err_console, print_json
from crawler.snapshot import describe_problems, import_snapshot
from store import Workspace, resolve_root


def open_workspace(args: argparse.Namespace) -> Workspace:
    return Workspace.open(resolve_root(args.workspace))


# -- init -------------------------------------------------------------------------------------------
def cmd_init(args: argparse.Namespace) -> int:
    ws, created = Workspace.init(resolve_root(args.workspace))
    if args.json:
        print_json({"workspace": str(ws.root), "created": created, "config": str(ws.config_path)})
    elif created:
        console.print(f"created workspace {ws.root} (edit {ws.config_path.name} to choose sources)")
    else:
        console.print(f"workspace {ws.root} already exists; kept its {ws.config_path.name} and data")
    return 0


# -- import -----------------------------------------------------------------------------------------
def cmd_import(args: argparse.Namespace) -> int:
    ws = open_workspace(args)
    path = Path(args.file)
    started = time.perf_counter()
    with ws.store() as store, Progress(
        TextColumn("importing {task.description}"), BarColumn(), TextColumn("{task.completed:,} papers"),
        TimeElapsedColumn(), console=err_console, disable=args.json or not err_console.is_terminal,
    ) as bar:  # fmt: skip
        task = bar.add_task(path.name, total=None)
        result = import_snapshot(store, path, source=args.source, progress=lambda n: bar.advance(task, n))
    elapsed = time.perf_counter() - started
    problems = describe_problems(path, result)
    summary = {
        "file": str(path), "added": result.counts.added, "updated": result.counts.updated,
        "unchanged": result.counts.unchanged, "bad_lines": len(result.bad_lines),
        "truncated": result.truncated, "seconds": round(elapsed, 3),
        "papers_per_s": round(result.counts.seen / elapsed) if elapsed > 0 else None,
    }  # fmt: skip
    if args.json:
        print_json(summary)
    else:
        console.print(
            f"imported {path.name}: {result.counts.added:,} added, {result.counts.updated:,} updated, "
            f"{result.counts.unchanged:,} unchanged in {elapsed:.1f} s"
        )
    if problems:
        err_console.print(f"radar: error: {problems}")
        return 2
    return 0


# -- stats ------------------------------------------------------------------------------------------
def cmd_stats(args: argparse.Namespace) -> int:
    ws = open_workspace(args)
    with ws.store() as store:
        stats = store.stats()
    if args.json:
        print_json(stats)
        return 0
    print_stats(stats)
    return 0


def print_stats(stats: dict) -> None:
    from rich.table import Table

    console.print(f"[bold]{stats['documents']:,} documents[/bold]")
    for title, key in (("source", "by_source"), ("kind", "by_kind")):
        table = Table(title=f"by {title}", title_justify="left")
        table.add_column(title)
        table.add_column("documents", justify="right")
        for name, count in stats[key].items():
            table.add_row(name, f"{count:,}")
        console.print(table)
    months = stats["by_month"]
    if months:
        table = Table(title="by month", title_justify="left")
        table.add_column("month")
        table.add_column("documents", justify="right")
        table.add_column("")
        peak = max(months.values())
        for month, count in months.items():
            table.add_row(month, f"{count:,}", "█" * max(1, round(30 * count / peak)))
        console.print(table)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("init", help="create a workspace with a commented radar.toml")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("import", help="load papers from a corpus-schema .jsonl or .jsonl.gz file")
    p.add_argument("file", metavar="FILE.jsonl[.gz]")
    p.add_argument("--source", default="snapshot", help="source name when lines carry no source_repo")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("stats", help="document counts per source, kind and month")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_stats)
