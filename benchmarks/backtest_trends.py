"""Backtest of `radar trends`: replay the full shared corpus month by month with --as-of.

    python benchmarks/backtest_trends.py [--corpus ../shared/data/arxiv_corpus_full.jsonl.gz]
                                         [--workspace /tmp/bt-ws] [--from 2024-07] [--to 2026-06]

For each month end M, ``compute_trends(as_of=M, window="month")`` sees only documents published on
or before M. Two detectors run on the same data in the same process:
  radar  - the shipped method (strata = source x primary category x major cross-lists);
  naive  - the same test, thresholds and filters on raw shares (one stratum), as a plain baseline.

Reported:
1. Known emergences: for each case, the month its documents took off in the data (first month with
   >= 5 documents and >= 3x the mean of the 6 months before, counted across all sources), the first
   month it was flagged as an emerging term (its term or an alias), its rank then, and the first
   month it was listed as a new method. Cases are chosen from the data (names and phrases whose
   monthly counts rise from ~0); the method has no list of them.
2. Source-mix artefacts: the corpus changes sources on 2025-03-18 (a second source starts, adding
   cs.CV/cs.AI listings, and the first one widens its queries) and 2025-10-11 (the first source
   stops, cs.LG leaves). Only the most common primary category (cs.CL) is covered throughout by
   every source. A flagged term is an artefact when, among documents of that core category, compared
   within each source present in both windows, its rate did not rise 1.5x: its pooled rise comes
   from what was crawled, not from what was written. (A real rise confined to a category whose
   coverage changed cannot be confirmed in this corpus and counts as an artefact too.) Counted for
   the change months and over all months, for both detectors.
3. Three more kinds of case (issue 15's misses), chosen from the data by the rules below, before the detector
   was changed, and split by a hash of the case's label into a dev half (looked at while fixing) and a
   held-out half (scored only at the end); cs.CL is the category every source covers throughout, so the
   rules read its series (mix-free) where a share is compared:
   - continuing rise: a name (acronym, named system) or one of the known-emergence phrases above that took
     off (rule 1, on cs.CL documents, >= 4 documents) in 2024-08 .. 2026-04 and whose cs.CL share did not
     fall in either of the two months after (>= 10 cs.CL documents in the second); found when flagged
     emerging in both months after take-off;
   - family launch: a model family (analysis/trends/family.py: Qwen3 = Qwen3, Qwen3-VL, Qwen3-Coder ...)
     that took off (>= 8 documents, >= 3x the 6 months before, <= 3 documents in those 6 months) in
     2024-08 .. 2026-05 with >= 2 cs.CL documents in its take-off month; found when flagged emerging in
     that month or the next;
   - successor decline: a family X with >= 40 documents in the 6 months before a successor Y (same stem,
     higher version) took off (>= 8 documents, >= 3x), whose cs.CL share in the 3 months after fell to
     <= 0.6x its share in those 6 months (the first such Y per X); found when X is flagged declining
     within Y's take-off month and the 4 after.
   Detectors: radar (now), radar-before (rise_periods = 1, families off: the detector before this change)
   and naive; the flagged totals of all three are the false-alarm proxy.
4. Tags: the workspace has no trained tagger here (embedding 93k documents takes ~30 min at 50
   docs/s), so tags are the default taxonomy's keywords applied as rule tags (origin "rule": the
   tagger's weak labels). Tag directions at the change months for both detectors, and artefacts as above.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import time
import tomllib
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import orjson
from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_trends import show  # same folder

from radar.analysis.trends.cache import term_table
from radar.analysis.trends.compute import TrendsEnv, compute_trends
from radar.analysis.trends.config import (
    TrendsConfig,
    months_back,
)
from radar.analysis.trends.family import families, successor_of
from radar.analysis.trends.term_table import TermTable, day_date, day_number
from radar.analysis.trends.terms import NAME_PREFIX
from radar.app import steps_contributions, wiring
from radar.app.context import Radar
from radar.crawler.documents import Documents
from radar.index.tags_table import Tags
from radar.store import Workspace
from radar.store.db import Store

CORPUS = ROOT.parent / "shared" / "data" / "arxiv_corpus_full.jsonl.gz"
CHANGE_MONTHS = ("2025-03", "2025-04", "2025-10", "2025-11")
# (label, term keys that count as the case: lowercase n-grams, or "@" + a method name as written)
CASES = [
    ("DeepSeek-R1", ["deepseek r1", "@DeepSeek-R1"]),
    ("test-time scaling", ["test time scaling"]),
    ("GRPO", ["grpo", "@GRPO", "group relative policy optimization"]),
    ("overthinking", ["overthinking"]),
    ("RLVR", ["rlvr", "@RLVR", "verifiable reward"]),
    ("MCP", ["mcp", "@MCP", "model context protocol"]),
    ("Qwen3", ["qwen3", "@Qwen3"]),
    ("DAPO", ["dapo", "@DAPO"]),
    ("deep research", ["deep research"]),
    ("GPT-5", ["@GPT-5"]),
    ("vision-language-action (VLA)", ["@VLA", "vla", "vision language action"]),
    ("diffusion language model", ["diffusion language model", "@dLLM", "dllm"]),
]
console = Console(highlight=False, width=170)


def refreshed_env(ws: Workspace, store: Store) -> TrendsEnv:
    """The trends stage's inputs as app wires them (app/steps.py ``trends``): the contributions its new methods
    read brought up to date first (trends only read them)."""
    radar = Radar(ws)
    steps_contributions.refresh(radar, store)
    return wiring.trends_env(radar, store)


def norm(text: str) -> str:
    return re.sub(r"[-_\s]+", " ", text.lower()).strip()


def month_ends(first: str, last: str) -> list[date]:
    out, y, m = [], int(first[:4]), int(first[5:])
    while f"{y}-{m:02d}" <= last:
        nxt = date(y + (m == 12), m % 12 + 1, 1)
        out.append(nxt - timedelta(days=1))
        y, m = nxt.year, nxt.month
    return out


def setup(ws_root: Path, corpus: Path) -> Workspace:
    from radar.app.cli import main as radar

    if not (ws_root / "radar.toml").exists():
        Workspace.init(ws_root)
    ws = Workspace.open(ws_root)
    with ws.store() as store:
        empty = Documents(store).count() == 0
    if empty:
        t = time.perf_counter()
        radar(["--workspace", str(ws_root), "import", str(corpus)])
        console.print(f"imported {corpus.name} in {time.perf_counter() - t:.1f} s")
    with ws.store() as store:
        if not Tags(store).known():
            _keyword_tags(store)
    return ws


def _keyword_tags(store: Store) -> None:
    """Rule tags from the default taxonomy's keywords (whole words, '*' = any ending, case-insensitive)."""
    taxonomy = tomllib.loads((ROOT / "analysis" / "tags" / "taxonomy.toml").read_text(encoding="utf-8"))
    patterns = {}
    for tag in taxonomy["tag"]:
        parts = [re.escape(k.rstrip("*")) + (r"\w*" if k.endswith("*") else "") for k in tag["keywords"]]
        patterns[tag["name"]] = re.compile(r"(?<!\w)(?:" + "|".join(parts) + r")(?!\w)", re.IGNORECASE)
    rows = []
    for row in Documents(store).text_rows(""):
        text = f"{row.title}. {row.abstract}"
        rows.extend((row.doc_id, name) for name, pat in patterns.items() if pat.search(text))
    with store.transaction() as conn:
        conn.executemany(
            "INSERT OR IGNORE INTO document_tags (doc_id, tag, score, origin, created_at) "
            "VALUES (?, ?, 1.0, 'rule', '2026-01-01T00:00:00Z')",
            rows,
        )
    console.print(f"keyword tags: {len(rows):,} (document, tag) pairs from {len(patterns)} taxonomy tags")


def onset_month(table: TermTable, keys: list[str], months: list[str]) -> tuple[str | None, dict[str, int]]:
    """First month with >= 5 documents and >= 3x the mean of the 6 months before (any of the keys)."""
    cols = [c for key in keys if (c := table.column(key)) is not None]
    if not cols:
        return None, {}
    rows = np.unique(table.matrix[:, cols].nonzero()[0])
    labels = [day_date(int(d)).strftime("%Y-%m") for d in table.day[rows]]
    counts = {m: 0 for m in months}
    for lab in labels:
        if lab in counts:
            counts[lab] += 1
    series = [counts[m] for m in months]
    for i, (m, c) in enumerate(zip(months, series, strict=True)):
        before = series[max(0, i - 6) : i]
        if c >= 5 and c >= 3 * (sum(before) / max(len(before), 1)) and i >= 1:
            return m, counts
    return None, counts


def core_category(table: TermTable) -> str:
    """The primary category with the most documents: the part of the corpus every source covers."""
    counts: dict[str, int] = {}
    for gid, n in enumerate(np.bincount(table.group, minlength=len(table.groups))):
        primary = table.groups[gid].split("\t")[1]
        counts[primary] = counts.get(primary, 0) + int(n)
    return max(counts, key=counts.__getitem__)


def core_ratio(
    table: TermTable,
    cols: list[int],
    core: str,
    as_of: date,
    recent_start: date,
    baseline_start: date,
    baseline_end: date | None = None,
) -> float:
    """The term's rate ratio among documents of the core primary category only, compared within
    each source present in both windows (>= 50 documents each). The baseline ends the day before
    ``baseline_end`` (default: before the recent window: a continuing rise names its own)."""
    source_of = np.array([g.split("\t")[0] if g.split("\t")[1] == core else "" for g in table.groups])[table.group]
    r0, r1 = table.row_range(day_number(recent_start.isoformat()), day_number(as_of.isoformat()))
    b0 = table.row_range(day_number(baseline_start.isoformat()), 0)[0]
    b1 = table.row_range(day_number(baseline_end.isoformat()), 0)[0] if baseline_end else r0
    src_r, src_b = source_of[r0:r1], source_of[b0:b1]
    has_r = np.asarray(table.matrix[r0:r1][:, cols].sum(axis=1)).ravel() > 0
    has_b = np.asarray(table.matrix[b0:b1][:, cols].sum(axis=1)).ravel() > 0
    observed = expected = 0.0
    for src in set(src_r) & set(src_b) - {""}:
        n, m = float((src_r == src).sum()), float((src_b == src).sum())
        if n >= 50 and m >= 50:
            observed += has_r[src_r == src].sum()
            expected += n * has_b[src_b == src].sum() / m
    return (observed + 0.5) / (expected + 0.5)


def columns_of(table: TermTable, item: dict[str, Any]) -> list[int]:
    return [c for key in item["keys"] if (c := table.column(key)) is not None]


def run(ws: Workspace, ends: list[date], naive: bool = True, **thresholds: float) -> dict[str, Any]:
    detectors = {
        "radar": TrendsConfig(**thresholds),
        "radar-before": TrendsConfig(rise_periods=1, families=False, **thresholds),
    }
    if naive:
        detectors["naive"] = TrendsConfig(stratify=False, **thresholds)
    out: dict[str, Any] = {name: {} for name in detectors}
    with ws.store() as store:
        t = time.perf_counter()
        env = refreshed_env(ws, store)  # once: the replay reads the workspace, it adds nothing
        console.print(f"contributions up to date ({time.perf_counter() - t:.1f} s)")
        t = time.perf_counter()
        table = term_table(ws.term_cache_path, store)
        console.print(
            f"term table: {table.matrix.shape[0]:,} documents x {table.matrix.shape[1]:,} terms "
            f"({time.perf_counter() - t:.1f} s)"
        )
        for as_of in ends:
            for name, cfg in detectors.items():
                t = time.perf_counter()
                result = msgspec.to_builtins(
                    compute_trends(store, env, as_of=as_of, window="month", cfg=cfg, topics=False)
                )
                result["seconds"] = time.perf_counter() - t
                out[name][as_of.strftime("%Y-%m")] = result
            r = out["radar"][as_of.strftime("%Y-%m")]
            console.print(
                f"{as_of}: {len(r['emerging'])} emerging, {len(r['new_methods'])} new methods "
                f"({r['seconds']:.1f} s); top: {', '.join(e['term'] for e in r['emerging'][:5])}"
            )
    return out


def report_cases(table: TermTable, results: dict[str, Any], months: list[str]) -> list[list[str]]:
    rows = []
    for label, keys in CASES:
        wanted = {norm(k.lstrip("@")) for k in keys}
        onset, _counts = onset_month(table, keys, months)
        flagged = rank = method = None
        for m in months:
            r = results["radar"].get(m)
            if r is None:
                continue
            if flagged is None:
                for i, e in enumerate(r["emerging"], 1):
                    if wanted & {norm(x) for x in [e["term"], *e["aliases"]]}:
                        flagged, rank = m, i
                        break
            if method is None and any(norm(x["name"]) in wanted for x in r["new_methods"]):
                method = m
        lead = ""
        if onset and flagged:
            diff = (int(flagged[:4]) * 12 + int(flagged[5:])) - (int(onset[:4]) * 12 + int(onset[5:]))
            lead = f"{diff:+d}"
        rows.append([label, onset or "-", flagged or "not flagged", str(rank or "-"), lead, method or "-"])
    return rows


def report_artefacts(table: TermTable, results: dict[str, Any], months: list[str]) -> tuple[list, dict]:
    rows, totals = [], {name: [0, 0] for name in results}
    core = core_category(table)
    for m in months:
        for name in results:
            r = results[name].get(m)
            if r is None:
                continue
            as_of = date.fromisoformat(r["as_of"])
            recent_start = date.fromisoformat(r["recent"]["start"])
            baseline_start = months_back(recent_start, TrendsConfig().baseline_months)
            artefacts = []
            for e in r["emerging"]:
                cols = columns_of(table, e)
                # the baseline the term was compared with: a continuing rise's ends where its burst began
                end = date.fromisoformat(e["baseline_end"]) + timedelta(days=1) if "baseline_end" in e else None
                start = months_back(end, TrendsConfig().baseline_months) if end else baseline_start
                if cols and core_ratio(table, cols, core, as_of, recent_start, start, end) < 1.5:
                    artefacts.append(e["term"])
            totals[name][0] += len(r["emerging"])
            totals[name][1] += len(artefacts)
            if m in CHANGE_MONTHS:
                rows.append([m, name, str(len(r["emerging"])), str(len(artefacts)), ", ".join(artefacts[:6]) or "-"])
    return rows, totals


def report_tags(results: dict[str, Any]) -> list[list[str]]:
    rows = []
    for m in CHANGE_MONTHS:
        for name in results:
            r = results[name].get(m)
            if r is None:
                continue
            moved = [
                f"{t['tag']} {'up' if t['direction'] == 'rising' else 'down'} ({t['ratio']:.2f}x)"
                for t in r["tag_trends"]
                if t["direction"] != "flat"
            ]
            rows.append([m, name, ", ".join(moved) or "none"])
    return rows


# -- issue 15's kinds of case: chosen from the data by rule, split dev / held-out by a hash of the label ----------
def split_of(label: str) -> str:
    return "dev" if hashlib.blake2b(label.encode(), digest_size=1).digest()[0] % 2 == 0 else "held-out"


class MonthSeries:
    """Documents per month (all sources, and cs.CL only) of any column set, from the term table."""

    def __init__(self, table: TermTable, months: list[str]) -> None:
        self.table, self.months = table, months
        label = np.array([day_date(int(d)).strftime("%Y-%m") for d in table.day])
        index = {m: i for i, m in enumerate(months)}
        self.month = np.array([index.get(x, -1) for x in label])
        core = core_category(table)
        self.core = np.array([g.split("\t")[1] == core for g in table.groups])[table.group]
        inside = self.month >= 0
        self.docs = np.bincount(self.month[inside], minlength=len(months)).astype(float)
        self.core_docs = np.bincount(self.month[inside & self.core], minlength=len(months)).astype(float)

    def of(self, cols: list[int]) -> tuple[np.ndarray, np.ndarray]:
        rows = np.unique(self.table.matrix[:, cols].nonzero()[0]) if cols else np.zeros(0, np.int64)
        rows = rows[self.month[rows] >= 0]
        n = len(self.months)
        return (
            np.bincount(self.month[rows], minlength=n).astype(float),
            np.bincount(self.month[rows[self.core[rows]]], minlength=n).astype(float),
        )


def took_off(series: np.ndarray, least: float) -> int | None:
    for i in range(1, len(series)):
        before = series[max(0, i - 6) : i]
        if series[i] >= least and series[i] >= 3 * before.mean():
            return i
    return None


def name_families(table: TermTable) -> dict[str, np.ndarray]:
    starts = table.vocab.offsets[:-1]
    cols = np.flatnonzero(table.vocab.offsets[1:] > starts)
    cols = cols[table.vocab.blob[starts[cols]] == ord(NAME_PREFIX)]
    df = np.bincount(table.matrix.indices, minlength=table.matrix.shape[1])
    return families(table, cols[df[cols] >= 2])


def new_cases(table: TermTable, months: list[str]) -> list[dict[str, Any]]:
    """Continuing rises, family launches and successor declines by the rules of the module docstring."""
    ms = MonthSeries(table, months)
    lo, hi = months.index("2024-08") if "2024-08" in months else 1, len(months) - 1
    cases: list[dict[str, Any]] = []
    # continuing rises: names with >= 30 documents, and the phrases of CASES
    df = np.bincount(table.matrix.indices, minlength=table.matrix.shape[1])
    starts = table.vocab.offsets[:-1]
    names = np.flatnonzero((df >= 30) & (table.vocab.offsets[1:] > starts))
    names = names[table.vocab.blob[starts[names]] == ord(NAME_PREFIX)]
    pool = [(table.readable(int(c)), [int(c)]) for c in names]
    pool += [
        (label, cols) for label, keys in CASES if (cols := [c for k in keys if (c := table.column(k)) is not None])
    ]
    found = []
    for label, cols in pool:
        _, core = ms.of(cols)
        i = took_off(core, 4)
        if i is None or not lo <= i <= hi - 2:
            continue
        share = core / np.maximum(ms.core_docs, 1)
        if share[i + 1] >= share[i] and share[i + 2] >= share[i + 1] and core[i + 2] >= 10:
            found.append((float(core[i : i + 3].sum()), label, i))
    seen: set[str] = set()
    for _, label, i in sorted(found, reverse=True):
        if norm(label) in seen:
            continue
        seen.add(norm(label))
        cases.append({"kind": "continuing rise", "label": label, "month": months[i], "watch": months[i + 1 : i + 3]})
    # family launches and successor declines
    fams = name_families(table)
    series = {k: ms.of(cols.tolist()) for k, cols in fams.items() if df[cols].sum() >= 20}
    onset: dict[str, int] = {}
    for key, (full, core) in series.items():
        i = took_off(full, 8)
        if i is None or not lo <= i <= hi:
            continue
        onset[key] = i
        if full[max(0, i - 6) : i].sum() <= 3 and core[i] >= 2:
            cases.append({"kind": "family launch", "label": key, "month": months[i], "watch": months[i : i + 2]})
    for key, (full, core) in series.items():
        for succ in sorted(successor_of(key, list(onset)), key=lambda k: onset[k]):
            i = onset[succ]
            if i > hi - 3 or full[max(0, i - 6) : i].sum() < 40:
                continue
            share = core / np.maximum(ms.core_docs, 1)
            before, after = share[max(0, i - 6) : i].mean(), share[i + 1 : i + 4].mean()
            if before > 0 and after <= 0.6 * before:
                cases.append(
                    {
                        "kind": "successor decline",
                        "label": f"{key} -> {succ}",
                        "family": key,
                        "month": months[i],
                        "watch": months[i : i + 5],
                    }
                )
                break
    for case in cases:
        case["split"] = split_of(case["label"])
    return cases


def _matches(case: dict[str, Any], item: dict[str, Any], table: TermTable) -> bool:
    """Is this emerging/declining item the case? By spelling, or (families) by the family of its keys."""
    from radar.analysis.trends.family import family_key

    if case["kind"] == "continuing rise":
        return norm(case["label"]) in {norm(x) for x in [item["term"], *item["aliases"]]}
    fam = case["family"] if case["kind"] == "successor decline" else case["label"]
    return item.get("family") == fam or any(family_key(k) == fam for k in item["keys"] if k.startswith("@"))


def report_new_cases(
    table: TermTable, results: dict[str, Any], cases: list[dict[str, Any]], split: str
) -> list[list[str]]:
    rows = []
    for case in (c for c in cases if c["split"] == split):
        cells = [case["kind"], case["label"], case["month"]]
        for name in ("radar", "radar-before"):
            hits = []
            for m in case["watch"]:
                r = results.get(name, {}).get(m)
                key = "declining" if case["kind"] == "successor decline" else "emerging"
                rank = next((i for i, e in enumerate(r[key], 1) if _matches(case, e, table)), None) if r else None
                if rank:
                    hits.append(f"{m} #{rank}")
            need = len(case["watch"]) if case["kind"] == "continuing rise" else 1
            cells.append(("found: " if len(hits) >= need else "missed: ") + (", ".join(hits) or "-"))
        rows.append(cells)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--workspace", type=Path, default=Path("/tmp/bt-ws"))
    parser.add_argument("--from", dest="first", default="2024-07")
    parser.add_argument("--to", dest="last", default="2026-06")
    parser.add_argument("--min-z", type=float, default=TrendsConfig.min_z, help="override [trends] min_z")
    parser.add_argument("--min-ratio", type=float, default=TrendsConfig.min_ratio, help="override min_ratio")
    parser.add_argument("--no-naive", action="store_true", help="leave out the naive detector (faster)")
    parser.add_argument("--save", type=Path, help="write the replay's results to this JSON file")
    parser.add_argument("--load", type=Path, help="report from a saved replay instead of replaying")
    parser.add_argument("--held-out", action="store_true", help="also score the held-out half of the new cases")
    args = parser.parse_args()
    ws = setup(args.workspace.resolve(), args.corpus)
    ends = month_ends(args.first, args.last)
    months = [e.strftime("%Y-%m") for e in ends]
    started = time.perf_counter()
    if args.load:
        results = orjson.loads(args.load.read_bytes())
    else:
        results = run(ws, ends, not args.no_naive, min_z=args.min_z, min_ratio=args.min_ratio)
    if args.save:
        args.save.write_bytes(orjson.dumps(results))
    with ws.store() as store:
        table = term_table(ws.term_cache_path, store)
    table.column("")  # build the key index once
    console.rule("Known emergences (radar, month window)")
    show(
        "Known emergences",
        ["case", "took off (data)", "first flagged", "rank", "lead(-)/lag(+) months", "first as new method"],
        report_cases(table, results, months),
    )
    cases = new_cases(table, months)
    for split in ("dev", "held-out") if args.held_out else ("dev",):
        show(
            f"Issue 15 cases, {split} half: months flagged (#rank) among the months watched",
            ["kind", "case", "took off", "radar", "radar-before"],
            report_new_cases(table, results, cases, split),
        )
    if not args.held_out:
        console.print(f"held-out half: {sum(c['split'] == 'held-out' for c in cases)} cases, not scored (--held-out)")
    rows, totals = report_artefacts(table, results, months)
    show(
        "Source-mix change months: emerging terms and artefacts among them",
        ["month", "detector", "emerging", "artefacts", "artefacts flagged"],
        rows,
    )
    declining = {n: sum(len(r["declining"]) for r in results[n].values()) for n in results}
    show(
        "All months",
        ["detector", "emerging flagged", "artefacts", "share", "declining flagged"],
        [[n, str(a), str(b), f"{b / max(a, 1):.1%}", str(declining[n])] for n, (a, b) in totals.items()],
    )
    show(
        "Tags (keyword rule tags) at the change months: non-flat directions",
        ["month", "detector", "tags flagged"],
        report_tags(results),
    )
    for name in results:
        secs = [r["seconds"] for r in results[name].values()]
        console.print(
            f"{name}: compute_trends per month (warm cache): median {np.median(secs):.2f} s, max {max(secs):.2f} s"
        )
    console.print(f"backtest {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
