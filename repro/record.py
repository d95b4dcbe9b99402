"""The run record a worker writes before training (RUN_DIR/run.json): configs, seeds, warm starts, measured
held-out overlap, device, provenance. Built inside the worker (imports torch and TRL)."""

from __future__ import annotations

import json
import platform
import subprocess
from collections.abc import Callable
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from radar.repro.checkpoint import eval_overlap as math_overlap
from radar.repro.checkpoint import load_dataset, model_fingerprint
from radar.repro.checkpoint import rl_stream as math_stream
from radar.repro.errors import ReproError
from radar.repro.methods import Method
from radar.repro.records import RunParams
from radar.repro.shapes import GrpoConfigJson, Overlap, OverlapPart, Provenance, RunCommon, RunJson, RunPolicy
from radar.repro.sizes import get_checkpoint_preset, get_size
from radar.repro.spec import RunSpec, checkpoint_threads, rl_seed
from radar.repro.tasks import get_task, refill_stream, rl_stream

if TYPE_CHECKING:  # the worker imports TRL; reading this module does not
    from trl import GRPOConfig

ARMS = ("method", "baseline")


def provenance() -> Provenance:
    versions: dict[str, str | None] = {}
    for pkg in ("research-radar", "torch", "transformers", "trl", "accelerate", "datasets", "numpy"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    commit, dirty = source_commit(Path(__file__))
    return {
        "git_commit": commit,
        "repro_dirty": dirty,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": versions,
    }


def source_commit(module: Path) -> tuple[str, bool]:
    """The git commit the code of ``module`` (a file of this package) was run from, and whether this package's
    files differ from it. A checkout answers (an editable install); an installed wheel has no repository of its
    own, even in a venv inside some checkout (whose commit would not be this code's): then the commit pip
    recorded for an install from a repository (PEP 610 direct_url.json), else "unknown"."""

    def git(*argv: str) -> str:
        return subprocess.run(
            ["git", *argv], cwd=module.parent, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()

    try:
        git("ls-files", "--error-unmatch", "--", module.name)  # the file itself is tracked there
        return git("rev-parse", "HEAD"), bool(git("status", "--porcelain", "--", "."))
    except (OSError, subprocess.SubprocessError):
        return installed_commit() or "unknown", False


def installed_commit() -> str | None:
    try:
        text = metadata.distribution("research-radar").read_text("direct_url.json")
        commit = json.loads(text or "{}").get("vcs_info", {}).get("commit_id")
    except (metadata.PackageNotFoundError, ValueError, AttributeError):
        return None
    return commit if isinstance(commit, str) else None


def resolve_device(requested: str) -> str:
    import torch

    if requested == "cuda" and not torch.cuda.is_available():
        raise ReproError("--device cuda asked for, but torch sees no GPU; use --device auto or cpu")
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return requested


def eval_overlap(task: Any, size: Any, steps: int, pairs: list[int], warm: list[RunPolicy]) -> Overlap:
    """Measured share of held-out problems that also occur in the SFT data, an RL prompt stream or a dynamic
    sampling refill stream (by canonical problem key, so a reordering of a training problem counts as seen)."""
    from radar.repro.policy import eval_sets  # defers torch, transformers
    from radar.repro.trainer import refill_size  # defers torch, transformers, trl

    rl_keys = set()
    for pair in pairs:
        for arm in ARMS:
            seed = rl_seed(arm, pair)
            streams = (
                rl_stream(task, steps * size.prompts_per_step, seed, size.difficulty),
                refill_stream(task, refill_size(steps, size), seed, size.difficulty),
            )
            rl_keys |= {task.key(ex) for stream in streams for ex in stream}
    parts: dict[str, OverlapPart] = {}  # "eval", "ood"
    for name, exs in eval_sets(task, size).items():
        if name == "curve":
            continue
        in_rl = sum(task.key(e) in rl_keys for e in exs)
        in_sft = max(_in_sft(w, name) for w in warm)
        measured = all(name in (w.get("eval_overlap") or {}) for w in warm)
        parts[name] = OverlapPart(
            prompts=len(exs),
            distinct=len({task.key(e) for e in exs}),
            in_sft=in_sft if measured else None,
            in_rl=in_rl,
            share=round(max(in_sft, in_rl) / len(exs), 4) if exs and measured else None,
        )
    return Overlap(
        by="canonical problem key (reorderings of a problem count as the same problem)",
        eval=parts["eval"],
        ood=parts["ood"],
        share=max((v.share for v in parts.values() if v.share is not None), default=None),
    )


def _in_sft(warm: RunPolicy, name: str) -> int:
    """Problems of held-out set ``name`` in a warm start's SFT data (0 where its cache did not measure it)."""
    part = (warm.get("eval_overlap") or {}).get(name)
    return int(part.get("in_sft", 0)) if part else 0


def _common(spec: RunSpec, device: str, steps: int, arms: dict[str, Method]) -> RunCommon:
    import torch

    return {
        "spec": asdict(spec),
        "device": device,
        "steps": steps,
        "seeds": spec.pairs,
        "rl_seeds": {arm: [rl_seed(arm, p) for p in spec.pairs] for arm in arms},
        "methods": dict(arms),
        "cuda_device": torch.cuda.get_device_name(0) if device == "cuda" else None,
        **provenance(),
    }


def toy_record(
    run_id: str,
    spec: RunSpec,
    params: RunParams,
    device: str,
    arms: dict[str, Method],
    log: Callable[[str], None],
) -> tuple[RunJson, Overlap, list[RunPolicy]]:
    """The run record of a toy-task run: its warm starts (trained and cached on first use) and overlap. Sets
    torch's threads for the preset first (the warm start's SFT and the arms trained in this process)."""
    import torch

    from radar.repro.policy import cached_policy  # defers torch, transformers
    from radar.repro.trainer import build_config  # defers torch, transformers, trl

    task, size = get_task(spec.task), get_size(spec.preset)
    if device == "cpu" and size.cpu_threads:
        torch.set_num_threads(size.cpu_threads)  # 2 threads on a tiny model are ~15x slower under load
    folder, steps = Path(params["folder"]), spec.total_steps
    policies: list[RunPolicy] = []
    for pair in spec.pairs:
        path, warm = cached_policy(Path(params["policy_cache"]), task, size, torch.device(device), log=log, pair=pair)
        policies.append({"pair": pair, "path": str(path), **warm})
    overlap = eval_overlap(task, size, steps, spec.pairs, policies)
    record: RunJson = {
        "id": run_id,
        **_common(spec, device, steps, arms),
        "policies": policies,
        "policy": policies[0],  # the first warm start
        "eval_overlap": overlap,
        "configs": {
            arm: _json(build_config(m, size, task, steps=steps, seed=0, output_dir=folder / "trl", device=device))
            for arm, m in arms.items()
        },
        "overlong_buffer": task.buffer,
        "torch_threads": torch.get_num_threads(),
    }
    return record, overlap, policies


def checkpoint_record(
    run_id: str, spec: RunSpec, params: RunParams, device: str, arms: dict[str, Method]
) -> tuple[RunJson, Overlap, list[RunPolicy]]:
    """The run record of a checkpoint run: every seed pair starts from the checkpoint itself; the held-out
    overlap is measured against every arm's RL prompt stream and refill stream."""
    import torch

    from radar.repro.trainer import REFILL_SEED, build_checkpoint_config, refill_size  # defers torch, transformers, trl

    preset = get_checkpoint_preset(spec.preset)
    folder, steps = Path(params["folder"]), spec.total_steps
    data = load_dataset(params["dataset_path"])
    if data.sha256 != params["dataset_sha256"]:
        raise ReproError(f"{data.path} changed since the run was submitted; submit a new run")
    streams = []
    for pair in spec.pairs:
        for arm in ARMS:
            seed = rl_seed(arm, pair)
            streams.append(math_stream(data, steps * preset.prompts_per_step, seed))
            streams.append(math_stream(data, refill_size(steps, preset), REFILL_SEED + seed))
    overlap = math_overlap(data, streams, preset.eval_prompts)
    model = model_fingerprint(Path(params["model_path"]))
    if checkpoint_threads(device, model):
        torch.set_num_threads(1)  # recorded below as the arms will run
    policies: list[RunPolicy] = [{"pair": p, "path": params["model_path"], "checkpoint": True} for p in spec.pairs]
    record: RunJson = {
        "id": run_id,
        **_common(spec, device, steps, arms),
        "model": model,
        "dataset": data.summary(),
        "lora": spec.lora,
        "policies": policies,
        "policy": policies[0],  # the checkpoint itself
        "eval_overlap": overlap,
        "configs": {
            arm: _json(
                build_checkpoint_config(
                    m, preset, steps=steps, seed=0, output_dir=folder / "trl", device=device, lora=spec.lora
                )
            )
            for arm, m in arms.items()
        },
        "overlong_buffer": preset.overlong_buffer,
        "torch_threads": torch.get_num_threads(),
    }
    return record, overlap, policies


def _json(config: GRPOConfig) -> GrpoConfigJson:
    """An arm's GRPOConfig as run.json records it: every field (``to_dict``), typed by the fields read back."""
    return cast(GrpoConfigJson, config.to_dict())
