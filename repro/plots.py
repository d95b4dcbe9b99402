"""PNG figures of a run, each axis saying what it shows and how it was smoothed.

- ``difference.png``: what the verdict tests, the paired difference (method minus baseline) of held-out
  greedy accuracy on the full held-out set (1,000 problems where the task has them) at the end of training:
  each pair's difference, their mean and 95 % t interval, drawn at the last step; beside it, for the
  course of training only, the same difference on the 200-problem curve subset (pointwise 95 % t
  interval, not corrected for looking at many steps, and not what the verdict tests).
- ``curves.png``: held-out accuracy of both arms (unsmoothed, every evaluation point), then training
  metrics of both arms as a rolling mean over ``SMOOTH`` logged steps (named on each axis): KL to
  the reference, clipped fraction, training-batch correctness (sampled, T = 1), entropy, lengths.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from radar.repro.shapes import ArmRun  # noqa: E402
from radar.repro.verdict import series  # noqa: E402

SMOOTH = 5  # rolling mean over this many logged steps for the training metrics
PANELS: tuple[tuple[str, str, bool], ...] = (  # (metric, title, smoothed)
    ("heldout", "held-out greedy accuracy (no smoothing)", False),
    ("kl", "KL to reference", True),
    ("clip_ratio", "clipped fraction (tokens; sequences for GSPO/LUSPO)", True),
    ("correct", "training-batch correctness (sampled, T=1)", True),
    ("entropy", "policy entropy (nats/token)", True),
    ("length", "completion length (tokens)", True),
    ("incorrect_length", "length of wrong answers (tokens)", True),
    ("frac_reward_zero_std", "groups with zero reward std", True),
)
COLORS = {"method": "tab:red", "baseline": "tab:blue"}
ArmRuns = dict[int, ArmRun]  # seed pair -> its step records and final held-out scores


def smooth(points: list[tuple[int, float]], width: int = SMOOTH) -> list[tuple[int, float]]:
    """Trailing rolling mean over ``width`` points."""
    out = []
    for i, (step, _) in enumerate(points):
        window = [v for _, v in points[max(0, i - width + 1) : i + 1]]
        out.append((step, sum(window) / len(window)))
    return out


def _per_step(arm_runs: ArmRuns, metric: str, smoothed: bool) -> dict[int, dict[int, float]]:
    """step -> {pair: value}."""
    table: dict[int, dict[int, float]] = {}
    for pair, run in arm_runs.items():
        points = series(run.records, metric)
        for step, value in smooth(points) if smoothed else points:
            table.setdefault(step, {})[pair] = value
    return table


def paired_difference(runs: dict[str, ArmRuns], metric: str = "heldout") -> dict[str, list[float]]:
    """Per evaluation step: mean paired difference and its 95 % t interval over seed pairs."""
    m, b = _per_step(runs["method"], metric, False), _per_step(runs["baseline"], metric, False)
    out: dict[str, list[float]] = {"step": [], "mean": [], "lo": [], "hi": []}
    for step in sorted(set(m) & set(b)):
        diffs = np.array([m[step][p] - b[step][p] for p in sorted(set(m[step]) & set(b[step]))])
        if diffs.size == 0:
            continue
        mean = float(diffs.mean())
        half = (
            float(stats.t.ppf(0.975, diffs.size - 1) * diffs.std(ddof=1) / np.sqrt(diffs.size))
            if diffs.size > 1
            else 0.0
        )
        out["step"].append(step)
        out["mean"].append(mean)
        out["lo"].append(mean - half)
        out["hi"].append(mean + half)
    return out


@dataclass(frozen=True, slots=True)
class EndDifference:
    """What difference.png marks as tested: per pair, method minus baseline of ``metric``, their mean and interval."""

    metric: str
    pairs: list[int]
    diffs: list[float]
    mean: float
    lo: float  # NaN below 2 pairs
    hi: float


def end_difference(runs: dict[str, ArmRuns], metric: str = "heldout_greedy") -> EndDifference:
    """The verdict's tested quantity: per pair, method minus baseline of the end-of-training held-out score
    (``final[metric]``), their mean and two-sided 95 % t interval."""
    pairs = sorted(set(runs["method"]) & set(runs["baseline"]))
    diffs = []
    for pair in pairs:
        mine = runs["method"][pair].final.get(metric)
        theirs = runs["baseline"][pair].final.get(metric)
        if isinstance(mine, int | float) and isinstance(theirs, int | float):
            diffs.append((pair, float(mine) - float(theirs)))
    values = np.array([d for _, d in diffs])
    mean = float(values.mean()) if values.size else float("nan")
    half = (
        float(stats.t.ppf(0.975, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size))
        if values.size > 1
        else float("nan")
    )
    return EndDifference(
        metric=metric, pairs=[p for p, _ in diffs], diffs=list(values), mean=mean, lo=mean - half, hi=mean + half
    )


def plot_run(runs: dict[str, ArmRuns], names: dict[str, str], out_dir: Path, title: str) -> list[Path]:
    """difference.png and curves.png; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []

    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    diff = paired_difference(runs)
    m, b = _per_step(runs["method"], "heldout", False), _per_step(runs["baseline"], "heldout", False)
    pairs = sorted(set(runs["method"]) & set(runs["baseline"]))
    for pair in pairs:
        steps = [s for s in sorted(set(m) & set(b)) if pair in m[s] and pair in b[s]]
        ax.plot(steps, [100 * (m[s][pair] - b[s][pair]) for s in steps], color="grey", alpha=0.25, linewidth=0.7)
    if diff["step"]:
        ax.plot(
            diff["step"],
            [100 * v for v in diff["mean"]],
            color="grey",
            linestyle="--",
            label="course of training: 200-problem curve subset, mean (not tested)",
        )
        ax.fill_between(
            diff["step"],
            [100 * v for v in diff["lo"]],
            [100 * v for v in diff["hi"]],
            color="grey",
            alpha=0.12,
            linewidth=0,
            label="pointwise 95% t interval of the curve",
        )
    end = end_difference(runs)
    last = max([s for per in (m, b) for s in per] or [1])
    if end.pairs:
        ax.scatter([last] * len(end.diffs), [100 * d for d in end.diffs], color="black", s=14, zorder=3)
        ax.errorbar(
            [last],
            [100 * end.mean],
            yerr=[[100 * (end.mean - end.lo)], [100 * (end.hi - end.mean)]] if len(end.pairs) > 1 else None,
            color="tab:red",
            marker="D",
            capsize=4,
            zorder=4,
            label=f"tested: full held-out set at the end, mean and 95% t CI over {len(end.pairs)} pairs",
        )
    ax.axhline(0, color="tab:green", linewidth=0.8)
    ax.set_xlabel("step")
    ax.set_ylabel(
        f"{names['method']} minus {names['baseline']}\nheld-out greedy accuracy (points, no smoothing)", fontsize=8
    )
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    paths.append(out_dir / "difference.png")
    fig.savefig(paths[-1], dpi=90)
    plt.close(fig)

    panels = [p for p in PANELS if any(series(r.records, p[0]) for arm in runs.values() for r in arm.values())]
    cols = 2
    rows = max(1, (len(panels) + cols - 1) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(11, 3.0 * rows), squeeze=False)
    for ax, (metric, label, smoothed) in zip(axes.flat, panels, strict=False):
        for arm, arm_runs in runs.items():
            table = _per_step(arm_runs, metric, smoothed)
            steps = sorted(table)
            if not steps:
                continue
            values = [float(np.mean(list(table[s].values()))) for s in steps]
            ax.plot(steps, values, color=COLORS.get(arm), label=f"{names[arm]} (mean of {len(arm_runs)} seeds)")
            for pair in arm_runs:
                own = [s for s in steps if pair in table[s]]
                ax.plot(own, [table[s][pair] for s in own], color=COLORS.get(arm), alpha=0.2, linewidth=0.6)
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("step", fontsize=8)
        ax.set_ylabel(f"rolling mean, {SMOOTH} steps" if smoothed else "no smoothing", fontsize=7)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    fig.suptitle(title)
    fig.tight_layout()
    paths.append(out_dir / "curves.png")
    fig.savefig(paths[-1], dpi=90)
    plt.close(fig)
    return paths
