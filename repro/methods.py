"""GRPO-family methods as data: each preset maps onto TRL's ``GRPOConfig`` and names its paper,
its hyperparameters and one claim a small run can check against the GRPO baseline.

All presets share the run's batch shape and ``num_iterations`` (mu = 2 by default): with mu = 1
the importance ratio is exactly 1 and every clipping variant computes the same update (TRL #3120).

Deviations from the papers, common to all presets: tiny models, tiny groups (G = 8), a char-level
task instead of math reasoning, and no dynamic sampling in DAPO (TRL has no resampling loop; zero-
std groups still get zero advantage). Each preset's own deviations are in its ``notes``.

A method TRL lacks is added with ``loss_plugin``: the name of a loss registered in
``repro.trainer.LOSS_PLUGINS`` (see ``gmpo`` below and repro/README.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from radar.repro.errors import ReproError


@dataclass(frozen=True)
class Claim:
    """A checkable statement: ``metric`` aggregated by ``window`` compared with the baseline.

    ``direction``: "higher" (method > baseline), "lower" (method < baseline), "not_lower"
    (method >= baseline - ``margin``), "ratio_at_least" (method / baseline >= ``margin``).
    ``window``: "late" (mean over the last half of steps), "all" (mean over all steps), "slope"
    (least-squares slope per 100 steps).
    """

    text: str
    metric: str
    direction: str
    window: str = "late"
    margin: float = 0.0
    also: Claim | None = None  # a second condition that must hold too (e.g. "yet learns stably")


@dataclass(frozen=True)
class Method:
    name: str
    title: str
    arxiv: str
    config: dict[str, Any]  # GRPOConfig fields
    claim: Claim
    overlong_shaping: bool = False  # add DAPO's soft overlong punishment as a reward
    loss_plugin: str = ""  # name in repro.trainer.LOSS_PLUGINS; "" = TRL's own loss
    notes: str = ""
    hparams_from_paper: dict[str, Any] = field(default_factory=dict)


_REWARD_NOT_WORSE = Claim("final correctness is not worse than GRPO's", "correct", "not_lower", "late", 0.05)

METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            "grpo",
            "GRPO (DeepSeekMath)",
            "2402.03300",
            {"loss_type": "grpo", "beta": 0.04, "scale_rewards": "group", "epsilon": 0.2},
            _REWARD_NOT_WORSE,
            notes="The baseline: k3 KL to the warm-started reference (beta 0.04), std-scaled advantages, "
            "per-sequence mean of token losses. TRL's defaults (loss_type dapo, beta 0) are NOT GRPO.",
            hparams_from_paper={"beta": 0.04, "epsilon": 0.2, "G": 64},
        ),
        Method(
            "dr_grpo",
            "Dr. GRPO (Understanding R1-Zero-like training)",
            "2503.20783",
            {"loss_type": "dr_grpo", "beta": 0.0, "scale_rewards": "none", "epsilon": 0.2},
            Claim("wrong answers do not grow longer than under GRPO", "incorrect_length", "lower", "slope"),
            notes="No std scaling, token losses summed and divided by a constant (max_completion_length).",
            hparams_from_paper={"beta": 0.0, "epsilon": 0.2, "G": 8},
        ),
        Method(
            "dapo",
            "DAPO (clip-higher, token-level loss, overlong shaping)",
            "2503.14476",
            {
                "loss_type": "dapo",
                "beta": 0.0,
                "scale_rewards": "group",
                "epsilon": 0.2,
                "epsilon_high": 0.28,
                "mask_truncated_completions": False,
            },
            Claim("clip-higher keeps policy entropy higher than GRPO", "entropy", "higher", "late"),
            overlong_shaping=True,
            notes="Dynamic sampling is not reproduced (TRL has no resampling loop); soft overlong "
            "punishment uses TRL's get_soft_overlong_punishment with a cache of 1/4 of the max length.",
            hparams_from_paper={"epsilon_low": 0.2, "epsilon_high": 0.28, "beta": 0.0},
        ),
        Method(
            "gspo",
            "GSPO (group sequence policy optimization)",
            "2507.18071",
            {
                "loss_type": "grpo",
                "beta": 0.0,
                "scale_rewards": "group",
                "importance_sampling_level": "sequence",
                "epsilon": 3e-4,
                "epsilon_high": 4e-4,
            },
            Claim(
                "clips far more (>= 10x GRPO's clip fraction)",
                "clip_ratio",
                "ratio_at_least",
                "all",
                10.0,
                also=Claim("yet final correctness is not worse", "correct", "not_lower", "late", 0.05),
            ),
            notes="Sequence-level ratio exp(mean log rho), clip range [1-3e-4, 1+4e-4] as in the paper.",
            hparams_from_paper={"epsilon_low": 3e-4, "epsilon_high": 4e-4},
        ),
        Method(
            "cispo",
            "CISPO (MiniMax-M1)",
            "2506.13585",
            {"loss_type": "cispo", "beta": 0.0, "scale_rewards": "group", "epsilon_high": 5.0},
            Claim("learns at least as fast as GRPO (reward AUC)", "correct", "not_lower", "all", 0.05),
            notes="Clips the detached IS weight (max 5.0, ScaleRL's value) instead of the update; every "
            "token keeps a gradient.",
            hparams_from_paper={"epsilon_high": 5.0},
        ),
        Method(
            "sapo",
            "SAPO (soft adaptive policy optimization)",
            "2511.20347",
            {
                "loss_type": "sapo",
                "beta": 0.0,
                "scale_rewards": "group",
                "sapo_temperature_pos": 1.0,
                "sapo_temperature_neg": 1.05,
            },
            _REWARD_NOT_WORSE,
            notes="A smooth sigmoid gate replaces the hard clip.",
            hparams_from_paper={"tau_pos": 1.0, "tau_neg": 1.05},
        ),
        Method(
            "bnpo",
            "BNPO (batch-normalized token loss)",
            "",
            {"loss_type": "bnpo", "beta": 0.0, "scale_rewards": "group", "epsilon": 0.2},
            _REWARD_NOT_WORSE,
            notes="Token losses normalised by the local batch's active tokens.",
        ),
        Method(
            "luspo",
            "LUSPO (length-unbiased sequence policy optimization)",
            "2602.05261",
            {
                "loss_type": "luspo",
                "beta": 0.0,
                "scale_rewards": "group",
                "importance_sampling_level": "sequence",
                "epsilon": 3e-4,
                "epsilon_high": 4e-4,
            },
            Claim("wrong answers do not grow longer than under GRPO", "incorrect_length", "lower", "slope"),
            notes="GSPO with each sequence's loss scaled by its length.",
        ),
        Method(
            "vespo",
            "VESPO (variational sequence-level soft policy optimization)",
            "2602.10693",
            {"loss_type": "vespo", "beta": 0.0, "scale_rewards": "group"},
            _REWARD_NOT_WORSE,
            notes="Gamma weighting of the sequence IS ratio; TRL's default k/lambda.",
        ),
        Method(
            "gmpo",
            "GMPO (geometric-mean policy optimization) - plug-in",
            "2507.20673",
            {"loss_type": "grpo", "beta": 0.0, "scale_rewards": "group", "epsilon": 0.4, "epsilon_high": 0.4},
            Claim("learns at least as stably as GRPO (reward AUC)", "correct", "not_lower", "all", 0.05),
            loss_plugin="gmpo",
            notes="Not in TRL: added through the loss plug-in hook (repro.trainer). Token log-ratios are "
            "clipped in log space to (-0.4, 0.4), then their geometric mean forms a sequence ratio.",
            hparams_from_paper={"clip_log_range": [-0.4, 0.4]},
        ),
    )
}


def get_method(name: str) -> Method:
    try:
        return METHODS[name]
    except KeyError:
        raise ReproError(f"unknown method {name!r}; choose one of: {', '.join(METHODS)}") from None


def describe(method: Method) -> dict[str, Any]:
    """A JSON-ready summary for `radar repro methods`."""
    return {
        "name": method.name,
        "title": method.title,
        "arxiv": method.arxiv,
        "config": method.config,
        "claim": method.claim.text + (f"; {method.claim.also.text}" if method.claim.also else ""),
        "overlong_shaping": method.overlong_shaping,
        "loss_plugin": method.loss_plugin,
        "notes": method.notes,
    }
