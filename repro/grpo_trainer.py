"""``RadarGRPOTrainer``: TRL's ``GRPOTrainer`` with the three plug-in points, dynamic sampling and the mechanism rates.

TRL keeps generation, rewards, old log-probs and the num_iterations reuse; the trainer adds:

- the **advantage** point: after a batch is scored, ``PluginSet.advantage`` recomputes the advantages from the
  summed rewards, the binary correctness and the completion lengths (all processes' rows, grouped by prompt);
- the **ratio/loss** point: ``_compute_loss`` hands the per-token log-probs, old log-probs, advantages, entropies
  and each row's correctness and group success rate to ``PluginSet.loss``, and aggregates its per-token loss with the
  run's aggregation (the preset's ``loss_type``) unless the plug-in fixes its own;
- the **batch** point: after scoring, the groups the batch plug-in drops (DAPO's dynamic sampling is the built-in
  ``dapo_filter``) are replaced by groups generated from the arm's refill stream, at most ``DYNAMIC_ROUNDS`` times;
  groups still missing keep their dropped originals, so the batch shape stays the run's.

It logs the rates the verdict gates claims on: ``zero_var_share`` (groups as generated), ``zero_var_trained`` (as
trained), ``resampled_groups``, ``overlong_rate``, every plug-in rate as ``rate/NAME``, and for TRL's own
off-policy sequence mask and high-entropy token mask the shares they mask (``rate/opsm_masked``,
``rate/entropy_kept``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
from trl import GRPOTrainer

from radar.repro.errors import ReproError
from radar.repro.method_types import Method
from radar.repro.plugins.catalog import PluginCatalog
from radar.repro.plugins.points import (
    AdvantageInputs,
    BatchInputs,
    LossInputs,
    aggregate,
)
from radar.repro.profile import StepProfiler
from radar.repro.shapes import Example

DYNAMIC_ROUNDS = 3  # re-generations per batch for dynamic sampling (verl: algorithm.filter_groups.max_num_gen_batches)
OVERLONG_NAME = "soft_overlong_punishment_reward"  # TRL's reward function name (its metric key)
AGGREGATION = {  # TRL loss_type -> the aggregation a ratio/loss plug-in's per-token loss gets
    "grpo": "seq-mean-token-mean",
    "sapo": "seq-mean-token-mean",
    "dr_grpo": "seq-mean-token-sum-norm",
    "dapo": "token-mean",
    "bnpo": "token-mean",
    "cispo": "token-mean",
}
# A scored micro-batch of a text-only run (TRL's ``_generate_and_score_completions``): tensors by name (prompt and
# completion ids and masks, advantages, log-probs, num_items_in_batch, each row's correct and group_correct).
Batch = dict[str, torch.Tensor]


@dataclass(frozen=True)
class Resolved:
    """One plug-in resolved for a run: its name, function and settings (defaults plus the preset's)."""

    name: str
    fn: Callable[..., Any]
    args: Mapping[str, float]


@dataclass(frozen=True)
class PluginSet:
    """The plug-ins one arm trains with (``plugin_set``); None where TRL's own code fills the point."""

    advantage: Resolved | None = None
    loss: Resolved | None = None
    batch: Resolved | None = None
    names: Mapping[str, str] = field(default_factory=dict)


def plugin_set(method: Method, plugins: PluginCatalog) -> PluginSet:
    """The plug-ins of ``method``, resolved in ``plugins``: an unknown name or setting is one line naming the
    registered ones. Dynamic sampling is the built-in batch plug-in ``dapo_filter``."""
    batch = method.batch or ("dapo_filter" if method.dynamic_sampling else "")
    if method.batch and method.dynamic_sampling:
        raise ReproError(f"{method.name}: dynamic_sampling and the batch plug-in {method.batch!r} both choose groups")
    chosen = {"advantage": method.advantage, "ratio/loss": method.loss_plugin, "batch": batch}
    out: dict[str, Resolved | None] = {}
    for point, name in chosen.items():
        if not name:
            out[point] = None
            continue
        plugin = plugins.get(point, name)
        out[point] = Resolved(name, plugin.function(), plugin.settings(method.plugin_args.get(point, {})))
    extra = sorted(set(method.plugin_args) - {p for p, n in chosen.items() if n})
    if extra:
        raise ReproError(f"{method.name}: plugin_args for {', '.join(extra)} but no plug-in at that point")
    return PluginSet(out["advantage"], out["ratio/loss"], out["batch"], {p: n for p, n in chosen.items() if n})


class RadarGRPOTrainer(GRPOTrainer):
    """TRL's GRPOTrainer with the plug-in points, dynamic sampling, the mechanism rates and an optional efficiency
    profiler (repro/profile.py) fed from its generation, scoring and loss hooks (see the module docstring)."""

    def __init__(
        self,
        *args: Any,
        plugins: PluginSet | None = None,
        profiler: StepProfiler | None = None,
        refill: Iterator[Example] | None = None,
        **kwargs: Any,
    ) -> None:
        self.plugins = plugins or PluginSet()
        if self.plugins.batch is not None and refill is None:
            raise ReproError("a batch plug-in needs a refill stream of prompts (RadarGRPOTrainer(refill=...))")
        self.profiler = profiler
        self.refill = refill
        self._logp_calls: list[float] | None = None  # log-prob passes inside one scoring phase
        self._scored: tuple[torch.Tensor, torch.Tensor] | None = None  # the last batch's rewards, correct (all rows)
        super().__init__(*args, **kwargs)
        if self.plugins.loss is not None and self.beta != 0.0:
            raise ReproError("ratio/loss plug-ins run with beta = 0; set beta to 0.0 in the method preset")
        if self.plugins.batch is not None and self.accelerator.num_processes > 1:
            raise ReproError(
                "dynamic sampling re-generates groups in one process; train it on one GPU (--gpus 1) or with "
                "verl's algorithm.filter_groups (--engine verl)"
            )
        if profiler is not None:
            self.add_callback(profiler)
            if self.beta != 0.0:
                ref = self.ref_model
                profiler.ref_model = "adapter disabled (PEFT)" if ref is None else "separate copy"
                if ref is not None:
                    profiler.ref_bytes = sum(p.numel() * p.element_size() for p in ref.parameters())

    # -- profiling hooks (no-ops without a profiler) ---------------------------------------------------
    def _generate(self, prompts: list) -> Any:
        if self.profiler is None:
            return super()._generate(prompts)
        with self.profiler.section("generate"):
            return super()._generate(prompts)

    def _calculate_rewards(self, inputs: Any, prompts: Any, completions: Any, completion_ids_list: Any) -> Any:
        if self.profiler is None:
            rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        else:
            self.profiler.generated_tokens += sum(len(ids) for ids in completion_ids_list)
            self.profiler.generations += 1
            with self.profiler.section("reward"):
                rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        names = list(self.reward_func_names)
        summed = torch.nan_to_num(rewards * self.reward_weights.to(rewards.device).unsqueeze(0)).sum(dim=1)
        right = rewards[:, names.index("correct")] if "correct" in names else (summed > 0).float()
        self._scored = (summed.detach(), torch.nan_to_num(right).detach())
        if OVERLONG_NAME in names and self._training:
            touched = (rewards[:, names.index(OVERLONG_NAME)] < 0).float().mean().item()
            self._metrics["train"]["overlong_rate"].append(touched)
        return rewards

    def _generate_and_score_completions(self, inputs: Any) -> Any:
        out = self._score(inputs)
        if not self._training or self._scored is None:
            return out
        zero = self._zero_variance()
        self._metrics["train"]["zero_var_share"].append(zero.float().mean().item())
        drop = self._dropped() if self.plugins.batch is not None else torch.zeros_like(zero)
        if not bool(drop.any()):
            self._metrics["train"]["zero_var_trained"].append(zero.float().mean().item())
            self._metrics["train"]["resampled_groups"].append(0.0)
            return out
        return self._refill_groups(out, drop, zero)

    def _score(self, inputs: Any) -> Any:
        if self.profiler is None:
            return self._with_plugins(super()._generate_and_score_completions(inputs))
        self._logp_calls = []
        try:
            return self._with_plugins(super()._generate_and_score_completions(inputs))
        finally:
            calls, self._logp_calls = self._logp_calls, None
            if self.beta != 0.0 and calls:  # TRL computes the reference log-probs last (after the old policy's)
                self.profiler.add_section("ref", calls[-1])

    def _local(self, n: int) -> slice:
        return slice(self.accelerator.process_index * n, (self.accelerator.process_index + 1) * n)

    def _with_plugins(self, out: Batch) -> Batch:
        """The scored batch with each row's correctness and group success rate, and the advantage plug-in's
        advantages in place of TRL's."""
        if self._scored is None:
            return out
        rewards, right = self._scored
        g, n = self._group, len(out["advantages"])
        share = (right > 0.5).float().view(-1, g).mean(dim=1).repeat_interleave(g)
        out["correct"], out["group_correct"] = right[self._local(n)], share[self._local(n)]
        if self.plugins.advantage is not None:
            lengths = self.accelerator.gather(out["completion_mask"].sum(dim=1).float())
            adv = self.plugins.advantage
            result = adv.fn(AdvantageInputs(rewards.float(), right.float(), lengths, g, adv.args))
            out["advantages"] = result.advantages.to(out["advantages"].dtype)[self._local(n)]
            self._log_rates(result.rates)
        return out

    def _log_rates(self, rates: Mapping[str, float]) -> None:
        mode = "train" if self._training else "eval"
        for name, value in rates.items():
            self._metrics[mode][f"rate/{name}"].append(float(value))

    @property
    def _training(self) -> bool:
        return self.model is not None and bool(self.model.training)

    @property
    def _group(self) -> int:
        return int(self.num_generations or 1)

    def _zero_variance(self) -> torch.Tensor:
        """Per group of the last scored batch: True when its answers are all right or all wrong."""
        assert self._scored is not None
        right = (self._scored[1] > 0.5).float().view(-1, self._group).mean(dim=1)
        return (right == 0) | (right == 1)

    def _dropped(self) -> torch.Tensor:
        """Per group of the last scored batch: True when the batch plug-in drops it."""
        assert self._scored is not None and self.plugins.batch is not None
        rewards, right = self._scored
        step = int(self.state.global_step)
        result = self.plugins.batch.fn(BatchInputs(rewards, right, self._group, step, self.plugins.batch.args))
        self._log_rates(result.rates)
        return ~result.keep.to(torch.bool)

    def _refill_groups(self, out: Batch, drop: torch.Tensor, zero: torch.Tensor) -> Batch:
        """Replace the dropped groups of ``out`` by freshly generated groups the batch plug-in keeps (at most
        DYNAMIC_ROUNDS generations), keeping the batch size."""
        g = self._group
        keep = [_rows(out, ~drop, g)]
        kept_zero = [zero[~drop]]
        missing, resampled = int(drop.sum()), 0
        for _ in range(DYNAMIC_ROUNDS):
            if not missing:
                break
            prompts = [next(self.refill) for _ in range(missing)]  # type: ignore[arg-type]
            batch = self._score([dict(p) for p in prompts for _ in range(g)])
            resampled += missing
            new_drop, new_zero = self._dropped(), self._zero_variance()
            good = (~new_drop).nonzero().flatten()[:missing]
            if len(good):
                mask = torch.zeros_like(new_drop)
                mask[good] = True
                keep.append(_rows(batch, mask, g))
                kept_zero.append(new_zero[mask])
                missing -= len(good)
        if missing:  # still short: keep that many of the original dropped groups
            idx = drop.nonzero().flatten()[:missing]
            mask = torch.zeros_like(drop)
            mask[idx] = True
            keep.append(_rows(out, mask, g))
            kept_zero.append(zero[mask])
        self._metrics["train"]["zero_var_trained"].append(torch.cat(kept_zero).float().mean().item())
        self._metrics["train"]["resampled_groups"].append(float(resampled))
        return _concat(keep, self.processing_class.pad_token_id)  # type: ignore[union-attr]

    def _get_per_token_logps_and_entropies(self, *args: Any, **kwargs: Any) -> Any:
        if self._logp_calls is None or self.profiler is None:
            return super()._get_per_token_logps_and_entropies(*args, **kwargs)
        self.profiler._sync()
        started = time.perf_counter()
        out = super()._get_per_token_logps_and_entropies(*args, **kwargs)
        self.profiler._sync()
        self._logp_calls.append(time.perf_counter() - started)
        return out

    # -- TRL's own masks, measured ---------------------------------------------------------------------------
    def get_off_policy_mask(self, **kwargs: Any) -> torch.Tensor:  # type: ignore[override]
        keep = GRPOTrainer.get_off_policy_mask(**kwargs)
        self._log_rates({"opsm_masked": 1.0 - float(keep.float().mean().item())})
        return keep

    def get_high_entropy_mask(self, entropies: torch.Tensor, mask: torch.Tensor, threshold: float) -> torch.Tensor:
        kept = super().get_high_entropy_mask(entropies, mask, threshold)
        self._log_rates({"entropy_kept": float(kept.float().sum().item() / max(1.0, float(mask.sum().item())))})
        return kept

    def compute_loss(
        self, model: Any, inputs: Any, return_outputs: bool = False, num_items_in_batch: Any = None
    ) -> Any:
        if self.profiler is not None and model.training:
            self.profiler.trained_tokens += int(
                inputs["prompt_mask"].sum().item() + inputs["completion_mask"].sum().item()
            )
        return super().compute_loss(model, inputs, return_outputs=return_outputs, num_items_in_batch=num_items_in_batch)

    def _compute_loss(self, model: Any, inputs: Batch) -> torch.Tensor:
        plugin = self.plugins.loss
        if plugin is None:
            return super()._compute_loss(model, inputs)
        completion_ids, mask = inputs["completion_ids"], inputs["completion_mask"].float()
        input_ids = torch.cat([inputs["prompt_ids"], completion_ids], dim=1)
        attention_mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
        logps, entropies, _ = self._get_per_token_logps_and_entropies(
            model, input_ids, attention_mask, completion_ids.size(1), compute_entropy=True
        )
        old = inputs.get("old_per_token_logps")
        advantages = inputs["advantages"]
        advantages = advantages.unsqueeze(1) if advantages.dim() == 1 else advantages
        rows = len(mask)
        run_agg = AGGREGATION.get(str(self.loss_type), "token-mean")
        result = plugin.fn(
            LossInputs(
                logps=logps,
                old_logps=logps.detach() if old is None else old,
                advantages=advantages.expand_as(logps),
                mask=mask,
                entropies=entropies.detach(),
                correct=inputs.get("correct", torch.zeros(rows, device=mask.device)),
                group_correct=inputs.get("group_correct", torch.full((rows,), 0.5, device=mask.device)),
                epsilon_low=float(self.epsilon_low),
                epsilon_high=float(self.epsilon_high),
                aggregation=run_agg,
                max_length=int(self.max_completion_length or 0),
                args=plugin.args,
            )
        )
        loss = aggregate(result.per_token, mask, result.aggregation or run_agg, int(self.max_completion_length or 0))
        mode = "train" if model.training else "eval"
        self._metrics[mode]["entropy"].append(((entropies * mask).sum() / mask.sum().clamp(min=1)).item())
        self._log_rates(result.rates)
        if "clip_region" in result.rates:  # the plug-in's clip fraction is the run's clip_ratio
            self._metrics[mode]["clip_ratio/region_mean"].append(float(result.rates["clip_region"]))
        return loss / (self.current_gradient_accumulation_steps if mode == "train" else 1.0)


_LEFT = ("prompt_ids", "prompt_mask")  # left-padded (B, P)
_RIGHT = ("completion_ids", "completion_mask", "old_per_token_logps", "ref_per_token_logps", "sampling_per_token_logps")
_ROWS = ("advantages", "correct", "group_correct")


def _rows(batch: Batch, groups: torch.Tensor, g: int) -> Batch:
    """The rows of a scored batch that belong to the selected groups (``groups``: one bool per group)."""
    rows = groups.repeat_interleave(g).to(batch["advantages"].device)
    unknown = set(batch) - {*_LEFT, *_RIGHT, *_ROWS, "num_items_in_batch"}
    if unknown:
        raise ReproError(f"dynamic sampling cannot combine batches with {', '.join(sorted(unknown))} (images, tools)")
    return {k: v[rows] for k, v in batch.items() if k != "num_items_in_batch"}


def _concat(pieces: list[Batch], pad_id: int) -> Batch:
    """Concatenate batches row-wise, padding prompts on the left and completions on the right to one width."""
    out: Batch = {}
    for key in pieces[0]:
        parts = [p[key] for p in pieces if key in p]
        if key in _ROWS:
            out[key] = torch.cat(parts)
            continue
        width = max(t.shape[1] for t in parts)
        value = pad_id if key == "prompt_ids" or key == "completion_ids" else 0
        padded = []
        for t in parts:
            extra = t.new_full((t.shape[0], width - t.shape[1]), value)
            padded.append(torch.cat([extra, t] if key in _LEFT else [t, extra], dim=1))
        out[key] = torch.cat(padded)
    out["num_items_in_batch"] = out["completion_mask"].sum()
    return out
