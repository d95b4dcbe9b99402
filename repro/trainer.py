"""One training arm: a warm-started policy trained with TRL's ``GRPOTrainer`` under one method preset.

The engine is TRL (``GRPOConfig`` + ``GRPOTrainer``); this module only maps a preset onto the
config, records per-step metrics, and offers one extension point for losses TRL lacks:

    @register_loss("my_method")
    def my_loss(batch: LossBatch) -> tuple[torch.Tensor, dict[str, float]]:
        ...  # return (loss over the micro-batch, metrics such as {"clip_ratio": 0.1})

and a preset with ``loss_plugin="my_method"``. ``RadarGRPOTrainer._compute_loss`` then replaces
TRL's loss with the plug-in's, keeping TRL's generation, rewards, advantages, old log-probs and
num_iterations reuse. ``gmpo`` below is the worked example.

DAPO's dynamic sampling (TRL has no switch for it) is ``RadarGRPOTrainer(dynamic_sampling=True,
refill=...)``: after a generation batch is scored, the groups whose answers are all right or all wrong
(correctness, DAPO's ``acc``) are dropped and prompts from ``refill`` generated in their place, at most
``DYNAMIC_ROUNDS`` times; groups still missing then keep their zero-variance originals (the batch shape
stays the run's). The trainer logs, for every arm, the mechanism rates the verdict gates claims on:
``zero_var_share`` (groups as generated), ``zero_var_trained`` (as trained), ``resampled_groups`` and
``overlong_rate`` (completions the soft overlong punishment touched).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import torch
from datasets import Dataset
from transformers import PrinterCallback, TrainerCallback
from trl import GRPOConfig, GRPOTrainer
from trl.rewards import get_soft_overlong_punishment

from radar.repro import checkpoint, mathpolicy
from radar.repro.errors import ReproError, RunCancelled
from radar.repro.methods import Method
from radar.repro.policy import PolicySize, accuracy, special_ids
from radar.repro.profile import StepProfiler
from radar.repro.shapes import ArmSummary, Example, Profile, StepRecord
from radar.repro.sizes import CheckpointPreset
from radar.repro.tasks import Task, correctness_reward, format_reward, refill_stream, rl_stream

DYNAMIC_ROUNDS = 3  # re-generations per batch for dynamic sampling (verl: algorithm.filter_groups.max_num_gen_batches)
OVERLONG_NAME = "soft_overlong_punishment_reward"  # TRL's reward function name (its metric key)


# -- loss plug-ins ----------------------------------------------------------------------------------
@dataclass
class LossBatch:
    """What a plug-in loss sees for one micro-batch. Token tensors are (B, T); advantages are (B, 1)."""

    per_token_logps: torch.Tensor
    old_per_token_logps: torch.Tensor
    advantages: torch.Tensor
    mask: torch.Tensor
    entropies: torch.Tensor
    config: GRPOConfig


LossPlugin = Callable[[LossBatch], tuple[torch.Tensor, dict[str, float]]]
# A scored micro-batch of a text-only run (TRL's ``_generate_and_score_completions``): tensors by name (prompt and
# completion ids and masks, advantages, log-probs, num_items_in_batch); dynamic sampling refuses any other key.
Batch = dict[str, torch.Tensor]
LOSS_PLUGINS: dict[str, LossPlugin] = {}


def register_loss(name: str) -> Callable[[LossPlugin], LossPlugin]:
    def deco(fn: LossPlugin) -> LossPlugin:
        LOSS_PLUGINS[name] = fn
        return fn

    return deco


@register_loss("gmpo")
def gmpo_loss(b: LossBatch) -> tuple[torch.Tensor, dict[str, float]]:
    """GMPO (arXiv 2507.20673): maximise A * geometric mean of token ratios, each clipped in log space.

    Pessimistic per token: for A > 0 take min(log rho, clip(log rho)), for A < 0 the max, then
    s_i = exp(mean_t of the chosen log-ratios) and loss = -mean_i(A_i * s_i).
    """
    log_ratio = b.per_token_logps - b.old_per_token_logps
    clipped = torch.clamp(log_ratio, -b.config.epsilon, b.config.epsilon_high or b.config.epsilon)
    sign = torch.sign(b.advantages)
    sign = torch.where(sign == 0, torch.ones_like(sign), sign)
    pessimistic = sign * torch.minimum(sign * log_ratio, sign * clipped)
    lengths = b.mask.sum(-1).clamp(min=1.0)
    seq_ratio = torch.exp((pessimistic * b.mask).sum(-1) / lengths)
    loss = -(b.advantages.squeeze(-1) * seq_ratio).mean()
    was_clipped = ((pessimistic != log_ratio).float() * b.mask).sum() / b.mask.sum().clamp(min=1.0)
    return loss, {"clip_ratio/region_mean": was_clipped.item()}


class RadarGRPOTrainer(GRPOTrainer):
    """TRL's GRPOTrainer with an optional plug-in loss, DAPO's dynamic sampling (see module docstring), the
    mechanism metrics, and an optional efficiency profiler (repro/profile.py) fed from its generation,
    scoring and loss hooks."""

    def __init__(
        self,
        *args: Any,
        loss_plugin: str = "",
        profiler: StepProfiler | None = None,
        dynamic_sampling: bool = False,
        refill: Iterator[Example] | None = None,
        **kwargs: Any,
    ) -> None:
        if loss_plugin and loss_plugin not in LOSS_PLUGINS:
            raise ReproError(f"unknown loss plug-in {loss_plugin!r}; registered: {', '.join(LOSS_PLUGINS)}")
        if dynamic_sampling and refill is None:
            raise ReproError("dynamic sampling needs a refill stream of prompts (RadarGRPOTrainer(refill=...))")
        self.loss_plugin = LOSS_PLUGINS.get(loss_plugin) if loss_plugin else None
        self.profiler = profiler
        self.dynamic_sampling = dynamic_sampling
        self.refill = refill
        self._logp_calls: list[float] | None = None  # log-prob passes inside one scoring phase
        self._correct: torch.Tensor | None = None  # the last scored batch's correctness, one per completion
        super().__init__(*args, **kwargs)
        if self.loss_plugin is not None and self.beta != 0.0:
            raise ReproError("loss plug-ins run with beta = 0; set beta to 0.0 in the method preset")
        if dynamic_sampling and self.accelerator.num_processes > 1:
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
        local = slice(
            self.accelerator.process_index * len(prompts), (self.accelerator.process_index + 1) * len(prompts)
        )
        self._correct = rewards[local, names.index("correct")].detach() if "correct" in names else None
        if OVERLONG_NAME in names and self._training:
            touched = (rewards[:, names.index(OVERLONG_NAME)] < 0).float().mean().item()
            self._metrics["train"]["overlong_rate"].append(touched)
        return rewards

    def _generate_and_score_completions(self, inputs: Any) -> Any:
        out = self._score(inputs)
        if not self._training:
            return out
        zero = self._zero_variance()
        if zero is None:
            return out
        self._metrics["train"]["zero_var_share"].append(zero.float().mean().item())
        if not self.dynamic_sampling or not bool(zero.any()):
            self._metrics["train"]["zero_var_trained"].append(zero.float().mean().item())
            self._metrics["train"]["resampled_groups"].append(0.0)
            return out
        return self._refill_groups(out, zero)

    def _score(self, inputs: Any) -> Any:
        if self.profiler is None:
            return super()._generate_and_score_completions(inputs)
        self._logp_calls = []
        try:
            return super()._generate_and_score_completions(inputs)
        finally:
            calls, self._logp_calls = self._logp_calls, None
            if self.beta != 0.0 and calls:  # TRL computes the reference log-probs last (after the old policy's)
                self.profiler.add_section("ref", calls[-1])

    @property
    def _training(self) -> bool:
        return self.model is not None and bool(self.model.training)

    @property
    def _group(self) -> int:
        return int(self.num_generations or 1)

    def _zero_variance(self) -> torch.Tensor | None:
        """Per group of the last scored batch: True when its answers are all right or all wrong."""
        if self._correct is None:
            return None
        right = (self._correct > 0.5).float().view(-1, self._group).mean(dim=1)
        return (right == 0) | (right == 1)

    def _refill_groups(self, out: Batch, zero: torch.Tensor) -> Batch:
        """Dynamic sampling: replace the zero-variance groups of ``out`` by freshly generated groups that have
        both right and wrong answers (at most DYNAMIC_ROUNDS generations), keeping the batch size."""
        g = self._group
        keep = [_rows(out, ~zero, g)]
        missing, resampled = int(zero.sum()), 0
        for _ in range(DYNAMIC_ROUNDS):
            if not missing:
                break
            prompts = [next(self.refill) for _ in range(missing)]  # type: ignore[arg-type]
            batch = self._score([dict(p) for p in prompts for _ in range(g)])
            resampled += missing
            new_zero = self._zero_variance()
            if new_zero is None:
                break
            good = (~new_zero).nonzero().flatten()[:missing]
            if len(good):
                mask = torch.zeros_like(new_zero)
                mask[good] = True
                keep.append(_rows(batch, mask, g))
                missing -= len(good)
        if missing:  # still short: keep that many of the original zero-variance groups
            idx = zero.nonzero().flatten()[:missing]
            mask = torch.zeros_like(zero)
            mask[idx] = True
            keep.append(_rows(out, mask, g))
        self._metrics["train"]["zero_var_trained"].append(missing / len(zero))
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

    def compute_loss(
        self, model: Any, inputs: Any, return_outputs: bool = False, num_items_in_batch: Any = None
    ) -> Any:
        if self.profiler is not None and model.training:
            self.profiler.trained_tokens += int(
                inputs["prompt_mask"].sum().item() + inputs["completion_mask"].sum().item()
            )
        return super().compute_loss(model, inputs, return_outputs=return_outputs, num_items_in_batch=num_items_in_batch)

    def _compute_loss(self, model: Any, inputs: Batch) -> torch.Tensor:
        if self.loss_plugin is None:
            return super()._compute_loss(model, inputs)
        completion_ids, mask = inputs["completion_ids"], inputs["completion_mask"]
        input_ids = torch.cat([inputs["prompt_ids"], completion_ids], dim=1)
        attention_mask = torch.cat([inputs["prompt_mask"], mask], dim=1)
        logps, entropies, _ = self._get_per_token_logps_and_entropies(
            model, input_ids, attention_mask, completion_ids.size(1), compute_entropy=True
        )
        old = inputs.get("old_per_token_logps")
        advantages = inputs["advantages"]
        batch = LossBatch(
            per_token_logps=logps,
            old_per_token_logps=logps.detach() if old is None else old,
            advantages=advantages.unsqueeze(1) if advantages.dim() == 1 else advantages,
            mask=mask.float(),
            entropies=entropies,
            config=self.args,  # type: ignore[arg-type]  # a GRPOConfig at run time
        )
        loss, metrics = self.loss_plugin(batch)
        mode = "train" if model.training else "eval"
        self._metrics[mode]["entropy"].append(((entropies * mask).sum() / mask.sum().clamp(min=1)).item())
        for key, value in metrics.items():
            self._metrics[mode][key].append(float(value))
        return loss / (self.current_gradient_accumulation_steps if mode == "train" else 1.0)


_LEFT = ("prompt_ids", "prompt_mask")  # left-padded (B, P)
_RIGHT = ("completion_ids", "completion_mask", "old_per_token_logps", "ref_per_token_logps", "sampling_per_token_logps")
_ROWS = ("advantages",)


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


# -- configuration ----------------------------------------------------------------------------------
def build_config(
    method: Method, size: PolicySize, task: Task, *, steps: int, seed: int, output_dir: Path, device: str
) -> GRPOConfig:
    """The GRPOConfig for one arm: shared batch shape and schedule, then the method's own fields."""
    shared = _shared_fields(
        lr=size.rl_lr,
        prompts_per_step=size.prompts_per_step,
        num_generations=size.num_generations,
        num_iterations=size.num_iterations,
        max_completion=task.max_completion_tokens,
        steps=steps,
        seed=seed,
        output_dir=output_dir,
        device=device,
        dtype="float32",
    )
    return _with_method(method, shared)


def build_checkpoint_config(
    method: Method, preset: CheckpointPreset, *, steps: int, seed: int, output_dir: Path, device: str, lora: bool
) -> GRPOConfig:
    """The GRPOConfig for one arm on a real checkpoint: bf16 on CUDA, float32 on CPU; vLLM generation
    (colocated) only when vLLM is importable; the LoRA learning rate with ``lora``."""
    shared = _shared_fields(
        lr=preset.lora_lr if lora else preset.rl_lr,
        prompts_per_step=preset.prompts_per_step,
        num_generations=preset.num_generations,
        num_iterations=preset.num_iterations,
        max_completion=preset.max_completion_tokens,
        steps=steps,
        seed=seed,
        output_dir=output_dir,
        device=device,
        dtype="bfloat16" if device == "cuda" else "float32",
    )
    if device == "cuda" and vllm_available():
        shared |= {"use_vllm": True, "vllm_mode": "colocate"}
    return _with_method(method, shared)


def vllm_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("vllm") is not None


class SharedFields(TypedDict):
    """The GRPOConfig fields both arms of a run share (``_shared_fields``): batch shape, schedule, lengths,
    sampling, logging, device and seed; a preset may set none of them (``_with_method`` refuses)."""

    output_dir: str
    max_steps: int
    learning_rate: float
    lr_scheduler_type: str
    warmup_steps: int
    per_device_train_batch_size: int
    gradient_accumulation_steps: int
    num_generations: int
    num_iterations: int
    max_completion_length: int
    temperature: float
    top_p: float
    max_grad_norm: float
    logging_steps: int
    save_strategy: str
    report_to: str
    disable_tqdm: bool
    gradient_checkpointing: bool
    use_cpu: bool
    bf16: bool
    seed: int
    data_seed: int
    dataloader_num_workers: int
    model_init_kwargs: dict[str, str]
    log_completions: bool
    use_vllm: NotRequired[bool]  # a checkpoint run on CUDA where vLLM is importable
    vllm_mode: NotRequired[str]


def _shared_fields(
    *,
    lr: float,
    prompts_per_step: int,
    num_generations: int,
    num_iterations: int,
    max_completion: int,
    steps: int,
    seed: int,
    output_dir: Path,
    device: str,
    dtype: str,
) -> SharedFields:
    return {
        "output_dir": str(output_dir),
        "max_steps": steps,
        "learning_rate": lr,
        "lr_scheduler_type": "constant",
        "warmup_steps": 0,
        "per_device_train_batch_size": prompts_per_step * num_generations,
        "gradient_accumulation_steps": 1,
        "num_generations": num_generations,
        "num_iterations": num_iterations,
        "max_completion_length": max_completion,
        "temperature": 1.0,
        "top_p": 1.0,
        "max_grad_norm": 1.0,
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": "none",
        "disable_tqdm": True,
        "gradient_checkpointing": False,
        "use_cpu": device == "cpu",
        "bf16": dtype == "bfloat16",
        "seed": seed,
        "data_seed": seed,
        "dataloader_num_workers": 0,
        "model_init_kwargs": {"dtype": dtype},
        "log_completions": False,
    }


def _with_method(method: Method, shared: SharedFields) -> GRPOConfig:
    overlap = set(shared) & set(method.config)
    if overlap:
        raise ReproError(f"method {method.name} may not set shared run fields: {', '.join(sorted(overlap))}")
    return GRPOConfig(**shared, **method.config)


def overlong_buffer(task: Task) -> int:
    """DAPO's soft overlong buffer: the last tokens of the budget where the punishment acts (``Task.buffer``:
    the budget beyond the longest answer plus its EOS, or addition-work's 8 tokens, which its long answers reach)."""
    return task.buffer


def reward_functions(method: Method, task: Task, tokenizer: Any) -> list[Callable[..., list[float]]]:
    eos, specials = tokenizer.eos_token_id, special_ids(tokenizer)

    def decode(ids: list[int]) -> str:
        return str(tokenizer.decode(ids))

    funcs: list[Callable[..., list[float]]] = [
        correctness_reward(task, eos, specials, decode),
        format_reward(task, eos, specials, decode),
    ]
    if method.overlong_shaping:
        funcs.append(get_soft_overlong_punishment(task.max_completion_tokens, task.buffer))
    return funcs


# -- metrics ----------------------------------------------------------------------------------------
# TRL's log keys -> the names the run records use (the first key present wins).
METRIC_KEYS: dict[str, tuple[str, ...]] = {
    "reward": ("reward",),
    "correct": ("rewards/correct/mean",),
    "reward_std": ("reward_std",),
    "frac_reward_zero_std": ("frac_reward_zero_std",),
    "zero_var_share": ("zero_var_share",),
    "zero_var_trained": ("zero_var_trained",),
    "resampled_groups": ("resampled_groups",),
    "overlong_rate": ("overlong_rate",),
    "entropy": ("entropy",),
    "length": ("completions/mean_length",),
    "length_min": ("completions/min_length",),
    "length_max": ("completions/max_length",),
    "correct_length": ("completions/correct_length",),
    "incorrect_length": ("completions/incorrect_length",),
    "clip_ratio": ("clip_ratio/region_mean", "cispo_clip_ratio"),
    "capped_share": ("cispo_clip_ratio",),
    "clip_low": ("clip_ratio/low_mean",),
    "clip_high": ("clip_ratio/high_mean",),
    "kl": ("kl",),
    "loss": ("loss",),
    "grad_norm": ("grad_norm",),
}


def normalize_log(logs: dict[str, float]) -> StepRecord:
    out: dict[str, float] = {}
    for name, keys in METRIC_KEYS.items():
        for key in keys:
            value = logs.get(key)
            if isinstance(value, int | float) and math.isfinite(value):
                out[name] = float(value)
                break
    return out


class RecordCallback(TrainerCallback):
    """Per-step metrics to a callback, with the held-out greedy accuracy every ``eval_every`` steps
    (the held-out curve); stops training (and flags it) when ``should_cancel()`` says so."""

    def __init__(
        self,
        on_record: Callable[[StepRecord], None],
        should_cancel: Callable[[], bool],
        heldout: Callable[[Any], float] | None = None,
        eval_every: int = 0,
        last_step: int = 0,
    ) -> None:
        self.on_record = on_record
        self.should_cancel = should_cancel
        self.heldout = heldout
        self.eval_every = eval_every
        self.last_step = last_step
        self.started = time.perf_counter()
        self.cancelled = False

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kw: Any) -> None:
        if logs and "train_runtime" not in logs:
            rec: StepRecord = {"step": state.global_step, "time": round(time.perf_counter() - self.started, 3)}
            step = state.global_step
            if self.heldout is not None and self.eval_every and (step % self.eval_every == 0 or step == self.last_step):
                rec["heldout"] = self.heldout(kw["model"])
            self.on_record(rec | normalize_log(logs))

    def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if self.should_cancel():
            self.cancelled = True
            control.should_training_stop = True


def train_arm(
    *,
    policy_path: Path,
    method: Method,
    task: Task,
    size: PolicySize,
    steps: int,
    seed: int,
    device: str,
    output_dir: Path,
    on_record: Callable[[StepRecord], None],
    should_cancel: Callable[[], bool],
    eval_sets: dict[str, list[Example]],
    pass_samples: int = 4,
) -> ArmSummary:
    """Train one (method, seed) arm from a cached warm start on the RL part of the problem space;
    returns its summary with the held-out scores at the end (``final``).

    ``eval_sets``: "eval" (held-out, in-distribution), "ood" (held-out, one difficulty up),
    "curve" (a subset of "eval" scored every ``eval_every`` steps).
    """
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(policy_path, padding_side="left")
    examples = rl_stream(task, steps * size.prompts_per_step, seed, size.difficulty)
    config = build_config(method, size, task, steps=steps, seed=seed, output_dir=output_dir, device=device)
    eval_every = max(1, steps // 10)

    def heldout(model: Any) -> float:
        return accuracy(model, tokenizer, task, eval_sets["curve"], model.device, greedy=True)

    record = RecordCallback(on_record, should_cancel, heldout, eval_every, steps)
    profiler = StepProfiler(device, warmup_steps=config.num_iterations)
    trainer = RadarGRPOTrainer(
        model=str(policy_path),
        reward_funcs=reward_functions(method, task, tokenizer),
        args=config,
        train_dataset=Dataset.from_list(examples),
        processing_class=tokenizer,
        callbacks=[record],
        loss_plugin=method.loss_plugin,
        profiler=profiler,
        dynamic_sampling=method.dynamic_sampling,
        refill=iter(refill_stream(task, refill_size(steps, size), seed, size.difficulty)),
    )
    trainer.remove_callback(PrinterCallback)
    started = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - started
    profile = profiler.summary()
    if record.cancelled:
        raise RunCancelled("run cancelled")
    model: Any = trainer.model
    torch.manual_seed(50_000 + seed)
    final = {
        "heldout_greedy": accuracy(model, tokenizer, task, eval_sets["eval"], model.device, greedy=True),
        "heldout_pass1": accuracy(model, tokenizer, task, eval_sets["eval"], model.device, samples=pass_samples),
        "ood_greedy": accuracy(model, tokenizer, task, eval_sets["ood"], model.device, greedy=True),
    }
    return _arm_result(trainer.state.global_step, seconds, started, final, profile, _parameters(model))


def refill_size(steps: int, shape: Any) -> int:
    """Prompts dynamic sampling may draw in a run of ``steps`` (every generation batch, every round)."""
    return math.ceil(steps / max(1, shape.num_iterations)) * shape.prompts_per_step * DYNAMIC_ROUNDS


def _parameters(model: Any) -> int:
    return int(sum(p.numel() for p in model.parameters()))


def train_checkpoint_arm(
    *,
    model_path: Path,
    method: Method,
    preset: CheckpointPreset,
    data: Any,
    steps: int,
    seed: int,
    device: str,
    lora: bool,
    output_dir: Path,
    on_record: Callable[[StepRecord], None],
    should_cancel: Callable[[], bool],
    eval_rows: list[Example],
) -> ArmSummary:
    """Train one (method, seed) arm of a real checkpoint on the training part of a math data set
    (repro/checkpoint.py); the same record, profile and ``final`` held-out scores as ``train_arm``."""
    from transformers import AutoConfig, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path, padding_side="left", local_files_only=True)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    stream = checkpoint.rl_stream(data, steps * preset.prompts_per_step, seed)
    rows = [{"prompt": mathpolicy.trl_prompt(r["prompt"], tokenizer), "answer": r["answer"]} for r in stream]
    refill: list[Example] = [
        {"prompt": mathpolicy.trl_prompt(r["prompt"], tokenizer), "answer": r["answer"]}
        for r in checkpoint.rl_stream(data, refill_size(steps, preset), REFILL_SEED + seed)
    ]
    config = build_checkpoint_config(
        method, preset, steps=steps, seed=seed, output_dir=output_dir, device=device, lora=lora
    )
    eval_every = max(1, steps // 10)
    curve = eval_rows[: preset.curve_prompts]

    def heldout(model: Any) -> float:
        return mathpolicy.math_accuracy(
            model, tokenizer, curve, max_new_tokens=preset.max_completion_tokens, batch=preset.eval_batch
        )

    peft_config = None
    if lora:
        from peft import LoraConfig

        peft_config = LoraConfig(
            r=preset.lora_r, lora_alpha=preset.lora_alpha, target_modules="all-linear", task_type="CAUSAL_LM"
        )
    record = RecordCallback(on_record, should_cancel, heldout, eval_every, steps)
    profiler = StepProfiler(device, warmup_steps=config.num_iterations)
    from transformers import GenerationConfig

    try:
        generation = GenerationConfig.from_pretrained(model_path, local_files_only=True)
    except OSError:  # no generation_config.json: the model config's EOS
        generation = GenerationConfig.from_model_config(AutoConfig.from_pretrained(model_path, local_files_only=True))
    eos = mathpolicy.eos_ids(tokenizer, generation.eos_token_id)
    trainer = RadarGRPOTrainer(
        model=str(model_path),
        reward_funcs=mathpolicy.reward_functions(tokenizer, eos)
        + (
            [get_soft_overlong_punishment(preset.max_completion_tokens, preset.overlong_buffer)]
            if method.overlong_shaping
            else []
        ),
        args=config,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        callbacks=[record],
        loss_plugin=method.loss_plugin,
        peft_config=peft_config,
        profiler=profiler,
        dynamic_sampling=method.dynamic_sampling,
        refill=iter(refill),
    )
    trainer.remove_callback(PrinterCallback)
    started = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - started
    profile = profiler.summary() | {"lora": lora, "vllm": bool(config.use_vllm)}
    if record.cancelled:
        raise RunCancelled("run cancelled")
    model: Any = trainer.model
    torch.manual_seed(50_000 + seed)
    budget, batch = preset.max_completion_tokens, preset.eval_batch
    final = {
        "heldout_greedy": mathpolicy.math_accuracy(model, tokenizer, eval_rows, max_new_tokens=budget, batch=batch),
        "heldout_pass1": mathpolicy.math_accuracy(
            model, tokenizer, eval_rows, max_new_tokens=budget, batch=batch, greedy=False, samples=preset.pass_samples
        ),
    }
    return _arm_result(trainer.state.global_step, seconds, started, final, profile, _parameters(model))


REFILL_SEED = 20_000  # a checkpoint run's refill prompts: the RL part shuffled with seed 20000 + the arm's RL seed


def _arm_result(
    done: int, seconds: float, started: float, final: dict[str, float], profile: Profile, parameters: int
) -> ArmSummary:
    """One arm's summary: steps and time of training (evaluation after it), final held-out scores, profile."""
    return {
        "steps": done,
        "seconds": round(seconds, 2),
        "steps_per_s": round(done / seconds, 3) if seconds else None,
        "eval_seconds": round(time.perf_counter() - started - seconds, 2),
        "final": {k: round(v, 4) for k, v in final.items()},
        "eval_accuracy": round(final["heldout_greedy"], 4),
        "profile": profile,
        "parameters": parameters,
    }
