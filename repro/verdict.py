"""The verdict: method vs baseline over paired seeds, with tests whose error rates are measured.

Design (repro/README.md has the numbers):
- Unit of replication: a seed pair. Pair ``s`` shares one SFT warm start (checkpoint ``s``); the two
  arms then train with independent RL seeds. An A/A run (method == baseline) is therefore exactly
  the null the A/B verdict faces, and measures the seed noise.
- Target: held-out scores at the end of training (greedy accuracy and pass@1 averaged over several
  samples, on >= 1000 problems of the evaluation part of the problem space, which training never
  sees). Training-batch accuracy at T = 1 is not a target (it rewards entropy collapse).
- Test: a paired t test over seed pairs for each metric the overall label combines (held-out greedy
  and pass@1), Holm-corrected together; a metric is "better"/"worse" only when its adjusted p is
  below ``ALPHA`` and its mean difference is at least ``MIN_EFFECT``. Exact sign-flip tests cannot
  reach p < 0.05 below 6 seeds, so they are not used.
- Claims: their own test (two-sided for higher/lower with a minimum effect, one-sided
  non-inferiority with a margin for "not lower", one-sided on log ratios for "ratio at least"),
  Holm-corrected over the claim's conditions. A claim is "refuted" when the one-sided (1 - ALPHA)
  bound excludes the claimed effect, "holds" when its test rejects, "inconclusive" otherwise.
- The tests and the decision rule are repro/paired_tests.py, whose ``simulate`` runs the rule vectorised over
  many synthetic runs: the test suite and benchmarks/bench_verdict.py measure the false "better/worse" rate
  and the power with it.
- What a run can support (repro/power.py ``classify``): ``pipeline check`` (toy tasks, tiny checkpoints),
  ``evidence`` or ``underpowered``, with the minimum detectable effect at its seed pairs; the per-arm
  mechanism rates (repro/mechanisms.py) gate the claim ("not testable here" when its lever did not engage).
  Whether a run may drive an "adopt" is decided over all finished runs (repro/adoption.py).

Pure functions; no I/O, no torch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeGuard

import msgspec
import numpy as np
from scipy import stats

from radar.repro import mechanisms as mech
from radar.repro.methods import Claim, Method
from radar.repro.paired_tests import decide, holm, paired_t
from radar.repro.power import ALPHA, MIN_EFFECT, Setting, classify
from radar.repro.result_shapes import PlannedPower
from radar.repro.shapes import (
    ArmRun,
    Calibration,
    ClaimCondition,
    ClaimResult,
    ClaimTest,
    Efficiency,
    Profile,
    SeedNoise,
    StepRecord,
    Verdict,
    VerdictMetric,
)

__all__ = ["ALPHA", "MIN_EFFECT", "Setting"]

Records = list[StepRecord]  # per-step metric records of one (arm, seed)

VERDICT_METRICS: tuple[tuple[str, str], ...] = (
    ("heldout_greedy", "held-out greedy accuracy"),
    ("heldout_pass1", "held-out pass@1"),
)
DEFAULT_SEEDS = 5


# -- aggregation of per-step records ----------------------------------------------------------------
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


def arm_value(run: ArmRun, metric: str, window: str) -> float:
    """One number per (arm, seed): a held-out score at the end, or an aggregate of the step records."""
    if window == "end":
        value = run.final.get(metric)
        return float(value) if isinstance(value, int | float) else math.nan
    return aggregate(run.records, metric, window)


# -- claims -----------------------------------------------------------------------------------------
def check_claim(claim: Claim, method_runs: dict[int, ArmRun], baseline_runs: dict[int, ArmRun]) -> ClaimResult:
    """'holds', 'refuted' or 'inconclusive', with the test behind it (Holm over the claim's conditions)."""
    conditions = [claim] + ([claim.also] if claim.also else [])
    tested = [_claim_test(c, method_runs, baseline_runs) for c in conditions]
    adjusted = holm(np.array([t.test.p if t.test.p is not None else np.nan for t in tested]))
    results: list[ClaimCondition] = []
    for t, p_adj in zip(tested, adjusted, strict=True):
        held = replace(t, test=msgspec.structs.replace(t.test, p_adjusted=_r(p_adj)))
        results.append(ClaimCondition(held.test, _claim_status(held)))
    statuses = {r.status for r in results}
    status = "refuted" if "refuted" in statuses else "holds" if statuses == {"holds"} else "inconclusive"
    return ClaimResult(claim=claim.text, status=status, test=results[0].test, conditions=results)


@dataclass(frozen=True)
class _Tested:
    """One condition of a claim, tested: the test as the verdict shows it, and the bounds its status needs."""

    claim: Claim
    test: ClaimTest
    upper: float  # effect + the one-sided (1 - ALPHA) half-width (NaN below 2 seed pairs)
    lower: float
    effect: float


def _claim_test(claim: Claim, method_runs: dict[int, ArmRun], baseline_runs: dict[int, ArmRun]) -> _Tested:
    seeds = sorted(set(method_runs) & set(baseline_runs))
    m = np.array([arm_value(method_runs[s], claim.metric, claim.window) for s in seeds])
    b = np.array([arm_value(baseline_runs[s], claim.metric, claim.window) for s in seeds])
    if claim.direction == "ratio_at_least":
        diffs, null, alternative, test = (
            np.log(np.maximum(m, 1e-6) / np.maximum(b, 1e-6)),
            math.log(claim.margin),
            "greater",
            "paired t on log ratios, one-sided",
        )
    elif claim.direction == "not_lower":
        diffs, null, alternative, test = (
            m - b,
            -claim.margin,
            "greater",
            f"paired t non-inferiority, margin {claim.margin:g}",
        )
    else:
        diffs, null, alternative, test = m - b, 0.0, "two-sided", "paired t, two-sided"
    t = paired_t(diffs[None, :] if diffs.size else np.full((1, 0), np.nan), null, alternative)
    one_sided = stats.t.ppf(1 - ALPHA, t["df"][0]) * t["se"][0] if t["n"][0] >= 2 else math.nan
    effect = float(t["effect"][0])
    return _Tested(
        claim=claim,
        test=ClaimTest(
            name=claim.text,
            metric=claim.metric,
            window=claim.window,
            test=test,
            n=int(t["n"][0]),
            effect=_r(math.exp(effect) if claim.direction == "ratio_at_least" and not math.isnan(effect) else effect),
            effect_scale="ratio" if claim.direction == "ratio_at_least" else "difference",
            interval=[_r(t["lo"][0]), _r(t["hi"][0])]
            if claim.direction != "ratio_at_least"
            else [_r(_exp(t["lo"][0])), _r(_exp(t["hi"][0]))],
            p=_r(t["p"][0]),
            method=_r(list(m)),
            baseline=_r(list(b)),
            seeds=seeds,
        ),
        upper=effect + one_sided,
        lower=effect - one_sided,
        effect=effect,
    )


def _claim_status(r: _Tested) -> str:
    claim, upper, lower, effect = r.claim, r.upper, r.lower, r.effect
    p_adj = r.test.p_adjusted
    if not isinstance(p_adj, float) or math.isnan(upper):
        return "inconclusive"
    rejects = p_adj < ALPHA
    if claim.direction == "higher":
        if rejects and effect >= claim.min_effect:
            return "holds"
        return "refuted" if upper < claim.min_effect else "inconclusive"
    if claim.direction == "lower":
        if rejects and effect <= -claim.min_effect:
            return "holds"
        return "refuted" if lower > -claim.min_effect else "inconclusive"
    bound = -claim.margin if claim.direction == "not_lower" else math.log(claim.margin)
    if rejects:
        return "holds"
    return "refuted" if upper < bound else "inconclusive"


# -- the verdict ------------------------------------------------------------------------------------
def verdict(
    method: Method,
    baseline: Method,
    runs: dict[str, dict[int, ArmRun]],
    calibration: Calibration | None = None,
    profiles: dict[str, dict[int, Profile]] | None = None,
    setting: Setting | None = None,
    planned: PlannedPower | None = None,
) -> Verdict:
    """The run's verdict from {"method": {seed: ArmRun}, "baseline": {seed: ArmRun}}.

    ``calibration``: the seed noise of the matching A/A run (same model, data, preset, steps), shown beside it
    and used for the run's power. ``profiles``: each arm's efficiency profile per seed pair (repro/profile.py);
    the verdict then carries ``efficiency`` (paired per-step time ratio and peak-memory difference), quoted
    at the end of the summary. ``setting``: what was trained (toy task or checkpoint, steps, seed pairs), for
    the class of evidence; ``planned``: the power computed when the run was submitted. The tests and labels
    do not depend on the profile, the setting or the plan.
    """
    m_runs, b_runs = runs["method"], runs["baseline"]
    seeds = sorted(set(m_runs) & set(b_runs))
    names = [name for name, _ in VERDICT_METRICS]
    m = np.array([[arm_value(m_runs[s], k, "end") for s in seeds] for k in names]).reshape(len(names), len(seeds))
    b = np.array([[arm_value(b_runs[s], k, "end") for s in seeds] for k in names]).reshape(len(names), len(seeds))
    tests, labels, overall = decide(m - b)
    metrics: dict[str, VerdictMetric] = {}
    for i, (name, title) in enumerate(VERDICT_METRICS):
        metrics[name] = VerdictMetric(
            title=title,
            test="paired t over seed pairs, two-sided, Holm over " + " and ".join(names),
            n=int(tests["n"][i]),
            effect=_r(tests["effect"][i]),
            interval=[_r(tests["lo"][i]), _r(tests["hi"][i])],
            confidence=1 - ALPHA,
            p=_r(tests["p"][i]),
            p_adjusted=_r(tests["p_adjusted"][i]),
            label=str(labels[i]),
            method_mean=_r(np.nanmean(m[i]) if m[i].size else math.nan),
            baseline_mean=_r(np.nanmean(b[i]) if b[i].size else math.nan),
            method=_r(list(m[i])),
            baseline=_r(list(b[i])),
            seeds=seeds,
        )
    rates = mech.mechanisms(runs)
    claim: ClaimResult
    if method.baseline == baseline.name or (not method.baseline and method.name == baseline.name):
        claim = mech.gate(check_claim(method.claim, m_runs, b_runs), method, rates)
    else:
        want = method.baseline or method.name
        claim = ClaimResult(
            claim=method.claim.text,
            status="not checked",
            reason=f"the claim is about {want}; run with --baseline {want}",
        )
    noise = seed_noise(m, b, calibration)
    setting = setting or Setting(toy=True, quick=False, steps=0, seeds=len(seeds))
    cal_sd = calibration.sd_difference if calibration else None
    own = noise.sd_difference
    sd: float | None
    if calibration and cal_sd is not None and (own is None or cal_sd >= own):
        sd, source = float(cal_sd), f"A/A run {calibration.run}"
    else:  # the run's own noise when it is the larger (or the only) one: power is never overstated
        sd, source = own, "this run's own seed pairs"
    doc = Verdict(
        overall=str(overall),
        alpha=ALPHA,
        min_effect=MIN_EFFECT,
        primary=names[0],
        metrics=metrics,
        claim=claim,
        seed_noise=noise,
        aa=method.name == baseline.name,
        setup=setting.setup,
        evidence=classify(setting, sd, source) | {"planned": planned},
        mechanisms=rates,
        efficiency=efficiency(profiles) if profiles else msgspec.UNSET,
    )
    return msgspec.structs.replace(doc, summary=summary(method.name, baseline.name, doc))


def efficiency(profiles: dict[str, dict[int, Profile]]) -> Efficiency:
    """Method vs baseline cost over the seed pairs that have both profiles: the per-step wall-time
    ratio (geometric mean, a 95 % t interval on the log ratios from 2 pairs on, and the range), the
    peak-memory difference (mean and range) and the throughput ratio. Each pair's arms ran on the
    same device under the same conditions as far as the runner controls them."""
    m_p, b_p = profiles.get("method") or {}, profiles.get("baseline") or {}
    pairs = sorted(p for p in set(m_p) & set(b_p) if _pos(m_p[p].get("step_s")) and _pos(b_p[p].get("step_s")))
    if not pairs:
        return Efficiency(pairs=0)
    logs = np.array([math.log(m_p[p]["step_s"] / b_p[p]["step_s"]) for p in pairs])
    t = paired_t(logs[None, :])
    mems = [
        m_p[p]["peak_mem_gb"] - b_p[p]["peak_mem_gb"]
        for p in pairs
        if isinstance(m_p[p].get("peak_mem_gb"), int | float) and isinstance(b_p[p].get("peak_mem_gb"), int | float)
    ]
    tps = [
        math.log(mt / bt)
        for p in pairs
        if _pos(mt := m_p[p].get("tokens_per_s")) and _pos(bt := b_p[p].get("tokens_per_s"))
    ]

    def means(per: dict[int, Profile]) -> dict[str, float | None]:
        return {
            k: _r(sum(float(per[p].get(k) or 0.0) for p in pairs) / len(pairs))  # type: ignore[misc,arg-type]
            for k in ("step_s", "generate_s", "reward_s", "ref_s", "train_s", "tokens_per_s", "peak_mem_gb")
        }

    out = Efficiency(
        pairs=len(pairs),
        step_ratio=_r(math.exp(float(t["effect"][0]))),
        step_ratio_interval=[_r(_exp(float(t["lo"][0]))), _r(_exp(float(t["hi"][0])))] if len(pairs) >= 2 else None,
        step_ratio_range=[_r(math.exp(float(logs.min()))), _r(math.exp(float(logs.max())))],
        step_ratio_per_pair=[_r(math.exp(float(x))) for x in logs],
        peak_mem_diff_gb=_r(sum(mems) / len(mems)) if mems else None,
        peak_mem_diff_range=[_r(min(mems)), _r(max(mems))] if mems else None,
        tokens_per_s_ratio=_r(math.exp(sum(tps) / len(tps))) if tps else None,
        peak_mem_kind=m_p[pairs[0]].get("peak_mem_kind", ""),
        device=m_p[pairs[0]].get("device", ""),
        method=means(m_p),
        baseline=means(b_p),
    )
    return msgspec.structs.replace(out, text=efficiency_text(out))


def _pos(x: object) -> TypeGuard[float]:
    return isinstance(x, int | float) and not isinstance(x, bool) and x > 0


def efficiency_text(e: Efficiency) -> str:
    """'8% slower per step (x1.08; pairs x1.05-x1.10, 95% CI x1.02-x1.14 over 3 seed pairs), +0.40 GB peak (...)'."""
    ratio = e.step_ratio
    if not isinstance(ratio, float):
        return "no efficiency profile"
    pct = 100 * (ratio - 1)
    speed = (
        f"{abs(pct):.0f}% {'slower' if pct > 0 else 'faster'} per step"
        if round(abs(pct)) >= 1
        else ("the same time per step (within 1%)")
    )
    if isinstance(interval := e.step_ratio_interval, list) and isinstance(span := e.step_ratio_range, list):
        lo, hi = interval
        first, last = span
        spread = f"x{ratio:.2f}; pairs x{first:.2f}-x{last:.2f}, 95% CI x{lo:.2f}-x{hi:.2f} over {e.pairs} seed pairs"
    else:
        spread = f"x{ratio:.2f} from one seed pair: no spread"
    text = f"{speed} ({spread})"
    mem = e.peak_mem_diff_gb
    kind = e.peak_mem_kind or "memory"
    if isinstance(mem, float):
        text += f", {mem:+.2f} GB peak ({kind})" if abs(mem) >= 0.005 else f", the same peak within 0.01 GB ({kind})"
    return text


def seed_noise(m: np.ndarray, b: np.ndarray, calibration: Calibration | None) -> SeedNoise:
    """Seed-to-seed spread of the primary held-out score in this run, and the A/A calibration if any."""

    def sd(x: np.ndarray) -> float:
        x = x[~np.isnan(x)]
        return float(np.std(x, ddof=1)) if x.size >= 2 else math.nan

    by_metric = {name: _r(sd(m[i] - b[i])) if m.size else None for i, (name, _) in enumerate(VERDICT_METRICS)}
    return SeedNoise(
        metric=VERDICT_METRICS[0][0],
        sd_method=_r(sd(m[0])) if m.size else None,
        sd_baseline=_r(sd(b[0])) if b.size else None,
        sd_difference=by_metric[VERDICT_METRICS[0][0]],
        sd_differences=by_metric,  # power uses greedy's (repro/power.py splits it to model pass@1's)
        n=int(m.shape[1]) if m.ndim == 2 else 0,
        calibration=calibration,
    )


def summary(method: str, baseline: str, doc: Verdict) -> str:
    """One sentence built only from the structured result (labels are quoted, never re-derived)."""
    parts = []
    n = 0
    for name, title in VERDICT_METRICS:
        t = doc.metrics[name]
        n = max(n, t.n)
        if t.effect is None:
            parts.append(f"{title}: no data -> {t.label}")
            continue
        interval = (
            f", {int(100 * t.confidence)}% CI [{_pts(t.interval[0])}, {_pts(t.interval[1])}], Holm p={t.p_adjusted:.3f}"
            if t.p_adjusted is not None
            else ", no interval from one seed"
        )
        parts.append(
            f"{title} {_pct(t.method_mean)} vs {_pct(t.baseline_mean)} ({_pts(t.effect)} pts{interval}) -> {t.label}"
        )
    noise = doc.seed_noise
    noise_text = (
        f"seed noise: sd of per-seed differences {_pts(noise.sd_difference, sign=False)} pts"
        if noise.sd_difference is not None
        else "seed noise: not measurable from fewer than 2 seeds"
    )
    cal = noise.calibration
    if cal:
        noise_text += f" (A/A run {cal.run}: {_pts(cal.sd_difference, sign=False)} pts)"
    claim = doc.claim
    evidence = doc.evidence
    head = ""
    if evidence:
        cls = str(evidence.get("class", ""))
        head = f"{cls[:1].upper()}{cls[1:]} ({evidence.get('reason', '')})"
        head += f": {method} vs {baseline}, {doc.setup}. " if doc.setup else ". "
    power = evidence.get("power")
    power_text = (
        f"; minimum detectable effect {_pts(power.mde, sign=False)} pts at {power.seeds} pairs "
        f"(80% power, noise from {power.noise_source})"
        if power is not None and power.mde is not None
        else ""
    )
    why = f" ({claim.reason})" if claim.status == "not testable here" and claim.reason else ""
    text = head + (
        f"{method} vs {baseline} over {n} paired seed(s): {'; '.join(parts)}. Overall: {doc.overall}"
        f"{' (an A/A run: any difference is seed noise)' if doc.aa else ''}; {noise_text}{power_text}. "
        f'Claim "{claim.claim}": {claim.status}{why}.'
    )
    text += mech.lever_text(claim.levers or []) if claim.status != "not testable here" else ""
    if n < 2:
        text += " One seed gives no test: run --seeds 5 or more."
    eff = doc.efficiency  # last: on a shared CPU step times carry the load
    if isinstance(eff, Efficiency) and isinstance(eff.step_ratio, float):
        text += f" Efficiency ({eff.device or 'device'}): {eff.text}."
    return text


def _exp(x: float) -> float:
    return math.exp(x) if not math.isnan(x) else math.nan


def _r(x: Any) -> Any:
    if isinstance(x, list | tuple):
        return [_r(v) for v in x]
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else round(x, 4)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _pts(x: float | None, sign: bool = True) -> str:
    if x is None:
        return "n/a"
    return f"{100 * x:+.1f}" if sign else f"{100 * x:.1f}"


def mean(values: Sequence[float]) -> float:
    vals = [v for v in values if not math.isnan(v)]
    return sum(vals) / len(vals) if vals else math.nan
