"""Commands: index, search, similar (``radar.app.steps`` is imported per command: see cmd_tag)."""

from __future__ import annotations

import argparse
import re

import msgspec
from rich import box
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from radar.app.cli_helpers import open_radar, parse_date
from radar.app.output import console, err_console, print_json, title_line

MAX_K = 1000
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def cmd_index(args: argparse.Namespace) -> int:
    from radar.app import steps  # defers scipy, faiss, bm25s

    radar = open_radar(args)
    with Progress(
        TextColumn("embedding"),
        BarColumn(),
        TextColumn("{task.completed:,}/{task.total:,} docs"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        disable=args.json,
    ) as bar:
        task = bar.add_task("embed", total=0, rate="")

        def progress(done: int, total: int) -> None:
            elapsed = bar.tasks[task].elapsed or 0.0
            rate = f"{done / elapsed:,.0f} docs/s" if elapsed and done else ""
            bar.update(task, completed=done, total=total, rate=rate)

        run = steps.index(radar, device=args.device, engine=args.engine, progress=progress)
    report = run.report
    if args.json:
        from radar.index.pipeline import IndexReportJson  # defers numpy, faiss

        print_json({**msgspec.to_builtins(IndexReportJson.of(report)), "device": run.device, "engine": args.engine})
    else:
        console.print(
            f"indexed: {report.embedded:,} embedded ({report.docs_per_s:,.0f} docs/s on {run.device}, "
            f"{args.engine}), "
            + (f"{report.reused:,} reused from prebuilt vectors, " if report.reused else "")
            + f"{report.vectors:,} vectors ({report.kind}), keyword index "
            f"{'rebuilt' if report.keyword_rebuilt else 'current'}; model {report.model_id}"
        )
    return 0


def _filters(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from radar.index.search import Filters  # defers faiss

    since, until = parse_date(args.since, "--since"), parse_date(args.until, "--until")
    return Filters(
        since=since.strftime("%Y-%m-%d") if since else "",
        until=until.strftime("%Y-%m-%d") if until else "",
        tags=tuple(args.tag or ()),
        sources=tuple(args.source or ()),
        categories=tuple(args.category or ()),
        kinds=tuple(args.kind or ()),
    )


def _print_hits(hits: list, as_json: bool) -> None:  # type: ignore[type-arg]
    if as_json:
        from radar.index.search import HitJson  # defers faiss

        print_json(msgspec.to_builtins(HitJson.of(hits)))
        return
    if not hits:
        console.print("no results")
        return
    # ids, dates and scores are never squeezed; under 110 columns the tags go under the title (dimmed)
    from rich.text import Text

    narrow = console.width < 110
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("id", overflow="fold", min_width=min(max(len(h.id) for h in hits), 22), max_width=22)
    table.add_column("published", no_wrap=True, min_width=10)
    table.add_column("title / tags" if narrow else "title", overflow="fold", min_width=16)
    if not narrow:
        table.add_column("tags", overflow="fold", min_width=max((len(t) for h in hits for t in h.tags), default=4))
    table.add_column("score", justify="right", no_wrap=True)
    for rank, h in enumerate(hits, 1):
        title = Text(title_line(h.title))  # one clipped line: a NUL or escape code in stored text is shown escaped
        tags = ", ".join(h.tags)
        if narrow and tags:
            title.append("\n" + tags, style="dim")
        cells = [str(rank), _CONTROL.sub(" ", h.id), h.published[:10], title]
        table.add_row(*cells, *([] if narrow else ["\n".join(h.tags)]), f"{h.score:.4f}")
    console.print(table)


def _run_query(args: argparse.Namespace, query: str) -> int:
    from radar.app.wiring_search import open_searcher  # defers faiss, onnxruntime (and not the rest of wiring)

    searcher = open_searcher(open_radar(args))
    try:
        run = searcher.search if query == "search" else searcher.similar
        hits = run(args.query if query == "search" else args.id, k=args.k, filters=_filters(args))
    finally:
        searcher.store.close()
    _print_hits(hits, args.json)
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    return _run_query(args, "search")


def cmd_similar(args: argparse.Namespace) -> int:
    return _run_query(args, "similar")


def _count(value: str) -> int:
    """-k: a whole number 1..1000 (argparse turns the ValueError into one usage line)."""
    k = int(value)
    if not 1 <= k <= MAX_K:
        raise ValueError(value)
    return k


_count.__name__ = "number 1..1000 for"  # argparse says "invalid number 1..1000 for value: '-3'"


def _add_filters(p: argparse.ArgumentParser) -> None:
    p.add_argument("-k", type=_count, default=10, help="number of results, 1..1000 (default 10)")
    p.add_argument("--since", metavar="YYYY-MM-DD", help="published on or after")
    p.add_argument("--until", metavar="YYYY-MM-DD", help="published on or before")
    p.add_argument("--tag", action="append", metavar="TAG", help="only documents with this tag (repeatable: any)")
    p.add_argument("--source", action="append", metavar="NAME", help="only this source (repeatable)")
    p.add_argument("--category", action="append", metavar="CAT", help="only this arXiv category, e.g. cs.DC")
    p.add_argument("--kind", action="append", choices=["paper", "post"], help="papers or posts")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("index", help="embed new and changed documents; update vector and keyword indexes")
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"], help="where to embed")
    p.add_argument("--engine", default="local", choices=["local", "ray"], help="local process or Ray Data")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="hybrid (semantic + keyword) search")
    p.add_argument("query", help="what to look for, in words")
    _add_filters(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("similar", help="documents most similar to one document")
    p.add_argument("id", help="a document id, e.g. 2503.14476")
    _add_filters(p)
    p.set_defaults(func=cmd_similar)
