"""The verdict's decision rule, vectorised over seed pairs (the last axis): paired t tests, Holm's correction,
the per-metric and overall labels, and ``simulate``, which runs the same rule over synthetic runs so that its
error rates are measured (the test suite, benchmarks/bench_verdict.py). repro/verdict.py applies it to a run.

Pure functions; no I/O, no torch.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

from radar.repro.power import ALPHA, MIN_EFFECT

# The simulations of the test suite use the seed noise of the real A/A run (benchmarks/bench_verdict.py aa:
# grpo vs grpo, addition, tiny, 5 pairs x 200 steps): held-out greedy accuracy 63 %, sd between warm starts
# 7 points, sd of the paired differences 2.0 points. Training noise of 1.2 points per arm plus binomial
# scoring over 1,000 problems gives a simulated difference sd of 2.7 points: a little more than measured.
SIM_TRAIN_SD = 0.012
SIM_INIT_SD = 0.07  # sd between warm starts (shared within a pair, so it cancels in the difference)
SIM_EVAL_PROMPTS = 1000


@dataclass(frozen=True)
class SimNoise:
    """The simulated runs' noise model (``simulate`` here, ``simulate_family``/``simulate_looks`` in
    repro/adoption.py): training noise per arm, the warm start's level per pair (shared by its arms), the held-out
    problems scored, and the base accuracy."""

    train_sd: float = SIM_TRAIN_SD
    init_sd: float = SIM_INIT_SD
    prompts: int = SIM_EVAL_PROMPTS
    base: float = 0.63


SIM_NOISE = SimNoise()  # the defaults: the noise measured on the toy tasks


# -- tests (vectorised: the last axis holds the seeds) ----------------------------------------------
def paired_t(diffs: np.ndarray, null: float = 0.0, alternative: str = "two-sided") -> dict[str, np.ndarray]:
    """Paired t test of mean(diffs) against ``null`` along the last axis; NaNs (missing seeds) dropped
    per row. Returns n, effect (mean), se, df, p and the two-sided (1 - ALPHA) interval."""
    d = np.asarray(diffs, dtype=float)
    n = np.sum(~np.isnan(d), axis=-1)
    with warnings.catch_warnings():  # a row with no seed at all gives NaN, which is the answer
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(d, axis=-1) if d.size else np.full(d.shape[:-1], np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(np.nansum((d - mean[..., None]) ** 2, axis=-1) / (n - 1))
        se = sd / np.sqrt(n)
        df = (n - 1).astype(float)
        t = (mean - null) / se
        # se == 0 (identical differences): the sign decides, p is 0 or 1
        t = np.where(se == 0, np.where(mean > null, np.inf, np.where(mean < null, -np.inf, 0.0)), t)
        if alternative == "two-sided":
            p = 2 * stats.t.sf(np.abs(t), df)
        elif alternative == "greater":
            p = stats.t.sf(t, df)
        else:
            p = stats.t.cdf(t, df)
        half = stats.t.ppf(1 - ALPHA / 2, df) * se
    p = np.where(n < 2, np.nan, np.minimum(p, 1.0))
    return {"n": n, "effect": mean, "se": se, "df": df, "p": p, "lo": mean - half, "hi": mean + half, "sd": sd}


def holm(p: np.ndarray) -> np.ndarray:
    """Holm-adjusted p values along the last axis (NaN p values stay NaN and do not count)."""
    p = np.asarray(p, dtype=float)
    filled = np.where(np.isnan(p), np.inf, p)
    order = np.argsort(filled, axis=-1)
    sorted_p = np.take_along_axis(filled, order, axis=-1)
    m = np.sum(~np.isnan(p), axis=-1, keepdims=True)
    k = np.arange(p.shape[-1])
    scaled = np.where(np.isinf(sorted_p), np.inf, np.maximum(m - k, 1) * sorted_p)
    adjusted = np.maximum.accumulate(np.minimum(scaled, 1.0), axis=-1)
    out = np.empty_like(adjusted)
    np.put_along_axis(out, order, adjusted, axis=-1)
    return np.where(np.isnan(p), np.nan, out)


def metric_labels(effect: np.ndarray, p_adjusted: np.ndarray, min_effect: float = MIN_EFFECT) -> np.ndarray:
    """'better' / 'worse' / 'no clear difference' / 'too few seeds' per metric."""
    sig = p_adjusted < ALPHA
    return np.where(
        np.isnan(p_adjusted),
        "too few seeds",
        np.where(
            sig & (effect >= min_effect),
            "better",
            np.where(sig & (effect <= -min_effect), "worse", "no clear difference"),
        ),
    )


def overall_label(labels: np.ndarray) -> np.ndarray:
    """Combine the metric labels (last axis): better / worse / mixed / no clear difference / too few seeds."""
    better = np.any(labels == "better", axis=-1)
    worse = np.any(labels == "worse", axis=-1)
    few = np.all(labels == "too few seeds", axis=-1)
    return np.where(
        better & worse,
        "mixed",
        np.where(better, "better", np.where(worse, "worse", np.where(few, "too few seeds", "no clear difference"))),
    )


def decide(diffs: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """The overall decision for diffs of shape (..., metrics, seeds): (tests, metric labels, overall)."""
    tests = paired_t(diffs)
    tests["p_adjusted"] = holm(tests["p"])
    labels = metric_labels(tests["effect"], tests["p_adjusted"])
    return tests, labels, overall_label(labels)


# -- simulation (the error rates of the rule above) -------------------------------------------------
def simulate(
    seeds: int,
    effect: float = 0.0,
    trials: int = 20_000,
    noise: SimNoise = SIM_NOISE,
    rng_seed: int = 0,
) -> dict[str, float]:
    """Synthetic runs through ``decide``: per pair a shared warm-start level, per arm independent
    training noise, then held-out scores drawn as binomial counts over ``prompts`` problems (greedy)
    and over 4 x ``prompts`` samples (pass@1). Returns the shares of overall labels."""
    rng = np.random.default_rng(rng_seed)
    prompts = noise.prompts
    init = rng.normal(0.0, noise.init_sd, (trials, 1, seeds))
    levels = {
        arm: np.clip(noise.base + init + rng.normal(0.0, noise.train_sd, (trials, 1, seeds)) + shift, 0.0, 1.0)
        for arm, shift in (("method", effect), ("baseline", 0.0))
    }
    scores = {
        arm: np.concatenate(
            [rng.binomial(prompts, lv) / prompts, rng.binomial(4 * prompts, lv) / (4 * prompts)], axis=1
        )
        for arm, lv in levels.items()
    }
    _, _, overall = decide(scores["method"] - scores["baseline"])
    return {label: float(np.mean(overall == label)) for label in ("better", "worse", "mixed", "no clear difference")}
