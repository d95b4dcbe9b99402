"""One toy arm to train, as one value: what repro/execute.py hands the toy engine (repro/toy_engine.py, or the module
``RADAR_REPRO_TOY_ENGINE`` names) and the engine hands repro/trainer.py ``train_arm``: its warm start, method, task
and size, steps and RL seed, device and output folder, and the two callbacks (each step's record; whether to stop).
No torch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from radar.repro.methods import Method
from radar.repro.shapes import StepRecord
from radar.repro.sizes import PolicySize
from radar.repro.tasks import Task


@dataclass(frozen=True)
class ToyArm:
    """One (arm, seed pair) of a toy run: trains ``method`` from the warm start at ``policy_path``."""

    policy_path: Path
    method: Method
    task: Task
    size: PolicySize
    steps: int
    seed: int  # the arm's RL seed (repro/spec.py ``rl_seed``)
    device: str
    output_dir: Path
    on_record: Callable[[StepRecord], None]
    should_cancel: Callable[[], bool]
