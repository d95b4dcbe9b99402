"""Policy size presets (model shape plus the SFT and RL batch shapes that suit it). No torch here, so
run specs can be validated and run records read without importing it."""

from __future__ import annotations

from dataclasses import dataclass

from radar.repro.errors import ReproError


@dataclass(frozen=True)
class PolicySize:
    """A model size preset plus the SFT and RL batch shapes that suit it."""

    name: str
    hidden: int
    layers: int
    heads: int
    intermediate: int
    sft_lr: float
    sft_batch: int
    sft_max_steps: int
    target_accuracy: float  # stop SFT once sampled accuracy reaches this
    difficulty: int  # passed to the task generator
    prompts_per_step: int
    num_generations: int
    rl_lr: float
    default_steps: int
    num_iterations: int  # mu > 1, else ratio == 1 and all clipping variants coincide (TRL #3120)
    cpu_threads: int = 0  # torch threads on CPU; 0 = torch's default. Tiny matmuls run best on one.


SIZES: dict[str, PolicySize] = {
    # ~0.1M parameters: SFT in well under a minute on 2 CPU cores.
    "tiny": PolicySize("tiny", 64, 2, 4, 192, 3e-3, 128, 1500, 0.45, 0, 16, 8, 2e-4, 200, 2, cpu_threads=1),
    # ~25M parameters: for a GPU (the same code runs on CPU, slowly).
    "small": PolicySize("small", 512, 8, 8, 1536, 5e-4, 256, 4000, 0.35, 1, 32, 8, 5e-5, 200, 2),
}


def get_size(name: str) -> PolicySize:
    try:
        return SIZES[name]
    except KeyError:
        raise ReproError(f"unknown preset {name!r}; choose one of: {', '.join(SIZES)}") from None


@dataclass(frozen=True)
class CheckpointPreset:
    """Batch shape and evaluation sizes for a run on a real checkpoint (`--model`, `--dataset`).

    No SFT here: the checkpoint is the starting policy of every seed pair. ``lora_lr`` replaces
    ``rl_lr`` with ``--lora`` (adapters need a larger step than full fine-tuning).
    """

    name: str
    prompts_per_step: int
    num_generations: int
    rl_lr: float
    lora_lr: float
    default_steps: int
    num_iterations: int
    max_completion_tokens: int
    eval_prompts: int  # held-out prompts scored at the end (greedy and pass@1); fewer if the split has fewer
    curve_prompts: int  # held-out prompts scored greedily every steps/10 steps
    pass_samples: int  # samples per held-out prompt for pass@1 (T = 1)
    eval_batch: int  # prompts per generate() call when scoring
    overlong_buffer: int  # DAPO's soft overlong buffer: the last tokens of the budget
    lora_r: int = 16
    lora_alpha: int = 32


CHECKPOINT_PRESETS: dict[str, CheckpointPreset] = {
    # a 0.5-7B instruct model on one GPU: GSM8K-length reasoning
    "ckpt": CheckpointPreset("ckpt", 8, 8, 1e-6, 1e-5, 100, 2, 512, 500, 64, 4, 64, 128),
    # short (32-token completions): the CPU tests and the GPU check script's tiny saved checkpoint
    "ckpt-quick": CheckpointPreset("ckpt-quick", 4, 4, 1e-6, 1e-5, 20, 2, 32, 32, 8, 2, 32, 8),
}


def get_checkpoint_preset(name: str) -> CheckpointPreset:
    try:
        return CHECKPOINT_PRESETS[name]
    except KeyError:
        raise ReproError(
            f"unknown preset {name!r} for a --model run; choose one of: {', '.join(CHECKPOINT_PRESETS)}"
        ) from None
