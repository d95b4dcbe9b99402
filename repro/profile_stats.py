"""The arithmetic over efficiency profiles (repro/profile.py), without torch or transformers: a run's worker
averages its arms' profiles when it finishes, and a worker whose arms trained elsewhere (arm processes, the fast
test engine) need not import the training stack for that."""

from __future__ import annotations

from typing import cast

from radar.repro.shapes import Profile, Scalar

__all__ = ["PROFILE_FIELDS", "mean_profile", "round4"]


def round4(x: float) -> float:
    """A profile figure as stored: four decimals."""
    return round(float(x), 4)


PROFILE_FIELDS = ("step_s", "generate_s", "reward_s", "ref_s", "train_s", "tokens_per_s", "peak_mem_gb")


def mean_profile(per_seed: list[Profile]) -> Profile:
    """The mean of each numeric profile field over an arm's seeds (device and kinds from the first)."""
    if not per_seed:
        return {}
    out: dict[str, Scalar] = {}
    for key, value in per_seed[0].items():
        vals = [p.get(key) for p in per_seed]
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in vals):
            out[key] = round4(sum(vals) / len(vals))  # type: ignore[arg-type]
        else:
            out[key] = value  # type: ignore[assignment]
    out["seeds"] = len(per_seed)
    return cast(Profile, out)  # the same keys, each a mean (or the first seed's value)
