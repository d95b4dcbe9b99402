"""Built-in presets of GRPO-family methods introduced in 2025-2026, each a card the radar shows, turned into a run.

Each preset names its paper (arXiv id, the equation it implements), the name the papers and the radar's cards use
(``card``: the card of that name gets this preset), the plug-ins or TRL settings that express it, the claim a small
run can check, and the mechanism rate (a ``Lever``) that shows the method acted: a claim whose rate stayed under
its minimum is "not testable here" (repro/mechanisms.py). The plug-ins' formulas are in repro/plugins/ and each has
a hand-worked test (tests/test_repro_plugins.py). Common deviations: the toy tasks and tiny policies of every
preset (repro/README.md), G = 8, mu = 2.
"""

from __future__ import annotations

from radar.repro.method_types import (
    CLIPPED,
    GRPO_SETTINGS,
    HELD_OUT_NOT_WORSE,
    HELDOUT_MARGIN,
    Claim,
    Lever,
    Method,
)

ENTROPY_HIGHER = Claim(
    "keeps policy entropy higher than GRPO (>= 0.02 nats/token)", "entropy", "higher", "late", min_effect=0.02
)
PASS1_NOT_WORSE = Claim(
    "held-out pass@1 stays within 2 points of GRPO's", "heldout_pass1", "not_lower", "end", HELDOUT_MARGIN
)
_SHORT = "Toy task and a ~0.1 M-parameter policy instead of math reasoning on 1.7-32 B models; G = 8."


def _rate(name: str, minimum: float, what: str) -> Lever:
    """A plug-in's mechanism rate on the method's arm (logged as rate/NAME, see repro/mechanisms.py)."""
    return Lever(name, "method", minimum, what)


LATE: tuple[Method, ...] = (
    # -- the W39 cards -----------------------------------------------------------------------------------------
    Method(
        "qae",
        "QAE (quantile advantage estimation)",
        "2509.22611",
        GRPO_SETTINGS.copy(),
        PASS1_NOT_WORSE,
        changes=("advantage",),
        advantage="qae",
        levers=(_rate("zero_adv_share", 0.25, "QAE's quantile gate zeroes the advantage of most completions"),),
        card="QAE",
        equation="Eq. 3 (A_i = (R_i - b_K) / (std + eps), b_K the group's K-quantile; Eq. 4 for binary rewards)",
        notes="The group mean baseline replaced by the K-quantile (K = 0.4, the authors' default): hard prompts "
        "reinforce rare successes only, easy ones penalise remaining failures only. Claim (paper): entropy-safe "
        "training with sustained pass@1 gains; checked here: pass@1 not worse than GRPO's.",
        deviations=_SHORT + " The baseline is the paper's right-continuous quantile; the authors' code interpolates.",
        hparams_from_paper={"K": 0.4},
    ),
    Method(
        "pspo",
        "PSPO (probability smoothing policy optimisation)",
        "2509.21282",
        GRPO_SETTINGS.copy(),
        HELD_OUT_NOT_WORSE,
        changes=("loss_plugin",),
        loss_plugin="pspo",
        levers=(_rate("outside_clip", 0.005, "the smoothed ratio trains tokens GRPO's clip would have cut off"),),
        card="PSPO",
        equation="r~ = (1 - alpha) r + alpha (the smoothed ratio), no clip; alpha 0.1",
        notes="Smooths pi_theta toward pi_old before the importance ratio instead of clipping it (a soft trust "
        "region). Claim (paper): better than clipped GRPO on GSM8K; checked here: held-out within 2 points.",
        deviations=_SHORT + " The paper trains with TRL's dapo loss and lr 5e-7; here the run's GRPO aggregation.",
        hparams_from_paper={"alpha": 0.1},
    ),
    Method(
        "rl-zvp",
        "RL-ZVP (zero-variance prompts with entropy-guided advantages)",
        "2509.21880",
        GRPO_SETTINGS.copy(),
        HELD_OUT_NOT_WORSE,
        changes=("loss_plugin",),
        loss_plugin="rl_zvp",
        levers=(_rate("zvp_trained", 0.05, "zero-variance groups must occur for their shaped advantage to act"),),
        card="RL-ZVP",
        equation="Eq. 5 (A = alpha H_t for all-right groups, -alpha (max H - H_t) for all-wrong) in Eq. 6",
        notes="Prompts whose answers are all right or all wrong train too, with a token advantage from the token "
        "entropy (alpha 0.1). Claim (paper): beats GRPO and dynamic-sampling filters at equal rollouts.",
        deviations=_SHORT,
        hparams_from_paper={"alpha": 0.1},
    ),
    Method(
        "vcrl",
        "VCRL (variance-based curriculum RL)",
        "2509.19803",
        GRPO_SETTINGS.copy(),
        HELD_OUT_NOT_WORSE,
        changes=("batch",),
        batch="vcrl",
        levers=(_rate("vcrl_dropped", 0.05, "the curriculum acts only where it drops low-variance groups"),),
        card="VCRL",
        equation="p = sigma^2 / sigma^2_max of the group's rewards, kept when p >= kappa (0.3, then 0.8)",
        notes="Trains on the groups whose reward variance says they are at the edge of the model's ability; "
        "dropped groups are re-generated (at most 3 times, as dynamic sampling).",
        deviations=_SHORT + " No replay memory bank: dropped groups are replaced by fresh prompts.",
        hparams_from_paper={"kappa": [0.3, 0.8], "switch_step": 20},
    ),
    Method(
        "ngrpo",
        "NGRPO (negative-enhanced GRPO)",
        "2509.18851",
        GRPO_SETTINGS | {"epsilon": 0.16, "epsilon_high": 0.24},
        HELD_OUT_NOT_WORSE,
        changes=("advantage", "epsilon", "epsilon_high"),
        advantage="ngrpo",
        levers=(_rate("all_wrong_signal", 0.01, "all-wrong groups must occur for the virtual maximum to act"),),
        card="NGRPO",
        equation="advantage calibration: mean and std over the group plus one virtual sample of the maximum reward",
        notes="All-wrong groups get negative advantages (a virtual right answer in the group statistics) and the "
        "asymmetric clip [1 - 0.16, 1 + 0.24] of the authors' scripts.",
        deviations=_SHORT + " The maximum reward is this reward's, 1.1 (correct 1.0 + format 0.1).",
        hparams_from_paper={"clip_low": 0.16, "clip_high": 0.24},
    ),
    # -- entropy mechanism (Clip-Cov, KL-Cov) ------------------------------------------------------------------
    Method(
        "clip-cov",
        "Clip-Cov (covariance-based clipping, The Entropy Mechanism of RL)",
        "2505.22617",
        GRPO_SETTINGS.copy(),
        ENTROPY_HIGHER,
        changes=("loss_plugin",),
        loss_plugin="clip_cov",
        levers=(_rate("cov_detached", 0.001, "Clip-Cov detaches the high-covariance tokens"),),
        card="Clip-Cov",
        equation="Clip-Cov: detach r * N tokens with Cov(log pi, A) in (1, 5) (Sec. 4)",
        notes="Entropy collapses through tokens with high covariance of log-prob and advantage; detaching a few "
        "of them (2e-4 of the tokens) keeps entropy up.",
        deviations=_SHORT + " At 2e-4 of a few hundred tokens, one token per batch is detached.",
        hparams_from_paper={"clip_cov_ratio": 2e-4, "clip_cov_lb": 1.0, "clip_cov_ub": 5.0},
    ),
    Method(
        "kl-cov",
        "KL-Cov (covariance-based KL penalty, The Entropy Mechanism of RL)",
        "2505.22617",
        GRPO_SETTINGS.copy(),
        ENTROPY_HIGHER,
        changes=("loss_plugin",),
        loss_plugin="kl_cov",
        levers=(_rate("cov_penalised", 0.001, "KL-Cov penalises the top-covariance tokens"),),
        card="KL-Cov",
        equation="KL-Cov: a KL penalty |log r| on the top k share of tokens by Cov(log pi, A) (Sec. 4)",
        notes="A KL penalty on the tokens with the largest covariance of log-prob and advantage keeps entropy "
        "up; no ratio clip (as the authors' code).",
        deviations=_SHORT,
        hparams_from_paper={"kl_cov_ratio": 2e-4, "ppo_kl_coef": 1.0},
    ),
    # -- advantages ----------------------------------------------------------------------------------------------
    Method(
        "gpg",
        "GPG (group policy gradient)",
        "2504.02546",
        GRPO_SETTINGS | {"loss_type": "dapo"},
        HELD_OUT_NOT_WORSE,
        changes=("advantage", "loss_plugin", "loss_type"),
        advantage="gpg",
        loss_plugin="gpg",
        levers=(_rate("gpg_alpha", 1.01, "alpha > 1 when zero-variance groups occur (it rescales the rest)"),),
        card="GPG",
        equation="A = alpha (r - mean) / F_norm, alpha = B / (B - M), F_norm = 1; loss -A log pi (token mean)",
        notes="Plain policy gradient on the original objective: no ratio, no clip, no std; alpha corrects for the "
        "zero-variance groups' share of the batch.",
        deviations=_SHORT + " M counts completions of groups whose rewards are all equal (verl counts zero rewards).",
    ),
    Method(
        "opo",
        "OPO (on-policy RL with optimal reward baseline)",
        "2505.23585",
        GRPO_SETTINGS | {"scale_rewards": "none"},
        HELD_OUT_NOT_WORSE,
        changes=("advantage", "scale_rewards"),
        advantage="opo",
        levers=(
            _rate(
                "baseline_shift", 0.005, "the length-weighted baseline differs from the mean only where lengths differ"
            ),
        ),
        card="OPO",
        equation="b* = sum_i l_i r_i / sum_i l_i, A_i = r_i - b* (the optimal baseline)",
        notes="The variance-minimising baseline: the group's rewards weighted by response length.",
        deviations=_SHORT + " mu = 2 as every preset: the paper's exact on-policy training (mu = 1) is not kept.",
    ),
    Method(
        "reinforce-pp",
        "REINFORCE++ (global advantage normalisation)",
        "2501.03262",
        GRPO_SETTINGS | {"scale_rewards": "none"},
        HELD_OUT_NOT_WORSE,
        changes=("advantage", "scale_rewards"),
        advantage="reinforce_pp",
        levers=(_rate("zero_var_signal", 0.01, "without a group baseline, groups with equal rewards still train"),),
        card="REINFORCE++",
        equation="A = (r - mean_batch) / std_batch over all tokens of the batch (no group baseline)",
        notes="Rewards whitened over the whole batch instead of each prompt's group (beta 0: no KL in the reward).",
        deviations=_SHORT + " No KL in the reward (beta 0 throughout).",
    ),
    Method(
        "reinforce-pp-baseline",
        "REINFORCE++-baseline (group mean, then global normalisation)",
        "2501.03262",
        GRPO_SETTINGS | {"scale_rewards": "none"},
        HELD_OUT_NOT_WORSE,
        changes=("advantage", "scale_rewards"),
        advantage="reinforce_pp_baseline",
        levers=(_rate("batch_scale", 1e-3, "the batch std must be defined (rewards vary)"),),
        card="REINFORCE++-baseline",
        equation="A = (r - mean_group) whitened over all tokens of the batch",
        notes="The group mean as the baseline, the batch's std as the scale: robust to easy prompts.",
        deviations=_SHORT,
    ),
    Method(
        "passk",
        "Pass@k Training (analytic pass@k advantage)",
        "2508.10751",
        GRPO_SETTINGS.copy(),
        ENTROPY_HIGHER,
        changes=("advantage",),
        advantage="passk",
        levers=(_rate("passk_saturated", 0.01, "groups that pass@k for sure stop training (exploration, not pass@1)"),),
        card="Pass@k Training",
        equation="Eqs. 14-15: R = 1 - C(N_neg, k) / C(N, k), A_pos = (1 - R) / sigma, "
        "A_neg = (1 - R - C(N_neg - 1, k - 1) / C(N - 1, k - 1)) / sigma",
        notes="The reward is pass@k of the group (k = 4): exploration is rewarded, so entropy should stay higher.",
        deviations=_SHORT,
        hparams_from_paper={"k": 4},
    ),
    # -- ratios and losses --------------------------------------------------------------------------------------
    Method(
        "ce-gppo",
        "CE-GPPO (gradient-preserving clipping)",
        "2509.20712",
        GRPO_SETTINGS.copy(),
        HELD_OUT_NOT_WORSE,
        changes=("loss_plugin",),
        loss_plugin="ce_gppo",
        levers=(_rate("gradient_kept", 0.005, "tokens outside the clip interval must occur to keep their gradient"),),
        card="CE-GPPO",
        equation="beta1 (1 - eps) / sg(r) r A below the clip (A < 0), beta2 (1 + eps) / sg(r) r A above (A > 0)",
        notes="Clipped tokens keep a bounded gradient (beta1 0.75, beta2 1), which steers entropy.",
        deviations=_SHORT,
        hparams_from_paper={"beta1": 0.75, "beta2": 1.0},
    ),
    Method(
        "dcpo",
        "DCPO (dynamic clipping policy optimisation)",
        "2509.02333",
        GRPO_SETTINGS.copy(),
        Claim("clips fewer tokens than GRPO (>= 0.1 points)", "clip_ratio", "lower", "all", min_effect=0.001),
        changes=("loss_plugin",),
        loss_plugin="dcpo",
        levers=(CLIPPED,),
        card="DCPO",
        equation="0.5 + 0.5 sqrt(max(1 - 4 eps_low / q, 0)) <= r <= 0.5 + 0.5 sqrt(1 + 4 eps_high / q) (DAC), OTM loss",
        notes="Clip bounds that widen for low-probability tokens (eps_low 0.16, eps_high 0.2), and a token-sum loss "
        "per response. Claim (paper): a ~10x lower clip rate.",
        deviations=_SHORT + " The smooth advantage standardisation (SAS, across steps) is not implemented.",
        hparams_from_paper={"eps_low": 0.16, "eps_high": 0.2},
    ),
    Method(
        "delta-l",
        "Delta L Normalization (minimum-variance loss aggregation)",
        "2509.07558",
        GRPO_SETTINGS.copy(),
        HELD_OUT_NOT_WORSE,
        changes=("loss_plugin",),
        loss_plugin="delta_l",
        levers=(_rate("length_weight_spread", 1.1, "the weights act only where response lengths differ"),),
        card="Delta L Normalization",
        equation="w_i = L_i^-alpha / mean_j L_j^-alpha, loss = sum_i w_i sum_t l_it / (B T), alpha 0.75",
        notes="An unbiased, minimum-variance aggregation of responses of different lengths.",
        deviations=_SHORT + " Weights are normalised over the micro-batch (one generation batch here).",
        hparams_from_paper={"alpha": 0.75},
    ),
    # -- TRL settings (no plug-in) -------------------------------------------------------------------------------
    Method(
        "opsm",
        "Off-policy sequence masking (DeepSeek-V3.2)",
        "2512.02556",
        GRPO_SETTINGS | {"off_policy_mask_threshold": 0.05},
        HELD_OUT_NOT_WORSE,
        changes=("off_policy_mask_threshold",),
        levers=(_rate("opsm_masked", 0.001, "sequences with A < 0 and a mean KL(old || theta) above delta"),),
        card="Off-policy sequence masking",
        equation="Eq. 9: M_i = 0 when A_i < 0 and mean_t log(pi_old / pi_theta) > delta",
        notes="TRL's off_policy_mask_threshold (delta). delta 0.05 puts the mask where mu = 2 updates move a "
        "sequence's mean log-ratio here; the paper masks training-inference mismatch too, absent without vLLM.",
        deviations=_SHORT + " delta 0.05 chosen for this regime (the report gives none; TRL's example is 0.5); no "
        "rollout-engine mismatch without vLLM.",
    ),
    Method(
        "forking-tokens",
        "Forking tokens (high-entropy minority tokens, Beyond the 80/20 Rule)",
        "2506.01939",
        GRPO_SETTINGS | {"top_entropy_quantile": 0.2},
        HELD_OUT_NOT_WORSE,
        changes=("top_entropy_quantile",),
        levers=(_rate("entropy_kept", 0.05, "the policy gradient acts on the top 20% of tokens by entropy"),),
        card="High-entropy minority tokens",
        equation="the gradient restricted to tokens with entropy above the batch's 80th percentile",
        notes="TRL's top_entropy_quantile = 0.2: only the highest-entropy fifth of the tokens train.",
        deviations=_SHORT + " Answers of a few tokens hold few forking tokens.",
    ),
    Method(
        "lite-ppo",
        "Lite PPO (Tricks or Traps: group mean, batch std, token-level loss)",
        "2508.08221",
        GRPO_SETTINGS | {"scale_rewards": "batch", "loss_type": "dapo"},
        HELD_OUT_NOT_WORSE,
        changes=("scale_rewards", "loss_type"),
        card="Lite PPO",
        equation="A = (r - mean_group) / std_batch, token-level loss aggregation",
        notes="The two tricks the paper finds sufficient: group-level mean with batch-level std, and a token-level "
        "loss (TRL's scale_rewards = batch, loss_type = dapo). No mechanism rate: both act on every batch.",
        deviations=_SHORT,
    ),
    Method(
        "gdpo",
        "GDPO (group reward-decoupled normalisation)",
        "2601.05242",
        GRPO_SETTINGS | {"multi_objective_aggregation": "normalize_then_sum"},
        HELD_OUT_NOT_WORSE,
        changes=("multi_objective_aggregation",),
        card="GDPO",
        equation="each reward normalised within its group, summed, then normalised over the batch",
        notes="TRL's multi_objective_aggregation = normalize_then_sum on the run's two rewards (correctness, "
        "format). No mechanism rate: it acts wherever the format reward varies.",
        deviations=_SHORT + " Two rewards (correct, format) instead of the paper's tool-calling and length rewards.",
    ),
)
