"""The training engine of a toy-task run, as the worker uses it: TRL on the tiny char-level policies.

Three functions, called by ``repro.execute`` only: ``resolve_device`` (torch decides what ``auto`` means),
``toy_record`` (the run record with its cached warm starts, repro/record.py) and ``train_toy_arm`` (one (arm,
seed pair), repro/trainer.py ``train_arm``). ``repro.execute.toy_engine`` resolves this module, or the module
that ``RADAR_REPRO_TOY_ENGINE`` names (same three functions): a seam for the test suite, whose run life-cycle
tests (kill, cancel, stop signals) need real worker and arm processes but not TRL's training in them.
Checkpoint runs always train with TRL.
"""

from __future__ import annotations

from radar.repro.record import resolve_device, toy_record
from radar.repro.shapes import ArmSummary
from radar.repro.sizes import PolicySize
from radar.repro.toy_arm import ToyArm

__all__ = ["ToyArm", "resolve_device", "toy_record", "train_toy_arm"]


def _threads(device: str, size: PolicySize) -> None:
    import torch  # defers torch (imported by the worker and its arm processes only)

    if device == "cpu" and size.cpu_threads:
        torch.set_num_threads(size.cpu_threads)  # 2 threads on a tiny model are ~15x slower under load


def train_toy_arm(arm: ToyArm) -> ArmSummary:
    """Train one (arm, seed pair) with TRL from its warm start, scored on the task's held-out sets."""
    from radar.repro.policy import eval_sets  # defers torch, transformers
    from radar.repro.trainer import train_arm  # defers torch, transformers, trl

    _threads(arm.device, arm.size)
    return train_arm(arm, eval_sets(arm.task, arm.size))
