"""Command: trends (what is rising, falling and new; topics)."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec
from msgspec import UNSET
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from radar.analysis.trends.config import check_window
from radar.analysis.trends.result import Burst, PeriodTrends, TermTrend, TrendsResult, share_change
from radar.app.cli_helpers import add_command, add_day, add_json, add_limit, add_week, open_radar, parse_date
from radar.app.output import console, err_console, keep_whole, print_json
from radar.reports.period import resolve_period
from radar.store import ConfigError


def cmd_trends(args: argparse.Namespace) -> int:
    from radar.app import steps  # defers scipy, faiss, bm25s

    if args.week:
        return _period(args)
    window = check_window(args.window)
    as_of = parse_date(args.as_of, "--as-of")
    radar = open_radar(args)
    with _bar() as bar:
        task = bar.add_task("terms", total=0)
        result = steps.trends(
            radar,
            as_of=as_of.date() if as_of else None,
            window=window,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )
    if args.json:
        print_json(msgspec.to_builtins(result))
    else:
        _print(result, args.limit)
    return 0


def _bar() -> Progress:
    return Progress(
        TextColumn("counting terms (first run, then cached)"),
        BarColumn(),
        TextColumn("{task.completed:,}/{task.total:,} docs"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    )


def _period(args: argparse.Namespace) -> int:
    """`radar trends --week W`: the period's trends as the report and the dashboard show them (app.period_trends:
    the workspace's cached copy when the store has not changed since, else computed and cached)."""
    from radar.app import period_trends  # defers scipy, faiss, bm25s

    if args.as_of or args.window != "week":
        raise ConfigError("--week chooses the period itself; leave out --as-of and --window (or drop --week)")
    radar = open_radar(args)
    with radar.store() as store, _bar() as bar:
        period = resolve_period(store, week=args.week)
        task = bar.add_task("terms", total=0)
        found = period_trends.get(
            radar, store, period, progress=lambda done, total: bar.update(task, completed=done, total=total)
        )
    if args.json:
        print_json(msgspec.to_builtins(found))
    else:
        print_period(found, args.limit)
    return 0


def print_period(found: PeriodTrends, limit: int) -> None:
    """The tags' change in share for the period, then its terms, new names and topics."""
    tags = found.tags
    docs = tags.recent.documents if tags.recent and tags.recent.documents is not UNSET else 0
    against = f"{tags.baseline.start}..{tags.baseline.end}" if tags.baseline else "?"
    console.print(
        Text(f"{found.label} ({found.start}..{found.end}): tags' share of the {docs:,} documents against {against}")
    )
    _print_tags(tags)
    if found.terms.recent:
        _print(found.terms, limit, tags_too=False)
    else:
        console.print(Text("Terms, new names and topics: not available"))


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


def _why(e: TermTrend) -> str:
    """Which rule listed a term (short: the JSON has baseline_end and family): rise, continuing (against the
    months before its burst), launch (a model family's), fall, or the successor that replaced a family."""
    if e.successor:
        return f"-> {e.successor}"
    return {"continuing rise": "continuing", "family launch": "launch"}.get(e.rule or "", e.rule or "")


def _print(r: TrendsResult, limit: int, *, tags_too: bool = True) -> None:
    rec, base = r.recent, r.baseline
    assert rec is not None and base is not None  # a result with terms has its windows
    console.print(
        Text(
            f"trends as of {r.as_of} ({r.window}): recent {rec.start}..{rec.end} "
            f"({rec.documents:,} documents) against {base.start}..{base.end}"
        )
    )
    for terms, title in ((r.emerging, "Emerging terms"), (r.declining, "Declining terms")):
        rows: list[list[object]] = [
            [
                e.term + (f" (= {', '.join(e.aliases[:2])})" if e.aliases else ""),
                f"{e.score:.1f}",
                e.recent_count,
                f"{_pct(e.baseline_share)} -> {_pct(e.recent_share)}",
                e.first_seen,
                (e.burst.since if isinstance(e.burst, Burst) else None) or "-",
                _why(e),
            ]
            for e in terms[:limit]
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
        [m.name, m.kind or "-", m.first_seen, m.first_id, m.count, m.recent_count] + [f"{m.growth:.1f}x"]
        for m in r.new_methods[:limit]
    ]
    console.print(
        _table(
            "New methods (introduced by a paper of the last months)",
            ["name", "kind", "introduced", "its paper", "docs", "recent", "growth"],
            rows,
        )
        if rows
        else Text("New methods: none")
    )
    rows = [[t.id, t.label, t.size, t.recent_size, f"{t.growth:.2f}x"] for t in r.topics[:limit]]
    console.print(
        _table("Topics", ["id", "label", "docs", "recent", "growth"], rows)
        if rows
        else Text(f"Topics: none ({r.topics_note or 'no clusters'})")
    )
    if tags_too:
        _print_tags(r)


def _print_tags(r: TrendsResult) -> None:
    """Tags and groups: count and change in share, in the words of the report and the dashboard."""
    for key, title, found in (("tag_trends", "Tags", r.tag_trends), ("group_trends", "Tag groups", r.group_trends)):
        rows = [[t.tag, t.recent_count, share_change(t)] for t in found]
        if not rows and key == "group_trends":
            continue
        console.print(
            _table(
                f"{title} (change in share: rising or falling at |z| >= the Bonferroni bound, see --help)",
                ["tag" if key == "tag_trends" else "group", "recent", "change in share"],
                rows,
            )
            if rows
            else Text("Tags: none yet (run `radar tag`)")
        )


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "trends",
        cmd_trends,
        help="what is rising and falling, new methods and topics",
        description="Emerging/declining terms: a stratified test of the recent window against its baseline "
        "(z >= [trends] min_z and a rate-ratio bound >= min_ratio); a rise that began one or two months ago is "
        "also tested against the months before it began ([trends] rise_periods), a model family's versions count "
        "together (a launch; [trends] families), and a family falling while a higher version rises is declining "
        "with its successor named. New methods: what papers of the last [trends] new_method_days introduce (their "
        "method cards: methods, systems, hardware in the lab's areas), most-named first. "
        "Tags: a tag is rising or falling when its "
        "share of documents changes significantly, |z| >= the two-sided Bonferroni bound at [trends] tag_alpha "
        "(0.05) over the taxonomy's tags, and flat otherwise; the report and the dashboard use the same rule.",
    )
    add_day(
        p,
        "--as-of",
        "use only documents published on or before this day "
        "(default: the newest day whose past week holds at least half the usual weekly volume)",
    )
    p.add_argument("--window", default="week", metavar="week|month", help="recent window compared to its baseline")
    add_week(
        p,
        metavar="YYYY-Www|last|latest",
        help="one report period: its tags' change in share (the week against the 8 before) and the terms, new "
        "names and topics of the month up to its last day, as `radar report --week` and the dashboard show them",
    )
    add_limit(p, 15, "rows per table (default 15)")
    add_json(p)
