"""Command: methods (named things of the corpus with their kind, introducing paper, code and adoption)."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table
from rich.text import Text

from radar.app.cmd_core import _parse_date, open_workspace
from radar.app.output import console, err_console, keep_whole, print_json
from radar.store.names import NameRow


def _json(row: NameRow) -> dict[str, Any]:
    return {
        "name": row.name,
        "kind": row.kind,
        "kind_score": round(row.kind_score, 3),
        "aliases": list(row.aliases),
        "introduced_by": row.introduced_by,
        "first_seen": row.first_seen,
        "first_id": row.first_id,
        "count": row.count,
        "recent_count": row.recent_count,
        "baseline_mentions": row.baseline_mentions,
        "recent_baseline_mentions": row.recent_baseline_mentions,
        "code": list(row.code),
    }


def cmd_methods(args: argparse.Namespace) -> int:
    from radar.analysis.names import KINDS, NamesError
    from radar.app.steps import stored_names

    if args.kind and args.kind not in KINDS:
        raise NamesError(f"--kind {args.kind!r} is not a kind; use one of {', '.join(KINDS)}")
    since = _parse_date(args.since, "--since")
    as_of = _parse_date(args.as_of, "--as-of")
    ws = open_workspace(args)
    with ws.store() as store:
        with err_console.status("finding names (first run after new documents)", spinner="dots"):
            stored_names(store, as_of.date().isoformat() if as_of else "")
        rows = store.names(kind=args.kind or "", since=since.date().isoformat() if since else "")
    if args.json:
        print_json([_json(r) for r in rows])
        return 0
    if not rows:
        console.print(Text("no names found (import papers with `radar import FILE`, or widen --kind/--since)"))
        return 0
    table = Table(title=f"Names ({len(rows):,}; showing {min(len(rows), args.limit)})", title_justify="left")
    for col in ("name", "kind", "first seen", "introduced by", "docs", "recent", "as baseline", "code"):
        table.add_column(col, overflow="fold", justify="right" if col in {"docs", "recent", "as baseline"} else "left")
    shown_rows = []
    for r in rows[: args.limit]:
        shown = r.name + (f" (= {', '.join(r.aliases[:2])})" if r.aliases else "")
        cells = [shown, r.kind, r.first_seen, r.introduced_by or "-", r.count, r.recent_count, r.baseline_mentions]
        table.add_row(*[Text(str(v)) for v in cells], Text(r.code[0] if r.code else "-"))
        shown_rows.append(cells)
    console.print(keep_whole(table, shown_rows, {"kind", "first seen", "introduced by"}, cap=12))  # arXiv ids whole
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "methods",
        help="named things (methods, models, benchmarks, systems, ...) with their kind and adoption",
        description="Names found in the stored titles and abstracts, with their kind (method, model, benchmark, "
        "system, hardware, metric, org, generic) decided from corpus evidence, the paper that introduced them, "
        "its code links, and how many papers compare against them (used as a baseline). Works without "
        "embeddings; recomputed when documents change.",
    )
    p.add_argument("--kind", metavar="KIND", help="only this kind (method, model, benchmark, system, ...)")
    p.add_argument("--since", metavar="YYYY-MM-DD", help="only names first seen on or after this day")
    p.add_argument("--as-of", metavar="YYYY-MM-DD", help="use only documents published on or before this day")
    p.add_argument("--limit", type=int, default=30, metavar="N", help="rows of the table (default 30; not --json)")
    p.add_argument("--json", action="store_true", help="print one JSON document (a list of names)")
    p.set_defaults(func=cmd_methods)
