"""A fast toy-run engine for the run life-cycle tests: ``RADAR_REPRO_TOY_ENGINE=tests.fast_toy_engine``.

repro/execute.py resolves a toy run's engine (``toy_engine``); the real one (repro/toy_engine.py) imports torch,
transformers and TRL in the worker and in every arm process (6-9 CPU-s each) and trains the tiny policy. The
tests of the life cycle (a killed worker, cancel, stop signals, arm processes that exit with their worker) are
about the worker's processes, not about training: with this engine those processes are the real ones
(``python -m radar.repro.worker``, spawned arm processes, the real cancel checks and step records), and each
step just waits STEP_S. The real engine is tested in-process (tests/test_repro_hf.py) and end to end
(tests/test_repro_cli.py's tiny run, tests/test_repro_hf.py's checkpoint runs).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from radar.repro.errors import ReproError, RunCancelled
from radar.repro.methods import Method
from radar.repro.record import provenance
from radar.repro.records import RunParams
from radar.repro.shapes import ArmSummary, Overlap, OverlapPart
from radar.repro.spec import RunSpec, rl_seed
from radar.repro.toy_arm import ToyArm

STEP_S = 0.1
ENGINE = "tests.fast_toy_engine"


def resolve_device(requested: str) -> str:
    if requested == "cuda":
        raise ReproError("the fast test engine trains on no device; use --device auto or cpu")
    return "cpu"


def toy_record(
    run_id: str,
    spec: RunSpec,
    params: RunParams,
    device: str,
    arms: dict[str, Method],
    log: Callable[[str], None],
) -> tuple[dict[str, Any], Overlap, list[dict[str, Any]]]:
    log(f"fast test engine ({ENGINE}): no warm start, no TRL")
    policies = [{"pair": p, "path": f"(no warm start {p})", "seconds": 0.0} for p in spec.pairs]
    nothing = OverlapPart(prompts=0, in_sft=0, in_rl=0, share=0.0)
    overlap = Overlap(by="the fast test engine trains on nothing", eval=nothing, share=0.0)
    record = {
        "id": run_id,
        "engine": ENGINE,
        "device": device,
        "steps": spec.total_steps,
        "seeds": spec.pairs,
        "rl_seeds": {arm: [rl_seed(arm, p) for p in spec.pairs] for arm in arms},
        "methods": dict(arms),  # as the real record names each arm's method
        "cuda_device": None,
        **provenance(),
        "policies": policies,
        "policy": policies[0],
        "eval_overlap": overlap,
    }
    return record, overlap, policies


def train_toy_arm(arm: ToyArm) -> ArmSummary:
    """``steps`` steps of STEP_S each, recorded as a trained arm records them; stops as the real one does."""
    started = time.perf_counter()
    score = (arm.seed % 7) / 10
    for step in range(1, arm.steps + 1):
        if arm.should_cancel():
            raise RunCancelled("run cancelled")
        time.sleep(STEP_S)
        arm.on_record({"step": step, "correct": score, "reward_std": 0.1, "time": time.perf_counter() - started})
    seconds = time.perf_counter() - started
    return ArmSummary(
        steps=arm.steps,
        seconds=round(seconds, 2),
        steps_per_s=round(arm.steps / seconds, 3) if seconds else None,
        eval_seconds=0.0,
        final={"heldout_greedy": score, "heldout_pass1": score},
        eval_accuracy=score,
        profile={},
        parameters=0,
    )
