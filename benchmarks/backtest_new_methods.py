"""Backtest of the trends' new methods at month-ends on the full corpus: the method cards' list (what `radar trends`
lists now) beside the names first seen in several papers it replaces.

    python benchmarks/backtest_new_methods.py [--workspace /tmp/bt-ws] [--from 2024-09] [--to 2026-06] [--top 10]

The workspace is backtest_trends.py's (the full corpus imported once, which also decides every paper's contribution;
rule tags from the taxonomy's keywords). For each month end M, documents up to M only, the month window as the
report reads it:
- before: ``first_seen_names`` (a name first seen within 120 days of M in at least 3 documents: the list before);
- after: ``introduced_names`` over the method cards of the papers of the 120 days up to M (analysis/trends/methods.py;
  the cards exactly as the composition root hands them in: app.wiring.introductions).
Printed: the first ``--top`` names of each list per month end; for the names of both lists that the shared labels
know (names_dev*.jsonl: kind; names_dev3: ``lead_should_see`` for names the old list showed), how many of the first
``--top`` are labeled method/system and how many a lead should see; and the first month end listing DAPO, GSPO,
Dr. GRPO and CISPO (the issue: the old list never showed them).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgspec
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backtest_trends import CORPUS, console, month_ends, setup  # same folder
from rich.table import Table

from radar.analysis.names.aliases import surface_key
from radar.analysis.trends.cache import term_table
from radar.analysis.trends.config import series_starts, windows
from radar.analysis.trends.methods import first_seen_names, introduced_names, introduction_span
from radar.analysis.trends.term_table import day_number
from radar.app import wiring
from radar.app.context import Radar

LABELS = ROOT.parent / "shared" / "labels"
CASES = ("DAPO", "GSPO", "Dr. GRPO", "CISPO")


def labels() -> dict[str, dict[str, Any]]:
    """Labeled names by spelling key (names_dev*.jsonl; dev3 carries lead_should_see)."""
    out: dict[str, dict[str, Any]] = {}
    for name in ("names_dev.jsonl", "names_dev2.jsonl", "names_dev3.jsonl"):
        path = LABELS / name
        if path.is_file():
            for line in path.read_bytes().splitlines():
                if line.strip():
                    row = orjson.loads(line)
                    out.setdefault(surface_key(row["name"]), {}).update(row)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", type=Path, default=Path("/tmp/bt-ws"))
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--from", dest="first", default="2024-09")
    ap.add_argument("--to", dest="last", default="2026-06")
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    ws = setup(args.workspace, args.corpus)
    radar = Radar(ws)
    known = labels()
    lists: dict[str, dict[str, list[dict[str, Any]]]] = {"before": {}, "after": {}}
    with ws.store() as store:
        env = wiring.trends_env(radar, store)
        cfg = env.config
        started = time.perf_counter()
        from radar.app import steps_contributions

        steps_contributions.refresh(radar, store)
        console.print(f"contributions up to date in {time.perf_counter() - started:.1f} s")
        table = term_table(env.term_cache, store)
        for as_of in month_ends(args.first, args.last):
            win = windows(as_of, "month", cfg)
            table.stratify(cfg.major_categories, table.rows_until(day_number(as_of.isoformat())))
            starts = series_starts(as_of, "month", cfg)
            t0 = time.perf_counter()
            before = first_seen_names(table, win, replace(cfg, min_method_count=3), "month", starts)
            t1 = time.perf_counter()
            span = introduction_span(table, win, cfg)
            assert env.introductions is not None
            cards = env.introductions(span[0].isoformat(), span[1].isoformat()) if span else []
            after = introduced_names(table, win, cfg, "month", starts, cards)
            t2 = time.perf_counter()
            month = as_of.isoformat()[:7]
            lists["before"][month], lists["after"][month] = msgspec.to_builtins(before), msgspec.to_builtins(after)
            console.print(
                f"{month}: before {len(before)} names ({t1 - t0:.2f} s), after {len(after)} of {len(cards)} cards "
                f"({t2 - t1:.2f} s)",
                style="dim",
            )
    for who in ("before", "after"):
        out = Table(title=f"new methods at month ends, {who}: the first {args.top}", show_lines=False)
        out.add_column("month")
        out.add_column("first names (papers by the month end)")
        for month, items in lists[who].items():
            out.add_row(month, ", ".join(f"{m['name']} ({m['count']})" for m in items[: args.top]))
        console.print(out)
    summary = Table(title=f"labeled names among the first {args.top} at {len(lists['after'])} month ends")
    for col in ("list", "names shown", "labeled", "labeled method/system", "labeled lead_should_see (dev3)"):
        summary.add_column(col, justify="left" if col == "list" else "right")
    for who, by_month in lists.items():
        shown = [m["name"] for items in by_month.values() for m in items[: args.top]]
        lab = [known[surface_key(n)] for n in shown if surface_key(n) in known]
        methods = sum(r.get("kind") in ("method", "system") for r in lab)
        lead = [r for r in lab if "lead_should_see" in r]
        summary.add_row(
            who, str(len(shown)), str(len(lab)), f"{methods}", f"{sum(r['lead_should_see'] for r in lead)}/{len(lead)}"
        )
    console.print(summary)
    cases = Table(title="first month end listing each case (any position; its rank there)")
    for col in ("case", "before", "after"):
        cases.add_column(col)
    for case in CASES:
        row = [case]
        for who in ("before", "after"):
            hit = next(
                (
                    f"{month} (#{i + 1} of {len(items)})"
                    for month, items in lists[who].items()
                    for i, m in enumerate(items)
                    if surface_key(m["name"]) == surface_key(case)
                ),
                "never",
            )
            row.append(hit)
        cases.add_row(*row)
    console.print(cases)


if __name__ == "__main__":
    main()
