"""What a `radar` command pays before it does anything: interpreter, command modules, the embedding tokenizer.

Each row runs in a fresh interpreter, REPEATS times (median wall seconds and CPU seconds of the child); the
baseline is a bare `python -c pass` in the same run. "before" rows re-create what a command paid until
2026-12-01 (scikit-learn imported by the command modules, transformers' AutoTokenizer, which imports torch).

    .venv/bin/python benchmarks/bench_startup.py [--workspace DEMO_WS] [--repeats 5] [--before DIR]
        [--before-workspace WS] [--breakdown]

Children run with their bytecode cached, as an installed radar does (PYTHONDONTWRITEBYTECODE is left out of their
environment), after one uncounted round. With --workspace, `radar stats` and `radar search` on it are timed end to
end (search: query embedding, FAISS, BM25, the rerank, printing), each a fresh process, interleaved so that both see
the same load; the last column is the ratio to `radar stats` in the same run (the plain baseline of a command's
start-up). With --before DIR (a checkout of older code: `git worktree add DIR REV`), the same two commands run from
it as well, in the same run (in that folder, whose code then comes first on the module path), on --before-workspace
if given (a copy of the workspace as that code left it: an index layout it reads). The load average is printed
before and after: on a shared machine compare CPU seconds.

With --breakdown (and --workspace), where `radar search` spends its start-up instead: the command's phases timed in
one fresh interpreter each (median of REPEATS; CPU and wall seconds), and `python -X importtime` of the whole command
summed per top-level package (self time, one run), for this checkout and --before's.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULES = (
    "import importlib; from radar.app.cli import COMMAND_MODULES; [importlib.import_module(m) for m in COMMAND_MODULES]"
)
FAST = "from radar.index.embedder import FastTokenizer, resolve_model_dir; FastTokenizer(resolve_model_dir('default'))"
AUTO = (
    "from transformers import AutoTokenizer; from radar.index.embedder import resolve_model_dir; "
    "AutoTokenizer.from_pretrained(resolve_model_dir('default'))"
)
QUERY = "FP8 training stability"
# the phases of `radar search`, in a fresh interpreter: works on the code before app/wiring_search.py too
PHASES = """
import resource, sys, time, argparse, io, contextlib
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
marks = [("start", time.perf_counter(), cpu())]
def mark(name):
    marks.append((name, time.perf_counter(), cpu()))
from radar.app import cli
cli.build_parser(); mark("every command module (radar stats pays this too)")
try:
    from radar.app import wiring_search as wiring
except ImportError:
    from radar.app import wiring
mark("import the search resolvers (and what they import)")
from radar.app.cli_helpers import open_radar
searcher = wiring.open_searcher(open_radar(argparse.Namespace(workspace=sys.argv[1])))
mark("open: settings, store, model plan, FAISS, BM25")
searcher.embedder.embed([sys.argv[2]])
mark("the query model (loaded on its first use) and one embedding")
hits = searcher.search(sys.argv[2], k=5)
mark("the search: query embedding, FAISS, BM25, rerank, SQLite")
from radar.app.output import print_json
try:  # a checkout whose hits print through their msgspec view
    import msgspec
    from radar.index.search import HitJson
    out = msgspec.to_builtins(HitJson.of(hits))
except ImportError:
    out = [h.as_dict() for h in hits]
with contextlib.redirect_stdout(io.StringIO()):
    print_json(out)
mark("print")
for (_, w0, c0), (name, w1, c1) in zip(marks, marks[1:]):
    print(f"{name}\t{w1 - w0:.4f}\t{c1 - c0:.4f}")
"""


# as an installed radar runs: its modules' bytecode cached (pip compiles it at install; a checkout's first run writes
# __pycache__), which PYTHONDONTWRITEBYTECODE in a developer's shell would turn into a compile of every module per run
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_once(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and child CPU seconds of one run of ``argv`` in ``cwd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def timed(rows: list[tuple[str, list[str], Path]], repeats: int) -> dict[str, tuple[float, float]]:
    """Median wall and CPU seconds per row; the rows run in turn, ``repeats`` rounds after one uncounted round (the
    bytecode cache written, files in the page cache), so that a change of load falls on all of them alike."""
    for _, argv, cwd in rows:
        run_once(argv, cwd)
    walls: dict[str, list[float]] = {name: [] for name, _, _ in rows}
    cpus: dict[str, list[float]] = {name: [] for name, _, _ in rows}
    for _ in range(repeats):
        for name, argv, cwd in rows:
            wall, cpu = run_once(argv, cwd)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return {name: (statistics.median(walls[name]), statistics.median(cpus[name])) for name, _, _ in rows}


def breakdown(workspace: Path, checkouts: list[tuple[str, Path, Path]], repeats: int) -> None:
    """The phases of `radar search` and its imports per package, for each checkout."""
    for label, cwd, ws in checkouts:
        runs: dict[str, list[tuple[float, float]]] = {}
        for _ in range(repeats + 1):  # the first run writes the bytecode cache: not counted
            out = subprocess.run(
                [sys.executable, "-c", PHASES, str(ws), QUERY], cwd=cwd, env=ENV, capture_output=True, text=True
            )
            if out.returncode:
                raise SystemExit(out.stderr)
            for line in out.stdout.splitlines():
                name, wall, cpu = line.split("\t")
                runs.setdefault(name, []).append((float(wall), float(cpu)))
        print(f"\n`radar search` phases{label or ' (this checkout)'}, median of {repeats} (after the interpreter's")
        print("own start, the `python -c pass` row):\n")
        print("| phase | wall s | CPU s |\n|---|---|---|")
        for name, found in runs.items():
            found = found[1:]
            wall, cpu = statistics.median(f[0] for f in found), statistics.median(f[1] for f in found)
            print(f"| {name} | {wall:.3f} | {cpu:.3f} |")
        argv = [sys.executable, "-X", "importtime", "-m", "radar.app.cli", "--workspace", str(ws), "search", QUERY]
        out = subprocess.run(argv, cwd=cwd, env=ENV, capture_output=True, text=True)
        per: dict[str, int] = {}
        for line in out.stderr.splitlines():
            parts = line.split("|")
            if line.startswith("import time:") and parts[0].split(":")[1].strip().isdigit():
                package = parts[2].strip().split(".")[0]
                per[package] = per.get(package, 0) + int(parts[0].split(":")[1])
        top = sorted(per.items(), key=lambda kv: -kv[1])[:8]
        total = sum(per.values()) / 1e6
        print(f"\nimports (-X importtime, self time summed per package; {total:.2f} s in all): ", end="")
        print(", ".join(f"{name} {us / 1e6:.2f}" for name, us in top))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", type=Path, help="a workspace to time `radar stats` and `radar search` on")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--before", type=Path, metavar="DIR", help="a checkout of older code, timed in the same run")
    ap.add_argument(
        "--before-workspace", type=Path, metavar="WS", help="the workspace --before runs on (default: --workspace)"
    )
    ap.add_argument("--breakdown", action="store_true", help="where `radar search` spends its start-up (--workspace)")
    args = ap.parse_args()
    py = sys.executable
    if args.breakdown:
        if not args.workspace:
            raise SystemExit("--breakdown needs --workspace")
        before_ws = (args.before_workspace or args.workspace).resolve()
        found = [("", ROOT, args.workspace.resolve())]
        found += [(" (before)", args.before.resolve(), before_ws)] if args.before else []
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        breakdown(args.workspace, found, args.repeats)
        print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return
    rows: list[tuple[str, list[str], Path]] = [
        ("python -c pass (baseline)", [py, "-c", "pass"], ROOT),
        ("every command module", [py, "-c", MODULES], ROOT),
        ("every command module + scikit-learn (before)", [py, "-c", MODULES + "; import sklearn.linear_model"], ROOT),
        ("packaged tokenizer (tokenizers)", [py, "-c", FAST], ROOT),
        ("packaged tokenizer (AutoTokenizer, before)", [py, "-c", AUTO], ROOT),
    ]
    pairs: list[tuple[str, str]] = []  # (search row, its stats row)
    if args.workspace:
        before_ws = (args.before_workspace or args.workspace).resolve()
        checkouts = [("", ROOT, args.workspace.resolve())]
        checkouts += [(" (before)", args.before.resolve(), before_ws)] if args.before else []
        for label, cwd, ws in checkouts:
            radar = [py, "-m", "radar.app.cli", "--workspace", str(ws)]
            rows.append((f"radar stats{label}", [*radar, "stats", "--json"], cwd))
            rows.append((f"radar search{label}", [*radar, "search", QUERY, "-k", "5", "--json"], cwd))
            pairs.append((f"radar search{label}", f"radar stats{label}"))
    ratio_of = {search: stats for search, stats in pairs}
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    found = timed(rows, args.repeats)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    base = found[rows[0][0]][0]
    print(f"| what | wall s (median of {args.repeats}) | CPU s | x baseline (wall) | x radar stats (wall) |")
    print("|---|---|---|---|---|")
    for name, _, _ in rows:
        wall, cpu = found[name]
        stats = ratio_of.get(name)
        versus = f"{wall / found[stats][0]:.2f}" if stats else ""
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {wall / base:.1f} | {versus} |")


if __name__ == "__main__":
    main()
