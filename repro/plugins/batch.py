"""Batch plug-ins: which groups of a generation batch train (``BatchInputs -> BatchResult``).

The trainer drops the groups a batch plug-in does not keep and generates new prompts in their place (at most
``repro.grpo_trainer.DYNAMIC_ROUNDS`` times), as DAPO's dynamic sampling does.
"""

from __future__ import annotations

from radar.repro.plugins.points import BatchInputs, BatchResult, grouped, share


def vcrl(x: BatchInputs) -> BatchResult:
    """VCRL (arXiv 2509.19803), variance-based dynamic sampling: a group of G binary rewards with k right answers has
    the normalised variance p = sigma^2 / sigma^2_max = k (G - k) / (floor(G/2) ceil(G/2)) (= 4 k (G - k) / G^2 for
    even G); it trains only when p >= kappa, kappa_early for the first switch_step steps (the paper: 0.3 for 20
    steps, then 0.8). The paper's replay memory bank is not implemented (dropped groups are re-generated instead)."""
    c = grouped(x.correct.float(), x.group)
    g = c.shape[1]
    k = (c > 0.5).sum(dim=1).float()
    p = k * (g - k) / float((g // 2) * ((g + 1) // 2))
    kappa = float(
        x.args.get("kappa_early", 0.3) if x.step < x.args.get("switch_step", 20) else x.args.get("kappa", 0.8)
    )
    keep = p >= kappa - 1e-9
    return BatchResult(keep, {"vcrl_dropped": share(~keep)})


def dapo_filter(x: BatchInputs) -> BatchResult:
    """DAPO's dynamic sampling (arXiv 2503.14476): keep the groups whose answers are neither all right nor all wrong
    (0 < #correct < G, on correctness, DAPO's acc)."""
    right = (grouped(x.correct.float(), x.group) > 0.5).float().mean(dim=1)
    keep = (right > 0) & (right < 1)
    return BatchResult(keep, {})
