"""Weekly report benchmark: one week's report from a ~100k-document workspace, against a plain
baseline measured in the same run.

    .venv/bin/python benchmarks/bench_report.py [--workspace /tmp/radar-bench-report] [--repeat 3]

The scratch workspace (outside the repository) is built once from ../shared/data: the full arXiv
corpus and the systems extra (~95k papers) plus the bundled feeds' posts. Tags: when nothing is
tagged yet, a keyword rule over the taxonomy's names stands in for the tagger (timing only; the
report reads document_tags whoever wrote them). Embeddings are not needed for the report.

Rows:
- radar: the report step, app.steps.report (store range queries, ranking with TF-IDF novelty against the trailing
  weeks, summaries, recommendations, Markdown + HTML + JSON written), trends given.
- trends: app.steps.report_trends for the same week (computed, then read back from the workspace);
  its first call in a workspace builds its term table and topic caches, later calls reuse them.
- `radar report` CLI: the whole command in a fresh process (imports, trends, report), as cron runs it.
- plain baseline: a naive full-table scan: read every document and every tag row, filter the week
  in Python, count per tag, render an unranked list with the same templates (no ranking, no trends).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from radar.analysis.trends.result import PeriodTrends
from radar.app import period_trends, steps
from radar.app.context import Radar
from radar.crawler.documents import Documents
from radar.crawler.snapshot import import_snapshot
from radar.index.tags_table import Tags
from radar.reports.period import Period, latest_data_week, parse_week
from radar.reports.render import render
from radar.store import Store, Workspace
from radar.store.models import utc_now

SHARED = ROOT.parent / "shared" / "data"
CORPORA = [SHARED / "arxiv_corpus_full.jsonl.gz", SHARED / "arxiv_systems_extra.jsonl.gz"]
RULES = {
    "rl-policy-optimization": r"\bGRPO\b|\bPPO\b|policy optimization|RLVR|verifiable reward",
    "preference-optimization": r"\bDPO\b|preference optimization",
    "reward-modeling": r"reward model|\bPRM\b|LLM-as-a-judge",
    "accelerator-hardware": r"\bFPGA\b|\bASIC\b|accelerator|processing-in-memory",
    "kernels-compilers": r"\bCUDA\b|\bTriton\b|kernel fusion|compiler",
    "distributed-training": r"pipeline parallel|tensor parallel|distributed training",
    "inference-serving": r"KV cache|speculative decoding|LLM serving|inference latency",
    "model-compression": r"quantiz|pruning|low-bit",
    "llm-reasoning": r"chain-of-thought|test-time scaling|reasoning",
    "graphics-xr": r"Gaussian splatting|\bNeRF\b|rendering",
}


def build_workspace(root: Path, console: Console) -> Workspace:
    if (root / "radar.toml").exists():
        return Workspace.open(root)
    from radar.app.cmd_core import DATA_DIR, demo_config

    ws, _ = Workspace.init(root, config_text=demo_config(DATA_DIR))
    with ws.store() as store:
        for path in CORPORA:
            t = time.perf_counter()
            res = import_snapshot(store, path)
            console.print(f"imported {path.name}: {res.counts.added:,} in {time.perf_counter() - t:.1f} s")
    subprocess.run(
        [sys.executable, "-m", "radar.app.cli", "--workspace", str(root), "crawl"],
        cwd=ROOT,
        check=False,
        capture_output=True,
    )
    return ws


def keyword_tags(store: Store, console: Console) -> None:
    if Tags(store).known():
        return
    t = time.perf_counter()
    pats = {tag: re.compile(p, re.I) for tag, p in RULES.items()}
    rows = [
        (d.id, tag, utc_now())
        for d in Documents(store).scan()
        for tag, pat in pats.items()
        if pat.search(d.title) or pat.search(d.abstract)
    ]
    with store.transaction() as conn:
        conn.executemany(
            "INSERT OR IGNORE INTO document_tags (doc_id, tag, score, origin, created_at) "
            "VALUES (?, ?, 1.0, 'rule', ?)",
            rows,
        )
    console.print(f"keyword tags (bench stand-in): {len(rows):,} rows in {time.perf_counter() - t:.1f} s")


def plain_report(store: Store, period: Period) -> str:
    """The naive way: scan everything, filter and count in Python, render an unranked list."""
    docs = [d for d in Documents(store).scan() if period.since <= d.published <= period.until]
    ids = {d.id for d in docs}
    counts: Counter[str] = Counter(
        tag for doc_id, tag in store.conn.execute("SELECT doc_id, tag FROM document_tags") if doc_id in ids
    )
    papers = [
        {
            "id": d.id,
            "title": d.title,
            "url": d.url,
            "published": d.published,
            "kind": d.kind,
            "source": d.source,
            "tags": [],
            "score": 0.0,
            "relevance": 0.0,
            "novelty": 0.0,
            "recency": 0.0,
            "why": [],
            "summary": d.abstract[:300],
        }
        for d in docs
        if d.kind == "paper"
    ]
    content = {
        "title": "plain",
        "period": {
            "label": period.label,
            "start": str(period.start),
            "end": str(period.end),
            "describe": period.describe(),
        },
        "generated_at": utc_now(),
        "headline": {
            "documents": len(docs),
            "papers": len(papers),
            "posts": len(docs) - len(papers),
            "trailing_weeks": 0,
            "trailing_mean": 0,
            "change_pct": None,
            "tagged": 0,
            "groups": [],
            "series": [{"period": period.label, "count": len(docs)}],
        },
        "tag_volume": [
            {
                "tag": t,
                "group": "",
                "count": c,
                "trailing_mean": 0,
                "change_pct": None,
                "series": [{"period": period.label, "count": c}],
            }
            for t, c in sorted(counts.items())
        ],
        "trends": {"as_of": "", "emerging": [], "declining": [], "new_methods": [], "topics": []},
        "top_overall": papers[:5],
        "top_papers": [],
        "posts": [],
        "posts_total": 0,
        "recommendations": [],
        "runs": [],
        "notes": {"profile": "", "summaries": "", "tags": "", "ranking": "", "off_profile": ""},
    }
    return render(content, "html") + render(content, "md")


def timed(fn, repeat: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workspace", type=Path, default=Path("/tmp/radar-bench-report"))
    ap.add_argument("--week", action="append", help="ISO week(s) to report (default: 2025-W20 and the latest)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    console = Console(width=150)
    ws = build_workspace(args.workspace, console)
    radar = Radar(ws)
    table = Table(title="weekly report, one week", title_justify="left")
    for col in ("week", "what", "documents in workspace", "documents in week", "seconds (median)", "vs plain"):
        table.add_column(col, justify="right" if col != "what" else "left")
    with ws.store() as store:
        keyword_tags(store, console)
        total = Documents(store).count()
        weeks = [parse_week(w) for w in args.week] if args.week else [parse_week("2025-W20"), latest_data_week(store)]
        steps.report(radar, weeks[0], trends_result=(PeriodTrends.empty(weeks[0].label), ""))  # warm imports
        for period in weeks:
            plain_s, _ = timed(lambda p=period: plain_report(store, p), args.repeat)
            first_s, _ = timed(lambda p=period: period_trends.get(radar, store, p, refresh=True), 1)
            trends_s, found = timed(lambda p=period: steps.report_trends(radar, store, p), 1)
            note = found[1]
            radar_s, built = timed(lambda p=period, t=found: steps.report(radar, p, trends_result=t), args.repeat)
            n = built.content.headline.documents
            t = time.perf_counter()
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "radar.app.cli",
                    "--workspace",
                    str(ws.root),
                    "report",
                    "--week",
                    period.label,
                    "--json",
                ],
                cwd=ROOT,
                capture_output=True,
                text=True,
            )
            cli_s = time.perf_counter() - t
            assert proc.returncode == 0, proc.stderr
            rows = [
                ("plain: full scan, unranked, same templates", plain_s),
                ("radar report step (trends given)", radar_s),
                (f"trends, first call: {note or 'app.steps.report_trends'}", first_s),
                ("trends, again (the period's trends kept in the workspace)", trends_s),
                ("`radar report --week` CLI, fresh process", cli_s),
            ]
            for what, secs in rows:
                table.add_row(period.label, what, f"{total:,}", f"{n:,}", f"{secs:.2f}", f"{secs / plain_s:.2f}x")
    console.print(table)


if __name__ == "__main__":
    main()
