"""Core commands: init, import, crawl, stats, demo."""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime
from pathlib import Path

from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from radar.app.context import Radar
from radar.app.output import console, err_console, print_json
from radar.crawler.snapshot import describe_problems, import_snapshot
from radar.store import Workspace, resolve_root


def open_workspace(args: argparse.Namespace) -> Workspace:
    return Workspace.open(resolve_root(args.workspace))


def open_radar(args: argparse.Namespace) -> Radar:
    """The workspace of --workspace / $RADAR_HOME with its settings (radar.toml is read once, when first used)."""
    return Radar(open_workspace(args))


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
    with (
        ws.store() as store,
        Progress(
            TextColumn("importing {task.description}"),
            BarColumn(),
            TextColumn("{task.completed:,} papers"),
            TimeElapsedColumn(),
            console=err_console,
            disable=args.json or not err_console.is_terminal,
        ) as bar,
    ):
        task = bar.add_task(path.name, total=None)
        result = import_snapshot(store, path, source=args.source, progress=lambda n: bar.advance(task, n))
    elapsed = time.perf_counter() - started
    problems = describe_problems(path, result)
    summary = {
        "file": str(path),
        "added": result.counts.added,
        "updated": result.counts.updated,
        "unchanged": result.counts.unchanged,
        "bad_lines": len(result.bad_lines),
        "truncated": result.truncated,
        "seconds": round(elapsed, 3),
        "papers_per_s": round(result.counts.seen / elapsed) if elapsed > 0 else None,
    }
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
    register_more(sub)


# -- crawl ------------------------------------------------------------------------------------------
def _parse_date(value: str | None, flag: str) -> datetime | None:
    from radar.store import ConfigError

    if not value:
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        raise ConfigError(f"{flag} {value!r} is not a date; use YYYY-MM-DD, e.g. {flag} 2025-05-01") from None


def cmd_crawl(args: argparse.Namespace) -> int:
    from radar.app import steps

    radar = open_radar(args)
    since = _parse_date(args.since, "--since")
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,} entries"),
        TimeElapsedColumn(),
        console=err_console,
        disable=args.json,
    ) as bar:
        tasks: dict[str, TaskID] = {}

        def progress(source: str, n: int, total: int | None) -> None:
            if source not in tasks:
                tasks[source] = bar.add_task(f"crawling {source}", total=total)
            bar.update(tasks[source], advance=n, total=total)

        results = steps.crawl_sources(radar, source=args.source, since=since, progress=progress)
    failed = [r for r in results if not r.ok]
    if args.json:
        print_json({"sources": [r.as_dict() for r in results], "failed": len(failed)})
    else:
        for r in results:
            (err_console if not r.ok else console).print(r.line(), markup=False)
    return 2 if failed else 0


# -- demo -------------------------------------------------------------------------------------------
DATA_DIR = Path(__file__).resolve().parents[1] / "data"


def demo_config(data_dir: Path) -> str:
    """The default radar.toml with the bundled feeds as sources (file:// URLs: offline)."""
    from radar.store.config import DEFAULT_CONFIG_TEXT

    head = DEFAULT_CONFIG_TEXT.split("[[sources]]", 1)[0]
    lines = [head.rstrip(), "", "# Demo workspace: the bundled, recorded feeds stand in for live sources.", ""]
    for feed in sorted((data_dir / "feeds").glob("*.xml")):
        is_listing = feed.name.startswith("arxiv_rss")
        name = feed.stem.removeprefix("blog_").split("_")[0] if not is_listing else "arxiv-rss"
        lines += ["[[sources]]", f'name = "{name}"', f'type = "{"arxiv-rss" if is_listing else "feed"}"']
        if is_listing:
            lines += [
                f'base_url = "{feed.parent.as_uri()}/"',
                'categories = ["' + feed.name + '"]',
                "min_interval_s = 0.0",
            ]
        else:
            lines.append(f'url = "{feed.as_uri()}"')
        lines.append("")
    return "\n".join(lines)


def cmd_demo(args: argparse.Namespace) -> int:
    data_dir = Path(args.data).resolve() if args.data else DATA_DIR
    snapshot = data_dir / "snapshot.jsonl.gz"
    if not snapshot.is_file():
        from radar.store import WorkspaceError

        raise WorkspaceError(
            f"bundled snapshot not found at {snapshot}; run from a project checkout or pass --data DIR"
        )
    root = resolve_root(args.workspace)
    ws, created = Workspace.init(root, config_text=demo_config(data_dir))
    console.rule("[bold]Research Radar demo")
    console.print(f"workspace: {ws.root} ({'new' if created else 'existing'})")
    base = ["--workspace", str(ws.root)]
    from radar.app.cli import main as radar

    steps = [
        ("import the bundled snapshot", ["import", str(snapshot)]),
        ("ingest the bundled feeds", ["crawl"]),
        ("stats", ["stats"]),
        ("embed and index (first run exports the model to ONNX once)", ["index"]),
        ("tag with the taxonomy (the first run trains on the 750 shipped labels)", ["tag"]),
        (
            "trends: what rose and fell in the last month, new methods, topics",
            ["trends", "--window", "month", "--limit", "10"],
        ),
        (
            "trends replayed as of 2025-03-31 (--as-of: only what was published by then)",
            ["trends", "--window", "month", "--limit", "8", "--as-of", "2025-03-31"],
        ),
        (
            'search: "group relative policy optimization variance"',
            ["search", "group relative policy optimization variance", "-k", "5"],
        ),
        (
            "search with a filter: KV cache, published 2025-06 or later",
            ["search", "KV cache memory management for LLM serving", "-k", "5", "--since", "2025-06-01"],
        ),
        ("weekly report for the latest full week of the snapshot", ["report", "--week", "latest"]),
    ]
    worst = 0
    for title, argv in steps:
        console.rule(title)
        code = radar(base + argv)
        worst = max(worst, code)
        if code == 1:
            return code
    console.rule()
    app_argv = base + ["app"] + (["--port", str(args.port)] if args.port else [])
    if args.no_app:
        app_cfg = Radar(ws).settings.with_app(port=args.port).app
        console.print(
            f"demo finished (exit {worst}); the dashboard: `radar {' '.join(app_argv)}`, then open {app_cfg.url}"
        )
        return worst
    console.rule("the dashboard (Ctrl-C stops it)")
    return max(worst, radar(app_argv))


def register_more(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("crawl", help="incremental crawl of the configured arXiv queries and feeds")
    p.add_argument("--source", metavar="NAME", help="crawl only this source (a name from radar.toml)")
    p.add_argument("--since", metavar="YYYY-MM-DD", help="fetch entries published/updated since this date")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_crawl)

    p = sub.add_parser("demo", help="the whole product on the bundled snapshot, offline")
    p.add_argument("--data", metavar="DIR", help="folder with snapshot.jsonl.gz and feeds/ (default: bundled)")
    p.add_argument("--no-app", action="store_true", help="stop after the last step instead of serving the dashboard")
    p.add_argument("--port", type=int, metavar="N", help="dashboard port (default 8501)")
    p.set_defaults(func=cmd_demo)
