"""Take a run beyond one machine: a TRL + accelerate launch (multi-GPU) or a verl config (Ray cluster).

verl option names follow verl's ``ppo_trainer.yaml`` and ``core_algos`` registries:
``algorithm.adv_estimator``, ``algorithm.norm_adv_by_std_in_grpo``, ``algorithm.use_kl_in_reward``,
``actor_rollout_ref.actor.{clip_ratio_low, clip_ratio_high, loss_agg_mode, use_kl_loss,
kl_loss_coef, kl_loss_type, ppo_epochs, ppo_mini_batch_size, policy_loss.loss_mode}``,
``actor_rollout_ref.rollout.n``, ``data.{train_batch_size, max_prompt_length, max_response_length}``.
Loss aggregation: TRL grpo = verl seq-mean-token-mean, dr_grpo = seq-mean-token-sum-norm,
dapo/cispo/bnpo = token-mean. verl is not installed here (it pins an older transformers): the
files are written for a cluster that has it.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import yaml

from radar.repro.errors import ReproError
from radar.repro.methods import Method, get_method
from radar.repro.sizes import get_size
from radar.repro.tasks import get_task
from radar.store.files import write_text_atomic

_AGG = {
    "grpo": "seq-mean-token-mean",
    "sapo": "seq-mean-token-mean",
    "dr_grpo": "seq-mean-token-sum-norm",
    "dapo": "token-mean",
    "cispo": "token-mean",
}


def verl_overrides(
    method: Method, params: dict[str, Any], model_path: str, trl_config: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Hydra overrides for ``python3 -m verl.trainer.main_ppo`` that reproduce ``method``.

    ``trl_config``: the arm's recorded GRPOConfig (run.json); batch shape, mu and lr come from it,
    else from the preset.
    """
    cfg = method.config
    loss_type = cfg.get("loss_type", "dapo")
    size, task = get_size(params["preset"]), get_task(params["task"])
    rec = trl_config or {}
    generations = int(rec.get("num_generations", size.num_generations))
    prompts = int(rec.get("per_device_train_batch_size", size.prompts_per_step * generations)) // generations
    mu = int(rec.get("num_iterations", size.num_iterations))
    lr = float(rec.get("learning_rate", size.rl_lr))
    if loss_type in ("luspo", "vespo"):
        raise ReproError(f"{method.name} has no verl policy loss; export it with --engine trl")
    sequence_level = cfg.get("importance_sampling_level") == "sequence"
    loss_mode = {"cispo": "cispo", "sapo": "sapo"}.get(loss_type, "gspo" if sequence_level else "vanilla")
    if method.loss_plugin == "gmpo":
        loss_mode = "geo_mean"
    eps_low = cfg.get("epsilon", 0.2)
    eps_high = cfg.get("epsilon_high") or eps_low
    if loss_type == "cispo":  # TRL's epsilon_high is the absolute cap; verl clamps to [1 - low, 1 + high]
        eps_low, eps_high = 1.0, round(float(eps_high) - 1.0, 6)  # MiniMax-M1: no lower bound
    beta = float(cfg.get("beta", 0.0))
    out: dict[str, Any] = {
        "algorithm.adv_estimator": "grpo",
        "algorithm.norm_adv_by_std_in_grpo": cfg.get("scale_rewards", "group") != "none",
        "algorithm.use_kl_in_reward": False,
        "actor_rollout_ref.actor.policy_loss.loss_mode": loss_mode,
        "actor_rollout_ref.actor.loss_agg_mode": "seq-mean-token-mean"
        if sequence_level
        else _AGG.get(loss_type, "token-mean"),
        "actor_rollout_ref.actor.clip_ratio_low": eps_low,
        "actor_rollout_ref.actor.clip_ratio_high": eps_high,
        "actor_rollout_ref.actor.use_kl_loss": beta > 0,
        "actor_rollout_ref.actor.kl_loss_coef": beta,
        "actor_rollout_ref.actor.kl_loss_type": "low_var_kl",  # k3, as TRL's GRPO KL
        "actor_rollout_ref.actor.ppo_epochs": mu,
        "actor_rollout_ref.actor.ppo_mini_batch_size": prompts,
        "actor_rollout_ref.actor.optim.lr": lr,
        "actor_rollout_ref.actor.entropy_coeff": 0,
        "actor_rollout_ref.actor.grad_clip": 1.0,
        "actor_rollout_ref.rollout.n": generations,
        "actor_rollout_ref.rollout.temperature": 1.0,
        "actor_rollout_ref.rollout.name": "vllm",
        "actor_rollout_ref.model.path": model_path,
        "data.train_batch_size": prompts,
        "data.max_prompt_length": task.max_prompt_chars + 2,
        "data.max_response_length": task.max_completion_tokens,
        "data.train_files": "train.parquet",
        "data.val_files": "val.parquet",
        "custom_reward_function.path": "radar_reward.py",
        "custom_reward_function.name": "compute_score",
        "trainer.total_training_steps": params["total_steps"],
        "trainer.n_gpus_per_node": 8,
        "trainer.nnodes": 1,
        "trainer.logger": ["console"],
        "trainer.project_name": "research_radar_repro",
        "trainer.experiment_name": f"{method.name}-{task.name}-{size.name}",
    }
    return out


_VERL_REWARD = '''"""Verifiable reward for verl (custom_reward_function), via Research Radar's task checker."""
import json

from radar.repro.tasks import get_task

TASK = get_task({task!r})


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    example = json.loads(ground_truth)
    return 1.0 if TASK.check(example, solution_str) else 0.0
'''

_TRL_SCRIPT = '''"""Multi-GPU TRL GRPO launch exported by `radar repro export --engine trl` (run {run_id}).

    accelerate launch --config_file accelerate.yaml train_grpo.py --arm method --seed 0
"""
import argparse
import json
from pathlib import Path

from datasets import Dataset
from trl import GRPOConfig

from radar.repro.methods import get_method
from radar.repro.sizes import get_size
from radar.repro.tasks import get_task
from radar.repro.trainer import RadarGRPOTrainer, reward_functions
from transformers import AutoTokenizer

HERE = Path(__file__).parent
SPEC = json.loads((HERE / "export.json").read_text())

parser = argparse.ArgumentParser()
parser.add_argument("--arm", choices=["method", "baseline"], default="method")
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--model", default=SPEC["model_path"], help="warm-started policy folder")
args = parser.parse_args()

method = get_method(SPEC["arms"][args.arm])
task, size = get_task(SPEC["task"]), get_size(SPEC["preset"])
kwargs = SPEC["grpo_config"][args.arm] | {{"output_dir": str(HERE / f"out-{{args.arm}}-seed{{args.seed}}"),
                                         "seed": args.seed, "data_seed": args.seed, "use_cpu": False}}
# The global batch is kept: per-device batch = global / number of processes (set in accelerate.yaml).
per_device = kwargs["per_device_train_batch_size"] // SPEC["num_processes"]
kwargs["per_device_train_batch_size"] = max(size.num_generations, per_device)
config = GRPOConfig(**kwargs)
tokenizer = AutoTokenizer.from_pretrained(args.model, padding_side="left")
examples = task.examples(config.max_steps * size.prompts_per_step, seed=10_000 + args.seed, difficulty=size.difficulty)
trainer = RadarGRPOTrainer(
    model=args.model, reward_funcs=reward_functions(method, task, tokenizer.eos_token_id), args=config,
    train_dataset=Dataset.from_list(examples), processing_class=tokenizer, loss_plugin=method.loss_plugin,
)
trainer.train()
'''


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


def export_run(run: dict[str, Any], engine: str, out_dir: Path | None = None, num_processes: int = 8) -> list[Path]:
    """Write the launch files for ``engine`` into ``out_dir`` (default: the run folder's export/ENGINE)."""
    params = run["params"]
    if not params.get("folder"):
        raise ReproError(f"run {run['id']} was recorded without its folder (an older radar); rerun it to export")
    run_dir = Path(params["folder"])
    folder = out_dir or run_dir / "export" / engine
    folder.mkdir(parents=True, exist_ok=True)
    record_path = run_dir / "run.json"
    if not record_path.exists():
        raise ReproError(f"run {run['id']} has no run.json yet (status {run['status']}); wait until it starts")
    record = json.loads(record_path.read_text(encoding="utf-8"))
    model_path = record["policy"]["path"]
    arms = {"method": params["method"], "baseline": params["baseline"]}
    written: list[Path] = []

    def write(name: str, text: str) -> None:
        write_text_atomic(folder / name, text)
        written.append(folder / name)

    if engine == "trl":
        configs = {arm: {k: v for k, v in record["configs"][arm].items() if k in _GRPO_FIELDS} for arm in arms}
        spec = {
            "run_id": run["id"],
            "arms": arms,
            "task": params["task"],
            "preset": params["preset"],
            "model_path": model_path,
            "num_processes": num_processes,
            "grpo_config": configs,
        }
        write("export.json", json.dumps(spec, indent=2, default=str))
        write("accelerate.yaml", _accelerate_yaml(num_processes))
        write("train_grpo.py", _TRL_SCRIPT.format(run_id=run["id"]))
        lines = [
            "#!/usr/bin/env bash",
            "set -euo pipefail",
            'cd "$(dirname "$0")"',
            "export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1",
        ]
        for arm in arms:
            for seed in range(params["seeds"]):
                lines.append(f"accelerate launch --config_file accelerate.yaml train_grpo.py --arm {arm} --seed {seed}")
        write("launch.sh", "\n".join(lines) + "\n")
    elif engine == "verl":
        task, size = get_task(params["task"]), get_size(params["preset"])
        from datasets import Dataset

        splits = (
            ("train", task.examples(params["total_steps"] * size.prompts_per_step, 10_000, size.difficulty, "rl")),
            ("val", task.eval_set(1000, difficulty=size.difficulty)),  # the held-out part, as in the run
        )
        for split, examples in splits:
            rows = [
                {
                    "data_source": f"radar/{task.name}",
                    "prompt": [{"role": "user", "content": ex["prompt"]}],
                    "reward_model": {"style": "rule", "ground_truth": json.dumps(ex)},
                }
                for ex in examples
            ]
            Dataset.from_list(rows).to_parquet(str(folder / f"{split}.parquet"))
            written.append(folder / f"{split}.parquet")
        write("radar_reward.py", _VERL_REWARD.format(task=task.name))
        lines = [
            "#!/usr/bin/env bash",
            "# verl launch exported by Research Radar; run on a Ray cluster with verl.",
            "set -euo pipefail",
            'cd "$(dirname "$0")"',
        ]
        for arm, name in arms.items():
            overrides = verl_overrides(get_method(name), params, model_path, record["configs"][arm])
            write(f"verl_{arm}_{name}.yaml", yaml.safe_dump(overrides, sort_keys=False))
            args = " \\\n    ".join(shlex.quote(f"{k}={_hydra(v)}") for k, v in overrides.items())
            lines.append(f"# {arm}: {name}\npython3 -m verl.trainer.main_ppo \\\n    {args}\n")
        write("launch.sh", "\n".join(lines))
        write("NOTES.md", _VERL_NOTES)
    else:
        raise ReproError(f"unknown engine {engine!r}; choose verl or trl")
    (folder / "launch.sh").chmod(0o755)
    return written


def _hydra(value: Any) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, list):
        return "[" + ",".join(map(str, value)) + "]"
    return str(value)


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
}

_VERL_NOTES = """# verl export: what maps and what to check

- The policy is Research Radar's char-level warm start; verl's RLHFDataset applies the tokenizer's chat
  template to `prompt`. For a real model, point `actor_rollout_ref.model.path` at it and keep the rest.
- `ppo_epochs` plays TRL's `num_iterations`; `ppo_mini_batch_size = train_batch_size` gives one update
  per epoch, as TRL does with gradient_accumulation_steps=1.
- DAPO's overlong shaping and dynamic sampling live in verl's DAPO recipe (reward manager `dapo`,
  `algorithm.filter_groups`); their option names have moved between verl releases: check them against
  the installed verl before enabling.
- cispo: TRL's epsilon_high is the absolute IS-weight cap (1.28); verl clamps to [1 - low, 1 + high], so
  the export writes clip_ratio_high = 0.28 and clip_ratio_low = 1.0 (no lower bound, as MiniMax-M1).
  sapo's temperatures keep verl's defaults.
"""
