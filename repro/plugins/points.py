"""The three plug-in points' signatures: what a plug-in function receives and returns (torch tensors).

Rows of a generation batch come in groups: rows ``g*G .. g*G + G - 1`` are the G completions of one prompt. A loss
plug-in sees a micro-batch whose rows may be shuffled across groups, so what it needs of a row's group travels with
the row (``correct``, ``group_correct``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import torch

AGGREGATIONS = ("seq-mean-token-mean", "token-mean", "seq-mean-token-sum", "seq-mean-token-sum-norm", "all-mean")


@dataclass(frozen=True)
class AdvantageInputs:
    rewards: torch.Tensor  # (B,) each completion's summed reward (correct + format + shaping)
    correct: torch.Tensor  # (B,) 1.0 where the answer is right, else 0.0
    lengths: torch.Tensor  # (B,) completion tokens
    group: int  # G: completions per prompt
    args: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class AdvantageResult:
    advantages: torch.Tensor  # (B,)
    rates: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class LossInputs:
    logps: torch.Tensor  # (B, T) log pi_theta of the completion tokens (with gradient)
    old_logps: torch.Tensor  # (B, T) log pi_old (detached)
    advantages: torch.Tensor  # (B, T) the advantage of each token (a sequence's advantage broadcast)
    mask: torch.Tensor  # (B, T) 1.0 on completion tokens
    entropies: torch.Tensor  # (B, T) token entropies of pi_theta (detached)
    correct: torch.Tensor  # (B,) 1.0 where the answer is right
    group_correct: torch.Tensor  # (B,) the share of right answers in the row's group
    epsilon_low: float
    epsilon_high: float
    aggregation: str  # the run's loss aggregation (AGGREGATIONS), from its TRL loss_type
    max_length: int  # the completion budget (seq-mean-token-sum-norm divides by it)
    args: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class LossResult:
    per_token: torch.Tensor  # (B, T) the loss of each token (to minimise); masked tokens are ignored
    rates: Mapping[str, float] = field(default_factory=dict)
    aggregation: str = ""  # "" = the run's (LossInputs.aggregation); else one of AGGREGATIONS


@dataclass(frozen=True)
class BatchInputs:
    rewards: torch.Tensor  # (B,)
    correct: torch.Tensor  # (B,)
    group: int
    step: int  # the optimiser step the batch is generated for
    args: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class BatchResult:
    keep: torch.Tensor  # (B // G,) bool: the groups that train
    rates: Mapping[str, float] = field(default_factory=dict)


AdvantageFn = Callable[[AdvantageInputs], AdvantageResult]
LossFn = Callable[[LossInputs], LossResult]
BatchFn = Callable[[BatchInputs], BatchResult]


def grouped(values: torch.Tensor, group: int) -> torch.Tensor:
    """(B,) -> (B // G, G); one line when the batch does not split into whole groups."""
    if group < 1 or values.numel() % group:
        raise ValueError(f"a batch of {values.numel()} completions does not split into groups of {group}")
    return values.reshape(-1, group)


def aggregate(per_token: torch.Tensor, mask: torch.Tensor, mode: str, max_length: int = 0) -> torch.Tensor:
    """The loss of a micro-batch from its per-token losses, as verl's ``agg_loss`` names the modes (one process):
    token-mean (DAPO), seq-mean-token-mean (GRPO), seq-mean-token-sum, seq-mean-token-sum-norm (Dr. GRPO: / the
    completion budget), all-mean (sum over tokens / (B x T), Delta L's)."""
    mask = mask.to(per_token.dtype)
    if mode == "token-mean":
        return (per_token * mask).sum() / mask.sum().clamp(min=1.0)
    if mode == "all-mean":
        return (per_token * mask).sum() / max(1, mask.numel())
    seq_tokens = mask.sum(-1)
    valid = (seq_tokens > 0).to(per_token.dtype)
    n = valid.sum().clamp(min=1.0)
    if mode == "seq-mean-token-mean":
        return ((per_token * mask).sum(-1) / seq_tokens.clamp(min=1.0) * valid).sum() / n
    if mode in ("seq-mean-token-sum", "seq-mean-token-sum-norm"):
        loss = ((per_token * mask).sum(-1) * valid).sum() / n
        return loss / max(1, max_length or mask.shape[-1]) if mode.endswith("norm") else loss
    raise ValueError(f"unknown loss aggregation {mode!r}; use one of {', '.join(AGGREGATIONS)}")


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mask = mask.to(values.dtype)
    return (values * mask).sum() / mask.sum().clamp(min=1.0)


def share(flags: torch.Tensor, mask: torch.Tensor | None = None) -> float:
    """The share of True among ``flags`` (where ``mask`` is 1)."""
    f = flags.to(torch.float32)
    if mask is None:
        return float(f.mean().item()) if f.numel() else 0.0
    return float(masked_mean(f, mask.to(torch.float32)).item())
