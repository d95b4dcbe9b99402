"""Research Radar's plug-ins in verl's signatures, for the launcher a verl export writes (radar_verl_plugins.py).

verl 0.9.1 calls an advantage estimator registered with ``register_adv_est`` as
``fn(token_level_rewards=, response_mask=, config=, index=)`` (``ray_trainer.compute_advantage``; ``index`` the
prompts' uids) and a policy loss registered with ``register_policy_loss`` as ``fn(old_log_prob=, log_prob=,
advantages=, response_mask=, loss_agg_mode=, config=, rollout_is_weights=)`` (``workers/utils/losses.py``).
``advantage_estimator`` and ``policy_loss`` wrap a plug-in of the catalog in those signatures; the launcher registers
them under the names the exported config uses. This module imports torch but not verl (the launcher hands it
verl's ``agg_loss``), so the adapters are tested here without verl.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from radar.repro.plugins.catalog import plugin_catalog
from radar.repro.plugins.points import AdvantageInputs, LossInputs

CORRECT_AT = 1.0  # verl's score is radar's reward (verl_score: correct 1.0 + format 0.1): >= 1 is a right answer


def _groups(index: Sequence[Any], n: int) -> tuple[torch.Tensor, int]:
    """A permutation that puts the rows of each prompt (same uid) together, in order of first appearance."""
    if index is None:
        raise ValueError("radar's advantage plug-ins need verl's prompt uids (index)")
    members: dict[str, list[int]] = {}
    for row, uid in enumerate(list(index)[:n]):
        members.setdefault(str(uid), []).append(row)
    sizes = {len(rows) for rows in members.values()}
    if len(sizes) != 1:
        raise ValueError(f"radar's advantage plug-ins need equal groups; got group sizes {sorted(sizes)}")
    order = [row for rows in members.values() for row in rows]
    return torch.tensor(order, dtype=torch.long), sizes.pop()


def advantage_estimator(name: str, args: Mapping[str, float]) -> Callable[..., tuple[torch.Tensor, torch.Tensor]]:
    """The advantage plug-in ``name`` with settings ``args`` as a verl advantage estimator."""
    plugin = plugin_catalog().get("advantage", name)
    fn, settings = plugin.function(), plugin.settings(args)

    def estimate(
        token_level_rewards: torch.Tensor,
        response_mask: torch.Tensor,
        index: Sequence[Any] | None = None,
        epsilon: float = 1e-6,
        config: Any = None,
        **_: Any,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        with torch.no_grad():
            scores = token_level_rewards.sum(dim=-1).float()
            order, group = _groups(index, len(scores))  # type: ignore[arg-type]
            lengths = response_mask.sum(dim=-1).float()
            result = fn(
                AdvantageInputs(scores[order], (scores[order] >= CORRECT_AT).float(), lengths[order], group, settings)
            )
            adv = torch.empty_like(scores)
            adv[order] = result.advantages.to(adv.dtype)
            out = adv.unsqueeze(-1) * response_mask
        return out, out

    estimate.__name__ = f"radar_{name}"
    return estimate


def policy_loss(
    name: str, args: Mapping[str, float], agg_loss: Callable[..., torch.Tensor]
) -> Callable[..., tuple[torch.Tensor, dict[str, float]]]:
    """The ratio/loss plug-in ``name`` with settings ``args`` as a verl policy loss; ``agg_loss`` is verl's
    (``verl.trainer.ppo.core_algos.agg_loss``), so the aggregation follows verl's data-parallel batch info."""
    plugin = plugin_catalog().get("ratio/loss", name)
    fn, settings = plugin.function(), plugin.settings(args)

    def loss(
        old_log_prob: torch.Tensor,
        log_prob: torch.Tensor,
        advantages: torch.Tensor,
        response_mask: torch.Tensor,
        loss_agg_mode: str = "token-mean",
        config: Any = None,
        rollout_is_weights: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, dict[str, float]]:
        clip = float(getattr(config, "clip_ratio", 0.2) or 0.2)
        low = getattr(config, "clip_ratio_low", None)
        high = getattr(config, "clip_ratio_high", None)
        mask = response_mask.float()
        rows = mask.shape[0]
        result = fn(
            LossInputs(
                logps=log_prob,
                old_logps=old_log_prob,
                advantages=advantages,
                mask=mask,
                entropies=torch.zeros_like(mask),
                correct=torch.zeros(rows, device=mask.device),
                group_correct=torch.full((rows,), 0.5, device=mask.device),
                epsilon_low=float(clip if low is None else low),
                epsilon_high=float(clip if high is None else high),
                aggregation=loss_agg_mode,
                max_length=int(mask.shape[-1]),
                args=settings,
            )
        )
        per_token = result.per_token if rollout_is_weights is None else result.per_token * rollout_is_weights
        mode = result.aggregation or loss_agg_mode
        if mode == "all-mean":  # Delta L: sum over tokens / (B x T) (verl's agg_loss has no such mode)
            value = (per_token * mask).sum() / max(1, mask.numel())
        else:
            info = dict(getattr(config, "global_batch_info", None) or {})
            value = agg_loss(loss_mat=per_token, loss_mask=response_mask, loss_agg_mode=mode, **info)
        return value, {f"actor/radar_{k}": float(v) for k, v in result.rates.items()}

    loss.__name__ = f"radar_{name}"
    return loss
