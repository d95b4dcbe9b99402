"""Core commands: init, import, crawl, stats, demo."""

from __future__ import annotations

import argparse
import signal
import time
from datetime import timedelta
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from rich.progress import TaskID

import radar
from radar.app.cli_helpers import add_command, add_day, add_json, open_radar, open_workspace, parse_date
from radar.app.cmd_trends import print_period
from radar.app.context import Radar
from radar.app.output import console, err_console, print_json, progress_bar
from radar.crawler.documents import Documents, DocumentStats
from radar.crawler.snapshot import describe_problems, import_snapshot
from radar.index.embeddings import Embeddings
from radar.index.errors import IndexError_
from radar.index.prebuilt import PrebuiltVectors
from radar.reports.period import week_of
from radar.store import Workspace, WorkspaceError, resolve_root
from radar.store.config import DEFAULT_CONFIG_TEXT

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from radar.reports.build import BuiltReport


# -- init -------------------------------------------------------------------------------------------
def cmd_init(args: argparse.Namespace) -> int:
    ws, created = Workspace.init(resolve_root(args.workspace), force=args.force)
    if args.json:
        print_json({"workspace": str(ws.root), "created": created, "config": str(ws.config_path)})
    elif created:
        console.print(f"created workspace {ws.root} (edit {ws.config_path.name} to choose sources)")
    else:
        console.print(f"workspace {ws.root} already exists; kept its {ws.config_path.name} and data")
    return 0


# -- import -----------------------------------------------------------------------------------------
def cmd_import(args: argparse.Namespace) -> int:
    # defers the method-card stage (analysis.contributions: ~120 ms at every start)
    from radar.app import steps_contributions

    ws = open_workspace(args)
    path = Path(args.file)
    started = time.perf_counter()
    quiet = args.json or not err_console.is_terminal
    with (
        ws.store() as store,
        progress_bar("importing {task.description}", "{task.completed:,} papers", disable=quiet) as bar,
    ):
        task = bar.add_task(path.name, total=None)
        result = import_snapshot(store, path, source=args.source, progress=lambda n: bar.advance(task, n))
        elapsed = time.perf_counter() - started
        shipped, unused = steps_contributions.prebuilt_beside(path)
        if unused:
            err_console.print(f"radar: note: {unused}", markup=False)
        contributions = steps_contributions.refresh(Radar(ws), store, prebuilt=shipped)  # what each paper introduces
    vectors = adopt_prebuilt(ws, path)
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
        "prebuilt_vectors": len(vectors) if vectors else 0,
        "contributions": contributions.decided if contributions else 0,
        "prebuilt_contributions": contributions.reused if contributions else 0,
    }
    if args.json:
        print_json(summary)
    else:
        console.print(
            f"imported {path.name}: {result.counts.added:,} added, {result.counts.updated:,} updated, "
            f"{result.counts.unchanged:,} unchanged in {elapsed:.1f} s"
        )
        if vectors:
            console.print(
                f"with {len(vectors):,} prebuilt vectors ({vectors.path.name}, {vectors.model_id}): "
                "`radar index` reuses those whose model and content match and embeds the rest"
            )
    if problems:
        err_console.print(f"radar: error: {problems}")
        return 2
    return 0


def prebuilt_beside(path: Path) -> Path:
    """Where a corpus file's shipped vectors live: ``NAME.jsonl[.gz]`` -> ``NAME_vectors.npz`` beside it."""
    name = path.name.removesuffix(".gz").removesuffix(".jsonl")
    return path.with_name(f"{name}_vectors.npz")


def adopt_prebuilt(ws: Workspace, path: Path) -> PrebuiltVectors | None:
    """Copy the vectors shipped beside an imported file into the workspace (index/prebuilt/), where
    `radar index` looks; None when there are none. A file that is not a vectors file is one warning line."""
    source = prebuilt_beside(path)
    if not source.is_file():
        return None
    try:
        PrebuiltVectors.open(source)
    except IndexError_ as exc:
        err_console.print(f"radar: warning: {exc}; the imported papers will be embedded", markup=False)
        return None
    target = ws.prebuilt_dir / source.name
    data = source.read_bytes()
    if not target.is_file() or target.read_bytes() != data:
        ws.write_bytes_atomic(target, data)
    return PrebuiltVectors.open(target)


# -- stats ------------------------------------------------------------------------------------------
def cmd_stats(args: argparse.Namespace) -> int:
    ws = open_workspace(args)
    with ws.store() as store:
        stats = Documents(store).stats()
    if args.json:
        print_json(msgspec.to_builtins(stats))
        return 0
    print_stats(stats)
    return 0


def print_stats(stats: DocumentStats) -> None:
    from rich.table import Table

    console.print(f"[bold]{stats.documents:,} documents[/bold]")
    for title, counts in (("source", stats.by_source), ("kind", stats.by_kind)):
        table = Table(title=f"by {title}", title_justify="left")
        table.add_column(title)
        table.add_column("documents", justify="right")
        for name, count in counts.items():
            table.add_row(name, f"{count:,}")
        console.print(table)
    months = stats.by_month
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
    p = add_command(sub, "init", cmd_init, help="create a workspace with a commented radar.toml")
    p.add_argument(
        "--force",
        action="store_true",
        help="start a new empty database even though radar.db is missing or empty beside an index, runs or reports",
    )
    add_json(p)

    p = sub.add_parser("import", help="load papers from a corpus-schema .jsonl or .jsonl.gz file")
    p.add_argument("file", metavar="FILE.jsonl[.gz]")
    p.add_argument("--source", default="snapshot", help="source name when lines carry no source_repo")
    add_json(p)
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("stats", help="document counts per source, kind and month")
    add_json(p)
    p.set_defaults(func=cmd_stats)
    register_more(sub)


# -- crawl ------------------------------------------------------------------------------------------
def cmd_crawl(args: argparse.Namespace) -> int:
    from radar.app import steps  # defers scipy, faiss, bm25s

    radar = open_radar(args)
    since = parse_date(args.since, "--since")
    with progress_bar("{task.description}", "{task.completed:,} entries", disable=args.json) as bar:
        tasks: dict[str, TaskID] = {}

        def progress(source: str, n: int, total: int | None) -> None:
            if source not in tasks:
                tasks[source] = bar.add_task(f"crawling {source}", total=total)
            bar.update(tasks[source], advance=n, total=total)

        results = steps.crawl_sources(radar, source=args.source, since=since, progress=progress)
    failed = [r for r in results if not r.ok]
    if args.json:
        print_json({"sources": msgspec.to_builtins(results), "failed": len(failed)})
    else:
        for r in results:
            (err_console if not r.ok else console).print(r.line(), markup=False)
    return 2 if failed else 0


# -- demo -------------------------------------------------------------------------------------------
# The bundled data, beside the package's own modules: radar/data in an installed wheel (pyproject maps data/ there),
# the checkout's data/ in an editable install (through radar/data's link)
DATA_DIR = Path(radar.__file__).with_name("data")
# The date the demo's trends look back from: the snapshot's last months are quiet (no term passes the
# significance bar; `radar trends --as-of` at each month end of 2025-06..2026-06 shows emerging terms only in
# 2025-06..09 and 2025-12), while in September 2025 RLVR and Qwen3 both rise clearly.
DEMO_AS_OF = "2025-09-30"
DEMO_FEEDS = "feeds"  # the bundled feeds are copied here, inside the workspace: radar.toml names them relatively


def demo_config(feed_names: list[str]) -> str:
    """The default radar.toml with the bundled feeds (copied into the workspace's feeds/) as sources."""

    head = DEFAULT_CONFIG_TEXT.split("[[sources]]", 1)[0]
    lines = [
        head.rstrip(),
        "",
        "# Demo workspace: the bundled, recorded feeds (in feeds/ here) stand in for live sources.",
        "# A url or base_url without a scheme is a path relative to this folder.",
        "",
    ]
    for name in sorted(feed_names):
        is_listing = name.startswith("arxiv_rss")
        source = name.removesuffix(".xml").removeprefix("blog_").split("_")[0] if not is_listing else "arxiv-rss"
        lines += ["[[sources]]", f'name = "{source}"', f'type = "{"arxiv-rss" if is_listing else "feed"}"']
        if is_listing:
            lines += [f'base_url = "{DEMO_FEEDS}/"', f'categories = ["{name}"]', "min_interval_s = 0.0"]
        else:
            lines.append(f'url = "{DEMO_FEEDS}/{name}"')
        lines.append("")
    lines += [
        "# `radar weekly` queues the week's `reproduce` recommendations (each method and settings once) and starts",
        "# a background worker for them; `radar repro list` shows them, the next report their verdicts.",
        "[repro]",
        "weekly_runs = 2",
        "",
    ]
    return "\n".join(lines)


def cmd_demo(args: argparse.Namespace) -> int:
    from radar.app import period_trends  # defers scipy, faiss, bm25s

    # breaks a cycle: app.cli imports every command module (importlib), this one among them
    from radar.app.cli import main as radar_main
    from radar.reports.build import load_report  # defers jinja2 and the report stage (~60 ms at every start)

    data_dir = Path(args.data).resolve() if args.data else DATA_DIR
    snapshot = data_dir / "snapshot.jsonl.gz"
    if not snapshot.is_file():
        raise WorkspaceError(f"bundled snapshot not found at {snapshot}; reinstall research-radar or pass --data DIR")
    parsed = parse_date(args.as_of or DEMO_AS_OF, "--as-of")
    assert parsed is not None
    as_of = parsed.date()
    feeds = sorted((data_dir / "feeds").glob("*.xml"))
    root = resolve_root(args.workspace)
    ws, created = Workspace.init(root, config_text=demo_config([f.name for f in feeds]))
    for feed in feeds:  # the workspace carries its own copy: it can move, the checkout can go
        target = ws.resolve(DEMO_FEEDS) / feed.name
        if not target.is_file() or target.read_bytes() != feed.read_bytes():
            ws.write_bytes_atomic(target, feed.read_bytes())
    radar = Radar(ws)
    base = ["--workspace", str(ws.root)]
    started = time.perf_counter()
    warming = _prepare_query_model(radar)  # on the other core while import, index, tag and trends run
    timings: list[tuple[str, float]] = []

    def step(title: str, argv: list[str]) -> int:
        console.rule(title)
        t0 = time.perf_counter()
        code = radar_main(base + argv)
        timings.append((argv[0], time.perf_counter() - t0))
        return code

    console.rule("[bold]Research Radar demo")
    console.print(f"workspace: {ws.root} ({'new' if created else 'existing'})", markup=False)
    worst = 0
    for title, argv in (
        ("import the bundled snapshot (20k arXiv papers and their prebuilt vectors)", ["import", str(snapshot)]),
        ("ingest the bundled blog and arXiv feeds", ["crawl"]),
        ("embed and index: prebuilt vectors are reused, only new documents are embedded", ["index"]),
        ("tag with the taxonomy (the first run trains on the shipped labels)", ["tag"]),
    ):
        code = step(title, argv)
        worst = max(worst, code)
        if code == 1:
            return code

    period = week_of(as_of - timedelta(days=as_of.isoweekday() % 7))  # the last full week by --as-of
    console.rule(f"trends of {period.label}, the last full week by {as_of} (only what was announced by its end)")
    t0 = time.perf_counter()
    with radar.store() as store:  # computed once and kept: the report and the dashboard read these
        found = period_trends.get(radar, store, period)
    timings.append(("trends", time.perf_counter() - t0))
    print_period(found, 8)

    if warming is not None:
        warming.join(timeout=600)  # the searches below use the model it exported
        if warming.exitcode != 0:  # still running, or failed: the first search exports it (and says why it cannot)
            err_console.print("radar: note: the query model was not exported ahead; the first search exports it")
    for title, argv in (
        (
            'search: "group relative policy optimization variance"',
            ["search", "group relative policy optimization variance", "-k", "5"],
        ),
        (
            "search with a filter: KV cache, published 2025-06 or later",
            ["search", "KV cache memory management for LLM serving", "-k", "5", "--since", "2025-06-01"],
        ),
    ):
        worst = max(worst, step(title, argv))

    code = step(f"weekly report for {period.label}, the last full week by {as_of}", ["report", "--week", period.label])
    worst = max(worst, code)

    with ws.store() as store:
        stats = Documents(store).stats()
        models = Embeddings(store).models()
    app_cfg = radar.settings.with_app(port=args.port).app
    app_argv = base + ["app"] + (["--port", str(args.port)] if args.port else [])
    print_summary(
        stats=stats,
        vectors=sum(models.values()),
        prebuilt=wiring_prebuilt_count(radar),
        story=report_story(load_report(ws.report_dir(period.label))),
        report=ws.report_dir(period.label),
        dashboard=f"radar {' '.join(app_argv)}",
        url=app_cfg.url,
        seconds=time.perf_counter() - started,
        timings=timings,
    )
    if args.no_app:
        return worst
    console.rule("the dashboard (Ctrl-C stops it)")
    return max(worst, radar_main(app_argv))


def _prepare_query_model(radar: Radar) -> BaseProcess | None:
    """A process that exports the embedding model into the model cache for the demo's searches, and saves its
    optimised graph (None when the model is there already): `radar index` reuses the shipped vectors and loads no
    model, so nothing else would until the first query."""
    from radar.index.embedder import model_fingerprint, plan_embedder  # defers the embedding stack
    from radar.index.onnx_export import onnx_file  # defers the index stage to the demo

    plan = plan_embedder(radar.settings.embedding, device="cpu")
    out_dir = radar.ws.model_cache_dir / model_fingerprint(plan.model_dir)
    if plan.backend != "onnx" or onnx_file(out_dir, quantize=plan.int8).is_file():
        return None
    process = get_context("spawn").Process(target=_export_model, args=(plan.model_dir, out_dir, plan.int8), daemon=True)
    process.start()
    return process


def _export_model(model_dir: Path, out_dir: Path, int8: bool) -> None:
    # Ctrl-C at the demo reaches this process too: the demo stops, and its exit ends this one (a daemon), with no
    # traceback from here; a killed export's temp folder is swept by the next export
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from radar.index.onnx_export import export, open_session  # defers torch and onnxruntime

    try:
        open_session(export(model_dir, out_dir, quantize=int8), 1)  # the optimised graph saved for the first query
    except Exception:  # noqa: BLE001 - the demo says so in one line; the first search exports it, or says why not
        raise SystemExit(1) from None


def wiring_prebuilt_count(radar: Radar) -> int:
    from radar.app import wiring  # defers scipy, faiss, bm25s

    return sum(len(p) for p in wiring.prebuilt_vectors(radar))


def report_story(built: BuiltReport | None) -> list[str]:
    """What the demo's report says, in a few lines: its brief and its trends, the same figures (the summary
    repeats the report, it computes nothing of its own)."""
    if built is None:
        return ["no report was written (see the report step above)"]
    c = built.content
    t = c.trends
    lines = [f"{c.period.describe}: {c.headline.documents:,} documents"]
    lines += [f"- {b.text}".replace("`", "") + (f": {b.label}" if b.label else "") for b in c.summary]
    emerging = [f"{e.term} ({e.recent_count} recent)" for e in t.emerging[:4]]
    window = f"{t.start}..{t.as_of}" if t.start else t.as_of
    lines.append(f"emerging over {window}: " + (", ".join(emerging) if emerging else "none passes the bar"))
    for label, named in (("new methods", t.new_methods), ("new models", t.new_models)):
        if named:
            shown = [f"{m.name} (first seen {m.first_seen[:10]})" for m in named[:4]]
            lines.append(f"{label}: " + ", ".join(shown))
    return lines


def print_summary(
    *,
    stats: DocumentStats,
    vectors: int,
    prebuilt: int,
    story: list[str],
    report: Path,
    dashboard: str,
    url: str,
    seconds: float,
    timings: list[tuple[str, float]],
) -> None:
    """One screen: what was imported, the story the trends tell, the report, the dashboard (plain lines:
    paths are never wrapped, so they stay copyable in a terminal and greppable in a pipe)."""
    from radar.reports.build import report_file  # defers jinja2 and the report stage (~60 ms at every start)

    kinds = ", ".join(f"{n:,} {k}s" for k, n in stats.by_kind.items())
    lines = [
        "[bold]What was imported[/bold]",
        f"  {stats.documents:,} documents ({kinds}) from {len(stats.by_source)} sources",
        f"  {vectors:,} vectors indexed; {prebuilt:,} prebuilt vectors came with the snapshot",
        "[bold]What the report says[/bold]",
        *(f"  {line}" for line in story),
        "[bold]The report[/bold]",
        *(f"  {path}" for path in (report_file(report, "html"), report_file(report, "md")) if path.is_file()),
        "[bold]The dashboard[/bold]",
        f"  the dashboard: `{dashboard}`, then open {url}",
        f"demo took {seconds:.0f} s (" + ", ".join(f"{n} {s:.0f} s" for n, s in timings) + ")",
    ]
    console.rule("[bold]Research Radar demo: summary")
    for line in lines:
        bold = line.startswith("[bold]")
        console.print(line.removeprefix("[bold]").removesuffix("[/bold]"), style="bold" if bold else None, markup=False)


def register_more(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("crawl", help="incremental crawl of the configured arXiv queries and feeds")
    p.add_argument("--source", metavar="NAME", help="crawl only this source (a name from radar.toml)")
    add_day(p, "--since", "fetch entries published/updated since this date")
    add_json(p)
    p.set_defaults(func=cmd_crawl)

    p = sub.add_parser("demo", help="the whole product on the bundled snapshot, offline")
    p.add_argument("--data", metavar="DIR", help="folder with snapshot.jsonl.gz and feeds/ (default: bundled)")
    p.add_argument("--no-app", action="store_true", help="stop after the last step instead of serving the dashboard")
    p.add_argument("--port", type=int, metavar="N", help="dashboard port (default 8501)")
    add_day(p, "--as-of", f"the date the demo's trends and report look back from (default {DEMO_AS_OF})")
    p.set_defaults(func=cmd_demo)
