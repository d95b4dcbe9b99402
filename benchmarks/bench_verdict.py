"""How far a reproduction verdict can be trusted, measured.

    python benchmarks/bench_verdict.py simulate            # false-positive rate and power, 3/5/10 seeds (seconds)
    python benchmarks/bench_verdict.py family              # false "adopt": 10 null presets vs one baseline, and looks
    python benchmarks/bench_verdict.py power               # minimum detectable effect and seeds needed per noise level
    nice -n 10 python benchmarks/bench_verdict.py aa       # a real A/A run: grpo vs grpo, default seeds, addition
    nice -n 10 python benchmarks/bench_verdict.py dapo     # time to a verdict: dapo vs grpo, default seeds, CPU
    nice -n 10 python benchmarks/bench_verdict.py presets  # clip fraction and completion length per preset
    ... --workspace DIR   reuse a workspace (its cached warm starts); --json FILE writes the figures

simulate: the verdict's decision rule (repro.verdict.decide: paired t over seed pairs, Holm over
held-out greedy and pass@1, minimum effect 1 point) on synthetic runs whose seed noise is the A/A
figure (``SIM_TRAIN_SD``) or an override (--train-sd); 20,000 trials per cell, so a rate carries a
simulation standard error of about 0.15 points.

family: the adoption rule (repro.adoption.family_adopt: Holm across a week's runs against one baseline and
every look at an experiment) on synthetic weeks of 1, 3 and 10 null presets sharing one baseline's numbers
(every run of class evidence with a calibrated A/A), against no correction; then one preset looked at with 3,
then 5, then 10 seed pairs (fresh pairs each look), stopping at the first "adopt", with and without the looks
in the family. power: repro.power.mde / seeds_needed at the noise levels measured on the toy tasks.

aa / dapo: the real command path (worker process, TRL, warm starts) in a workspace; the time to a
verdict counts the warm starts when they are not cached yet (a fresh workspace) and says so.

presets: one arm per preset (1 seed, --steps, default 60) from the addition warm start, in this
process; mean clip fraction over the steps, mean completion length and wrong-answer length.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from radar.app import wiring  # noqa: E402
from radar.app.context import Radar  # noqa: E402
from radar.repro import supervise  # noqa: E402
from radar.repro.paired_tests import SIM_TRAIN_SD, SimNoise, simulate  # noqa: E402
from radar.repro.verdict import DEFAULT_SEEDS  # noqa: E402
from radar.store import Workspace  # noqa: E402


def bench_simulate(train_sd: float) -> list[dict[str, Any]]:
    noise = SimNoise(train_sd=train_sd)
    rows = []
    for seeds in (3, 5, 10):
        started = time.perf_counter()
        null = simulate(seeds, 0.0, noise=noise, rng_seed=seeds)
        plus = simulate(seeds, 0.05, noise=noise, rng_seed=100 + seeds)
        plus2 = simulate(seeds, 0.02, noise=noise, rng_seed=200 + seeds)
        rows.append(
            {
                "seeds": seeds,
                "false_better_or_worse": round(null["better"] + null["worse"] + null["mixed"], 4),
                "power_5pts": round(plus["better"], 4),
                "power_2pts": round(plus2["better"], 4),
                "seconds": round(time.perf_counter() - started, 2),
            }
        )
    print(f"\nsimulated verdicts (train sd {100 * train_sd:.1f} pts per arm, 20,000 trials per cell)")
    print("| seeds | false better/worse (goal <= 5%) | power, +5 pts | power, +2 pts |")
    print("|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['seeds']} | {100 * r['false_better_or_worse']:.2f}% | {100 * r['power_5pts']:.1f}% | "
            f"{100 * r['power_2pts']:.1f}% |"
        )
    return rows


def bench_family(train_sd: float, trials: int = 20_000) -> dict[str, Any]:
    from radar.repro.adoption import simulate_family, simulate_looks

    noise = SimNoise(train_sd=train_sd)
    rows = []
    for presets in (1, 3, 10):
        started = time.perf_counter()
        null = simulate_family(presets=presets, trials=trials, noise=noise, rng_seed=presets)
        plus = simulate_family(presets=presets, effect=0.05, trials=trials // 4, noise=noise, rng_seed=50 + presets)
        rows.append(
            {
                "presets": presets,
                "any_better_or_worse": round(null["any_better_or_worse"], 4),
                "any_better": round(null["any_better"], 4),
                "any_adopt": round(null["any_adopt"], 4),
                "adopt_per_run_at_5pts": round(plus["adopt_per_run"], 4),
                "seconds": round(time.perf_counter() - started, 2),
            }
        )
    se = (0.05 * 0.95 / trials) ** 0.5
    print(f"\nfalse adopt across a week's presets against one shared baseline ({trials:,} weeks per row, 5 seed pairs,")
    print(f"train sd {100 * train_sd:.1f} pts per arm; simulation standard error about {100 * se:.2f} pts at 5 %)")
    print(
        "| presets | some better/worse | some better (no correction) | some adopt (Holm across the week) |"
        " adopt per run at +5 pts |"
    )
    print("|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['presets']} | {100 * r['any_better_or_worse']:.1f}% | {100 * r['any_better']:.1f}% | "
            f"{100 * r['any_adopt']:.2f}% | {100 * r['adopt_per_run_at_5pts']:.1f}% |"
        )
    looks = {
        "corrected": simulate_looks((3, 5, 10), trials=trials, noise=noise, rng_seed=7)["false_adopt"],
        "alone": simulate_looks((3, 5, 10), trials=trials, noise=noise, rng_seed=7, corrected=False)["false_adopt"],
    }
    print("\none preset at 3, then 5, then 10 seed pairs (fresh pairs), stopping at the first adopt:")
    print(
        f"false adopt {100 * looks['corrected']:.2f}% with every look in the family, "
        f"{100 * looks['alone']:.2f}% judged alone"
    )
    return {"family": rows, "looks": looks, "trials": trials}


def bench_power() -> list[dict[str, Any]]:
    from radar.repro.power import mde, seeds_needed

    rows = []
    for sd in (0.02, 0.025, 0.0275, 0.035, 0.042):
        rows.append(
            {
                "sd": sd,
                **{f"mde_{n}": round(mde(sd, n) or 0.0, 4) for n in (3, 5, 10)},
                "seeds_for_5pts": seeds_needed(0.05, sd),
                "seeds_for_2pts": seeds_needed(0.02, sd),
            }
        )
    print("\nminimum detectable effect (80% power, the verdict's test) by seed noise (sd of paired differences)")
    print("| seed noise sd | MDE at 3 pairs | at 5 | at 10 | pairs for +5 pts | pairs for +2 pts |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {100 * r['sd']:.1f} pts | {100 * r['mde_3']:.1f} pts | {100 * r['mde_5']:.1f} | "
            f"{100 * r['mde_10']:.1f} | "
            f"{r['seeds_for_5pts'] or '> 20'} | {r['seeds_for_2pts'] or '> 20'} |"
        )
    return rows


_FIELDS = ("effect", "interval", "p", "p_adjusted", "label", "method_mean", "baseline_mean", "method", "baseline")


def _workspace(path: str) -> Workspace:
    root = Path(path) if path else Path(tempfile.mkdtemp(prefix="radar-bench-verdict-"))
    return Workspace.init(root)[0]


def real_run(ws: Workspace, method: str, baseline: str, seeds: int, steps: int, task: str) -> dict[str, Any]:
    api = wiring.reproductions(Radar(ws))
    spec = api.spec(method, baseline, task=task, seeds=seeds, steps=steps)
    started = time.perf_counter()
    power = api.plan(spec)
    print(f"power: {power.text}", flush=True)
    with api.runs_table() as store:
        run = api.submit(spec, power=power, store=store)
        run = supervise.wait(store, run.id, supervise.start(store, run.id))
    run_id = run.id
    wall = time.perf_counter() - started
    if run.status != "done":
        raise SystemExit(f"run {run_id} {run.status}: {run.error}")
    m, v = run.result["metrics"], run.result["verdict"]
    out = {
        "setup": run.setup,
        "evidence": v["evidence"],
        "mechanisms": {arm: {k: x for k, x in r.items() if k != "per_seed"} for arm, r in v["mechanisms"].items()},
        "run_id": run_id,
        "method": method,
        "baseline": baseline,
        "seeds": seeds,
        "steps": spec.total_steps,
        "wall_s": round(wall, 1),
        "time_to_verdict_s": m["time_to_verdict_s"],
        "warm_start_s": m["warm_start_seconds"],
        "warm_start_cached": m["warm_start_cached"],
        "train_wall_s": m["train_wall_s"],
        "eval_s": m["eval_seconds"],
        "parallel_arms": m["parallel_arms"],
        "load_1min": round(os.getloadavg()[0], 2),
        "overall": v["overall"],
        "metrics": {
            k: {f: t[f] for f in ("effect", "interval", "p", "p_adjusted", "label", "method_mean", "baseline_mean")}
            for k, t in v["metrics"].items()
        },
        "seed_noise": v["seed_noise"],
        "claim": v["claim"]["status"],
        "claim_reason": v["claim"].get("reason", ""),
        "summary": v["summary"],
        "eval_overlap": run.result["eval_overlap"]["share"],
    }
    print(f"\n{method} vs {baseline}, {run.setup}: {v['overall']}")
    print(
        f"time to verdict {m['time_to_verdict_s']:.0f} s (warm starts {m['warm_start_seconds']:.0f} s, "
        f"{'cached' if m['warm_start_cached'] else 'trained now'}; training {m['train_wall_s']:.0f} s; "
        f"held-out evaluation {m['eval_seconds']:.0f} s), 1-min load {out['load_1min']} on {os.cpu_count()} cores"
    )
    print(v["summary"])
    return out


def bench_presets(ws: Workspace, steps: int) -> list[dict[str, Any]]:
    import torch

    from radar.repro.methods import METHODS
    from radar.repro.policy import cached_policy, eval_sets, get_size
    from radar.repro.tasks import get_task
    from radar.repro.toy_arm import ToyArm
    from radar.repro.trainer import train_arm

    task, size = get_task("addition"), get_size("tiny")
    torch.set_num_threads(1)
    path, _ = cached_policy(ws.policy_cache_dir, task, size, torch.device("cpu"), log=lambda _: None, pair=0)
    sets = eval_sets(task, size)
    rows = []
    for name, method in METHODS.items():
        records: list[dict[str, Any]] = []
        started = time.perf_counter()
        out = Path(tempfile.mkdtemp(prefix="radar-bench-preset-"))
        summary = train_arm(ToyArm(path, method, task, size, steps, 0, "cpu", out, records.append, lambda: False), sets)

        def mean(key: str, recs: list[dict[str, Any]] = records) -> float | None:
            vals = [r[key] for r in recs if isinstance(r.get(key), int | float)]
            return round(sum(vals) / len(vals), 4) if vals else None

        rows.append(
            {
                "preset": name,
                "clip_fraction": mean("clip_ratio"),
                "clip_fraction_first_step": records[0].get("clip_ratio") if records else None,
                "length": mean("length"),
                "incorrect_length": mean("incorrect_length"),
                "entropy": mean("entropy"),
                "heldout_greedy": summary.final["heldout_greedy"],
                "seconds": round(time.perf_counter() - started, 1),
            }
        )
    budget = task.max_completion_tokens
    print(f"\nper preset: one arm, addition, tiny, {steps} steps, seed 0 (completion budget {budget} tokens)")
    print("| preset | clip fraction (mean) | first step | completion length | wrong-answer length | held-out greedy |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['preset']} | {_pct(r['clip_fraction'])} | {_pct(r['clip_fraction_first_step'])} | {r['length']} | "
            f"{r['incorrect_length']} | {_pct(r['heldout_greedy'])} |"
        )
    return rows


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}%"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("simulate", "family", "power", "aa", "dapo", "presets"))
    parser.add_argument("--task", default="addition", help="aa / dapo: the toy task (default: addition)")
    parser.add_argument("--workspace", default="", help="reuse this workspace (default: a fresh temporary one)")
    parser.add_argument("--seeds", type=int, default=DEFAULT_SEEDS)
    parser.add_argument("--steps", type=int, default=0, help="RL steps per arm (default: the preset's; presets: 60)")
    parser.add_argument("--train-sd", type=float, default=SIM_TRAIN_SD)
    parser.add_argument("--json", default="", help="write the figures to this file")
    args = parser.parse_args()
    if args.what == "simulate":
        result: Any = bench_simulate(args.train_sd)
    elif args.what == "family":
        result = bench_family(args.train_sd)
    elif args.what == "power":
        result = bench_power()
    elif args.what == "presets":
        result = bench_presets(_workspace(args.workspace), args.steps or 60)
    else:
        method = "grpo" if args.what == "aa" else "dapo"
        result = real_run(_workspace(args.workspace), method, "grpo", args.seeds, args.steps, args.task)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
