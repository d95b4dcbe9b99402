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
