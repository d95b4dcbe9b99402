"""The verdict: method vs baseline over seeds, with a paired bootstrap confidence interval.

Each seed gives one paired difference (method minus baseline, same seed, same warm start, same
problem stream). The interval is a percentile bootstrap over seeds; with 3 seeds it is coarse (it
can take only a few distinct values), so "inconclusive" is a frequent and honest answer. Pure
functions over per-step records; no I/O.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from radar.repro.methods import Claim, Method

Records = list[dict[str, Any]]  # per-step metric records of one (arm, seed)

BOOTSTRAP_DRAWS = 4000
CONFIDENCE = 0.95


def series(records: Records, metric: str) -> list[tuple[int, float]]:
    return [(int(r["step"]), float(r[metric])) for r in records if isinstance(r.get(metric), int | float)]


def aggregate(records: Records, metric: str, window: str) -> float:
    """'late': mean over the last half of steps; 'final': last quarter; 'all': mean over all steps
    (the normalised area under the curve); 'slope': least-squares slope per 100 steps."""
    points = series(records, metric)
    if not points:
        return math.nan
    if window == "slope":
        if len(points) < 2:
            return math.nan
        xs, ys = zip(*points, strict=True)
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        var = sum((x - mx) ** 2 for x in xs)
        return 100 * sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var if var else math.nan
    last = points[-1][0]
    start = {"late": last / 2, "final": last * 3 / 4, "all": -1}[window]
    values = [v for s, v in points if s > start] or [points[-1][1]]
    return sum(values) / len(values)


def bootstrap_ci(values: Sequence[float], seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean of ``values`` (NaNs dropped); NaNs for fewer than 2 values."""
    vals = [v for v in values if not math.isnan(v)]
    if not vals:
        return math.nan, math.nan
    if len(vals) == 1:  # one seed gives no interval: never "better"/"worse"/"holds" from one seed
        return math.nan, math.nan
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(vals, k=len(vals))) / len(vals) for _ in range(BOOTSTRAP_DRAWS))
    alpha = (1 - CONFIDENCE) / 2
    return means[int(alpha * (BOOTSTRAP_DRAWS - 1))], means[int((1 - alpha) * (BOOTSTRAP_DRAWS - 1))]


def compare(
    method_runs: dict[int, Records], baseline_runs: dict[int, Records], metric: str, window: str
) -> dict[str, Any]:
    """Paired per-seed comparison of one aggregated metric."""
    seeds = sorted(set(method_runs) & set(baseline_runs))
    m = [aggregate(method_runs[s], metric, window) for s in seeds]
    b = [aggregate(baseline_runs[s], metric, window) for s in seeds]
    diffs = [x - y for x, y in zip(m, b, strict=True)]
    lo, hi = bootstrap_ci(diffs)
    return {
        "metric": metric,
        "window": window,
        "seeds": seeds,
        "method": _r(m),
        "baseline": _r(b),
        "method_mean": _r(_mean(m)),
        "baseline_mean": _r(_mean(b)),
        "diff_mean": _r(_mean(diffs)),
        "ci": [_r(lo), _r(hi)],
        "confidence": CONFIDENCE,
    }


MIN_EFFECT = 0.01  # a difference under 1 point of correctness is not called better/worse, however tight


def label(cmp: dict[str, Any], min_effect: float = MIN_EFFECT) -> str:
    """'better'/'worse' when the CI excludes 0 and the mean difference is at least ``min_effect``."""
    lo, hi = cmp["ci"]
    diff = cmp.get("diff_mean")
    if diff is None:
        return "no data"
    if lo is None or hi is None:
        return "too few seeds"
    if lo > 0 and diff >= min_effect:
        return "better"
    if hi < 0 and diff <= -min_effect:
        return "worse"
    return "no clear difference"


def check_claim(claim: Claim, method_runs: dict[int, Records], baseline_runs: dict[int, Records]) -> dict[str, Any]:
    """'holds', 'refuted' or 'inconclusive', with the numbers behind it."""
    if claim.direction == "ratio_at_least":
        seeds = sorted(set(method_runs) & set(baseline_runs))
        m = [aggregate(method_runs[s], claim.metric, claim.window) for s in seeds]
        b = [aggregate(baseline_runs[s], claim.metric, claim.window) for s in seeds]
        ratios = [x / max(y, 1e-6) for x, y in zip(m, b, strict=True)]
        lo, hi = bootstrap_ci(ratios)
        cmp = {
            "metric": claim.metric,
            "window": claim.window,
            "seeds": seeds,
            "method": _r(m),
            "baseline": _r(b),
            "ratio_mean": _r(_mean(ratios)),
            "ci": [_r(lo), _r(hi)],
            "confidence": CONFIDENCE,
        }
        status = _status(lo >= claim.margin, hi < claim.margin, lo, hi)
    else:
        cmp = compare(method_runs, baseline_runs, claim.metric, claim.window)
        lo, hi = cmp["ci"]
        lo = math.nan if lo is None else lo
        hi = math.nan if hi is None else hi
        if claim.direction == "higher":
            status = _status(lo > 0, hi < 0, lo, hi)
        elif claim.direction == "lower":
            status = _status(hi < 0, lo > 0, lo, hi)
        elif claim.direction == "not_lower":
            status = _status(lo >= -claim.margin, hi < -claim.margin, lo, hi)
        else:
            raise ValueError(f"unknown claim direction {claim.direction!r}")
    result = {"claim": claim.text, "status": status, "evidence": cmp}
    if claim.also is not None:
        second = check_claim(claim.also, method_runs, baseline_runs)
        result["also"] = second
        statuses = {status, second["status"]}
        result["status"] = "refuted" if "refuted" in statuses else "holds" if statuses == {"holds"} else "inconclusive"
    return result


def verdict(method: Method, baseline: Method, runs: dict[str, dict[int, Records]]) -> dict[str, Any]:
    """The run's verdict: final correctness, correctness AUC, and the method's claim.

    ``runs`` is {"method": {seed: records}, "baseline": {seed: records}}.
    """
    m_runs, b_runs = runs["method"], runs["baseline"]
    final = compare(m_runs, b_runs, "correct", "final")
    auc = compare(m_runs, b_runs, "correct", "all")
    claim = check_claim(method.claim, m_runs, b_runs)
    labels = {label(final), label(auc)}
    if labels <= {"better", "no clear difference"} and "better" in labels:
        overall = "better"
    elif labels <= {"worse", "no clear difference"} and "worse" in labels:
        overall = "worse"
    elif labels == {"better", "worse"}:
        overall = "mixed"
    else:
        overall = "no clear difference"
    n = len(final["seeds"])
    summary = (
        f"{method.name} vs {baseline.name} over {n} seed(s): final correctness {_pct(final['method_mean'])} vs "
        f"{_pct(final['baseline_mean'])} (diff {_ci_text(final)}), correctness AUC {_pct(auc['method_mean'])} vs "
        f'{_pct(auc["baseline_mean"])} (diff {_ci_text(auc)}) -> {overall}. Claim "{claim["claim"]}": '
        f"{claim['status']}."
    )
    if n < 2:
        summary += " One seed gives no confidence interval: run --seeds 3 or more for a verdict."
    elif n < 3:
        summary += " Fewer than 3 seeds: treat the interval as indicative only."
    return {"overall": overall, "final_reward": final, "reward_auc": auc, "claim": claim, "summary": summary}


def _status(holds: bool, refuted: bool, lo: float, hi: float) -> str:
    if math.isnan(lo) or math.isnan(hi):
        return "inconclusive"
    return "holds" if holds else "refuted" if refuted else "inconclusive"


def _mean(values: Sequence[float]) -> float:
    vals = [v for v in values if not math.isnan(v)]
    return sum(vals) / len(vals) if vals else math.nan


def _r(x: Any) -> Any:
    if isinstance(x, list):
        return [_r(v) for v in x]
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), 4)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _ci_text(cmp: dict[str, Any]) -> str:
    lo, hi = cmp["ci"]
    if cmp["diff_mean"] is None:
        return "n/a"
    if lo is None:
        return f"{100 * cmp['diff_mean']:+.1f} pts, no interval from one seed"
    return f"{100 * cmp['diff_mean']:+.1f} pts, {int(100 * cmp['confidence'])}% CI [{100 * lo:+.1f}, {100 * hi:+.1f}]"
