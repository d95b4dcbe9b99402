"""Command: trends (what is rising, falling and new; topics)."""

from __future__ import annotations

import argparse
from typing import Any

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from radar.app.cmd_core import _parse_date, open_radar
from radar.app.output import console, err_console, keep_whole, print_json


def cmd_trends(args: argparse.Namespace) -> int:
    from radar.analysis.trends.config import check_window
    from radar.app import steps

    window = check_window(args.window)
    as_of = _parse_date(args.as_of, "--as-of")
    radar = open_radar(args)
    with Progress(
        TextColumn("counting terms (first run, then cached)"),
        BarColumn(),
        TextColumn("{task.completed:,}/{task.total:,} docs"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    ) as bar:
        task = bar.add_task("terms", total=0)
        result = steps.trends(
            radar,
            as_of=as_of.date() if as_of else None,
            window=window,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )
    if args.json:
        print_json(result.as_dict())
    else:
        _print(result.as_dict(), args.limit)
    return 0


def _table(title: str, columns: list[str], rows: list[list[Any]]) -> Table:
    table = Table(title=title, title_justify="left", show_lines=False)
    for col in columns:
        numeric = col in {"score", "recent", "docs", "growth"}
        table.add_column(col, overflow="fold", justify="right" if numeric else "left")
    for row in rows:
        table.add_row(*[Text(str(v)) for v in row])  # Text: feed content is never read as markup
    return keep_whole(table, rows, {"tag", "id", "first seen", "first paper", "burst since", "direction"})


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}%"


def _why(e: dict[str, Any]) -> str:
    """Which rule listed a term (short: the JSON has baseline_end and family): rise, continuing (against the
    months before its burst), launch (a model family's), fall, or the successor that replaced a family."""
    if e.get("successor"):
        return f"-> {e['successor']}"
    return {"continuing rise": "continuing", "family launch": "launch"}.get(e.get("rule") or "", e.get("rule") or "")


def _print(r: dict[str, Any], limit: int) -> None:
    rec = r["recent"]
    console.print(
        Text(
            f"trends as of {r['as_of']} ({r['window']}): recent {rec['start']}..{rec['end']} "
            f"({rec['documents']:,} documents) against {r['baseline']['start']}..{r['baseline']['end']}"
        )
    )
    for key, title in (("emerging", "Emerging terms"), ("declining", "Declining terms")):
        rows = [
            [
                e["term"] + (f" (= {', '.join(e['aliases'][:2])})" if e["aliases"] else ""),
                f"{e['score']:.1f}",
                e["recent_count"],
                f"{_pct(e['baseline_share'])} -> {_pct(e['recent_share'])}",
                e["first_seen"],
                e["burst"]["since"] or "-",
                _why(e),
            ]
            for e in r[key][:limit]
        ]
        console.print(
            _table(
                title,
                ["term", "score", "recent", "share (baseline -> recent)", "first seen", "burst since", "why"],
                rows,
            )
            if rows
            else Text(f"{title}: none")
        )
    rows = [
        [m["name"], m.get("kind") or "-", m["first_seen"], m["first_id"], m["count"], m["recent_count"]]
        + [f"{m['growth']:.1f}x"]
        for m in r["new_methods"][:limit]
    ]
    console.print(
        _table("New names", ["name", "kind", "first seen", "first paper", "docs", "recent", "growth"], rows)
        if rows
        else Text("New names: none")
    )
    rows = [[t["id"], t["label"], t["size"], t["recent_size"], f"{t['growth']:.2f}x"] for t in r["topics"][:limit]]
    console.print(
        _table("Topics", ["id", "label", "docs", "recent", "growth"], rows)
        if rows
        else Text(f"Topics: none ({r.get('topics_note') or 'no clusters'})")
    )
    rows = [
        [
            t["tag"],
            t["direction"],
            f"{t['z']:+.1f}",
            t["recent_count"],
            f"{_pct(t['baseline_share'])} -> {_pct(t['recent_share'])}",
        ]
        for t in r["tag_trends"]
    ]
    console.print(
        _table(
            "Tags (rising or falling: |z| at or above the Bonferroni bound, see --help)",
            ["tag", "direction", "z", "recent", "share (baseline -> recent)"],
            rows,
        )
        if rows
        else Text("Tags: none yet (run `radar tag`)")
    )


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "trends",
        help="what is rising and falling, new methods and topics",
        description="Emerging/declining terms: a stratified test of the recent window against its baseline "
        "(z >= [trends] min_z and a rate-ratio bound >= min_ratio); a rise that began one or two months ago is "
        "also tested against the months before it began ([trends] rise_periods), a model family's versions count "
        "together (a launch; [trends] families), and a family falling while a higher version rises is declining "
        "with its successor named. New names carry their kind (method, model, benchmark, ...). "
        "Tags: a tag is rising or falling when its "
        "share of documents changes significantly, |z| >= the two-sided Bonferroni bound at [trends] tag_alpha "
        "(0.05) over the taxonomy's tags, and flat otherwise; the report and the dashboard use the same rule.",
    )
    p.add_argument(
        "--as-of",
        metavar="YYYY-MM-DD",
        help="use only documents published on or before this day "
        "(default: the newest day whose past week holds at least half the usual weekly volume)",
    )
    p.add_argument("--window", default="week", metavar="week|month", help="recent window compared to its baseline")
    p.add_argument("--limit", type=int, default=15, metavar="N", help="rows per table (default 15)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_trends)
