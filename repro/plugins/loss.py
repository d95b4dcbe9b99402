"""Ratio/loss plug-ins: the importance ratio and the per-token policy loss (``LossInputs -> LossResult``).

Each returns the loss of every token (to minimise); the trainer aggregates it with the run's aggregation (the
preset's TRL ``loss_type``: grpo = seq-mean-token-mean, dapo = token-mean, ...) unless the method fixes its own
(DCPO's token sum per response, Delta L's all-mean). tests/test_repro_plugins.py checks each against a hand-worked
example, the value and, where the method is about gradients, the gradient.
"""

from __future__ import annotations

import torch

from radar.repro.plugins.points import LossInputs, LossResult, masked_mean, share


def _ratio(x: LossInputs) -> torch.Tensor:
    return torch.exp(x.logps - x.old_logps)


def _clipped(
    ratio: torch.Tensor, adv: torch.Tensor, low: float | torch.Tensor, high: float | torch.Tensor
) -> torch.Tensor:
    """PPO's pessimistic per-token loss, -min(r A, clip(r, low, high) A)."""
    lo, hi = torch.as_tensor(low, dtype=ratio.dtype), torch.as_tensor(high, dtype=ratio.dtype)
    return -torch.minimum(ratio * adv, torch.minimum(torch.maximum(ratio, lo), hi) * adv)


def _binding(
    ratio: torch.Tensor, adv: torch.Tensor, low: float | torch.Tensor, high: float | torch.Tensor
) -> torch.Tensor:
    """Tokens where the clip binds: above the upper bound with A > 0, below the lower one with A < 0."""
    return ((ratio > high) & (adv > 0)) | ((ratio < low) & (adv < 0))


def gmpo(x: LossInputs) -> LossResult:
    """GMPO (arXiv 2507.20673): maximise A_i * s_i, s_i = exp(mean_t of the pessimistic log-ratios clipped to
    (-eps, eps_high)) (for A > 0 min(log r, clip), for A < 0 the max); as a per-token loss -A_i s_i / |o_i| summed
    over a response's tokens (seq-mean-token-sum)."""
    log_ratio = x.logps - x.old_logps
    clipped = torch.clamp(log_ratio, -x.epsilon_low, x.epsilon_high)
    sign = torch.sign(x.advantages)
    sign = torch.where(sign == 0, torch.ones_like(sign), sign)
    pessimistic = sign * torch.minimum(sign * log_ratio, sign * clipped)
    lengths = x.mask.sum(-1, keepdim=True).clamp(min=1.0)
    seq_ratio = torch.exp((pessimistic * x.mask).sum(-1, keepdim=True) / lengths)
    per_token = -(x.advantages * seq_ratio) / lengths
    return LossResult(per_token, {"clip_region": share(pessimistic != log_ratio, x.mask)}, "seq-mean-token-sum")


def pspo(x: LossInputs) -> LossResult:
    """PSPO (arXiv 2509.21282): the current probability smoothed toward the old one before the ratio,
    r~ = ((1 - alpha) pi_theta + alpha pi_old) / pi_old = (1 - alpha) r + alpha, and no clip: loss -r~ A
    (alpha 0.1, the paper's)."""
    alpha = float(x.args.get("alpha", 0.1))
    ratio = _ratio(x)
    smoothed = (1.0 - alpha) * ratio + alpha
    outside = _binding(ratio, x.advantages, 1.0 - x.epsilon_low, 1.0 + x.epsilon_high)
    return LossResult(-smoothed * x.advantages, {"outside_clip": share(outside, x.mask)})


def rl_zvp(x: LossInputs) -> LossResult:
    """RL-ZVP (arXiv 2509.21880): a zero-variance group (all right or all wrong) trains with the token advantage of
    Eq. 5, alpha H_t for a right answer and -alpha (max_k H_k - H_t) for a wrong one (H detached, the max over the
    response's tokens), in the clipped objective of Eq. 6; other groups train as GRPO (their advantages as given)."""
    alpha = float(x.args.get("alpha", 0.1))
    zvp = ((x.group_correct <= 0.0) | (x.group_correct >= 1.0)).unsqueeze(-1)
    h = x.entropies.detach() * x.mask
    h_max = torch.where(x.mask > 0, h, torch.full_like(h, -torch.inf)).max(dim=-1, keepdim=True).values
    h_max = torch.where(torch.isfinite(h_max), h_max, torch.zeros_like(h_max))
    right = (x.correct > 0.5).unsqueeze(-1)
    shaped = torch.where(right, alpha * h, -alpha * (h_max - h)) * x.mask
    adv = torch.where(zvp, shaped, x.advantages)
    per_token = _clipped(_ratio(x), adv, 1.0 - x.epsilon_low, 1.0 + x.epsilon_high)
    trained = (zvp.squeeze(-1) & ((shaped != 0).any(dim=-1))).float().mean().item()
    return LossResult(per_token, {"zvp_trained": float(trained)})


def clip_cov(x: LossInputs) -> LossResult:
    """Clip-Cov (arXiv 2505.22617): PPO's clipped loss where a random ``ratio`` share of the tokens (at least one)
    whose centred covariance (A - mean A)(log pi - mean log pi) lies in (lb, ub), among those the clip left alone,
    is detached (its loss set to 0), as the authors' compute_policy_loss_clip_cov."""
    ratio_share, lb, ub = float(x.args.get("ratio", 2e-4)), float(x.args.get("lb", 1.0)), float(x.args.get("ub", 5.0))
    ratio = _ratio(x)
    loss1 = -x.advantages * ratio
    loss2 = -x.advantages * torch.clamp(ratio, 1.0 - x.epsilon_low, 1.0 + x.epsilon_high)
    valid = x.mask > 0
    by_clip = (loss2 > loss1) & valid
    logp = x.logps.detach()
    cov = (x.advantages - masked_mean(x.advantages, x.mask)) * (logp - masked_mean(logp, x.mask))
    candidates = torch.nonzero((cov > lb) & (cov < ub) & valid & ~by_clip)
    keep = torch.ones_like(x.advantages)
    if len(candidates):
        n = max(int(ratio_share * int(valid.sum().item())), 1)
        chosen = candidates[torch.randperm(len(candidates), device=candidates.device)[:n]]
        keep[chosen[:, 0], chosen[:, 1]] = 0.0
    per_token = torch.maximum(loss1, loss2) * keep
    return LossResult(per_token, {"cov_detached": share(keep == 0, x.mask)})


def kl_cov(x: LossInputs) -> LossResult:
    """KL-Cov (arXiv 2505.22617): the unclipped loss -A r, plus coef |log r| on the top ``ratio`` share (at least one)
    of valid tokens by centred covariance (A - mean A)(log pi - mean log pi), as the authors' compute_policy_loss_kl_cov
    (which has no clip)."""
    share_k, coef = float(x.args.get("ratio", 2e-4)), float(x.args.get("coef", 1.0))
    log_ratio = x.logps - x.old_logps
    per_token = -x.advantages * torch.exp(log_ratio)
    valid = (x.mask > 0).reshape(-1)
    index = torch.nonzero(valid).flatten()
    penalised = torch.zeros_like(x.advantages)
    if len(index):
        adv = x.advantages.detach().reshape(-1)[index]
        logp = x.logps.detach().reshape(-1)[index]
        cov = (adv - adv.mean()) * (logp - logp.mean())
        top = index[torch.topk(cov, max(1, int(len(cov) * share_k))).indices]
        penalised.view(-1)[top] = 1.0
    per_token = per_token + penalised * coef * log_ratio.abs()
    return LossResult(per_token, {"cov_penalised": share(penalised > 0, x.mask)})


def gpg(x: LossInputs) -> LossResult:
    """GPG (arXiv 2504.02546): the policy gradient of the original objective, -A log pi, with no importance ratio and
    no clip (verl's compute_policy_loss_gpg)."""
    return LossResult(-x.logps * x.advantages, {})


def ce_gppo(x: LossInputs) -> LossResult:
    """CE-GPPO (arXiv 2509.20712): inside [1 - eps_low, 1 + eps_high] the loss is -r A; a token with A < 0 below the
    interval has loss -beta1 (1 - eps_low) r / sg(r) A, one with A > 0 above it -beta2 (1 + eps_high) r / sg(r) A:
    the clipped value forward, a bounded gradient backward; the dual clip -c A caps A < 0 tokens (the authors'
    compute_gppo_loss_general_beta, beta1 0.75, beta2 1, c 3)."""
    beta1, beta2, c = (float(x.args.get(k, d)) for k, d in (("beta1", 0.75), ("beta2", 1.0), ("dual_clip", 3.0)))
    ratio = _ratio(x)
    held = ratio.detach()
    adv = x.advantages
    low = (ratio < 1.0 - x.epsilon_low) & (adv < 0)
    high = (ratio > 1.0 + x.epsilon_high) & (adv > 0)
    loss = -ratio * adv
    loss = torch.where(low, -beta1 * (1.0 - x.epsilon_low) / held * ratio * adv, loss)
    loss = torch.where(high, -beta2 * (1.0 + x.epsilon_high) / held * ratio * adv, loss)
    loss = torch.where(adv < 0, torch.minimum(-adv * c, loss), loss)
    return LossResult(loss, {"gradient_kept": share(low | high, x.mask)})


def dcpo(x: LossInputs) -> LossResult:
    """DCPO (arXiv 2509.02333): dynamic-adaptive clipping bounds from the old probability q of each token,
    0.5 + 0.5 sqrt(max(1 - 4 eps_low / q, 0)) <= r <= 0.5 + 0.5 sqrt(1 + 4 eps_high / q), in PPO's clipped loss,
    summed over a response's tokens and averaged over responses (the OTM loss: no length normalisation)."""
    eps_low, eps_high = float(x.args.get("eps_low", 0.16)), float(x.args.get("eps_high", 0.2))
    q = torch.exp(x.old_logps).clamp(min=1e-12)
    low = 0.5 + 0.5 * torch.sqrt(torch.clamp(1.0 - 4.0 * eps_low / q, min=0.0))
    high = 0.5 + 0.5 * torch.sqrt(1.0 + 4.0 * eps_high / q)
    ratio = _ratio(x)
    per_token = _clipped(ratio, x.advantages, low, high)
    return LossResult(
        per_token, {"clip_region": share(_binding(ratio, x.advantages, low, high), x.mask)}, "seq-mean-token-sum"
    )


def delta_l(x: LossInputs) -> LossResult:
    """Delta L normalisation (arXiv 2509.07558): response i's clipped loss weighted by w_i = L_i^-alpha /
    mean_j L_j^-alpha (L its length), summed over all tokens and divided by B x T (the authors' implementation:
    the weights scale the advantages, masked_mean_allavg aggregates)."""
    alpha = float(x.args.get("alpha", 0.75))
    lengths = x.mask.sum(-1)
    valid = lengths > 0
    inv = torch.where(valid, lengths.clamp(min=1.0) ** -alpha, torch.zeros_like(lengths))
    weight = inv / inv[valid].mean().clamp(min=1e-12) if bool(valid.any()) else inv
    per_token = weight.unsqueeze(-1) * _clipped(_ratio(x), x.advantages, 1.0 - x.epsilon_low, 1.0 + x.epsilon_high)
    w = weight[valid]
    spread = float((w.max() / w.min()).item()) if len(w) else 1.0
    return LossResult(per_token, {"length_weight_spread": spread}, "all-mean")
