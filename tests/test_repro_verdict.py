"""Verdict statistics: aggregation windows, paired bootstrap CI over seeds, claims."""

from __future__ import annotations

import math
import random

import pytest

from radar.repro.methods import Claim, get_method
from radar.repro.verdict import aggregate, bootstrap_ci, check_claim, compare, label, verdict


def _curve(start: float, end: float, steps: int = 40, noise: float = 0.0, seed: int = 0, **extra: float):
    rng = random.Random(seed)
    return [
        {"step": i, "correct": start + (end - start) * i / steps + rng.uniform(-noise, noise), **extra}
        for i in range(1, steps + 1)
    ]


def test_aggregate_windows() -> None:
    recs = [{"step": i, "x": float(i)} for i in range(1, 101)] + [{"step": 101}]
    assert aggregate(recs, "x", "all") == pytest.approx(50.5)
    assert aggregate(recs, "x", "late") == pytest.approx(75.5)  # steps 51..100 (101 has no x)
    assert aggregate(recs, "x", "slope") == pytest.approx(100.0)
    assert math.isnan(aggregate(recs, "missing", "all"))


def test_bootstrap_ci_brackets_the_mean() -> None:
    lo, hi = bootstrap_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    assert lo < 3.0 < hi and lo >= 1.0 and hi <= 5.0
    assert all(math.isnan(v) for v in bootstrap_ci([2.0]))  # one seed: no interval
    assert bootstrap_ci([0.1, 0.1, 0.1]) == pytest.approx((0.1, 0.1))
    assert all(math.isnan(v) for v in bootstrap_ci([]))


def test_clear_improvement_is_better_and_noise_is_not() -> None:
    better = {s: _curve(0.3, 0.8, seed=s, noise=0.02) for s in range(3)}
    base = {s: _curve(0.3, 0.4, seed=10 + s, noise=0.02) for s in range(3)}
    assert label(compare(better, base, "correct", "final")) == "better"
    assert label(compare(base, better, "correct", "all")) == "worse"
    same = {s: _curve(0.3, 0.4, seed=20 + s, noise=0.2) for s in range(3)}
    assert label(compare(same, base, "correct", "final")) in ("no clear difference", "better", "worse")
    doc = verdict(get_method("dapo"), get_method("grpo"), {"method": better, "baseline": base})
    assert doc["overall"] == "better" and "dapo vs grpo over 3 seed(s)" in doc["summary"]
    assert doc["final_reward"]["seeds"] == [0, 1, 2]
    one = verdict(get_method("dapo"), get_method("grpo"), {"method": {0: better[0]}, "baseline": {0: base[0]}})
    assert one["overall"] == "no clear difference" and one["claim"]["status"] == "inconclusive"
    assert label(one["final_reward"]) == "too few seeds"


def test_claims() -> None:
    hi_ent = {s: _curve(0.3, 0.5, seed=s, entropy=0.6 + 0.01 * s) for s in range(3)}
    lo_ent = {s: _curve(0.3, 0.5, seed=s, entropy=0.4 + 0.01 * s) for s in range(3)}
    claim = Claim("entropy higher", "entropy", "higher")
    assert check_claim(claim, hi_ent, lo_ent)["status"] == "holds"
    assert check_claim(claim, lo_ent, hi_ent)["status"] == "refuted"
    mixed = {0: _curve(0, 1, entropy=0.7), 1: _curve(0, 1, entropy=0.3), 2: _curve(0, 1, entropy=0.5)}
    assert check_claim(claim, mixed, {s: _curve(0, 1, entropy=0.5) for s in range(3)})["status"] == "inconclusive"

    clips = {s: [{"step": i, "clip_ratio": 0.5, "correct": 0.5} for i in range(1, 9)] for s in range(3)}
    few = {s: [{"step": i, "clip_ratio": 0.01, "correct": 0.5} for i in range(1, 9)] for s in range(3)}
    ratio = Claim(
        "clips 10x",
        "clip_ratio",
        "ratio_at_least",
        "all",
        10.0,
        also=Claim("not worse", "correct", "not_lower", "late", 0.05),
    )
    result = check_claim(ratio, clips, few)
    assert result["status"] == "holds" and result["evidence"]["ratio_mean"] == pytest.approx(50.0)
    assert check_claim(ratio, few, clips)["status"] == "refuted"
