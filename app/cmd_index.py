"""Commands: index, search, similar."""

from __future__ import annotations

import argparse

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from radar.app.cmd_core import _parse_date, open_workspace
from radar.app.output import console, err_console, print_json


def cmd_index(args: argparse.Namespace) -> int:
    from radar.index.embedder import make_embedder
    from radar.index.pipeline import embedding_config, local_batches, model_cache_dir, run_index, search_config

    ws = open_workspace(args)
    cfg, scfg = embedding_config(ws), search_config(ws)
    with ws.lock("index"), ws.store() as store:
        embedder = make_embedder(cfg, device=args.device, cache_dir=model_cache_dir(ws))
        if args.engine == "ray":
            from radar.index.ray_engine import ray_batches

            batches = ray_batches(cfg, device=embedder.device, cache_dir=model_cache_dir(ws))
        else:
            batches = local_batches(embedder)
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

            report = run_index(
                ws,
                store,
                model_id=embedder.model_id,
                dim=embedder.dim,
                batches=batches,
                search_cfg=scfg,
                progress=progress,
            )
    if args.json:
        print_json({**report.as_dict(), "device": embedder.device, "engine": args.engine})
    else:
        console.print(
            f"indexed: {report.embedded:,} embedded ({report.docs_per_s:,.0f} docs/s on {embedder.device}, "
            f"{args.engine}), {report.vectors:,} vectors ({report.kind}), keyword index "
            f"{'rebuilt' if report.keyword_rebuilt else 'current'}; model {report.model_id}"
        )
    return 0


def _open_searcher(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from radar.index.embedder import make_embedder
    from radar.index.pipeline import (
        embedding_config,
        load_keyword,
        load_vectors,
        model_cache_dir,
        search_config,
        stored_model,
    )
    from radar.index.search import Searcher

    ws = open_workspace(args)
    cfg, scfg = embedding_config(ws), search_config(ws)
    store = ws.store()
    try:
        # queries are embedded like the stored vectors: same model and windowing, and the precision
        # the index was built with (int8 on a CPU, float on a GPU machine)
        _, precision = stored_model(ws, store)
    except BaseException:
        store.close()
        raise
    embedder = make_embedder(cfg, device="cpu", cache_dir=model_cache_dir(ws), precision=precision)
    vectors, _ = load_vectors(ws, store, embedder.model_id, embedder.dim, scfg)
    keyword, _ = load_keyword(ws, store)
    return Searcher(store, embedder, vectors, keyword, scfg)


def _filters(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from radar.index.search import Filters

    since, until = _parse_date(args.since, "--since"), _parse_date(args.until, "--until")
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
        print_json([h.as_dict() for h in hits])
        return
    if not hits:
        console.print("no results")
        return
    table = Table(show_lines=False)
    for col in ("#", "id", "published", "title", "tags", "score"):
        table.add_column(col, overflow="fold")
    for rank, h in enumerate(hits, 1):
        table.add_row(str(rank), h.id, h.published[:10], h.title, ", ".join(h.tags), f"{h.score:.4f}")
    console.print(table)


def _run_query(args: argparse.Namespace, query: str) -> int:
    searcher = _open_searcher(args)
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


def _add_filters(p: argparse.ArgumentParser) -> None:
    p.add_argument("-k", type=int, default=10, help="number of results (default 10)")
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
