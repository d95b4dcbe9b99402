"""Every plug-in preset against GRPO on one warm start: its mechanism rate, step time and the ratio to GRPO's.

    python benchmarks/bench_plugins.py [--steps 20] [--task addition] [--cache DIR] [--presets a,b] [--json FILE]

Trains, in this process and one after another, GRPO and each preset that fills a plug-in point (or sets one of the
TRL knobs whose mask the trainer measures) for ``--steps`` optimiser steps from the same cached warm start (seed
pair 0 of the tiny preset; trained into ``--cache`` on first use), one CPU thread each, with a 50-problem held-out
set (the scores are not the point: a run's verdict needs seed pairs, repro/README.md). Per preset: the plug-in
points it fills, its mechanism rate (the mean over logged steps of the rate its lever reads), the mean optimiser
step time, the ratio to GRPO's step time measured in the same run, and the CPU seconds of the arm (the machine is
shared: CPU time, not wall time, is the comparable figure; the load average is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from radar.repro.methods import BUILTIN  # noqa: E402
from radar.repro.policy import cached_policy, eval_sets  # noqa: E402
from radar.repro.sizes import get_size  # noqa: E402
from radar.repro.tasks import get_task  # noqa: E402
from radar.repro.toy_arm import ToyArm  # noqa: E402
from radar.repro.trainer import train_arm  # noqa: E402


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _arm(name: str, policy: Path, task: Any, size: Any, steps: int, sets: dict[str, Any], out: Path) -> dict[str, Any]:
    method = BUILTIN.get(name)
    records: list[dict[str, float]] = []
    cpu, wall = _cpu(), time.perf_counter()
    arm = ToyArm(policy, method, task, size, steps, 0, "cpu", out / name, records.append, lambda: False)
    summary = train_arm(arm, sets, pass_samples=1)
    lever = next((lv for lv in method.levers if lv.arm == "method"), None)
    rate = None
    if lever is not None:
        values = [r[f"rate/{lever.metric}"] for r in records if f"rate/{lever.metric}" in r]
        rate = sum(values) / len(values) if values else None
    return {
        "preset": name,
        "points": method.plugins() or {"trl": ", ".join(c for c in method.changes)},
        "rate_name": lever.metric if lever else "",
        "rate": rate,
        "rate_minimum": lever.minimum if lever else None,
        "step_s": summary.profile.get("step_s"),
        "cpu_s": round(_cpu() - cpu, 1),
        "wall_s": round(time.perf_counter() - wall, 1),
        "heldout_greedy": summary.final.get("heldout_greedy"),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20, help="optimiser steps per arm (default 20)")
    ap.add_argument("--task", default="addition", help="toy task (default addition)")
    ap.add_argument("--cache", default="", help="warm-start cache folder (default: a temporary one)")
    ap.add_argument("--presets", default="", help="comma-separated presets (default: every plug-in preset)")
    ap.add_argument("--json", default="", help="write the rows to this file")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    task, size = get_task(args.task), get_size("tiny")
    cache = Path(args.cache or tempfile.mkdtemp(prefix="bench-plugins-"))
    policy, _ = cached_policy(cache, task, size, torch.device("cpu"), log=lambda _: None, pair=0)
    sets = {k: v[:50] for k, v in eval_sets(task, size).items()}
    names = [n for n in args.presets.split(",") if n] or [
        n
        for n, m in BUILTIN.methods.items()
        if m.plugins() or any(lv.metric in ("opsm_masked", "entropy_kept") for lv in m.levers)
    ]
    out = Path(tempfile.mkdtemp(prefix="bench-plugins-out-"))
    rows = [_arm("grpo", policy, task, size, args.steps, sets, out)]
    for name in names:
        rows.append(_arm(name, policy, task, size, args.steps, sets, out))
    base = rows[0]["step_s"]
    print(f"{args.steps} steps per arm, task {args.task}, tiny, 1 CPU thread; load average {os.getloadavg()[0]:.1f}")
    print(f"{'preset':<22} {'plug-ins':<34} {'mechanism rate':<28} {'step s':>7} {'x grpo':>7} {'CPU s':>6}")
    for r in rows:
        points = ", ".join(f"{k} {v}" for k, v in r["points"].items()) if r["points"] else "-"
        rate = "-" if r["rate"] is None else f"{r['rate_name']} {r['rate']:.4g} (>= {r['rate_minimum']:g})"
        ratio = r["step_s"] / base if base and r["step_s"] else None
        r["step_ratio"] = None if ratio is None else round(ratio, 3)
        shown_ratio = "-" if ratio is None else f"{ratio:.2f}"
        print(f"{r['preset']:<22} {points:<34} {rate:<28} {r['step_s'] or 0:>7.3f} {shown_ratio:>7} {r['cpu_s']:>6.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"steps": args.steps, "task": args.task, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
