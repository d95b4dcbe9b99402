"""Take a run beyond one machine: a TRL + accelerate launch (multi-GPU) or a verl config (Ray cluster).

TRL (``--engine trl``): train_grpo.py trains one (arm, seed pair) as the local run did: the pair's own warm
start (a checkpoint run: the checkpoint), the arm's own RL seed (the baseline's is 1000 + pair), the same RL
prompt stream, rewards, plug-ins, dynamic sampling and overlong punishment; launch.sh runs every arm and pair.
verl (``--engine verl``): repro/export_verl.py (Hydra overrides checked against verl's own config, the data, the
reward, and the launcher that registers radar's plug-ins through verl's registries).

Nothing read from the workspace becomes code: the scripts are static (repro/export_templates.py) and read the run's
values from JSON files beside them; launch.sh holds only fixed words, integers and shell-quoted overrides. Files
are written only into the export folder: ``--out`` or, by default, the run's own folder under the workspace's
runs/, resolved; a stored run folder outside the workspace's runs/ is refused in one line, as is a file name that
would leave the folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from radar.repro.errors import ReproError
from radar.repro.export_templates import TRL_SCRIPT
from radar.repro.export_verl import (
    FORMAT_WEIGHT,
    VERL_VERSION,
    hydra_value,
    rollouts,
    verl_overrides,
    verl_score,
    write_verl,
)
from radar.repro.plugins.catalog import plugin_catalog
from radar.repro.records import RunParams, RunRecord
from radar.repro.shapes import RunJson
from radar.repro.spec import record_path as spec_record_path
from radar.repro.spec import rl_seed, run_catalog
from radar.store.files import write_text_atomic

__all__ = [
    "FORMAT_WEIGHT",
    "VERL_VERSION",
    "export_run",
    "export_folder",
    "hydra_value",
    "rollouts",
    "verl_overrides",
    "verl_refusal",
    "verl_score",
]


def _accelerate_yaml(num_processes: int) -> str:
    return yaml.safe_dump(
        {
            "compute_environment": "LOCAL_MACHINE",
            "distributed_type": "MULTI_GPU",
            "num_machines": 1,
            "machine_rank": 0,
            "num_processes": num_processes,
            "mixed_precision": "no",
            "gpu_ids": "all",
            "main_training_function": "main",
            "rdzv_backend": "static",
            "same_network": True,
            "use_cpu": False,
        },
        sort_keys=False,
    )


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def export_folder(run: RunRecord, engine: str, runs_root: Path, out_dir: Path | None) -> tuple[Path, Path]:
    """(the run's folder, the export folder), resolved: the run folder must lie in ``runs_root`` (the workspace's
    runs/); the export goes to ``out_dir`` or to the run folder's export/ENGINE. One line otherwise."""
    stored = run.params.get("folder")
    if not stored:
        raise ReproError(f"run {run.id!r} was recorded without its folder (an older radar); rerun it to export")
    root = runs_root.resolve()
    run_dir = Path(str(stored)).resolve()
    if not _inside(run_dir, root) or run_dir == root:
        raise ReproError(
            f"run {run.id!r}'s stored folder is outside this workspace's runs folder ({root}); nothing was written "
            "(a copied or edited workspace?): restore the run under runs/ or rerun it"
        )
    folder = (out_dir.resolve() if out_dir is not None else run_dir / "export" / engine).resolve()
    if out_dir is None and not _inside(folder, run_dir):
        raise ReproError(f"run {run.id!r}'s export folder leaves its run folder; pass --out DIR")
    return run_dir, folder


def export_run(
    run: RunRecord, engine: str, out_dir: Path | None = None, num_processes: int = 8, *, runs_root: Path
) -> list[Path]:
    """Write the launch files for ``engine`` into ``out_dir`` (default: the run folder's export/ENGINE).

    ``num_processes``: GPUs (accelerate processes for trl, ``trainer.n_gpus_per_node`` for verl); ``runs_root``:
    the workspace's runs/ folder, which the run's stored folder must be in."""
    params = run.params
    presets = run_catalog(params, plugin_catalog())  # a user preset's definition travels with its run
    if engine not in ("verl", "trl"):
        raise ReproError(f"unknown engine {engine!r}; choose verl or trl")
    if num_processes < 1:
        raise ReproError(f"--gpus must be at least 1 (got {num_processes})")
    run_dir, folder = export_folder(run, engine, runs_root, out_dir)
    record_path = spec_record_path(run_dir)
    if not record_path.exists():
        raise ReproError(f"run {run.id!r} has no run.json yet (status {run.status}); wait until it starts")
    record: RunJson = json.loads(record_path.read_text(encoding="utf-8"))
    arms = {"method": params["method"], "baseline": params["baseline"]}
    methods = {arm: presets.get(name) for arm, name in arms.items()}  # unknown names: one line, before any file
    if engine == "verl":
        verl_refusal(params, record)
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def write(name: str, text: str) -> Path:
        path = (folder / name).resolve()
        if path.parent != folder:
            raise ReproError(f"export file name {name!r} leaves the export folder; nothing more was written")
        if text or not name.endswith(".parquet"):
            write_text_atomic(path, text)
            written.append(path)
        return path

    if engine == "verl":
        written += write_verl(folder, params, record, presets, num_processes, write)
    else:
        if num_processes > 1 and any(m.dynamic_sampling or m.batch for m in methods.values()):
            raise ReproError(
                f"{methods['method'].name} chooses its groups by re-generating them in one process: export with "
                "--gpus 1, or use --engine verl (algorithm.filter_groups) for a DAPO checkpoint run"
            )
        kept = {arm: {k: v for k, v in record["configs"][arm].items() if k in _GRPO_FIELDS} for arm in arms}
        pairs = [int(p.get("pair", i)) for i, p in enumerate(record["policies"])]
        spec = {
            "run_id": run.id,
            "arms": {arm: m.name for arm, m in methods.items()},
            "task": params["task"],
            "preset": params["preset"],
            "pairs": pairs,
            "policies": {str(p): rec["path"] for p, rec in zip(pairs, record["policies"], strict=True)},
            "rl_seeds": {arm: {str(p): rl_seed(arm, p) for p in pairs} for arm in arms},
            "user_presets": presets.definitions(*arms.values()),
            "dataset_path": params.get("dataset_path", ""),
            "dataset_sha256": params.get("dataset_sha256", ""),
            "lora": bool(params.get("lora")),
            "num_processes": num_processes,
            "grpo_config": kept,
        }
        write("export.json", json.dumps(spec, indent=2, default=str))
        write("accelerate.yaml", _accelerate_yaml(num_processes))
        write("train_grpo.py", TRL_SCRIPT)
        lines = [
            "#!/usr/bin/env bash",
            "set -euo pipefail",
            'cd "$(dirname "$0")"',
            "export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1",
        ]
        for pair in pairs:
            for arm in arms:
                lines.append(f"accelerate launch --config_file accelerate.yaml train_grpo.py --arm {arm} --pair {pair}")
        write("launch.sh", "\n".join(lines) + "\n")
    (folder / "launch.sh").chmod(0o755)
    return written


def verl_refusal(params: RunParams, record: RunJson) -> None:
    """One line when a run cannot go to verl: verl builds each prompt with the tokenizer's chat template."""
    if not params.get("model_path"):
        raise ReproError(
            "a toy-task run cannot go to verl: verl builds every prompt with the tokenizer's chat template and the "
            "toy tasks' character-level tokenizer has none; export it with --engine trl, or export a "
            "--model/--dataset run to verl"
        )
    model = record.get("model")
    if model and model.get("chat_template") is False:
        raise ReproError(
            "the run's checkpoint has no chat template, which verl needs to build its prompts; add one to its "
            "tokenizer_config.json or export with --engine trl"
        )


_GRPO_FIELDS = {
    "max_steps",
    "learning_rate",
    "lr_scheduler_type",
    "warmup_steps",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "num_generations",
    "num_iterations",
    "max_completion_length",
    "temperature",
    "top_p",
    "max_grad_norm",
    "logging_steps",
    "save_strategy",
    "report_to",
    "gradient_checkpointing",
    "bf16",
    "beta",
    "epsilon",
    "epsilon_high",
    "loss_type",
    "scale_rewards",
    "importance_sampling_level",
    "mask_truncated_completions",
    "sapo_temperature_pos",
    "sapo_temperature_neg",
    "model_init_kwargs",
    "off_policy_mask_threshold",
    "top_entropy_quantile",
    "multi_objective_aggregation",
}
