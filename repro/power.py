"""Power, fixed before a run trains, and the class of evidence a finished run can support.

- ``mde``: the smallest true difference of held-out accuracy the verdict's test finds with 80 % probability at
  ``n`` seed pairs, given the sd of the paired differences (seed noise). The test is the verdict's: a paired
  t test, two-sided, whose smaller p must pass Holm's first threshold over the two verdict metrics (alpha / 2),
  plus the 1-point minimum effect. Power comes from the non-central t distribution; tests/test_repro_verdict.py
  checks it against the vectorised simulation of the real decision rule.
- ``seeds_needed``: the seed pairs an effect needs at that noise.
- Seed noise comes, in this order, from the matching A/A run (same model, data, preset and steps), from the
  stored seed noise of another finished run on that setting, or (toy tasks only) from an assumption stated as
  such; a checkpoint without any measurement has unknown power (the CLI says to run an A/A first).
- ``classify``: ``pipeline check`` for the toy tasks and tiny checkpoints (the tests are calibrated, the run
  says nothing about transfer to LLM training), ``evidence`` for a real checkpoint with enough steps and seed
  pairs for its measured noise, ``underpowered`` otherwise.

Pure functions (numpy/scipy); no torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from scipy import optimize, stats

ALPHA = 0.05  # family-wise error rate of the overall label
MIN_EFFECT = 0.01  # a difference under 1 point of held-out accuracy is never "better"/"worse"
METRICS = 2  # the verdict metrics Holm corrects over (held-out greedy, pass@1)
POWER = 0.8
DEFAULT_EFFECT = 0.05  # the effect a run should be able to find unless asked otherwise (5 points)
MIN_EVIDENCE_SEEDS = 3
MIN_EVIDENCE_STEPS = 50
MAX_SEEDS = 20
# Toy tasks without a stored measurement: the upper end of the paired sd measured on them (3.5-4.2 points over
# 5 pairs x 200 steps, addition and sorting), stated as an assumption wherever it is used.
TOY_ASSUMED_SD = 0.042


def power_at(effect: float, sd: float, n: int, alpha: float = ALPHA / METRICS) -> float:
    """P(the paired t test over ``n`` pairs rejects at ``alpha``, two-sided, in the effect's direction) when the
    true mean difference is ``effect`` and the paired differences have sd ``sd``; 0 below the minimum effect."""
    if n < 2 or sd <= 0:
        return math.nan
    df = n - 1
    crit = float(stats.t.ppf(1 - alpha / 2, df))
    nc = abs(effect) * math.sqrt(n) / sd
    return float(stats.nct.sf(crit, df, nc))


def mde(sd: float | None, n: int, power: float = POWER) -> float | None:
    """The minimum detectable effect (a share) at ``n`` pairs; None when the noise is unknown or n < 2."""
    if sd is None or sd <= 0 or n < 2:
        return None
    hi = sd * 50
    if power_at(hi, sd, n) < power:
        return None
    found = float(optimize.brentq(lambda d: power_at(d, sd, n) - power, 1e-9, hi, xtol=1e-7))
    return max(found, MIN_EFFECT)


def seeds_needed(effect: float, sd: float | None, power: float = POWER, most: int = MAX_SEEDS) -> int | None:
    """The fewest seed pairs (2..most) that find ``effect`` with ``power``; None if unknown or more than ``most``."""
    if sd is None or sd <= 0:
        return None
    for n in range(2, most + 1):
        if power_at(effect, sd, n) >= power:
            return n
    return None


def plan(seeds: int, sd: float | None, source: str, effect: float = DEFAULT_EFFECT) -> dict[str, Any]:
    """The power of a run at its seed pairs (store.runs.Power as JSON)."""
    detectable = mde(sd, seeds)
    return {
        "seeds": seeds,
        "sd_difference": None if sd is None else round(sd, 5),
        "noise_source": source if sd is not None else "",
        "mde": None if detectable is None else round(detectable, 5),
        "effect": effect,
        "seeds_needed": seeds_needed(effect, sd),
        "power_at_effect": None if sd is None or seeds < 2 else round(power_at(effect, sd, seeds), 4),
        "alpha": ALPHA,
        "power": POWER,
        "test": f"paired t, two-sided at alpha {ALPHA:g} / {METRICS} (Holm's first step), min effect {MIN_EFFECT:g}",
    }


@dataclass(frozen=True)
class Setting:
    """What a run trained, as far as the class of its evidence goes."""

    toy: bool  # a toy task (the char-level policies)
    quick: bool  # a tiny checkpoint (weights under TINY_MODEL_BYTES) or the ckpt-quick preset
    steps: int
    seeds: int
    effect: float = DEFAULT_EFFECT
    setup: str = ""  # model, parameters, task, steps, seed pairs (store.runs.RunRecord.setup)


def classify(setting: Setting, sd: float | None, source: str) -> dict[str, Any]:
    """{"class", "reason", "power"}: what the finished run can support (see the module docstring)."""
    power = plan(setting.seeds, sd, source, setting.effect)
    if setting.toy or setting.quick:
        what = "a toy task" if setting.toy else "a tiny checkpoint"
        return {
            "class": "pipeline check",
            "reason": f"{what}: the tests are calibrated, but the run says nothing about transfer to LLM training",
            "power": power,
        }
    short = []
    if setting.seeds < MIN_EVIDENCE_SEEDS:
        short.append(f"{setting.seeds} seed pairs (evidence needs >= {MIN_EVIDENCE_SEEDS})")
    if setting.steps < MIN_EVIDENCE_STEPS:
        short.append(f"{setting.steps} steps (evidence needs >= {MIN_EVIDENCE_STEPS})")
    if power["mde"] is None:
        short.append("no seed noise measured (run an A/A)")
    elif power["mde"] > setting.effect:
        short.append(
            f"minimum detectable effect {100 * power['mde']:.1f} pts > the {100 * setting.effect:.1f} pts asked for"
        )
    if short:
        return {"class": "underpowered", "reason": "; ".join(short), "power": power}
    return {
        "class": "evidence",
        "reason": f"a real checkpoint, {setting.steps} steps, {setting.seeds} seed pairs, minimum detectable "
        f"effect {100 * power['mde']:.1f} pts",
        "power": power,
    }
