"""One training arm: a warm-started policy trained with TRL's ``GRPOTrainer`` under one method preset.

The engine is TRL (``GRPOConfig`` + ``RadarGRPOTrainer``, repro/grpo_trainer.py: TRL's trainer with the plug-in
points, dynamic sampling and the mechanism rates); this module maps a preset onto the config and its plug-ins
(``plugin_set``, resolved in the installed plug-in catalog), builds the rewards, records per-step metrics and the
held-out scores of one (arm, seed pair).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import torch
from datasets import Dataset
from transformers import PrinterCallback, TrainerCallback
from trl import GRPOConfig
from trl.rewards import get_soft_overlong_punishment

from radar.repro import checkpoint, mathpolicy
from radar.repro.errors import ReproError, RunCancelled
from radar.repro.grpo_trainer import DYNAMIC_ROUNDS, RadarGRPOTrainer, plugin_set
from radar.repro.methods import Method
from radar.repro.plugins.catalog import plugin_catalog
from radar.repro.policy import PolicySize, accuracy, special_ids
from radar.repro.profile import StepProfiler
from radar.repro.shapes import ArmSummary, Example, Profile, StepRecord
from radar.repro.sizes import CheckpointPreset
from radar.repro.tasks import Task, correctness_reward, format_reward, refill_stream, rl_stream
from radar.repro.toy_arm import ToyArm


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
RATE_PREFIX = "rate/"  # plug-in and mask rates (repro/grpo_trainer.py): kept under their names in the step records


def normalize_log(logs: dict[str, float]) -> StepRecord:
    out: dict[str, float] = {}
    for name, keys in METRIC_KEYS.items():
        for key in keys:
            value = logs.get(key)
            if isinstance(value, int | float) and math.isfinite(value):
                out[name] = float(value)
                break
    for key, value in logs.items():
        if key.startswith(RATE_PREFIX) and isinstance(value, int | float) and math.isfinite(value):
            out[key] = float(value)
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


def train_arm(arm: ToyArm, eval_sets: dict[str, list[Example]], pass_samples: int = 4) -> ArmSummary:
    """Train one (method, seed) arm from a cached warm start on the RL part of the problem space;
    returns its summary with the held-out scores at the end (``final``).

    ``eval_sets``: "eval" (held-out, in-distribution), "ood" (held-out, one difficulty up),
    "curve" (a subset of "eval" scored every ``eval_every`` steps).
    """
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(arm.policy_path, padding_side="left")
    examples = rl_stream(arm.task, arm.steps * arm.size.prompts_per_step, arm.seed, arm.size.difficulty)
    config = build_config(
        arm.method, arm.size, arm.task, steps=arm.steps, seed=arm.seed, output_dir=arm.output_dir, device=arm.device
    )
    eval_every = max(1, arm.steps // 10)

    def heldout(model: Any) -> float:
        return accuracy(model, tokenizer, arm.task, eval_sets["curve"], model.device, greedy=True)

    record = RecordCallback(arm.on_record, arm.should_cancel, heldout, eval_every, arm.steps)
    profiler = StepProfiler(arm.device, warmup_steps=config.num_iterations)
    trainer = RadarGRPOTrainer(
        model=str(arm.policy_path),
        reward_funcs=reward_functions(arm.method, arm.task, tokenizer),
        args=config,
        train_dataset=Dataset.from_list(examples),
        processing_class=tokenizer,
        callbacks=[record],
        plugins=plugin_set(arm.method, plugin_catalog()),
        profiler=profiler,
        refill=iter(refill_stream(arm.task, refill_size(arm.steps, arm.size), arm.seed, arm.size.difficulty)),
    )
    trainer.remove_callback(PrinterCallback)
    started = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - started
    profile = profiler.summary()
    if record.cancelled:
        raise RunCancelled("run cancelled")
    model: Any = trainer.model
    torch.manual_seed(50_000 + arm.seed)
    final = {
        "heldout_greedy": accuracy(model, tokenizer, arm.task, eval_sets["eval"], model.device, greedy=True),
        "heldout_pass1": accuracy(model, tokenizer, arm.task, eval_sets["eval"], model.device, samples=pass_samples),
        "ood_greedy": accuracy(model, tokenizer, arm.task, eval_sets["ood"], model.device, greedy=True),
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
        plugins=plugin_set(method, plugin_catalog()),
        peft_config=peft_config,
        profiler=profiler,
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
    return ArmSummary(
        steps=done,
        seconds=round(seconds, 2),
        steps_per_s=round(done / seconds, 3) if seconds else None,
        eval_seconds=round(time.perf_counter() - started - seconds, 2),
        final={k: round(v, 4) for k, v in final.items()},
        eval_accuracy=round(final["heldout_greedy"], 4),
        profile=profile,
        parameters=parameters,
    )
