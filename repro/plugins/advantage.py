"""Advantage plug-ins: group baselines and normalisations (``AdvantageInputs -> AdvantageResult``).

Each function implements one paper's formula; tests/test_repro_plugins.py checks each against a hand-worked
example on small tensors. Rewards are the completions' summed rewards; ``correct`` the binary correctness the
binary-reward formulas (Pass@k) count.
"""

from __future__ import annotations

import math

import torch

from radar.repro.plugins.points import AdvantageInputs, AdvantageResult, grouped, share

EPS = 1e-6  # verl's epsilon in the group normalisations


def qae(x: AdvantageInputs) -> AdvantageResult:
    """QAE (arXiv 2509.22611), Eq. 3: A_i = (R_i - b_K(q)) / (std({R_j}) + eps), b_K = inf{x : F_q(x) >= K}, the
    right-continuous K-quantile of the group's rewards (Eq. 4: for binary rewards b_K = 0 when the success rate
    p <= 1 - K, else 1). std is the sample std (torch.std), as the authors' verl code; their code takes
    ``torch.quantile`` (linear interpolation), which for binary rewards can give a baseline between 0 and 1: this
    implements the paper's definition."""
    k = float(x.args.get("k", 0.4))
    if not 0.0 < k < 1.0:
        raise ValueError(f"qae: k = {k} must be in (0, 1)")
    r = grouped(x.rewards.float(), x.group)
    g = r.shape[1]
    index = max(0, math.ceil(k * g - 1e-9) - 1)  # the ceil(K G)-th smallest reward: F reaches K there first
    baseline = r.sort(dim=1).values[:, index : index + 1]
    std = r.std(dim=1, keepdim=True) if g > 1 else torch.zeros_like(baseline)
    adv = ((r - baseline) / (std + EPS)).reshape(-1)
    return AdvantageResult(adv, {"zero_adv_share": share(adv == 0)})


def ngrpo(x: AdvantageInputs) -> AdvantageResult:
    """NGRPO (arXiv 2509.18851), advantage calibration: the group's mean and (sample) std are taken over its G
    rewards plus one virtual sample of the maximum reward, so an all-wrong group gets negative advantages
    (the authors' compute_ngrpo_outcome_advantage, max_reward and add_max_reward_num = 1)."""
    r = grouped(x.rewards.float(), x.group)
    aug = torch.cat([r, torch.full_like(r[:, :1], float(x.args.get("max_reward", 1.1)))], dim=1)
    adv = ((r - aug.mean(dim=1, keepdim=True)) / (aug.std(dim=1, keepdim=True) + EPS)).reshape(-1)
    wrong = (grouped(x.correct.float(), x.group).sum(dim=1, keepdim=True) == 0).expand_as(r).reshape(-1)
    return AdvantageResult(adv, {"all_wrong_signal": share(wrong & (adv != 0))})


def opo(x: AdvantageInputs) -> AdvantageResult:
    """OPO (arXiv 2505.23585): the optimal reward baseline b* = sum_i l_i r_i / sum_i l_i (length-weighted mean over
    the group), A_i = r_i - b*, no std scaling (verl's compute_opo_outcome_advantage)."""
    r = grouped(x.rewards.float(), x.group)
    length = grouped(x.lengths.float(), x.group)
    b = (length * r).sum(dim=1, keepdim=True) / length.sum(dim=1, keepdim=True).clamp(min=1.0)
    shift = (b - r.mean(dim=1, keepdim=True)).abs().mean().item()
    return AdvantageResult((r - b).reshape(-1), {"baseline_shift": float(shift)})


def gpg(x: AdvantageInputs) -> AdvantageResult:
    """GPG (arXiv 2504.02546): A_i = alpha (r_i - mean_group) / F_norm with F_norm = 1 and alpha = B / (B - M), M the
    completions whose group's rewards are all equal (they carry no gradient; alpha rescales the rest)."""
    r = grouped(x.rewards.float(), x.group)
    flat = (r.max(dim=1).values == r.min(dim=1).values).unsqueeze(1).expand_as(r)
    b, m = r.numel(), int(flat.sum().item())
    alpha = b / max(b - m, 1)
    adv = alpha * (r - r.mean(dim=1, keepdim=True)) / float(x.args.get("f_norm", 1.0))
    return AdvantageResult(adv.reshape(-1), {"gpg_alpha": float(alpha)})


def _whiten(values: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, float]:
    """verl's masked_whiten of a per-completion value repeated over its tokens: the token-weighted mean and the
    token-weighted sample variance (Bessel over tokens), (v - mean) / sqrt(var + 1e-8)."""
    w = lengths.float()
    n = w.sum()
    mean = (w * values).sum() / n.clamp(min=1.0)
    var = (w * (values - mean) ** 2).sum() / n.clamp(min=1.0) * (n / (n - 1).clamp(min=1.0))
    return (values - mean) * torch.rsqrt(var + 1e-8), float(var.sqrt().item())


def reinforce_pp(x: AdvantageInputs) -> AdvantageResult:
    """REINFORCE++ (arXiv 2501.03262), outcome reward with no KL in the reward (beta 0): the return r_i on every token,
    whitened over all tokens of the batch, no group baseline (verl's compute_reinforce_plus_plus_outcome_advantage).
    Its mechanism against GRPO: groups whose rewards are all equal still train (``zero_var_signal``)."""
    adv, _ = _whiten(x.rewards.float(), x.lengths)
    r = grouped(x.rewards.float(), x.group)
    flat = (r.max(dim=1).values == r.min(dim=1).values).unsqueeze(1).expand_as(r).reshape(-1)
    return AdvantageResult(adv, {"zero_var_signal": share(flat & (adv != 0))})


def reinforce_pp_baseline(x: AdvantageInputs) -> AdvantageResult:
    """REINFORCE++-baseline (arXiv 2501.03262): r_i minus its group's mean reward, then whitened over all tokens of
    the batch (verl's compute_reinforce_plus_plus_baseline_outcome_advantage)."""
    r = grouped(x.rewards.float(), x.group)
    adv, scale = _whiten((r - r.mean(dim=1, keepdim=True)).reshape(-1), x.lengths)
    return AdvantageResult(adv, {"batch_scale": scale})


def passk(x: AdvantageInputs) -> AdvantageResult:
    """Pass@k training (arXiv 2508.10751), Eqs. 14-15, from a group's N completions of which N_neg are wrong:
    R = 1 - C(N_neg, k) / C(N, k) (the group's expected pass@k), sigma = sqrt(R (1 - R));
    right answers A = (1 - R) / sigma, wrong ones A = (1 - R - C(N_neg - 1, k - 1) / C(N - 1, k - 1)) / sigma;
    sigma = 0 (all right or all wrong, or pass@k certain) gives 0. Its mechanism against pass@1 training: a group
    with fewer than k wrong answers already passes@k for sure, so it stops training (``passk_saturated``: the share
    of completions of mixed groups left with advantage 0)."""
    k = int(x.args.get("k", 4))
    c = grouped(x.correct.float(), x.group)
    n = c.shape[1]
    if not 1 <= k <= n:
        raise ValueError(f"passk: k = {k} must be between 1 and the group size {n}")
    out = torch.zeros_like(c)
    for g in range(c.shape[0]):
        neg = n - int(c[g].sum().item())
        mean = 1.0 - math.comb(neg, k) / math.comb(n, k)
        sigma = math.sqrt(mean * (1.0 - mean))
        if sigma == 0.0:
            continue
        drop = math.comb(neg - 1, k - 1) / math.comb(n - 1, k - 1) if neg >= 1 else 0.0
        out[g] = torch.where(c[g] > 0.5, (1.0 - mean) / sigma, (1.0 - mean - drop) / sigma)
    adv = out.reshape(-1)
    right = c.mean(dim=1, keepdim=True)
    mixed = ((right > 0) & (right < 1)).expand_as(c).reshape(-1)
    return AdvantageResult(adv, {"passk_saturated": share(mixed & (adv == 0))})
