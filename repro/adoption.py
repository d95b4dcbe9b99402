"""Which finished runs may drive an "adopt": decided over all finished runs, not by one run alone.

A finished A/B run is adoptable when
1. its verdict is "better" from the calibrated tests, and its class is ``evidence`` (repro/power.py);
2. a matching A/A run exists (same task or data, model, preset and steps: ``setting_key``) and found no
   difference, so the pipeline's null is calibrated where the run was made;
3. its test survives Holm's correction across its family: the A/B runs against the same baseline on the same
   setting that finished in the same ISO week (a week's presets share the baseline's numbers), plus every
   other look at the same experiment (``RunRecord.experiment``: all settings but the seed pairs), whenever it
   ran, so that adding seeds and looking again is paid for; or it is replicated: another look at the same
   experiment (fresh seed pairs) is itself an adoptable-class "better".

Each run's p value in the family is its smallest Holm-adjusted metric p (``RunVerdict.decision_p``, a valid p
value for "no difference on either metric"). ``simulate_family`` runs the same rule (``family_adopt``)
vectorised over synthetic weeks: the test suite and benchmarks/bench_verdict.py measure its false "adopt" rate.

Pure functions over RunRecords (no store, no torch).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import partial
from typing import Any

import numpy as np

from radar.repro.paired_tests import SIM_NOISE, SimNoise, decide, holm
from radar.repro.power import ALPHA, MIN_EFFECT
from radar.repro.records import RunAdoption, RunParams, RunRecord
from radar.repro.shapes import Calibration
from radar.repro.spec import KIND


# -- settings and families ----------------------------------------------------------------------------
def setting_key(params: RunParams) -> tuple[Any, ...]:
    """What an A/A calibration must share with a run: task or data, model, preset, steps, LoRA."""
    return (
        params.get("task"),
        params.get("preset"),
        params.get("total_steps"),
        params.get("model_path") or "",
        params.get("dataset_sha256") or "",
        bool(params.get("lora")),
    )


def iso_week(stamp: str) -> str:
    try:
        year, week, _ = datetime.strptime(stamp[:10], "%Y-%m-%d").isocalendar()
    except ValueError:
        return ""
    return f"{year}-W{week:02d}"


def _finished(records: Iterable[RunRecord]) -> list[RunRecord]:
    return [r for r in records if r.kind == KIND and r.status == "done" and r.verdict is not None]


def calibration_for(records: Iterable[RunRecord], params: RunParams, exclude: str = "") -> Calibration | None:
    """The newest finished A/A run on the same setting, with its seed noise and its own label, or None."""
    key = setting_key(params)
    for run in _finished(records):  # newest first
        v = run.verdict
        if run.id == exclude or v is None or run.method != run.baseline or setting_key(run.params) != key:
            continue
        noise = v.seed_noise
        if noise is not None and noise.sd_difference is not None:
            return Calibration(
                run=run.id, method=run.method, seeds=run.seeds, sd_difference=noise.sd_difference, overall=v.overall
            )
    return None


def stored_noise(records: Iterable[RunRecord], params: RunParams) -> tuple[float, str] | None:
    """(sd of paired differences, where it came from): the matching A/A run's, else the newest finished run's
    on the same setting (its arms differ by the method's effect too, so it overstates the noise a little)."""
    runs = list(records)
    cal = calibration_for(runs, params)
    if cal is not None:
        return cal.sd_difference, f"A/A run {cal.run}"
    key = setting_key(params)
    for run in _finished(runs):
        noise = run.verdict.seed_noise if run.verdict else None
        if setting_key(run.params) == key and noise is not None and noise.sd_difference is not None:
            return float(noise.sd_difference), f"stored seed noise of run {run.id}"
    return None


def family_adopt(overall: np.ndarray, decision_p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The family rule, vectorised over the last axis (the family's runs): Holm-adjusted p values, and which
    runs are "better" and survive them. NaN p values (no test) never adopt."""
    adjusted = holm(decision_p)
    return adjusted, (overall == "better") & (adjusted < ALPHA)


def adoptions(records: Sequence[RunRecord]) -> dict[str, RunAdoption]:
    """For every finished A/B reproduction run: may it drive an "adopt", and why (not)."""
    done = [r for r in _finished(records) if not r.verdict.aa]  # type: ignore[union-attr]
    out: dict[str, RunAdoption] = {}
    for run in done:
        family = _family(run, done)
        overall = np.array([f.verdict.overall for f in family])  # type: ignore[union-attr]
        ps = np.array([_p(f) for f in family])
        adjusted, survives = family_adopt(overall, ps)
        i = family.index(run)
        out[run.id] = _decide(run, family, float(adjusted[i]), bool(survives[i]), done, records)
    return out


def _p(run: RunRecord) -> float:
    p = run.verdict.decision_p if run.verdict else None
    return math.nan if p is None else p


def _family(run: RunRecord, done: list[RunRecord]) -> list[RunRecord]:
    week, key = iso_week(run.finished_at), (run.baseline, setting_key(run.params))
    members = [
        r
        for r in done
        if r.id == run.id
        or (r.baseline, setting_key(r.params)) == key
        and (iso_week(r.finished_at) == week or (run.experiment and r.experiment == run.experiment))
    ]
    return sorted(members, key=lambda r: r.id)


def _decide(
    run: RunRecord,
    family: list[RunRecord],
    adjusted: float,
    survives: bool,
    done: list[RunRecord],
    records: Sequence[RunRecord],
) -> RunAdoption:
    v = run.verdict
    assert v is not None
    adoption = partial(RunAdoption, run_id=run.id, family=tuple(r.id for r in family))
    base_p = None if math.isnan(adjusted) else round(adjusted, 5)
    if not v.calibrated:
        return adoption(adoptable=False, reason="an uncalibrated, old record")
    if v.evidence_class != "evidence":  # first: what the run can support at all
        what = v.evidence_class or "recorded before verdicts carried a class of evidence"
        return adoption(adoptable=False, reason=f"{what}" + (f": {v.evidence_reason}" if v.evidence_reason else ""))
    if v.overall != "better":
        return adoption(adoptable=False, reason=f"the verdict is {v.overall}")
    cal = calibration_for(records, run.params)
    if cal is None:
        return adoption(
            adoptable=False,
            reason="no A/A calibration on the same model, data, preset and steps "
            f"(`radar repro run --method {run.baseline} --baseline {run.baseline}` with the same settings)",
            family_p=base_p,
        )
    if cal.overall not in ("no clear difference",):
        return adoption(
            adoptable=False,
            reason=f"the A/A run {cal.run} found {cal.overall}: the pipeline's null is not calibrated here",
            calibration=cal.run,
            family_p=base_p,
        )
    if survives:
        return adoption(
            adoptable=True,
            reason=f"better with evidence, A/A {cal.run} calibrated, and Holm across {len(family)} run(s) "
            f"against {run.baseline} (this week and every look at the experiment) keeps p = {adjusted:.3g}",
            calibration=cal.run,
            family_p=base_p,
        )
    twin = next(
        (
            r
            for r in done
            if r.id != run.id
            and run.experiment
            and r.experiment == run.experiment
            and r.verdict is not None
            and r.verdict.overall == "better"
            and r.verdict.evidence_class == "evidence"
            and set(_pairs(r)).isdisjoint(_pairs(run))
        ),
        None,
    )
    if twin is not None:
        return adoption(
            adoptable=True,
            reason=f"better with evidence, A/A {cal.run} calibrated, and replicated by {twin.id} "
            "(independent seed pairs)",
            calibration=cal.run,
            replicated_by=twin.id,
            family_p=base_p,
        )
    return adoption(
        adoptable=False,
        reason=f"does not survive Holm across {len(family)} run(s) against {run.baseline} (adjusted p = "
        f"{adjusted:.3g}); a replication (`radar repro run` again: fresh seed pairs) can confirm it",
        calibration=cal.run,
        family_p=base_p,
    )


def _pairs(run: RunRecord) -> range:
    first = int(run.params.get("first_pair") or 0)
    return range(first, first + run.seeds)


# -- the rule's error rate, simulated ----------------------------------------------------------------
def _scores(rng: np.random.Generator, level: np.ndarray, prompts: int) -> np.ndarray:
    """(…, 2 metrics, seeds) held-out scores: greedy over ``prompts`` problems, pass@1 over 4 x ``prompts``."""
    level = np.clip(level, 0.0, 1.0)
    greedy = rng.binomial(prompts, level) / prompts
    pass1 = rng.binomial(4 * prompts, level) / (4 * prompts)
    return np.stack([greedy, pass1], axis=-2)


def _runs(
    rng: np.random.Generator,
    trials: int,
    presets: int,
    seeds: int,
    effect: float,
    noise: SimNoise,
) -> tuple[np.ndarray, np.ndarray]:
    """Overall labels and decision p values of ``presets`` runs per trial against one shared baseline."""
    base, sd, prompts = noise.base, noise.train_sd, noise.prompts
    init = rng.normal(0.0, noise.init_sd, (trials, 1, seeds))  # the pair's warm start, shared by every arm
    baseline = _scores(rng, base + init + rng.normal(0.0, sd, (trials, 1, seeds)), prompts)  # one baseline
    method = _scores(rng, base + effect + init + rng.normal(0.0, sd, (trials, presets, seeds)), prompts)
    tests, _, overall = decide(method - baseline)  # (trials, presets, metrics, seeds)
    return overall, np.nanmin(tests["p_adjusted"], axis=-1)


def simulate_family(
    presets: int = 10,
    seeds: int = 5,
    trials: int = 20_000,
    effect: float = 0.0,
    noise: SimNoise = SIM_NOISE,
    rng_seed: int = 0,
) -> dict[str, float]:
    """A week of ``presets`` runs against one shared baseline (the baseline arms are the same numbers in every
    run, as the runner's seeds make them), all of class evidence with a calibrated A/A. Returns the share of
    weeks with some "better" (no correction) and with some "adopt" (``family_adopt``)."""
    rng = np.random.default_rng(rng_seed)
    overall, ps = _runs(rng, trials, presets, seeds, effect, noise)
    _, adopt = family_adopt(overall, ps)
    return {
        "any_better": float(np.mean(np.any(overall == "better", axis=-1))),
        "any_better_or_worse": float(np.mean(np.any(np.isin(overall, ["better", "worse", "mixed"]), axis=-1))),
        "any_adopt": float(np.mean(np.any(adopt, axis=-1))),
        "adopt_per_run": float(np.mean(adopt)),
    }


def simulate_looks(
    looks: Sequence[int] = (3, 5, 10),
    trials: int = 20_000,
    effect: float = 0.0,
    noise: SimNoise = SIM_NOISE,
    rng_seed: int = 0,
    corrected: bool = True,
) -> dict[str, float]:
    """One preset run at 3 seed pairs, then again at 5, then at 10, stopping at the first "adopt". Each look is a
    new run on fresh seed pairs; ``corrected``: each look's family holds the looks so far (the rule above), else
    each look is judged alone (what stopping when it looks good did before). Returns the false "adopt" rate."""
    rng = np.random.default_rng(rng_seed)
    overall = np.empty((trials, len(looks)), dtype=object)
    ps = np.empty((trials, len(looks)))
    for k, n in enumerate(looks):
        o, p = _runs(rng, trials, 1, n, effect, noise)
        overall[:, k], ps[:, k] = o[:, 0], p[:, 0]
    adopted = np.zeros(trials, dtype=bool)
    for k in range(len(looks)):
        if corrected:
            _, ok = family_adopt(overall[:, : k + 1].astype(str), ps[:, : k + 1])
            now = ok[:, k]
        else:
            now = (overall[:, k] == "better") & (ps[:, k] < ALPHA)
        adopted |= now
    return {"false_adopt" if effect == 0 else "adopt": float(np.mean(adopted)), "min_effect": MIN_EFFECT}
