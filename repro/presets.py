"""The built-in presets of 2024 to mid-2025 (GRPO, DAPO, GSPO, CISPO, ...), as data.

Each maps onto TRL's ``GRPOConfig``, names its paper, its baseline, the settings it changes against that baseline
(one change at a time where the paper allows) and one claim a small run can check. The default baseline ``grpo`` is
KL-free (beta 0, as every other preset), so a verdict never mixes a method with "no KL"; ``grpo-kl`` (beta 0.04,
DeepSeekMath's value) is its own preset. All presets share the run's batch shape and ``num_iterations`` (mu = 2 by
default): with mu = 1 the importance ratio is exactly 1 and every clipping variant computes the same update (TRL
#3120). The presets of methods introduced since (QAE, PSPO, RL-ZVP, ...) are in repro/presets_2025.py.
"""

from __future__ import annotations

from radar.repro.method_types import (
    CLIP_HIGH,
    CLIPPED,
    GRPO_SETTINGS,
    HELD_OUT_NOT_WORSE,
    HELDOUT_MARGIN,
    LENGTHS,
    Claim,
    Lever,
    Method,
)

EARLY: tuple[Method, ...] = (
    Method(
        "grpo",
        "GRPO (DeepSeekMath), KL-free",
        "2402.03300",
        GRPO_SETTINGS.copy(),
        HELD_OUT_NOT_WORSE,
        baseline="",
        notes="The default baseline: std-scaled group advantages, per-sequence mean of token losses, "
        "token-level ratio clipped to [0.8, 1.2]. TRL's defaults (loss_type dapo) are NOT GRPO.",
        deviations="beta 0 (the paper uses a k3 KL term with beta 0.04: see grpo-kl); G = 8 instead of 64.",
        hparams_from_paper={"epsilon": 0.2, "G": 64},
    ),
    Method(
        "grpo-kl",
        "GRPO with the k3 KL penalty (DeepSeekMath)",
        "2402.03300",
        GRPO_SETTINGS | {"beta": 0.04},
        HELD_OUT_NOT_WORSE,
        changes=("beta",),
        levers=(Lever("kl", "method", 1e-4, "the KL penalty acts through the KL to the reference"),),
        notes="GRPO as published: k3 KL to the warm-started reference, beta 0.04.",
        deviations="G = 8 instead of 64.",
        hparams_from_paper={"beta": 0.04, "epsilon": 0.2, "G": 64},
    ),
    Method(
        "dr_grpo",
        "Dr. GRPO (Understanding R1-Zero-like training)",
        "2503.20783",
        GRPO_SETTINGS | {"loss_type": "dr_grpo", "scale_rewards": "none"},
        Claim(
            "wrong answers grow longer more slowly than under GRPO (>= 0.5 tokens per 100 steps)",
            "incorrect_length",
            "lower",
            "slope",
            min_effect=0.5,
        ),
        changes=("loss_type", "scale_rewards"),
        levers=(LENGTHS,),
        notes="No std scaling; token losses summed and divided by a constant (max_completion_length).",
        deviations="Completions of a few to ~20 tokens (addition-work) instead of long reasoning; G = 8.",
        hparams_from_paper={"beta": 0.0, "epsilon": 0.2, "G": 8},
    ),
    Method(
        "dapo-clip-higher",
        "DAPO's clip-higher alone",
        "2503.14476",
        GRPO_SETTINGS | {"epsilon_high": 0.28},
        Claim(
            "clip-higher keeps policy entropy higher than GRPO (>= 0.02 nats/token)",
            "entropy",
            "higher",
            "late",
            min_effect=0.02,
        ),
        changes=("epsilon_high",),
        levers=(CLIP_HIGH,),
        notes="Only the decoupled upper clip bound 1 + 0.28: the one DAPO change its entropy claim is about.",
        deviations="Tiny policy and task; entropy of a char-level answer, not of long reasoning.",
        hparams_from_paper={"epsilon_low": 0.2, "epsilon_high": 0.28},
    ),
    Method(
        "dapo",
        "DAPO (clip-higher, token-level loss, overlong shaping)",
        "2503.14476",
        GRPO_SETTINGS | {"loss_type": "dapo", "epsilon_high": 0.28},
        Claim(
            "keeps policy entropy higher than GRPO (>= 0.02 nats/token)",
            "entropy",
            "higher",
            "late",
            min_effect=0.02,
        ),
        changes=("loss_type", "epsilon_high", "overlong_shaping", "dynamic_sampling"),
        overlong_shaping=True,
        dynamic_sampling=True,
        levers=(CLIP_HIGH,),
        notes="Clip-higher (1 - 0.2, 1 + 0.28), token-mean loss over the batch, the soft overlong "
        "punishment (TRL's get_soft_overlong_punishment) over the last tokens of the completion budget, and "
        "dynamic sampling: groups whose answers are all right or all wrong are dropped and new prompts "
        "generated in their place (RadarGRPOTrainer; TRL has no switch for it). Its entropy claim is "
        "credited to clip-higher: compare with dapo-clip-higher for the single change.",
        deviations="Dynamic sampling re-generates at most 3 times per batch and then keeps the remaining "
        "zero-variance groups (verl's filter_groups keeps generating up to max_num_gen_batches); it makes "
        "the dapo arm generate more completions per step than its baseline (the profile shows the cost). "
        "beta was already 0 in the baseline.",
        hparams_from_paper={"epsilon_low": 0.2, "epsilon_high": 0.28, "beta": 0.0},
    ),
    Method(
        "gspo",
        "GSPO (group sequence policy optimization)",
        "2507.18071",
        GRPO_SETTINGS | {"importance_sampling_level": "sequence", "epsilon": 3e-4, "epsilon_high": 4e-4},
        Claim(
            "clips far more (>= 10x GRPO's clip fraction)",
            "clip_ratio",
            "ratio_at_least",
            "all",
            10.0,
            also=HELD_OUT_NOT_WORSE,
        ),
        changes=("importance_sampling_level", "epsilon", "epsilon_high"),
        notes="Sequence-level ratio exp(mean log rho), clip range [1-3e-4, 1+4e-4] as in the paper.",
        deviations="The paper's range is tuned for long sequences where mean log-ratios are tiny; with "
        "answers of a few tokens most sequences leave it after one update, so far more sequences are "
        "clipped than the paper's ~15%.",
        hparams_from_paper={"epsilon_low": 3e-4, "epsilon_high": 4e-4},
    ),
    Method(
        "cispo",
        "CISPO (MiniMax-M1)",
        "2506.13585",
        GRPO_SETTINGS | {"loss_type": "cispo", "epsilon_high": 1.28},
        Claim(
            "learns at least as fast as GRPO (held-out accuracy curve, within 2 points)",
            "heldout",
            "not_lower",
            "all",
            HELDOUT_MARGIN,
        ),
        changes=("loss_type", "epsilon_high"),
        levers=(CLIPPED,),
        notes="REINFORCE with the detached importance weight clipped, sg(clip(rho)) * A * log pi, "
        "token-mean loss: every token keeps a gradient. MiniMax-M1 clips rho to "
        "[1 - eps_low_IS, 1 + eps_high_IS] with no lower bound in practice (eps_low_IS large) and tunes "
        "only eps_high_IS; TRL's cispo takes the absolute cap as epsilon_high, so 1.28 = 1 + 0.28.",
        deviations="The paper does not print its eps_high_IS; 0.28 (DAPO's clip-higher, which M1 builds on) "
        "puts the cap where this task's importance weights exceed it (see the clip fractions in "
        "repro/README.md); TRL's and ScaleRL's cap of 5.0 never acted here.",
        hparams_from_paper={"epsilon_low_IS": "none (large)", "epsilon_high_IS": "tuned, not stated"},
    ),
    Method(
        "sapo",
        "SAPO (soft adaptive policy optimization)",
        "2511.20347",
        GRPO_SETTINGS | {"loss_type": "sapo", "sapo_temperature_pos": 1.0, "sapo_temperature_neg": 1.05},
        HELD_OUT_NOT_WORSE,
        changes=("loss_type",),
        levers=(CLIPPED,),
        notes="A smooth sigmoid gate replaces the hard clip (TRL's temperatures, which are the paper's).",
        deviations="Tiny policy and task.",
        hparams_from_paper={"tau_pos": 1.0, "tau_neg": 1.05},
    ),
    Method(
        "luspo",
        "LUSPO (length-unbiased sequence policy optimization)",
        "2602.05261",
        GRPO_SETTINGS
        | {"loss_type": "luspo", "importance_sampling_level": "sequence", "epsilon": 3e-4, "epsilon_high": 4e-4},
        Claim(
            "avoids GSPO's length collapse: completions are not shorter than GSPO's (within 0.5 tokens)",
            "length",
            "not_lower",
            "late",
            0.5,
        ),
        baseline="gspo",
        changes=("loss_type",),
        levers=(LENGTHS,),
        notes="GSPO with each sequence's loss scaled by its length; its claim is about GSPO, so its baseline is gspo.",
        deviations="Answers of 1-5 tokens leave little room for a length collapse; the claim can come out "
        "inconclusive for that reason.",
    ),
    Method(
        "vespo",
        "VESPO (variational sequence-level soft policy optimization)",
        "2602.10693",
        GRPO_SETTINGS | {"loss_type": "vespo"},
        HELD_OUT_NOT_WORSE,
        changes=("loss_type",),
        levers=(CLIPPED,),
        notes="Gamma weighting of the sequence IS ratio; TRL's default k/lambda.",
        deviations="TRL's default k/lambda, not tuned.",
    ),
    Method(
        "gmpo",
        "GMPO (geometric-mean policy optimization) - plug-in",
        "2507.20673",
        GRPO_SETTINGS | {"epsilon": 0.4, "epsilon_high": 0.4},
        Claim(
            "learns at least as well as GRPO (held-out accuracy curve, within 2 points)",
            "heldout",
            "not_lower",
            "all",
            HELDOUT_MARGIN,
        ),
        changes=("epsilon", "epsilon_high", "loss_plugin"),
        loss_plugin="gmpo",
        levers=(CLIPPED,),
        notes="Not in TRL: the ratio/loss plug-in gmpo (repro/plugins/loss.py). Token log-ratios are "
        "clipped in log space to (-0.4, 0.4), then their geometric mean forms a sequence ratio.",
        deviations="Sequence loss averaged over the micro-batch (the paper's per-group mean equals it "
        "for equal group sizes).",
        hparams_from_paper={"clip_log_range": [-0.4, 0.4]},
    ),
)
