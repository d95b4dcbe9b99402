"""The efficiency profile of one training arm: where the wall time of a step goes, throughput, peak memory.

``StepProfiler`` is a TrainerCallback that ``RadarGRPOTrainer`` (repro/trainer.py) feeds from its
hooks, for the toy tasks and real checkpoints alike:

- ``step_s``: wall time of an optimiser step, from the Trainer's ``on_step_begin`` to ``on_step_end``
  (generation, scoring, forward, backward, optimiser step; not the held-out curve, which runs in
  ``on_log`` after the step). With ``num_iterations`` = mu, one generation feeds mu steps, so the
  per-step means below spread one generation over mu steps.
- ``generate_s``: inside ``GRPOTrainer._generate`` (sampling the completions).
- ``reward_s``: inside ``_calculate_rewards`` (decoding and scoring the completions).
- ``ref_s``: the reference model's forward pass when beta > 0 (the last log-prob pass of
  ``_generate_and_score_completions``; a separate model copy, or the base model with the LoRA
  adapter disabled); 0 when beta = 0.
- ``train_s``: the rest of the step: old-policy log-probs (mu > 1), the loss's forward and backward,
  gradient clipping and the optimiser step.
- ``tokens_per_s``: completion tokens generated per second of step time (end-to-end throughput);
  ``gen_tokens_per_s`` per second of generation; ``train_tokens_per_s``: prompt + completion tokens
  through forward and backward per second of ``train_s``.
- ``peak_mem_gb``: on CUDA ``torch.cuda.max_memory_allocated`` (reset when the arm starts); on CPU the
  process's peak resident set (Linux ``VmHWM``, reset through ``/proc/self/clear_refs`` when the arm
  starts; where that is not allowed, ``ru_maxrss`` over the process's life, marked as such).

On CUDA every section boundary synchronises the device, so kernel time lands in the right section
(this costs a little throughput; the profile says so in ``timing``).
"""

from __future__ import annotations

import contextlib
import resource
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from transformers import TrainerCallback

from radar.repro.profile_stats import round4
from radar.repro.shapes import Profile

GB = 1024**3


def _vm_hwm_bytes() -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _reset_rss_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS (Linux >= 4.0)
    except OSError:
        return False
    return _vm_hwm_bytes() is not None


class StepProfiler(TrainerCallback):
    """Accumulates section times and token counts per optimiser step (see the module docstring)."""

    SECTIONS = ("generate", "reward", "ref")

    def __init__(self, device: str, warmup_steps: int = 0) -> None:
        self.device = device
        self.warmup_steps = warmup_steps  # left out of the means when the arm has at least twice as many
        self.cuda = device == "cuda" and torch.cuda.is_available()
        self.steps = 0
        self.step_s = 0.0
        self.step_times: list[float] = []
        self.sections = dict.fromkeys(self.SECTIONS, 0.0)
        self.generated_tokens = 0
        self.trained_tokens = 0
        self.generations = 0
        self.ref_model = "none"
        self.ref_bytes = 0
        self._step_started: float | None = None
        self._at_begin: tuple[float, ...] = ()
        self.per_step: list[tuple[float, ...]] = []  # (wall, generate, reward, ref, generated, trained)
        self.mem_kind = ""
        self._rss_reset = False
        self.reset_memory()

    # -- memory ------------------------------------------------------------------------------------
    def reset_memory(self) -> None:
        if self.cuda:
            torch.cuda.reset_peak_memory_stats()
            self.mem_kind = "cuda max allocated"
        else:
            self._rss_reset = _reset_rss_peak()
            self.mem_kind = "peak RSS (VmHWM)" if self._rss_reset else "peak RSS over the process's life (ru_maxrss)"

    def peak_bytes(self) -> int:
        if self.cuda:
            return int(torch.cuda.max_memory_allocated())
        if self._rss_reset:
            hwm = _vm_hwm_bytes()
            if hwm is not None:
                return hwm
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(rss if sys.platform == "darwin" else rss * 1024)

    # -- timing ------------------------------------------------------------------------------------
    def _sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    @contextlib.contextmanager
    def section(self, name: str) -> Iterator[None]:
        self._sync()
        started = time.perf_counter()
        try:
            yield
        finally:
            self._sync()
            self.sections[name] += time.perf_counter() - started

    def add_section(self, name: str, seconds: float) -> None:
        self.sections[name] += seconds

    def _counters(self) -> tuple[float, ...]:
        return (*(self.sections[k] for k in self.SECTIONS), float(self.generated_tokens), float(self.trained_tokens))

    def on_step_begin(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        self._sync()
        self._at_begin = self._counters()
        self._step_started = time.perf_counter()

    def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if self._step_started is None:
            return
        self._sync()
        took = time.perf_counter() - self._step_started
        self._step_started = None
        self.steps += 1
        self.step_s += took
        self.step_times.append(took)
        now = self._counters()
        self.per_step.append((took, *(a - b for a, b in zip(now, self._at_begin, strict=True))))

    # -- summary -----------------------------------------------------------------------------------
    def summary(self) -> Profile:
        """Means per step over the steps after the warm-up (the first ``warmup_steps``: one generation
        cycle, which carries one-off costs such as lazy initialisation and allocator growth) when the
        arm ran at least twice that many steps, else over every step (``warmup_excluded`` says which)."""
        skip = self.warmup_steps if self.warmup_steps and len(self.per_step) >= 2 * self.warmup_steps else 0
        kept = self.per_step[skip:]
        n = max(len(kept), 1)
        wall, gen, rew, ref, generated, trained = (sum(col) for col in zip(*kept, strict=True)) if kept else (0.0,) * 6
        train = max(wall - gen - rew - ref, 0.0)
        return {
            "device": self.device,
            "steps": self.steps,
            "warmup_excluded": skip,
            "measured_steps": len(kept),  # the means and rates below are over these
            "first_step_s": round4(self.step_times[0]) if self.step_times else None,
            "step_s": round4(wall / n),
            "step_s_median": round4(statistics.median(self.step_times[skip:])) if kept else None,
            "generate_s": round4(gen / n),
            "reward_s": round4(rew / n),
            "ref_s": round4(ref / n),
            "train_s": round4(train / n),
            "generated_tokens": int(self.generated_tokens),  # over all steps, like "steps"
            "trained_tokens": int(self.trained_tokens),
            "tokens_per_s": round4(generated / wall) if wall else None,
            "gen_tokens_per_s": round4(generated / gen) if gen else None,
            "train_tokens_per_s": round4(trained / train) if train else None,
            "peak_mem_gb": round4(self.peak_bytes() / GB),
            "peak_mem_kind": self.mem_kind,
            "ref_model": self.ref_model,
            "ref_mem_gb": round4(self.ref_bytes / GB),
            "timing": "device synchronised at section boundaries" if self.cuda else "wall clock",
        }
