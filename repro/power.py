"""Power, fixed before a run trains, and the class of evidence a finished run can support.

- ``mde``: the smallest true difference of held-out accuracy the verdict's rule (paired t over seed pairs on
  greedy accuracy and pass@1, Holm over both, the 1-point minimum) finds with 80 % probability at ``n`` seed
  pairs, given the sd of the paired differences of greedy accuracy (seed noise). The measured sd is split into
  binomial scoring noise over the held-out problems and training noise, which moves both metrics alike (the
  model of the simulation that measures the rule's error rates); pass@1, scored on 4 samples per problem,
  then has less scoring noise. Power is that of the more precise metric alone at Holm's first threshold
  (alpha / 2), from the non-central t distribution: a lower bound, since the rule also rejects on the other.
  tests/test_repro_verdict.py checks it against the simulated rule (it finds the MDE 80-92 % of the time).
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

from scipy import optimize, stats

from radar.repro.shapes import Evidence
from radar.repro.verdict_record import PowerPlan

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


SIM_PROMPTS = 1000  # held-out problems of the toy tasks (a checkpoint run passes its preset's eval_prompts)
SIM_BASE = 0.63  # held-out accuracy level (the toy A/A's), for the binomial part of the noise
PASS_SAMPLES = 4  # pass@1 averages this many samples per problem


def metric_sds(sd: float, prompts: int = SIM_PROMPTS, base: float = SIM_BASE) -> tuple[float, float]:
    """(greedy, pass@1) sd of the paired differences, from greedy's measured ``sd``: its binomial part over
    ``prompts`` problems, the rest training noise that pass@1 shares; pass@1's binomial part is over 4x samples."""
    binomial = 2 * base * (1 - base) / prompts
    train = max(sd * sd - binomial, 0.0)
    return sd, math.sqrt(train + binomial / PASS_SAMPLES)


def _t_power(effect: float, sd: float, n: int, alpha: float) -> float:
    df = n - 1
    crit = float(stats.t.ppf(1 - alpha / 2, df))
    return float(stats.nct.sf(crit, df, abs(effect) * math.sqrt(n) / sd))


def power_at(effect: float, sd: float, n: int, prompts: int = SIM_PROMPTS, base: float = SIM_BASE) -> float:
    """P(the verdict's rule finds a true difference ``effect``) at ``n`` pairs, as a lower bound: the more precise
    metric's paired t test alone at alpha / 2 (NaN below 2 pairs); 0 below the minimum effect."""
    if n < 2 or sd <= 0:
        return math.nan
    if abs(effect) < MIN_EFFECT:
        return 0.0
    return max(_t_power(effect, s, n, ALPHA / METRICS) for s in metric_sds(sd, prompts, base) if s > 0)


def mde(sd: float | None, n: int, power: float = POWER, prompts: int = SIM_PROMPTS) -> float | None:
    """The minimum detectable effect (a share) at ``n`` pairs; None when the noise is unknown or n < 2."""
    if sd is None or sd <= 0 or n < 2:
        return None
    hi = max(sd * 50, 1.0)
    if power_at(hi, sd, n, prompts) < power:
        return None
    if power_at(MIN_EFFECT, sd, n, prompts) >= power:
        return MIN_EFFECT
    return float(optimize.brentq(lambda d: power_at(d, sd, n, prompts) - power, MIN_EFFECT, hi, xtol=1e-7))


def seeds_needed(
    effect: float, sd: float | None, power: float = POWER, most: int = MAX_SEEDS, prompts: int = SIM_PROMPTS
) -> int | None:
    """The fewest seed pairs (2..most) that find ``effect`` with ``power``; None if unknown or more than ``most``."""
    if sd is None or sd <= 0:
        return None
    for n in range(2, most + 1):
        if power_at(effect, sd, n, prompts) >= power:
            return n
    return None


def plan(seeds: int, sd: float | None, source: str, effect: float = DEFAULT_EFFECT) -> PowerPlan:
    """The power of a run at its seed pairs, and the test it assumes."""
    detectable = mde(sd, seeds)
    return PowerPlan(
        seeds=seeds,
        sd_difference=None if sd is None else round(sd, 5),
        noise_source=source if sd is not None else "",
        mde=None if detectable is None else round(detectable, 5),
        effect=effect,
        seeds_needed=seeds_needed(effect, sd),
        power_at_effect=None if sd is None or seeds < 2 else round(power_at(effect, sd, seeds), 4),
        alpha=ALPHA,
        power=POWER,
        test=f"the more precise verdict metric's paired t at alpha {ALPHA:g} / {METRICS} (Holm's first step), "
        f"min effect {MIN_EFFECT:g}: a lower bound on the rule's power",
    )


@dataclass(frozen=True)
class Setting:
    """What a run trained, as far as the class of its evidence goes."""

    toy: bool  # a toy task (the char-level policies)
    quick: bool  # a tiny checkpoint (weights under TINY_MODEL_BYTES) or the ckpt-quick preset
    steps: int
    seeds: int
    effect: float = DEFAULT_EFFECT
    setup: str = ""  # model, parameters, task, steps, seed pairs (records.RunRecord.setup)


def classify(setting: Setting, sd: float | None, source: str) -> Evidence:
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
    mde = power.mde
    if mde is None:
        short.append("no seed noise measured (run an A/A)")
    elif mde > setting.effect:
        short.append(f"minimum detectable effect {100 * mde:.1f} pts > the {100 * setting.effect:.1f} pts asked for")
    if short or mde is None:  # (no mde: short says so)
        return {"class": "underpowered", "reason": "; ".join(short), "power": power}
    return {
        "class": "evidence",
        "reason": f"a real checkpoint, {setting.steps} steps, {setting.seeds} seed pairs, minimum detectable "
        f"effect {100 * mde:.1f} pts",
        "power": power,
    }
