"""Dashboard speed: every page rendered through streamlit.testing.v1.AppTest on a ~95k-document
workspace, cached (the product) vs the same page with every cache off (the baseline), one run.

    .venv/bin/python benchmarks/bench_dashboard.py [--workspace /tmp/radar-bench-dash] [--reruns 5]
                                                   [--demo demo-workspace] [--only demo|large|all]

Demo table (first): every page on a copy of the demo workspace as `radar demo` leaves it, with the week's trends
kept by the demo (pages read them, never compute them); the goal is a first load under 5 s. Beside it, the time
the Overview spent computing the trends on open before (period_trends.compute on the same week).

Workspaces (built outside the repository, reused when present):
- large: the full shared arXiv corpus (93,357 papers) plus the cs.DC extra (1,482): ~95k documents,
  no embeddings. Tags for load only: a paper gets a taxonomy tag when one of the tag's keywords
  is in its title (this measures the pages, not the tagger). The trends term cache is built once
  before timing, as `radar trends`/`radar weekly` leave it; one weekly report is generated.
- search: a copy of /work/main/demo-workspace (20k snapshot papers + posts, 20.6k vectors) for the
  Explore page with a query (FAISS + BM25 + the query embedder).

Columns: first load = a new server process's first view of the page (every cache empty: opens the
store, computes the aggregates, loads the searcher); new session = another user's first view once
caches are warm; rerun = the same session again (median of --reruns); no-cache rerun = the same
rerun with RADAR_DASHBOARD_NO_CACHE=1 (a plain Streamlit page doing its queries every time).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import streamlit as st
from rich.console import Console
from rich.table import Table
from streamlit.testing.v1 import AppTest

from radar.app.cli import main as radar
from radar.app.dashboard.data import NO_CACHE_ENV
from radar.crawler.documents import Documents
from radar.index.tags_table import Tags
from radar.store import Workspace
from radar.store.models import utc_now

SHARED = ROOT.parent / "shared" / "data"
CORPORA = [SHARED / "arxiv_corpus_full.jsonl.gz", SHARED / "arxiv_systems_extra.jsonl.gz"]
DEMO = ROOT / "demo-workspace"
PAGES = ROOT / "app" / "dashboard"
QUERY = "sequence-level importance ratio for mixture-of-experts RL"
console = Console(width=150)


def build_large(root: Path) -> Workspace:
    if not (root / "radar.toml").exists():
        assert radar(["--workspace", str(root), "init"]) == 0
        for corpus in CORPORA:
            assert radar(["--workspace", str(root), "import", str(corpus)]) in (0, 2)
    ws = Workspace.open(root)
    with ws.store() as store:
        if not Tags(store).known():
            _load_tags(store)
    return ws


def _load_tags(store) -> None:  # type: ignore[no-untyped-def]
    """Tags for load only (keyword in the title); see the module docstring."""
    taxonomy = tomllib.loads((ROOT / "analysis" / "tags" / "taxonomy.toml").read_text())
    rules = [(t["name"], [k.lower().rstrip("*") for k in t.get("keywords", [])]) for t in taxonomy.get("tag", [])]
    rows = []
    for doc in Documents(store).scan():
        title = doc.title.lower()
        rows += [(doc.id, name, 1.0, "rule", utc_now()) for name, words in rules if any(w in title for w in words)]
    with store.transaction() as conn:
        conn.executemany(
            "INSERT OR IGNORE INTO document_tags (doc_id, tag, score, origin, created_at) VALUES (?, ?, ?, ?, ?)", rows
        )
    console.print(f"load tags: {len(rows):,} rows")


def prepare_large(ws: Workspace) -> None:
    """What the weekly flow leaves behind: the trends term cache and one report. The warm-up is `radar trends
    --window week` (app.steps.trends: the contributions brought up to date first, then the trends)."""
    from datetime import date

    from radar.app import steps
    from radar.app.context import Radar

    with ws.store() as store:
        last = date.fromisoformat(Documents(store).published_range().last[:10])
        started = time.perf_counter()
        steps.trends(Radar(ws), store, as_of=last, window="week")
        console.print(f"trends warm-up (term cache; reused later): {time.perf_counter() - started:.1f} s")
    if not any(ws.reports_dir.glob("????-W??")):
        from radar.app.dashboard.page_reports import generate
        from radar.reports.period import latest_data_week

        with ws.store() as store:
            week = latest_data_week(store).label
        generate(ws, week)


def copy_demo(root: Path, source: Path = DEMO) -> Workspace:
    """Files copied, the database through SQLite's backup API (the demo workspace may be in use)."""
    import sqlite3

    if not (root / "radar.toml").exists():
        shutil.copytree(source, root, ignore=shutil.ignore_patterns("locks", "radar.db*"))
        src = sqlite3.connect(f"file:{source / 'radar.db'}?mode=ro", uri=True)
        dst = sqlite3.connect(root / "radar.db")
        with dst:
            src.backup(dst)
        src.close()
        dst.close()
    return Workspace.open(root)


def clear_caches() -> None:
    st.cache_data.clear()
    st.cache_resource.clear()


def timed(fn: Callable[[], AppTest]) -> tuple[float, AppTest]:
    started = time.perf_counter()
    at = fn()
    return time.perf_counter() - started, at


def check(at: AppTest, label: str) -> None:
    if at.exception:
        raise SystemExit(f"{label}: the page raised: {at.exception[0].value}")
    if at.error:  # e.g. the workspace not found: the page would be timed on its error line
        raise SystemExit(f"{label}: the page shows an error: {at.error[0].value}")


def measure(ws: Workspace, page: str, reruns: int, query: str = "") -> dict[str, float]:
    """First load (cold), new session (warm), rerun (median), no-cache rerun (median)."""
    os.environ["RADAR_HOME"] = str(ws.root)
    script = str(PAGES / f"page_{page}.py")

    def session() -> AppTest:
        at = AppTest.from_file(script, default_timeout=900).run()
        check(at, page)
        if query:
            at.text_input(key="ex_query").input(query).run()
        return at

    os.environ.pop(NO_CACHE_ENV, None)
    clear_caches()
    first, at = timed(session)
    check(at, page)
    fresh, at = timed(session)
    warm = [timed(at.run)[0] for _ in range(reruns)]
    os.environ[NO_CACHE_ENV] = "1"
    try:
        at = session()
        plain = [timed(at.run)[0] for _ in range(reruns)]
        check(at, page)
    finally:
        os.environ.pop(NO_CACHE_ENV, None)
    return {"first": first, "fresh": fresh, "rerun": statistics.median(warm), "plain": statistics.median(plain)}


DEMO_PAGES = ("overview", "methods", "explore", "reports", "repro", "people", "settings")


def bench_demo(demo: Path, base: Path, reruns: int) -> None:
    """Every page on a copy of the demo workspace as `radar demo` leaves it (its week's trends kept by the demo),
    first load under 5 s; beside it what the Overview's first load cost when it computed the trends on open."""
    from radar.app import period_trends
    from radar.app.context import Radar
    from radar.app.dashboard.period import default_label
    from radar.reports.period import parse_week

    ws = copy_demo(base / "demo", demo)
    radar_ = Radar(ws)
    with ws.store() as store:
        docs = Documents(store).count()
        label = default_label(str(ws.root), "")
        started = time.perf_counter()
        period_trends.compute(radar_, store, parse_week(label))  # term table built, topics' seeds cached
        compute_s = time.perf_counter() - started
    table = Table(title=f"dashboard pages on the demo workspace ({docs:,} documents, week {label}), seconds")
    for col in ("page", "first load", "new session", "rerun", "no-cache rerun", "first load < 5 s"):
        table.add_column(col, justify="left" if col == "page" else "right")
    results = []
    for page, query in [(p, "") for p in DEMO_PAGES] + [("explore", QUERY)]:
        r = measure(ws, page, reruns, query)
        label_ = page + (" + search" if query else "")
        results.append({"page": label_, **{k: round(v, 3) for k, v in r.items()}})
        table.add_row(
            label_, f"{r['first']:.2f}", f"{r['fresh']:.2f}", f"{r['rerun']:.3f}", f"{r['plain']:.3f}",
            "yes" if r["first"] < 5 else "NO",
        )  # fmt: skip
        console.print(f"  measured {page}", style="dim")
    table.add_row("overview, trends computed on open (before)", f"{compute_s:.2f} + page", "", "", "", "")
    console.print(table)
    (base / "bench_dashboard_demo.json").write_text(json.dumps({"pages": results, "compute_on_open_s": compute_s}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", default="/tmp/radar-bench-dash", help="folder for the scratch workspaces")
    parser.add_argument("--reruns", type=int, default=5)
    parser.add_argument("--demo", type=Path, default=DEMO, help="the demo workspace to copy (`radar demo` makes one)")
    parser.add_argument("--only", choices=("demo", "large", "all"), default="all")
    args = parser.parse_args()
    sys.argv = sys.argv[:1]  # the pages read --workspace from sys.argv (as `radar app` passes it): not ours
    base = Path(args.workspace)
    if args.only in ("demo", "all") and args.demo.exists():
        bench_demo(args.demo, base, args.reruns)
    if args.only == "demo":
        return
    started = time.perf_counter()
    large = build_large(base / "large")
    prepare_large(large)
    search = copy_demo(base / "search") if DEMO.exists() else None
    with large.store() as store:
        n_docs, n_tags = Documents(store).count(), len(Tags(store).known())
    console.print(
        f"large workspace: {n_docs:,} documents, {n_tags} tags (set-up {time.perf_counter() - started:.0f} s)"
    )

    cases = [(large, p, "") for p in ("overview", "explore", "reports", "repro", "settings")]
    if search is not None:
        cases.append((search, "explore", QUERY))
    table = Table(title="dashboard pages, seconds per render (AppTest, this machine)", title_justify="left")
    for col in ("page", "workspace", "first load", "new session", "rerun", "no-cache rerun", "no-cache / rerun"):
        table.add_column(col, justify="left" if col in ("page", "workspace") else "right")
    results = []
    for ws, page, query in cases:
        with ws.store() as store:
            docs = Documents(store).count()
        label = page + (" + search" if query else "")
        r = measure(ws, page, args.reruns, query)
        results.append({"page": label, "documents": docs, **{k: round(v, 3) for k, v in r.items()}})
        table.add_row(
            label,
            f"{docs:,} docs",
            f"{r['first']:.2f}",
            f"{r['fresh']:.2f}",
            f"{r['rerun']:.3f}",
            f"{r['plain']:.3f}",
            f"{r['plain'] / r['rerun']:.1f}x",
        )
        console.print(f"  measured {label}", style="dim")
    console.print(table)
    slow = [r["page"] for r in results if r["rerun"] >= 2.0 or r["fresh"] >= 2.0]
    console.print(
        "every page renders in under 2 s after the first load"
        if not slow
        else f"over 2 s after the first load: {', '.join(slow)}"
    )
    out = base / "bench_dashboard.json"
    out.write_text(json.dumps(results, indent=1))
    console.print(f"results: {out}")


if __name__ == "__main__":
    main()
