"""Time to a verdict for a reproduction run, and training steps/s.

    python benchmarks/bench_repro.py                       # dapo vs grpo, 5 seed pairs, tiny, CPU
    python benchmarks/bench_repro.py --preset small --device cuda --steps 100
    python benchmarks/bench_repro.py --tiny-checkpoint DIR --preset ckpt-quick --seeds 2 --steps 10 --once
    python benchmarks/bench_repro.py --model PATH --dataset FILE.jsonl [--lora] --once

Before training it prints the run's power (minimum detectable effect at its seed pairs, from the matching
A/A run, stored seed noise, or the toy tasks' stated assumption); after it, the class of evidence, the
claim (or "not testable here" with the lever's measured rate), each arm's mechanism rates (overlong
punishment, lower/upper clip fractions, capped weights, zero-variance groups as generated and as
trained, lengths of right and wrong answers, length trend), and each arm's efficiency profile (mean per
optimiser step over its seeds: wall time split into generation, reward scoring, reference model and
optimisation; completion tokens per second; peak memory) with the paired per-step time ratio.
``--tiny-checkpoint DIR`` first saves a randomly initialised Qwen2 (hidden ``--tiny-hidden``) with a
BPE tokenizer and a chat template, and a 200-problem JSONL, into DIR (tests/test_repro_hf.py's
builders), then runs on them.

"steps/s/arm" is one arm process's rate; "steps/s" counts all arms over the training wall time
(CPU presets train one arm per core at once). Runs the real command path (worker subprocess, TRL,
warm start) in a fresh temporary workspace:
first cold (the SFT warm start is trained and cached), then again with the cache warm unless
--once. Prints a table and, with --json FILE, writes the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from radar.app import wiring  # noqa: E402
from radar.app.context import Radar  # noqa: E402
from radar.app.reproductions import Reproductions  # noqa: E402
from radar.repro.spec import RunSpec  # noqa: E402
from radar.store import Workspace  # noqa: E402

MECHANISMS = (
    ("overlong_rate", "overlong", "%"),
    ("clip_low", "clip low", "%"),
    ("clip_high", "clip high", "%"),
    ("capped_share", "capped", "%"),
    ("zero_var_share", "0-var gen", "%"),
    ("zero_var_trained", "0-var train", "%"),
    ("resampled_groups", "resampled", "n"),
    ("length", "length", "n"),
    ("length_slope", "len/100", "n"),
    ("correct_length", "len right", "n"),
    ("incorrect_length", "len wrong", "n"),
)


def one(api: Reproductions, spec: RunSpec, first_pair: int | None = None) -> dict:
    started = time.perf_counter()
    power = api.plan(spec)
    print(f"power: {power.text}", flush=True)
    with api.runs_table() as store:
        run = api.submit(spec, power=power, store=store, first_pair=first_pair)
    from radar.repro import supervise

    with api.runs_table() as store:
        run = supervise.wait(store, run.id, supervise.start(store, run.id))
    wall = time.perf_counter() - started
    if run.status != "done":
        raise SystemExit(f"run {run.id} {run.status}: {run.error}")
    m, v = run.result["metrics"], run.result["verdict"]
    return {
        "run_id": run.id,
        "setup": run.setup,
        "evidence": v["evidence"],
        "mechanisms": v["mechanisms"],
        "claim_detail": v["claim"],
        "wall_s": round(wall, 1),
        "time_to_verdict_s": m["time_to_verdict_s"],
        "warm_start_s": m["warm_start_seconds"],
        "train_wall_s": m["train_wall_s"],
        "steps_per_s": m["steps_per_s"],
        "steps_per_s_wall": m["steps_per_s_wall"],
        "parallel_arms": m["parallel_arms"],
        "device": m["device"],
        "overall": v["overall"],
        "claim": v["claim"]["status"],
        "summary": v["summary"],
        "final_heldout_greedy": m["final_heldout_greedy"],
        "heldout": m["heldout"],
        "profile": run.result.get("profile") or {},
        "efficiency": v.get("efficiency") or {},
        "first_pair": run.params.get("first_pair", 0),
    }


def print_mechanisms(row: dict, spec: RunSpec) -> None:
    """Evidence class, power and each arm's mechanism rates (did the levers engage?)."""
    ev, claim = row["evidence"], row["claim_detail"]
    print(f"\nevidence: {ev['class']} ({ev['reason']})")
    power = ev.get("power") or {}
    if power.get("mde") is not None:
        print(
            f"minimum detectable effect at {power['seeds']} seed pairs: {100 * power['mde']:.1f} pts (80% power; "
            f"seed noise sd {100 * power['sd_difference']:.1f} pts from {power['noise_source']}); "
            f"+{100 * power['effect']:.0f} pts needs {power['seeds_needed'] or '> 20'} pairs"
        )
    print(f"claim: {claim['claim']} -> {claim['status']}" + (f" ({claim['reason']})" if claim.get("reason") else ""))
    print("\nmechanisms per arm (mean over steps, then seed pairs)")
    head = f"{'arm':<24}" + "".join(f"{h:>12}" for _, h, _ in MECHANISMS)
    print(head)
    print("-" * len(head))
    names = {"method": spec.method, "baseline": f"{spec.baseline} (baseline)"}
    for arm, rates in row["mechanisms"].items():
        cells = []
        for key, _, kind in MECHANISMS:
            x = rates.get(key)
            cells.append("n/a" if x is None else f"{100 * x:.2f}%" if kind == "%" else f"{x:.2f}")
        print(f"{names[arm]:<24}" + "".join(f"{c:>12}" for c in cells))


def print_profile(row: dict, spec: RunSpec) -> None:
    """The efficiency profile table of one run (means per optimiser step over seeds)."""
    prof, eff = row["profile"], row["efficiency"]
    if not prof:
        return
    print("\nefficiency profile (mean per optimiser step over seeds)")
    head = (
        f"{'arm':<24} {'device':<6} {'step s':>8} {'gen s':>8} {'reward s':>8} {'ref s':>7} {'optim s':>8} "
        f"{'gen tok/s':>9} {'tok/s':>8} {'train tok/s':>11} {'peak GB':>8}"
    )
    print(head)
    print("-" * len(head))
    names = {"method": spec.method, "baseline": f"{spec.baseline} (baseline)"}
    for arm, p in prof.items():

        def f(key: str, digits: int = 3, p: dict = p) -> str:
            x = p.get(key)
            return "n/a" if not isinstance(x, int | float) else f"{x:.{digits}f}"

        print(
            f"{names[arm]:<24} {p.get('device', ''):<6} {f('step_s'):>8} {f('generate_s'):>8} {f('reward_s'):>8} "
            f"{f('ref_s'):>7} {f('train_s'):>8} {f('gen_tokens_per_s', 0):>9} {f('tokens_per_s', 0):>8} "
            f"{f('train_tokens_per_s', 0):>11} {f('peak_mem_gb', 2):>8}"
        )
    first = next(iter(prof.values()))
    print(f"memory: {first.get('peak_mem_kind')}; reference model: {prof.get('baseline', {}).get('ref_model')}")
    if eff.get("text"):
        print(f"{spec.method} vs {spec.baseline}: {eff['text']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--method", default="dapo")
    ap.add_argument("--baseline", default="")
    ap.add_argument("--task", default="addition")
    ap.add_argument("--preset", default="tiny")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--once", action="store_true", help="only the cold run")
    ap.add_argument("--workspace", default="", help="reuse this workspace (default: a fresh temporary one)")
    ap.add_argument("--json", default="", help="write the figures to this file")
    ap.add_argument("--model", default="", help="a local HF checkpoint (with --dataset)")
    ap.add_argument("--dataset", default="", help="JSONL of {prompt, answer} (with --model)")
    ap.add_argument("--lora", action="store_true")
    ap.add_argument("--tiny-checkpoint", default="", help="build a tiny random Qwen2 + math JSONL here and use them")
    ap.add_argument("--tiny-hidden", type=int, default=64, help="hidden size of the tiny checkpoint")
    args = ap.parse_args()
    if args.tiny_checkpoint:
        from tests.test_repro_hf import build_checkpoint, write_dataset

        folder = Path(args.tiny_checkpoint)
        args.model = str(build_checkpoint(folder / "model", hidden=args.tiny_hidden, layers=2))
        args.dataset = str(write_dataset(folder / "math.jsonl", 200))

    root = Path(args.workspace) if args.workspace else Path(tempfile.mkdtemp(prefix="radar-bench-repro-"))
    ws, _ = Workspace.init(root)
    api = wiring.reproductions(Radar(ws))
    spec = api.spec(
        args.method,
        args.baseline,
        task=args.task,
        preset=args.preset,
        seeds=args.seeds,
        steps=args.steps,
        device=args.device,
        model=args.model,
        dataset=args.dataset,
        lora=args.lora,
    )
    rows = [("cold (trains the warm start)", one(api, spec))]
    if not args.once:  # the same seed pairs again: a timing re-run on the cached warm starts, not a replication
        rows.append(("cached warm start", one(api, spec, first_pair=rows[0][1]["first_pair"])))

    print(
        f"\nrepro benchmark: {spec.method} vs {spec.baseline}, task {spec.task}, preset {spec.preset}, "
        f"{spec.seeds} seeds x {spec.total_steps} steps, cpu cores {os.cpu_count()}"
    )
    header = (
        f"{'run':<30} {'device':<7} {'verdict s':>9} {'warm-up s':>9} {'train s':>8} {'arms':>4} "
        f"{'steps/s/arm':>11} {'steps/s':>8}  verdict / claim"
    )
    print(header)
    print("-" * len(header))
    for name, r in rows:
        print(
            f"{name:<30} {r['device']:<7} {r['time_to_verdict_s']:>9.1f} {r['warm_start_s']:>9.1f} "
            f"{r['train_wall_s']:>8.1f} {r['parallel_arms']:>4} {r['steps_per_s']:>11.1f} "
            f"{r['steps_per_s_wall']:>8.1f}  "
            f"{r['overall']} / claim {r['claim']}"
        )
    print("\n" + rows[-1][1]["setup"])
    print(rows[-1][1]["summary"])
    print_mechanisms(rows[-1][1], spec)
    print_profile(rows[-1][1], spec)
    if args.json:
        Path(args.json).write_text(json.dumps({"spec": spec.__dict__, "rows": dict(rows)}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
