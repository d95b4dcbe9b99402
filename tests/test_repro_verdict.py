"""Verdict statistics: the paired t test and Holm against scipy, the measured false "better/worse"
rate and power of the decision rule at the default settings, claims, and the summary sentence."""

from __future__ import annotations

import math
import random
import re

import numpy as np
import pytest
from scipy import stats

from radar.repro.methods import METHODS, Claim, get_method
from radar.repro.verdict import (
    ALPHA,
    DEFAULT_SEEDS,
    aggregate,
    check_claim,
    holm,
    paired_t,
    simulate,
    verdict,
)
from radar.store.runs import RunVerdict

TRIALS = 20_000


def _curve(start: float, end: float, steps: int = 40, noise: float = 0.0, seed: int = 0, **extra: float):
    rng = random.Random(seed)
    return [
        {"step": i, "correct": start + (end - start) * i / steps + rng.uniform(-noise, noise), **extra}
        for i in range(1, steps + 1)
    ]


def _arm(greedy: float, pass1: float | None = None, records=None):  # type: ignore[no-untyped-def]
    return {
        "records": records or [],
        "final": {"heldout_greedy": greedy, "heldout_pass1": greedy if pass1 is None else pass1},
    }


def test_aggregate_windows() -> None:
    recs = [{"step": i, "x": float(i)} for i in range(1, 101)] + [{"step": 101}]
    assert aggregate(recs, "x", "all") == pytest.approx(50.5)
    assert aggregate(recs, "x", "late") == pytest.approx(75.5)  # steps 51..100 (101 has no x)
    assert aggregate(recs, "x", "slope") == pytest.approx(100.0)
    assert math.isnan(aggregate(recs, "missing", "all"))


def test_paired_t_and_holm_match_scipy() -> None:
    rng = np.random.default_rng(3)
    d = rng.normal(0.01, 0.02, (50, 5))
    ours = paired_t(d)
    ref = stats.ttest_1samp(d, 0.0, axis=-1)
    assert np.allclose(ours["p"], ref.pvalue)
    greater = paired_t(d, null=-0.02, alternative="greater")
    assert np.allclose(greater["p"], stats.ttest_1samp(d, -0.02, axis=-1, alternative="greater").pvalue)
    ci = ref.confidence_interval(1 - ALPHA)
    assert np.allclose(ours["lo"], ci.low) and np.allclose(ours["hi"], ci.high)
    p = np.array([[0.01, 0.04, 0.03], [0.2, 0.001, np.nan]])
    assert np.allclose(holm(p)[0], [0.03, 0.06, 0.06])
    assert holm(p)[1][1] == pytest.approx(0.002) and holm(p)[1][0] == pytest.approx(0.2) and np.isnan(holm(p)[1][2])
    assert np.isnan(paired_t(np.array([[0.1]]))["p"][0])  # one seed: no test


@pytest.mark.parametrize("seeds", [3, DEFAULT_SEEDS, 10])
def test_false_better_or_worse_rate_is_at_most_alpha(seeds: int) -> None:
    """Both arms from the same distribution: "better" or "worse" (or "mixed") at most 5% of the time,
    allowing three simulation standard errors."""
    shares = simulate(seeds, effect=0.0, trials=TRIALS, rng_seed=seeds)
    false = shares["better"] + shares["worse"] + shares["mixed"]
    sim_error = math.sqrt(ALPHA * (1 - ALPHA) / TRIALS)
    assert false <= ALPHA + 3 * sim_error, shares
    assert false > 0.01  # the rule is not vacuous: it does reject at about its level


def test_five_point_effect_is_found_at_default_settings() -> None:
    shares = simulate(DEFAULT_SEEDS, effect=0.05, trials=TRIALS, rng_seed=11)
    assert shares["better"] >= 0.80, shares
    assert simulate(DEFAULT_SEEDS, effect=-0.05, trials=TRIALS, rng_seed=12)["worse"] >= 0.80


def test_old_rule_would_fail_this_suite() -> None:
    """The bootstrap-over-3-seeds rule that this replaced: its interval is the min..max of the paired
    differences, so a null run is called better/worse far more than 5% of the time."""
    rng = np.random.default_rng(0)
    d = rng.normal(0.0, 1.0, (TRIALS, 3))
    rate = float(np.mean((d.min(axis=1) > 0) | (d.max(axis=1) < 0)))
    assert rate > 0.2


def test_verdict_on_clear_and_null_results() -> None:
    better = {s: _arm(0.80 + 0.002 * s) for s in range(5)}
    base = {s: _arm(0.70 + 0.003 * s) for s in range(5)}
    doc = verdict(get_method("dapo"), get_method("grpo"), {"method": better, "baseline": base})
    assert doc["overall"] == "better"
    g = doc["metrics"]["heldout_greedy"]
    assert g["n"] == 5 and g["effect"] == pytest.approx(0.098, abs=1e-3) and g["p_adjusted"] < ALPHA
    assert g["interval"][0] < g["effect"] < g["interval"][1] and g["label"] == "better"
    assert doc["seed_noise"]["sd_difference"] is not None and doc["seed_noise"]["n"] == 5
    worse = verdict(get_method("dapo"), get_method("grpo"), {"method": base, "baseline": better})
    assert worse["overall"] == "worse"
    tiny = {s: _arm(0.70 + 0.003 * s + 0.005) for s in range(5)}  # significant but under the minimum effect
    assert verdict(get_method("dapo"), get_method("grpo"), {"method": tiny, "baseline": base})["overall"] == (
        "no clear difference"
    )
    one = verdict(get_method("dapo"), get_method("grpo"), {"method": {0: better[0]}, "baseline": {0: base[0]}})
    assert one["overall"] == "too few seeds" and "run --seeds 5" in one["summary"]
    assert RunVerdict.from_dict(doc) is not None and RunVerdict.from_dict(doc).calibrated  # type: ignore[union-attr]


def test_claim_against_the_wrong_baseline_is_not_checked() -> None:
    runs = {"method": {s: _arm(0.7) for s in range(3)}, "baseline": {s: _arm(0.7) for s in range(3)}}
    doc = verdict(get_method("luspo"), get_method("grpo"), runs)
    assert doc["claim"]["status"] == "not checked" and "--baseline gspo" in doc["claim"]["reason"]


def test_claims_need_a_minimum_effect_and_use_their_own_tests() -> None:
    hi = {s: _arm(0.7, records=_curve(0.3, 0.5, seed=s, entropy=0.60 + 0.01 * s)) for s in range(5)}
    lo = {s: _arm(0.7, records=_curve(0.3, 0.5, seed=s, entropy=0.40 + 0.012 * s)) for s in range(5)}
    claim = Claim("entropy higher", "entropy", "higher", min_effect=0.02)
    assert check_claim(claim, hi, lo)["status"] == "holds"
    assert check_claim(claim, lo, hi)["status"] == "refuted"
    barely = {s: _arm(0.7, records=_curve(0.3, 0.5, seed=s, entropy=0.40 + 0.012 * s + 0.005)) for s in range(5)}
    # significant, but 0.005 nats is under the claim's minimum effect: refuted (the bound excludes 0.02)
    assert check_claim(claim, barely, lo)["status"] == "refuted"
    with pytest.raises(Exception, match="minimum effect"):
        Claim("x", "entropy", "higher")

    not_worse = Claim("within 2 points", "heldout_greedy", "not_lower", "end", 0.02)
    same = {s: _arm(0.70 + 0.001 * s) for s in range(5)}
    result = check_claim(not_worse, same, {s: _arm(0.70 + 0.0012 * s) for s in range(5)})
    assert result["status"] == "holds" and "non-inferiority" in result["test"]["test"]
    assert check_claim(not_worse, {s: _arm(0.60 + 0.001 * s) for s in range(5)}, same)["status"] == "refuted"

    clips = {s: _arm(0.7, records=[{"step": i, "clip_ratio": 0.5 + 0.01 * s} for i in range(1, 9)]) for s in range(3)}
    few = {s: _arm(0.7, records=[{"step": i, "clip_ratio": 0.01 + 0.001 * s} for i in range(1, 9)]) for s in range(3)}
    ratio = Claim("clips 10x", "clip_ratio", "ratio_at_least", "all", 10.0, also=not_worse)
    out = check_claim(ratio, clips, few)
    assert out["status"] == "holds" and out["test"]["effect"] == pytest.approx(50.0, rel=0.1)
    assert check_claim(ratio, few, clips)["status"] == "refuted"


_SENTENCE = re.compile(r"-> (better|worse|no clear difference|too few seeds)")


@pytest.mark.parametrize("trial", range(40))
def test_summary_never_contradicts_the_labels(trial: int) -> None:
    rng = np.random.default_rng(trial)
    n = int(rng.integers(1, 8))
    effect = float(rng.choice([0.0, 0.03, -0.03, 0.2]))
    name = str(rng.choice(sorted(METHODS)))
    method = get_method(name)
    m = {s: _arm(float(rng.normal(0.7 + effect, 0.02)), float(rng.normal(0.6 - effect, 0.02))) for s in range(n)}
    b = {s: _arm(float(rng.normal(0.7, 0.02)), float(rng.normal(0.6, 0.02))) for s in range(n)}
    doc = verdict(method, get_method(method.baseline or name), {"method": m, "baseline": b})
    text = doc["summary"]
    assert _SENTENCE.findall(text) == [doc["metrics"][k]["label"] for k in ("heldout_greedy", "heldout_pass1")]
    overall = re.search(r"Overall: ([a-z ]+?)[;(]", text)
    assert overall and overall.group(1).strip() == doc["overall"]
    assert text.endswith(f"{doc['claim']['status']}.") or "run --seeds" in text
    words = set(re.findall(r"better|worse|mixed", text.split(" Claim ")[0]))
    labels = {doc["overall"], *(doc["metrics"][k]["label"] for k in ("heldout_greedy", "heldout_pass1"))}
    assert words <= labels  # no label word appears that the structured result does not carry
