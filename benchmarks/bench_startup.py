"""What a `radar` command pays before it does anything: interpreter, command modules, the embedding tokenizer.

Each row runs in a fresh interpreter, REPEATS times (median wall seconds and CPU seconds of the child); the
baseline is a bare `python -c pass` in the same run. "before" rows re-create what a command paid until
2026-12-01 (scikit-learn imported by the command modules, transformers' AutoTokenizer, which imports torch).

    .venv/bin/python benchmarks/bench_startup.py [--workspace DEMO_WS] [--repeats 5]

With --workspace, `radar search` on it is timed end to end too (query embedding, FAISS, BM25, printing).
"""

from __future__ import annotations

import argparse
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


def timed(argv: list[str], repeats: int) -> tuple[float, float]:
    """Median wall and child CPU seconds of ``argv`` run ``repeats`` times."""
    walls, cpus = [], []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", type=Path, help="a workspace to time `radar search` on (e.g. the demo's)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    py = sys.executable
    rows = [
        ("python -c pass (baseline)", [py, "-c", "pass"]),
        ("every command module", [py, "-c", MODULES]),
        ("every command module + scikit-learn (before)", [py, "-c", MODULES + "; import sklearn.linear_model"]),
        ("packaged tokenizer (tokenizers)", [py, "-c", FAST]),
        ("packaged tokenizer (AutoTokenizer, before)", [py, "-c", AUTO]),
    ]
    if args.workspace:
        radar = [py, "-m", "radar.app.cli", "--workspace", str(args.workspace)]
        rows.append(("radar search (demo workspace)", [*radar, "search", "kv cache serving", "--json"]))
    base = None
    print(f"| what | wall s (median of {args.repeats}) | CPU s | x baseline (wall) |")
    print("|---|---|---|---|")
    for name, argv in rows:
        wall, cpu = timed(argv, args.repeats)
        base = base or wall
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {wall / base:.1f} |")


if __name__ == "__main__":
    main()
