"""PNG curves of a run: each metric's mean over seeds with a min-max band, method vs baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from radar.repro.verdict import Records, series  # noqa: E402

PANELS: tuple[tuple[str, str], ...] = (
    ("correct", "correctness (sampled, T=1)"),
    ("entropy", "policy entropy (nats/token)"),
    ("incorrect_length", "length of wrong answers (tokens)"),
    ("correct_length", "length of right answers (tokens)"),
    ("clip_ratio", "clipped token fraction"),
    ("frac_reward_zero_std", "groups with zero reward std"),
    ("kl", "KL to reference"),
    ("reward_std", "reward std"),
)
COLORS = {"method": "tab:red", "baseline": "tab:blue"}


def _smooth(points: list[tuple[int, float]], width: int = 5) -> list[tuple[int, float]]:
    out = []
    for i, (step, _) in enumerate(points):
        window = [v for _, v in points[max(0, i - width + 1) : i + 1]]
        out.append((step, sum(window) / len(window)))
    return out


def _band(runs: dict[int, Records], metric: str) -> tuple[list[int], list[float], list[float], list[float]]:
    per_step: dict[int, list[float]] = {}
    for records in runs.values():
        for step, value in _smooth(series(records, metric)):
            per_step.setdefault(step, []).append(value)
    steps = sorted(per_step)
    return (
        steps,
        [sum(per_step[s]) / len(per_step[s]) for s in steps],
        [min(per_step[s]) for s in steps],
        [max(per_step[s]) for s in steps],
    )


def plot_run(runs: dict[str, dict[int, Records]], names: dict[str, str], out_dir: Path, title: str) -> list[Path]:
    """One overview PNG (all panels) plus one PNG for correctness; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    panels = [(m, t) for m, t in PANELS if any(series(r, m) for arm in runs.values() for r in arm.values())]
    paths = []
    cols = 2
    rows = max(1, (len(panels) + cols - 1) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(11, 3.0 * rows), squeeze=False)
    for ax, (metric, label) in zip(axes.flat, panels, strict=False):
        _draw(ax, runs, names, metric, label)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    fig.suptitle(title)
    fig.tight_layout()
    paths.append(out_dir / "curves.png")
    fig.savefig(paths[-1], dpi=90)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6.5, 4))
    _draw(ax, runs, names, "correct", "correctness (sampled, T=1)")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    paths.append(out_dir / "reward.png")
    fig.savefig(paths[-1], dpi=90)
    plt.close(fig)
    return paths


def _draw(ax: Any, runs: dict[str, dict[int, Records]], names: dict[str, str], metric: str, label: str) -> None:
    for arm, arm_runs in runs.items():
        steps, mean, lo, hi = _band(arm_runs, metric)
        if not steps:
            continue
        ax.plot(steps, mean, color=COLORS.get(arm), label=f"{names[arm]} (n={len(arm_runs)})")
        ax.fill_between(steps, lo, hi, color=COLORS.get(arm), alpha=0.2, linewidth=0)
    ax.set_title(label, fontsize=9)
    ax.set_xlabel("step", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
