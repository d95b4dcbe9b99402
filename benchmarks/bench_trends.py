"""Speed of `compute_trends` at ~100k documents, and the choice of topic clustering.

    python benchmarks/bench_trends.py [--corpus ../shared/data/arxiv_corpus_full.jsonl.gz]
                                      [--extra ../shared/data/arxiv_systems_extra.jsonl.gz]
                                      [--vectors demo-workspace] [--scratch /tmp/bench-trends]
    python benchmarks/bench_trends.py --command WS [--before DIR] [--repeats 3]

Part 1 (terms), all in one run on a scratch workspace holding the full corpus:
  plain baseline  - what a script without a cache does: read the recent and baseline windows from the
                    store, count each document's terms into collections.Counter, compare the two
                    (same term rules, no strata, no bursts, no merging: less work than Radar does);
  cold            - compute_trends with no term cache (tokenises every document once, saves the cache);
  warm            - compute_trends again (cache read from disk, fingerprint unchanged);
  incremental     - after importing --extra (1,482 more papers): only those are tokenised.
Topics are off in part 1 (the scratch corpus has no embeddings).

Part 2 (topics), on the embedded demo workspace (read only): the documents of a 12-week horizon
clustered at as_of D and again at D + 7 days (a weekly rerun; 11 of 12 weeks shared). Stability =
adjusted Rand index of the two runs' topic assignments on the shared documents (1.0 = identical),
and the share of shared documents whose topic id is unchanged after id matching (Hungarian on
centroids, as topics.py does). HDBSCAN has no centroid-seeded rerun; its ids are matched the same way.

With --command WS (an indexed, tagged workspace; the full corpus's for the issue's figures), only part 3: `radar
trends --as-of 2025-09-30 --window month --json` end to end, each run a fresh process on a copy of WS (WS itself is
never written), beside the plain recount on the same documents in the same run: cold (no term cache, no kept parts,
no topic anchors or ids), warm (the same command again: every part read back), and with the term cache but no kept
parts (another as-of day of the same data costs this). Wall and CPU seconds (the command and its worker processes)
and peak RSS (the largest process; the term cache's workers each hold one chunk); the load average before and
after. With --before DIR (a checkout of older code: `git worktree add DIR REV`), the same cold and warm runs of that
code on another copy, in the same run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import date, timedelta
from pathlib import Path

import msgspec
import numpy as np
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from radar.analysis.trends.cache import term_table
from radar.analysis.trends.compute import TrendsEnv, compute_trends
from radar.analysis.trends.config import (
    TrendsConfig,
    windows,
)
from radar.analysis.trends.terms import document_terms
from radar.analysis.trends.topics import cluster, current_model, match
from radar.app import steps_contributions, wiring
from radar.app.context import Radar
from radar.crawler.documents import Documents
from radar.index.embeddings import Embeddings
from radar.store import Store, Workspace

SHARED = ROOT.parent / "shared" / "data"
console = Console(highlight=False)
AS_OF = date(2025, 9, 30)


def refreshed_env(ws: Workspace, store: Store) -> TrendsEnv:
    """The trends stage's inputs as app wires them (app/steps.py ``trends``): the contributions its new methods
    read brought up to date first (trends only read them). The timed rows call it before their clock starts."""
    radar = Radar(ws)
    steps_contributions.refresh(radar, store)
    return wiring.trends_env(radar, store)


def plain_counter(ws: Workspace, as_of: date) -> tuple[int, float]:
    """Counter recount of the two windows; returns (terms with a rise >= 2x and >= 4 documents, seconds)."""
    win = windows(as_of, "month", TrendsConfig())
    started = time.perf_counter()
    recent, base = Counter(), Counter()  # type: ignore[var-annotated]
    n_recent = n_base = 0
    with ws.store() as store:
        for doc in Documents(store).scan(since=win.baseline_start.isoformat(), until=f"{as_of.isoformat()}T23:59:59Z"):
            terms = document_terms(doc.title, doc.abstract)
            if doc.published[:10] >= win.recent_start.isoformat():
                recent.update(terms)
                n_recent += 1
            else:
                base.update(terms)
                n_base += 1
    rising = [t for t, c in recent.items() if c >= 4 and c / n_recent >= 2 * (base[t] + 0.5) / n_base]
    return len(rising), time.perf_counter() - started


def part_terms(corpus: Path, extra: Path, scratch: Path) -> list[list[str]]:
    from radar.app.cli import main as radar

    if scratch.exists():
        shutil.rmtree(scratch)
    Workspace.init(scratch)
    radar(["--workspace", str(scratch), "import", str(corpus)])
    ws = Workspace.open(scratch)
    with ws.store() as store:
        n_docs = Documents(store).count()
    cfg = TrendsConfig()
    rows = []
    rising, plain_s = plain_counter(ws, AS_OF)
    rows.append(
        ["plain: Counter recount of both windows", f"{n_docs:,}", f"{plain_s:.2f}", "1.00x", f"{rising:,} raw rises"]
    )
    timings = {}
    for label in ("cold (no cache)", "warm (cache on disk)"):
        with ws.store() as store:
            env = refreshed_env(ws, store)
            started = time.perf_counter()
            result = msgspec.to_builtins(compute_trends(store, env, as_of=AS_OF, window="month", cfg=cfg, topics=False))
            timings[label] = time.perf_counter() - started
        rows.append(
            [
                f"compute_trends, {label}",
                f"{n_docs:,}",
                f"{timings[label]:.2f}",
                f"{plain_s / timings[label]:.2f}x",
                f"{len(result['emerging'])} emerging",
            ]
        )
    # the same warm call with the rules before continuing rises and model families (issue 15)
    with ws.store() as store:
        env = refreshed_env(ws, store)
        started = time.perf_counter()
        before = msgspec.to_builtins(
            compute_trends(
                store,
                env,
                as_of=AS_OF,
                window="month",
                cfg=TrendsConfig(rise_periods=1, families=False),
                topics=False,
            )
        )
        before_s = time.perf_counter() - started
    rows.append(
        [
            "compute_trends, warm, rise_periods=1 and families off (before issue 15)",
            f"{n_docs:,}",
            f"{before_s:.2f}",
            f"{plain_s / before_s:.2f}x",
            f"{len(before['emerging'])} emerging",
        ]
    )
    radar(["--workspace", str(scratch), "import", str(extra)])
    with ws.store() as store:
        n_more = Documents(store).count()
        started = time.perf_counter()
        table = term_table(ws.term_cache_path, store)
        update_s = time.perf_counter() - started
        env = refreshed_env(ws, store)  # the extra papers' contributions, outside the timed call
        started = time.perf_counter()
        result = msgspec.to_builtins(compute_trends(store, env, as_of=AS_OF, window="month", cfg=cfg, topics=False))
        after_s = time.perf_counter() - started
    rows.append(
        [
            f"term cache update after +{n_more - n_docs:,} documents",
            f"{n_more:,}",
            f"{update_s:.2f}",
            "",
            f"{table.matrix.shape[1]:,} terms",
        ]
    )
    rows.append(
        [
            "compute_trends after the update (warm)",
            f"{n_more:,}",
            f"{after_s:.2f}",
            f"{plain_s / after_s:.2f}x",
            f"{len(result['emerging'])} emerging",
        ]
    )
    week = compute_timed(ws, AS_OF, "week")
    rows.append(["compute_trends, week window (warm)", f"{n_more:,}", f"{week:.2f}", f"{plain_s / week:.2f}x", ""])
    size = (ws.index_dir / "trends" / "terms.npz").stat().st_size
    console.print(f"term cache: {size / 2**20:.0f} MiB on disk")
    return rows


def compute_timed(ws: Workspace, as_of: date, window: str) -> float:
    with ws.store() as store:
        env = refreshed_env(ws, store)
        started = time.perf_counter()
        msgspec.to_builtins(compute_trends(store, env, as_of=as_of, window=window, topics=False))
        return time.perf_counter() - started


def _horizon_vectors(ws: Workspace, as_of: date) -> tuple[list[str], np.ndarray]:
    first = as_of - timedelta(weeks=12) + timedelta(days=1)
    with ws.store() as store:
        model = current_model(store, Radar(ws).settings.embedding)
        ids = [d.id for d in Documents(store).scan(since=first.isoformat(), until=f"{as_of.isoformat()}T23:59:59Z")]
        found = Embeddings(store).current_vectors(ids, model) if model else {}
    ids = [i for i in ids if i in found]
    vectors = np.stack([np.frombuffer(found[i], dtype=np.float32) for i in ids])
    return ids, vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _stability(
    ids1: list[str], lab1: np.ndarray, cen1: np.ndarray, ids2: list[str], lab2: np.ndarray, cen2: np.ndarray
) -> tuple[float, float]:
    from sklearn.metrics import adjusted_rand_score

    pos2 = {d: i for i, d in enumerate(ids2)}
    shared = [(i, pos2[d]) for i, d in enumerate(ids1) if d in pos2]
    a = np.array([lab1[i] for i, _ in shared])
    b = np.array([lab2[j] for _, j in shared])
    ari = adjusted_rand_score(a, b)
    mapping = match(cen1, cen2, 0.0)  # run-2 cluster -> run-1 cluster
    same = np.mean([mapping.get(int(y), -1) == int(x) for x, y in zip(a, b, strict=True)])
    return ari, float(same)


def _centroids(vectors: np.ndarray, labels: np.ndarray) -> np.ndarray:
    ks = [k for k in np.unique(labels) if k >= 0]
    c = np.stack([vectors[labels == k].mean(axis=0) for k in ks])
    return c / np.linalg.norm(c, axis=1, keepdims=True)


def part_topics(vec_ws: Path, as_of: date) -> list[list[str]]:
    from sklearn.cluster import HDBSCAN

    ws = Workspace.open(vec_ws)
    ids1, v1 = _horizon_vectors(ws, as_of)
    ids2, v2 = _horizon_vectors(ws, as_of + timedelta(days=7))
    k = int(np.clip(round(len(ids1) / 150), 4, 40))
    rows = [_anchored(vec_ws, as_of)]
    for name in (
        "KMeans, k-means++ each run",
        "KMeans seeded with last run's centroids (Radar before)",
        "MiniBatchKMeans seeded with last run's centroids",
        "HDBSCAN (min_cluster_size 15)",
    ):
        if name.startswith("HDBSCAN"):
            lab1 = HDBSCAN(min_cluster_size=15).fit_predict(v1)
            started = time.perf_counter()
            lab2 = HDBSCAN(min_cluster_size=15).fit_predict(v2)
            rerun = time.perf_counter() - started
            c1, c2 = _centroids(v1, lab1), _centroids(v2, lab2)
            noise = f"{np.mean(lab1 < 0):.0%} noise, {len(c1)} clusters"
        elif name.startswith("MiniBatch"):
            from sklearn.cluster import MiniBatchKMeans

            first = MiniBatchKMeans(n_clusters=k, n_init=1, random_state=0, batch_size=2048).fit(v1)
            lab1, c1 = first.labels_, _centroids(v1, first.labels_)
            started = time.perf_counter()
            second = MiniBatchKMeans(n_clusters=k, init=c1, n_init=1, random_state=1, batch_size=2048).fit(v2)
            rerun = time.perf_counter() - started
            lab2, c2 = second.labels_, _centroids(v2, second.labels_)
            noise = f"{k} clusters"
        else:
            lab1, c1 = cluster(v1, k, None, seed=0)
            started = time.perf_counter()
            lab2, c2 = cluster(v2, k, c1 if "seeded" in name else None, seed=1)
            rerun = time.perf_counter() - started
            noise = f"{k} clusters"
        ari, same = _stability(ids1, lab1, c1, ids2, lab2, c2)
        rows.append([name, f"{len(ids1):,}", f"{rerun:.2f}", f"{ari:.3f}", f"{same:.1%}", noise])
    return rows


def _anchored(vec_ws: Path, as_of: date) -> list[str]:
    """Radar now (analysis/trends/topic_ids.py): each run seeded by the anchored seed, ids from the prototype
    registry; rerun on the same data gives the same ids (checked), a week later what share keeps its id."""
    import tempfile

    from radar.analysis.trends.topic_ids import ANCHOR_DEPTH, Registry, anchor_before
    from radar.analysis.trends.topics import _horizon, _k, _seed, ctfidf_keywords

    ws = Workspace.open(vec_ws)
    cfg = Radar(ws).settings.trends
    state = Path(tempfile.mkdtemp(prefix="topics-"))
    out: dict[date, tuple[list[str], list[str], float]] = {}
    with ws.store() as store:
        table = term_table(ws.term_cache_path, store)
        model = current_model(store, Radar(ws).settings.embedding) or ""
        table.stratify(cfg.major_categories, len(table.ids))
        for day in (as_of, as_of + timedelta(days=7), as_of):
            _, rows, vectors = _horizon(store, table, model, cfg, "week", day)
            k = _k(len(rows))
            started = time.perf_counter()
            seed = _seed(store, table, cfg, "week", model, anchor_before(day), ANCHOR_DEPTH, state)
            labels, centroids = cluster(vectors, k, seed)
            seconds = time.perf_counter() - started
            registry = Registry.load(state, "week", model)
            ids, _, _ = registry.assign(centroids, ctfidf_keywords(table, rows, labels, k), day, cfg.topic_match)
            registry.save(state)
            doc_ids = [table.ids[int(r)] for r in rows]
            if day in out:
                assert [ids[c] for c in labels] == out[day][1], "a rerun on the same data changed the topic ids"
            out[day] = (doc_ids, [ids[c] for c in labels], seconds)
    (a_ids, a_topics, _), (b_ids, b_topics, rerun) = out[as_of], out[as_of + timedelta(days=7)]
    from sklearn.metrics import adjusted_rand_score

    pos = {d: i for i, d in enumerate(b_ids)}
    shared = [(i, pos[d]) for i, d in enumerate(a_ids) if d in pos]
    a = [a_topics[i] for i, _ in shared]
    b = [b_topics[j] for _, j in shared]
    same = sum(x == y for x, y in zip(a, b, strict=True)) / len(shared)
    return [
        "KMeans from the anchored seed, prototype ids (Radar now; same data -> same ids)",
        f"{len(a_ids):,}",
        f"{rerun:.2f}",
        f"{adjusted_rand_score(a, b):.3f}",
        f"{same:.1%}",
        f"{len(set(a_topics))} clusters",
    ]


def run_command(argv: list[str], cwd: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (the process and the children it waited for) and peak RSS in MiB of one run."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # bytecode cached, as installed
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            err.seek(0)
            said = err.read().decode(errors="replace").strip().splitlines()[-1:]
            raise SystemExit(f"{' '.join(argv)} failed with exit code {proc.returncode}: {' '.join(said)}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def part_command(workspace: Path, before: Path | None, repeats: int) -> list[list[str]]:
    """`radar trends` end to end on copies of ``workspace``: cold, warm, term cache only; ``before``'s code too."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-trends-command-"))
    rows = []
    try:
        checkouts = [("", ROOT)] + ([(" (before)", before.resolve())] if before else [])
        copies = {}
        for label, _ in checkouts:
            copy = scratch / f"ws{len(copies)}"
            shutil.copytree(workspace, copy, ignore=shutil.ignore_patterns("*.lock"))
            copies[label] = copy
        ws = Workspace.open(copies[""])
        _, plain_s = plain_counter(ws, AS_OF)
        rows.append(["plain: Counter recount of both windows (in process)", f"{plain_s:.1f}", "", "", "1.00"])
        for label, cwd in checkouts:
            copy = copies[label]
            argv = [sys.executable, "-m", "radar.app.cli", "--workspace", str(copy), "trends", "--as-of"]
            argv += [AS_OF.isoformat(), "--window", "month", "--json"]
            for step in ("cold", "warm", "term cache, no kept parts"):
                found = []
                for _ in range(repeats if step != "cold" else 1):
                    if step == "cold":
                        (copy / "index" / "trends" / "terms.npz").unlink(missing_ok=True)
                        shutil.rmtree(copy / "index" / "topics", ignore_errors=True)
                    if step != "warm":
                        shutil.rmtree(copy / "index" / "trends" / "parts", ignore_errors=True)
                    found.append(run_command(argv, cwd))
                wall, cpu, rss = (float(np.median([f[i] for f in found])) for i in range(3))
                name = f"radar trends, {step}{label}"
                rows.append([name, f"{wall:.1f}", f"{cpu:.1f}", f"{rss:,.0f}", f"{plain_s / wall:.2f}"])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return rows


def show(title: str, columns: list[str], rows: list[list[str]]) -> None:
    table = Table(title=title, title_justify="left")
    for c in columns:
        table.add_column(c, overflow="fold")
    for row in rows:
        table.add_row(*row)
    console.print(table)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=SHARED / "arxiv_corpus_full.jsonl.gz")
    parser.add_argument("--extra", type=Path, default=SHARED / "arxiv_systems_extra.jsonl.gz")
    parser.add_argument("--vectors", type=Path, default=ROOT / "demo-workspace", help="an embedded workspace")
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/bench-trends"))
    parser.add_argument("--skip-terms", action="store_true")
    parser.add_argument("--command", type=Path, metavar="WS", help="only part 3: `radar trends` on copies of WS")
    parser.add_argument("--before", type=Path, metavar="DIR", help="with --command: older code's checkout, too")
    parser.add_argument("--repeats", type=int, default=3, help="with --command: runs of each warm row (median)")
    args = parser.parse_args()
    if args.command:
        console.print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        rows = part_command(args.command.resolve(), args.before, args.repeats)
        console.print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        show(
            f"radar trends --as-of {AS_OF} --window month on {args.command.name} (median of {args.repeats} warm runs)",
            ["what", "wall s", "CPU s", "peak RSS MiB", "x plain (wall)"],
            rows,
        )
        return 0
    if not args.skip_terms:
        show(
            "compute_trends at ~100k documents (month window, as of 2025-09-30)",
            ["what", "documents", "seconds", "vs plain", "output"],
            part_terms(args.corpus, args.extra, args.scratch),
        )
    show(
        "Topic clustering: time and week-to-week stability (demo workspace, 12-week horizon)",
        ["method", "docs", "seconds (rerun)", "ARI vs rerun +7 days", "same topic id", "clusters"],
        part_topics(args.vectors.resolve(), date(2026, 6, 21)),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
