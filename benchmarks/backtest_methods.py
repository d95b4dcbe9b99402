"""Weeks-to-flag backtest: how soon after a method is introduced does the radar flag it, and do the methods
it flags become baselines?

    python benchmarks/backtest_methods.py [--workspace /tmp/bt-ws] [--replay replay.json]
                                          [--from 2024-07-01] [--to 2025-12-31] [--threshold 5]

Reuses backtest_trends.py's workspace (the full corpus, imported once). Definitions:
- Introduced method: a name of the corpus (analysis/names: evidence and kind classifier, as `radar methods`)
  of kind ``method`` or ``system`` with an introducing paper (``find.introducing``: the earliest paper whose
  title starts with it or whose abstract says "we propose X") published between --from and --to, and no
  mention more than a week before that paper (an acronym in use before, such as DAG or PAC, was not
  introduced there); introduction date = that paper's publication day.
- Flagged: listed in ``new_methods`` of ``compute_trends(window="month")`` as of a Sunday (the weekly
  report's call: every Sunday from the introduction on, documents up to that day only), or listed as an
  emerging term (its name or an alias) in the month-end replay of backtest_trends.py (``--replay``, the
  JSON its ``--save`` writes; without it only new_methods counts). First flag = the earliest such day.
- Weeks to flag = (first flag - introduction) / 7, rounded up (0: flagged in the week of its introduction).
- Became a baseline: at least N (2, 3, 5) documents compare against it ("outperforms X", "than X", ...:
  the names code's baseline mentions) in the 26 weeks after its first flag (for unflagged methods, after
  its introduction; the base rate the flagged share is compared with). Methods introduced so late that
  the 26 weeks run past the corpus's end are left out of that column.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backtest_trends import CORPUS, console, setup  # same folder
from bench_trends import show

from radar.analysis.names.aliases import surface_key
from radar.analysis.names.evidence import collect
from radar.analysis.names.find import classify, introducing
from radar.analysis.trends.cache import term_table
from radar.analysis.trends.config import TrendsConfig, series_starts, windows
from radar.analysis.trends.methods import first_seen_names
from radar.analysis.trends.term_table import day_number
from radar.crawler.documents import Documents

KINDS = ("method", "system")
FOLLOW_WEEKS = 26


def introduced(ws: Any, first: str, last: str) -> tuple[list[dict[str, Any]], str]:
    """The introduced methods (see the module docstring) and the corpus's last day."""
    started = time.perf_counter()
    with ws.store() as store:
        corpus = collect(Documents(store).scan())
    kinds = classify(corpus)
    out = []
    for key, ev in corpus.names.items():
        kind = kinds[key][0]
        intro = introducing(ev)  # the product's introducing paper (find.introducing)
        if kind not in KINDS or intro is None or not first <= corpus.dates[intro] <= last:
            continue
        if corpus.dates[ev.docs[0]] < (date.fromisoformat(corpus.dates[intro]) - timedelta(days=7)).isoformat():
            continue  # in use before the paper that "introduces" it
        spellings = {ev.name, *ev.spellings, *ev.variants}
        out.append(
            {
                "name": ev.name,
                "kind": kind,
                "keys": sorted({surface_key(s) for s in spellings}),
                "introduced": corpus.dates[intro],
                "introduced_by": corpus.ids[intro],
                "compared": sorted(corpus.dates[i] for i in ev.compared_docs),
                "documents": ev.n_docs,
            }
        )
    console.print(
        f"names: {len(corpus.names):,} in {len(corpus.ids):,} documents; {len(out)} {'/'.join(KINDS)} names "
        f"introduced {first} .. {last} ({time.perf_counter() - started:.0f} s)"
    )
    return out, corpus.dates[-1]


def weekly_new_methods(ws: Any, first: date, last: date) -> dict[str, list[str]]:
    """Sunday (ISO date) -> surface keys of the names first seen by that day (``first_seen_names``, the plain
    new-names list; month window)."""
    cfg = TrendsConfig()
    out = {}
    with ws.store() as store:
        table = term_table(ws.term_cache_path, store)
    day = first + timedelta(days=(6 - first.weekday()) % 7)
    while day <= last:
        table.stratify(cfg.major_categories, table.rows_until(day_number(day.isoformat())))
        win = windows(day, "month", cfg)
        listed = first_seen_names(table, win, cfg, "month", series_starts(day, "month", cfg))
        out[day.isoformat()] = [surface_key(m.name) for m in listed]
        day += timedelta(days=7)
    return out


def emerging_months(path: Path | None) -> dict[str, list[str]]:
    """Month-end (ISO date) -> surface keys of the emerging terms (and aliases) of the radar detector."""
    if path is None:
        return {}
    replay = orjson.loads(path.read_bytes())["radar"]
    return {
        r["as_of"]: [surface_key(t) for e in r["emerging"] for t in [e["term"], *e["aliases"]]] for r in replay.values()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--workspace", type=Path, default=Path("/tmp/bt-ws"))
    parser.add_argument("--replay", type=Path, help="backtest_trends.py --save output (emerging terms per month)")
    parser.add_argument("--from", dest="first", default="2024-07-01")
    parser.add_argument("--to", dest="last", default="2025-12-31")
    parser.add_argument("--cache", type=Path, help="keep the introduced names here (JSON) for a rerun")
    args = parser.parse_args()
    ws = setup(args.workspace.resolve(), args.corpus)
    if args.cache and args.cache.exists():
        methods, corpus_end = orjson.loads(args.cache.read_bytes())
    else:
        methods, corpus_end = introduced(ws, args.first, "9999")
        if args.cache:
            args.cache.write_bytes(orjson.dumps([methods, corpus_end]))
    started = time.perf_counter()
    weekly = weekly_new_methods(ws, date.fromisoformat(args.first), date.fromisoformat(corpus_end))
    console.print(f"new_methods as of {len(weekly)} Sundays ({time.perf_counter() - started:.0f} s)")
    methods = [m for m in methods if m["introduced"] <= args.last]
    flags = sorted([(d, k, "new method") for d, keys in weekly.items() for k in keys])
    flags += sorted([(d, k, "emerging") for d, keys in emerging_months(args.replay).items() for k in keys])
    first_flag: dict[str, tuple[str, str]] = {}
    for day, key, how in sorted(flags):
        first_flag.setdefault(key, (day, how))
    end = date.fromisoformat(corpus_end)
    thresholds = (2, 3, 5)
    rows, weeks = [], []
    became = {t: [0, 0] for t in thresholds}  # threshold -> [flagged that became baselines, followed]
    became_unflagged = {t: [0, 0] for t in thresholds}
    for m in methods:
        # a flag before the introducing paper (the name was in use before it) counts as week 0
        flag = min((first_flag[k] for k in m["keys"] if k in first_flag), default=None)
        start = max(date.fromisoformat(flag[0] if flag else m["introduced"]), date.fromisoformat(m["introduced"]))
        if start + timedelta(weeks=FOLLOW_WEEKS) <= end:
            upto = (start + timedelta(weeks=FOLLOW_WEEKS)).isoformat()
            mentions = sum(start.isoformat() <= d <= upto for d in m["compared"])
            for t in thresholds:
                tally = became if flag else became_unflagged
                tally[t][0] += mentions >= t
                tally[t][1] += 1
        if flag:
            lag = max(0, -(-(date.fromisoformat(flag[0]) - date.fromisoformat(m["introduced"])).days // 7))
            weeks.append(lag)
            rows.append(
                [
                    m["name"],
                    m["kind"],
                    m["introduced"],
                    flag[0],
                    flag[1],
                    str(lag),
                    str(m["documents"]),
                    str(len(m["compared"])),
                ]
            )
    n = len(methods)
    w = np.array(weeks) if weeks else np.zeros(0)
    show(
        f"Introduced methods ({'/'.join(KINDS)} with an introducing paper, {args.first} .. {args.last}) and the radar",
        ["measure", "value"],
        [
            ["introduced methods", str(n)],
            ["flagged (new_methods weekly or emerging monthly)", f"{len(weeks)} ({len(weeks) / max(n, 1):.0%})"],
            [
                "weeks to first flag: median [p25, p75]",
                f"{np.median(w):.0f} [{np.percentile(w, 25):.0f}, {np.percentile(w, 75):.0f}]" if len(w) else "-",
            ],
            ["flagged within 4 / 8 / 13 weeks", " / ".join(f"{int((w <= k).sum())}" for k in (4, 8, 13))],
            *[
                [
                    f"became baselines (>= {t} baseline mentions in the {FOLLOW_WEEKS} weeks after the first flag / "
                    "the introduction): flagged | unflagged",
                    f"{became[t][0]}/{became[t][1]} ({became[t][0] / max(became[t][1], 1):.0%}) | "
                    f"{became_unflagged[t][0]}/{became_unflagged[t][1]} "
                    f"({became_unflagged[t][0] / max(became_unflagged[t][1], 1):.1%})",
                ]
                for t in thresholds
            ],
        ],
    )
    rows.sort(key=lambda r: (-int(r[7]), -int(r[6]), r[0]))
    show(
        "Flagged methods, most used as a baseline first (top 25)",
        ["name", "kind", "introduced", "first flagged", "as", "weeks", "documents", "baseline mentions (all)"],
        rows[:25],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
