"""The fuzz suite (tests/test_fuzz.py) for longer: every property with RADAR_FUZZ_SCALE times the CI's
examples. Prints, per property, the cases tried (hypothesis's own count of passing, failing and invalid
examples) and the failures.

    nice -n 10 .venv/bin/python benchmarks/fuzz_long.py [--scale 10] [-k toml]

The CI run (`make test`) is scale 1: about 3,000 cases, the same ones every run (derandomized); scale > 1 draws
afresh: what it finds is pinned in tests/test_fuzz.py with @example.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_TEST = re.compile(r"^tests/test_fuzz\.py::(\w+):", re.M)
_COUNTS = re.compile(r"(\d+) passing, (\d+) failing, and (\d+) invalid")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=10, help="multiplier of the CI's examples per property")
    ap.add_argument("-k", default="", help="only the properties whose name matches (pytest -k)")
    args = ap.parse_args()
    env = os.environ | {"RADAR_FUZZ_SCALE": str(args.scale)}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hypothesis-show-statistics"]
    cmd += ["tests/test_fuzz.py"] + (["-k", args.k] if args.k else [])
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    out = proc.stdout + proc.stderr
    # statistics come per test: its name line, then one "during generate phase" block with the counts
    blocks = _TEST.split(out)[1:]
    total_cases = total_failing = 0
    print(f"scale {args.scale}, {seconds:.0f} s")
    for name, body in zip(blocks[::2], blocks[1::2], strict=True):
        counts = [tuple(map(int, m)) for m in _COUNTS.findall(body)]
        passing = sum(c[0] for c in counts)
        failing = sum(c[1] for c in counts)
        invalid = sum(c[2] for c in counts)
        total_cases += passing + failing
        total_failing += failing
        print(f"  {name}: {passing + failing:,} cases tried, {failing} failing ({invalid} filtered out)")
    print(f"total: {total_cases:,} cases tried, {total_failing} failing; pytest exit {proc.returncode}")
    if proc.returncode:
        print(out[-4000:])
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
