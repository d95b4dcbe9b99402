"""Take a run beyond one machine: a TRL + accelerate launch (multi-GPU) or a verl config (Ray cluster).

verl option names are those of verl 0.9.1's composed default trainer config (``ppo_trainer.yaml``
with its hydra ``defaults:``; a copy is tests/fixtures/verl/, and tests/test_repro_export.py checks
every emitted key against it). New keys (absent from the defaults) carry hydra's ``+`` prefix:
only ``+reward.reward_kwargs.*`` (DAPO's overlong buffer, read by verl's ``dapo`` reward manager).

- Loss aggregation: TRL grpo/sapo = verl seq-mean-token-mean, dr_grpo = seq-mean-token-sum-norm,
  dapo/cispo = token-mean. Policy loss (``actor.policy_loss.loss_mode``): vanilla, gspo, sapo,
  cispo, geo_mean (gmpo); TRL's luspo and vespo have none in verl.
- Steps: TRL's ``max_steps`` counts optimiser steps and generates one batch per ``num_iterations``
  (mu) of them; verl's ``trainer.total_training_steps`` counts rollouts (one generation batch each),
  and ``actor.ppo_epochs = mu`` with ``ppo_mini_batch_size = train_batch_size`` makes mu optimiser
  updates per rollout. So rollouts = ceil(TRL steps / mu) and both make the same number of updates.
- Micro-batches: verl refuses to start without ``actor.ppo_micro_batch_size_per_gpu`` and the
  rollout's and reference's ``log_prob_micro_batch_size_per_gpu``; they must divide the per-GPU
  mini-batch (``ppo_mini_batch_size * rollout.n / GPUs``).
- CISPO: verl clamps the detached IS weight to [1 - clip_ratio_low, 1 + clip_ratio_high]; TRL's
  ``epsilon_high`` is the absolute cap, so 1.28 becomes clip_ratio_high 0.28 and clip_ratio_low 1.0
  (no lower bound, as MiniMax-M1).
- DAPO: ``reward.reward_manager.name=dapo`` with ``reward.reward_kwargs.overlong_buffer_cfg`` (the
  same soft punishment over the same last tokens as TRL's ``get_soft_overlong_punishment``) and
  ``algorithm.filter_groups`` (dynamic sampling on the ``acc`` metric), which the local TRL run
  cannot reproduce (repro/README.md).
- Reward: ``reward.custom_reward_function`` (verl 0.9's main_ppo reads ``reward.*``; the legacy
  top-level ``custom_reward_function`` is migrated only by the fully-async trainer) points at
  radar_reward.py, whose ``compute_score`` calls ``verl_score`` below: the local run's correctness
  and format rewards on the task's own checker (a --model/--dataset run: repro/mathreward.py).
- --model/--dataset runs: the checkpoint preset's shape (repro.sizes.CheckpointPreset), LoRA rank/alpha,
  the data set's RL and held-out parts with the local run's boxed-answer instruction.
- Toy-task runs do not go to verl: verl's RLHFDataset builds every prompt with the tokenizer's chat template,
  and the toy tasks' character-level tokenizer has none (nor a newline token); their export is refused in one
  line (``--engine trl`` takes them).

TRL (``--engine trl``): train_grpo.py trains one (arm, seed pair) as the local run did: the pair's own warm
start (a checkpoint run: the checkpoint), the arm's own RL seed (the baseline's is 1000 + pair), the same RL
prompt stream, rewards, dynamic sampling and overlong punishment; launch.sh runs every arm and pair.

verl is not installed here (it pins other torch/transformers versions): the files are written for
a cluster that has it.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from radar.repro.checkpoint import eval_rows, load_dataset
from radar.repro.checkpoint import rl_stream as math_stream
from radar.repro.errors import ReproError
from radar.repro.mathreward import equivalent, final_answer, has_final_marker
from radar.repro.methods import Method
from radar.repro.shapes import Example, GrpoConfigJson, RunJson
from radar.repro.sizes import get_checkpoint_preset, get_size
from radar.repro.spec import record_path as spec_record_path
from radar.repro.spec import rl_seed, run_catalog
from radar.repro.tasks import get_task, rl_stream
from radar.store.files import write_text_atomic
from radar.store.runs import RunParams, RunRecord

VERL_VERSION = "0.9.1"  # the version whose default config the test checks the keys against
FORMAT_WEIGHT = 0.1  # repro.tasks.format_reward's weight; the local run's reward is correct + format
MAX_MICRO_BATCH = 8  # per-GPU micro-batch ceiling (memory); the largest divisor of the mini-batch below it

_AGG = {
    "grpo": "seq-mean-token-mean",
    "sapo": "seq-mean-token-mean",
    "dr_grpo": "seq-mean-token-sum-norm",
    "dapo": "token-mean",
    "cispo": "token-mean",
}


def rollouts(trl_steps: int, mu: int) -> int:
    """verl's total_training_steps (rollouts) for a TRL run of ``trl_steps`` optimiser steps at mu."""
    return max(1, math.ceil(trl_steps / max(1, mu)))


MATH_TASK = "math"  # repro.spec.CHECKPOINT_TASK: the task name of --model/--dataset runs
MATH_PROMPT_TOKENS = 1024  # verl's data.max_prompt_length for a math data set (token lengths unknown here)


def verl_score(task_name: str, solution_str: str, ground_truth: str) -> dict[str, float]:
    """The local run's reward on verl's decoded response: ``score`` = correctness (1.0) + format (0.1),
    ``acc`` = correctness (what ``algorithm.filter_groups.metric=acc`` reads). ``math`` (a --model/--dataset
    run): the final answer (repro/mathreward.py) equivalent to the reference, format = an explicit final answer.

    verl hands ``compute_score`` the response decoded with ``skip_special_tokens=True`` and cut at the
    attention mask, so the local rule's token-level checks (EOS at the end, no pad/unk inside) cannot
    be made here; on every completion that ends with EOS and holds no other special token the two
    agree (tests/test_repro_export.py)."""
    example = json.loads(ground_truth)
    if task_name == MATH_TASK:
        right = 1.0 if equivalent(final_answer(solution_str), str(example["answer"])) else 0.0
        return {"score": right + (FORMAT_WEIGHT if has_final_marker(solution_str) else 0.0), "acc": right}
    task = get_task(task_name)
    correct = 1.0 if task.check(example, solution_str) else 0.0
    well_formed = FORMAT_WEIGHT if re.match(task.answer_pattern, solution_str) else 0.0
    return {"score": correct + well_formed, "acc": correct}


@dataclass(frozen=True)
class _Shape:
    """Batch shape, lengths and DAPO buffer of a run's size preset; LoRA's rank and alpha for a checkpoint run."""

    generations: int
    prompts: int
    mu: int
    lr: float
    max_response: int
    max_prompt: int
    overlong_buffer: int
    lora_r: int = 0
    lora_alpha: int = 0


def _shape(params: RunParams) -> _Shape:
    """Batch shape, lengths and DAPO buffer of a run's size preset (a toy task's, or a checkpoint run's)."""
    if params.get("model_path") or params.get("task") == MATH_TASK:
        ck = get_checkpoint_preset(params["preset"])
        return _Shape(
            generations=ck.num_generations,
            prompts=ck.prompts_per_step,
            mu=ck.num_iterations,
            lr=ck.lora_lr if params.get("lora") else ck.rl_lr,
            max_response=ck.max_completion_tokens,
            max_prompt=MATH_PROMPT_TOKENS,
            overlong_buffer=ck.overlong_buffer,
            lora_r=ck.lora_r,
            lora_alpha=ck.lora_alpha,
        )
    size, task = get_size(params["preset"]), get_task(params["task"])
    return _Shape(
        generations=size.num_generations,
        prompts=size.prompts_per_step,
        mu=size.num_iterations,
        lr=size.rl_lr,
        max_response=task.max_completion_tokens,
        max_prompt=task.max_prompt_chars + 2,
        overlong_buffer=task.buffer,  # repro.trainer.overlong_buffer
    )


def _micro(per_gpu: int) -> int:
    return max(d for d in range(1, min(per_gpu, MAX_MICRO_BATCH) + 1) if per_gpu % d == 0)


def verl_overrides(
    method: Method,
    params: RunParams,
    model_path: str,
    trl_config: GrpoConfigJson | None = None,
    n_gpus: int = 8,
) -> dict[str, Any]:  # the file edge: verl_ARM_NAME.yaml and launch.sh's Hydra overrides
    """Hydra overrides for ``python3 -m verl.trainer.main_ppo`` that reproduce ``method``.

    ``trl_config``: the arm's recorded GRPOConfig (run.json); batch shape, mu and lr come from it,
    else from the preset. ``n_gpus``: GPUs on the one node (``trainer.n_gpus_per_node``).
    """
    cfg = method.config
    loss_type = cfg.get("loss_type", "dapo")
    shape = _shape(params)
    rec = trl_config or {}
    generations = int(rec.get("num_generations", shape.generations))
    prompts = int(rec.get("per_device_train_batch_size", shape.prompts * generations)) // generations
    mu = int(rec.get("num_iterations", shape.mu))
    lr = float(rec.get("learning_rate", shape.lr))
    max_response = int(rec.get("max_completion_length", shape.max_response))
    if loss_type in ("luspo", "vespo"):
        raise ReproError(f"{method.name} has no verl policy loss; export it with --engine trl")
    if n_gpus < 1 or (prompts * generations) % n_gpus:
        raise ReproError(
            f"verl needs train_batch_size x rollout.n ({prompts} x {generations}) divisible by the GPUs "
            f"({n_gpus}); export with --gpus set to a divisor of {prompts * generations}"
        )
    per_gpu = prompts * generations // n_gpus  # verl's per-GPU mini-batch: ppo_mini_batch_size * n / GPUs
    micro = _micro(per_gpu)
    sequence_level = cfg.get("importance_sampling_level") == "sequence"
    loss_mode = {"cispo": "cispo", "sapo": "sapo"}.get(loss_type, "gspo" if sequence_level else "vanilla")
    if method.loss_plugin == "gmpo":
        loss_mode = "geo_mean"
    eps_low = cfg.get("epsilon", 0.2)
    eps_high = cfg.get("epsilon_high") or eps_low
    if loss_type == "cispo":  # TRL's epsilon_high is the absolute cap; verl clamps to [1 - low, 1 + high]
        eps_low, eps_high = 1.0, round(float(eps_high) - 1.0, 6)  # MiniMax-M1: no lower bound
    beta = float(cfg.get("beta", 0.0))
    actor = "actor_rollout_ref.actor."
    out = {
        "algorithm.adv_estimator": "grpo",
        "algorithm.norm_adv_by_std_in_grpo": cfg.get("scale_rewards", "group") != "none",
        "algorithm.use_kl_in_reward": False,
        actor + "policy_loss.loss_mode": loss_mode,
        actor + "loss_agg_mode": "seq-mean-token-mean" if sequence_level else _AGG.get(loss_type, "token-mean"),
        actor + "clip_ratio_low": eps_low,
        actor + "clip_ratio_high": eps_high,
        actor + "use_kl_loss": beta > 0,
        actor + "kl_loss_coef": beta,
        actor + "kl_loss_type": "low_var_kl",  # k3, as TRL's GRPO KL
        actor + "ppo_epochs": mu,
        actor + "ppo_mini_batch_size": prompts,
        actor + "ppo_micro_batch_size_per_gpu": micro,
        actor + "optim.lr": lr,
        actor + "entropy_coeff": 0,
        actor + "grad_clip": 1.0,
        "actor_rollout_ref.rollout.n": generations,
        "actor_rollout_ref.rollout.temperature": 1.0,
        "actor_rollout_ref.rollout.name": "vllm",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu": micro,
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu": micro,
        "actor_rollout_ref.model.path": model_path,
        "data.train_batch_size": prompts,
        "data.max_prompt_length": shape.max_prompt,
        "data.max_response_length": max_response,
        "data.train_files": "train.parquet",
        "data.val_files": "val.parquet",
        "reward.custom_reward_function.path": "radar_reward.py",
        "reward.custom_reward_function.name": "compute_score",
        "trainer.total_training_steps": rollouts(int(params["total_steps"]), mu),
        "trainer.n_gpus_per_node": n_gpus,
        "trainer.nnodes": 1,
        "trainer.logger": ["console"],
        "trainer.project_name": "research_radar_repro",
        "trainer.experiment_name": f"{method.name}-{params['task']}-{params['preset']}",
    }
    if params.get("lora"):  # the local run's peft adapters (repro/sizes.py CheckpointPreset)
        out["actor_rollout_ref.model.lora_rank"] = shape.lora_r
        out["actor_rollout_ref.model.lora_alpha"] = shape.lora_alpha
    if loss_type == "sapo":  # TRL's sapo temperatures are verl's tau_pos / tau_neg
        out[actor + "tau_pos"] = float(cfg.get("sapo_temperature_pos", 1.0))
        out[actor + "tau_neg"] = float(cfg.get("sapo_temperature_neg", 1.05))
    if method.overlong_shaping:  # DAPO: soft overlong punishment over the same last tokens as the local run
        buffer = shape.overlong_buffer
        out |= {
            "reward.reward_manager.name": "dapo",
            "+reward.reward_kwargs.max_resp_len": max_response,
            "+reward.reward_kwargs.overlong_buffer_cfg.enable": True,
            "+reward.reward_kwargs.overlong_buffer_cfg.len": buffer,
            "+reward.reward_kwargs.overlong_buffer_cfg.penalty_factor": 1.0,
            "+reward.reward_kwargs.overlong_buffer_cfg.log": False,
            "algorithm.filter_groups.enable": True,
            "algorithm.filter_groups.metric": "acc",
        }
    return out


_VERL_REWARD = '''"""Verifiable reward for verl (reward.custom_reward_function): Research Radar's own reward for
task {task!r}, correctness 1.0 + format 0.1 on the task's checker (radar.repro.export.verl_score)."""

from radar.repro.export import verl_score


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **_):
    return verl_score({task!r}, solution_str, ground_truth)
'''


_TRL_SCRIPT = '''"""TRL GRPO launch exported by `radar repro export --engine trl` (run {run_id}): one arm and pair.

    accelerate launch --config_file accelerate.yaml train_grpo.py --arm method --pair 0
    python train_grpo.py --arm baseline --pair 1 --max-steps 1 --cpu     # a one-process smoke test

Each pair trains from its own warm start (a checkpoint run: the checkpoint) with the arm's own RL seed, as the
local run did (export.json: policies, rl_seeds).
"""
import argparse
import json
import os
from pathlib import Path

from datasets import Dataset
from transformers import AutoTokenizer
from trl import GRPOConfig

from radar.repro.methods import catalog
from radar.repro.sizes import get_size
from radar.repro.tasks import get_task, refill_stream, rl_stream
from radar.repro.trainer import RadarGRPOTrainer, refill_size, reward_functions

HERE = Path(__file__).parent
SPEC = json.loads((HERE / "export.json").read_text())

parser = argparse.ArgumentParser()
parser.add_argument("--arm", choices=["method", "baseline"], default="method")
parser.add_argument("--pair", type=int, default=SPEC["pairs"][0], choices=SPEC["pairs"], help="seed pair")
parser.add_argument("--model", default="", help="policy folder (default: the pair's warm start)")
parser.add_argument("--max-steps", type=int, default=0, help="optimiser steps (default: the run's)")
parser.add_argument("--cpu", action="store_true", help="train on the CPU (a smoke test)")
args = parser.parse_args()

method = catalog(SPEC["user_presets"]).get(SPEC["arms"][args.arm])
seed = SPEC["rl_seeds"][args.arm][str(args.pair)]
model = args.model or SPEC["policies"][str(args.pair)]
kwargs = SPEC["grpo_config"][args.arm] | {{"output_dir": str(HERE / f"out-{{args.arm}}-pair{{args.pair}}"),
                                         "seed": seed, "data_seed": seed, "use_cpu": args.cpu}}
if args.max_steps:
    kwargs["max_steps"] = args.max_steps
steps = kwargs["max_steps"]
tokenizer = AutoTokenizer.from_pretrained(model, padding_side="left")
peft_config = None
if SPEC["task"] == "math":  # a --model/--dataset run: the same data part, prompts and rewards as the local run
    from radar.repro import checkpoint, mathpolicy
    from radar.repro.sizes import get_checkpoint_preset
    from radar.repro.trainer import REFILL_SEED
    from transformers import AutoConfig, GenerationConfig
    from trl.rewards import get_soft_overlong_punishment

    size = get_checkpoint_preset(SPEC["preset"])
    data = checkpoint.load_dataset(SPEC["dataset_path"])
    if data.sha256 != SPEC["dataset_sha256"]:
        raise SystemExit(f"{{SPEC['dataset_path']}} changed since the run; export the run again or restore the file")
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token

    def rows(stream):
        return [{{"prompt": mathpolicy.trl_prompt(r["prompt"], tokenizer), "answer": r["answer"]}} for r in stream]

    examples = rows(checkpoint.rl_stream(data, steps * size.prompts_per_step, seed))
    refill = rows(checkpoint.rl_stream(data, refill_size(steps, size), REFILL_SEED + seed))
    try:
        generation = GenerationConfig.from_pretrained(model)
    except OSError:  # no generation_config.json: the model config's EOS, as the local run
        generation = GenerationConfig.from_model_config(AutoConfig.from_pretrained(model))
    rewards = mathpolicy.reward_functions(tokenizer, mathpolicy.eos_ids(tokenizer, generation.eos_token_id))
    if method.overlong_shaping:  # DAPO: the local run's soft overlong punishment
        rewards.append(get_soft_overlong_punishment(size.max_completion_tokens, size.overlong_buffer))
    if SPEC.get("lora"):
        from peft import LoraConfig

        peft_config = LoraConfig(r=size.lora_r, lora_alpha=size.lora_alpha, target_modules="all-linear",
                                 task_type="CAUSAL_LM")
else:
    task, size = get_task(SPEC["task"]), get_size(SPEC["preset"])
    examples = rl_stream(task, steps * size.prompts_per_step, seed, size.difficulty)
    refill = refill_stream(task, refill_size(steps, size), seed, size.difficulty)
    rewards = reward_functions(method, task, tokenizer)
# The global batch is kept: per-device batch = global / number of processes (accelerate sets WORLD_SIZE).
per_device = kwargs["per_device_train_batch_size"] // int(os.environ.get("WORLD_SIZE", "1"))
kwargs["per_device_train_batch_size"] = max(size.num_generations, per_device)
config = GRPOConfig(**kwargs)
trainer = RadarGRPOTrainer(
    model=model, reward_funcs=rewards, args=config, train_dataset=Dataset.from_list(examples),
    processing_class=tokenizer, loss_plugin=method.loss_plugin, peft_config=peft_config,
    dynamic_sampling=method.dynamic_sampling, refill=iter(refill),
)
trainer.train()
print(f"trained {{args.arm}} pair {{args.pair}} (RL seed {{seed}}, {{model}}): {{trainer.state.global_step}} steps")
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


def export_run(run: RunRecord, engine: str, out_dir: Path | None = None, num_processes: int = 8) -> list[Path]:
    """Write the launch files for ``engine`` into ``out_dir`` (default: the run folder's export/ENGINE).

    ``num_processes``: GPUs (accelerate processes for trl, ``trainer.n_gpus_per_node`` for verl)."""
    params = run.params
    presets = run_catalog(params)  # a user preset's definition travels with its run
    if engine not in ("verl", "trl"):
        raise ReproError(f"unknown engine {engine!r}; choose verl or trl")
    if num_processes < 1:
        raise ReproError(f"--gpus must be at least 1 (got {num_processes})")
    if not params.get("folder"):
        raise ReproError(f"run {run.id} was recorded without its folder (an older radar); rerun it to export")
    run_dir = Path(params["folder"])
    record_path = spec_record_path(run_dir)
    if not record_path.exists():
        raise ReproError(f"run {run.id} has no run.json yet (status {run.status}); wait until it starts")
    record: RunJson = json.loads(record_path.read_text(encoding="utf-8"))
    if engine == "verl":
        verl_refusal(params, record)
    folder = out_dir or run_dir / "export" / engine
    folder.mkdir(parents=True, exist_ok=True)
    model_path = record["policy"]["path"]
    arms = {"method": params["method"], "baseline": params["baseline"]}
    written: list[Path] = []

    def write(name: str, text: str) -> None:
        write_text_atomic(folder / name, text)
        written.append(folder / name)

    if engine == "trl":
        kept = {arm: {k: v for k, v in record["configs"][arm].items() if k in _GRPO_FIELDS} for arm in arms}
        pairs = [int(p.get("pair", i)) for i, p in enumerate(record["policies"])]
        if num_processes > 1 and any(presets.get(name).dynamic_sampling for name in arms.values()):
            raise ReproError(
                f"{params['method']}'s dynamic sampling re-generates groups in one process: export with --gpus 1, "
                "or use --engine verl (algorithm.filter_groups) for a checkpoint run"
            )
        spec = {
            "run_id": run.id,
            "arms": arms,
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
        write("train_grpo.py", _TRL_SCRIPT.format(run_id=run.id))
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
    else:
        configs = record["configs"]
        overrides = {
            arm: verl_overrides(presets.get(name), params, model_path, configs[arm], n_gpus=num_processes)
            for arm, name in arms.items()
        }
        steps = overrides["method"]["trainer.total_training_steps"]
        prompts = overrides["method"]["data.train_batch_size"]
        from datasets import Dataset, disable_progress_bars

        disable_progress_bars()  # one "wrote ..." line per file is the output

        for split, examples, user in _verl_data(params, steps * prompts):
            rows = [
                {
                    "data_source": f"radar/{params['task']}",
                    "prompt": [{"role": "user", "content": user(ex["prompt"])}],
                    "reward_model": {"style": "rule", "ground_truth": json.dumps(ex, default=str)},
                }
                for ex in examples
            ]
            Dataset.from_list(rows).to_parquet(str(folder / f"{split}.parquet"))
            written.append(folder / f"{split}.parquet")
        write("radar_reward.py", _VERL_REWARD.format(task=params["task"]))
        mu = int(configs["method"].get("num_iterations", _shape(params).mu))
        lines = [
            "#!/usr/bin/env bash",
            f"# verl launch exported by Research Radar (run {run.id}; keys checked against verl {VERL_VERSION}).",
            f"# Steps: the local run's {params['total_steps']} TRL optimiser steps at mu = {mu} are {steps} verl",
            f"# rollouts (trainer.total_training_steps = ceil({params['total_steps']} / {mu})), each followed by",
            f"# actor.ppo_epochs = {mu} updates on the whole batch: the same number of optimiser updates.",
            "# Needs verl and radar importable on every Ray worker (radar_reward.py imports radar.repro).",
            "set -euo pipefail",
            'cd "$(dirname "$0")"',
        ]
        for arm, name in arms.items():
            write(f"verl_{arm}_{name}.yaml", yaml.safe_dump(overrides[arm], sort_keys=False))
            args = " \\\n    ".join(shlex.quote(f"{k}={_hydra(v)}") for k, v in overrides[arm].items())
            lines.append(f"# {arm}: {name}\npython3 -m verl.trainer.main_ppo \\\n    {args}\n")
        write("launch.sh", "\n".join(lines))
        notes = _VERL_NOTES.format(version=VERL_VERSION, trl_steps=params["total_steps"], mu=mu, rollouts=steps)
        write("NOTES.md", notes)
    (folder / "launch.sh").chmod(0o755)
    return written


def verl_refusal(params: RunParams, record: RunJson) -> None:
    """One line when a run cannot go to verl: verl builds each prompt with the tokenizer's chat template."""
    if not params.get("model_path"):
        raise ReproError(
            f"run on task {params.get('task')} cannot go to verl: verl builds every prompt with the tokenizer's chat "
            "template and the toy tasks' character-level tokenizer has none; export it with --engine trl, or "
            "export a --model/--dataset run to verl"
        )
    model = record.get("model")
    if model and model.get("chat_template") is False:
        raise ReproError(
            f"checkpoint {params['model_path']} has no chat template, which verl needs to build its prompts; "
            "add one to its tokenizer_config.json or export with --engine trl"
        )


def _verl_data(params: RunParams, n: int) -> list[tuple[str, list[Example], Callable[[str], str]]]:
    """(split, examples, prompt text) for train.parquet (the first seed pair's RL stream) and val.parquet (the
    held-out part the run scores on); a math run's prompts get the same instruction as the local run's."""
    if params.get("dataset_path"):
        data = load_dataset(params["dataset_path"])
        if params.get("dataset_sha256") and data.sha256 != params["dataset_sha256"]:
            raise ReproError(
                f"{data.path} changed since run {params.get('folder')} used it; export needs the same file"
            )
        held_out = eval_rows(data, get_checkpoint_preset(params["preset"]).eval_prompts)
        return [("train", _math_stream(data, n), _math_prompt), ("val", held_out, _math_prompt)]
    task, size = get_task(params["task"]), get_size(params["preset"])
    same = str
    return [
        ("train", rl_stream(task, n, params.get("first_pair") or 0, size.difficulty), same),
        ("val", task.eval_set(1000, difficulty=size.difficulty), same),
    ]


def _math_stream(data: Any, n: int) -> list[Example]:
    return [{"prompt": r["prompt"], "answer": r["answer"]} for r in math_stream(data, n, 0)]


def _math_prompt(prompt: str) -> str:
    """repro.mathpolicy.user_text (which imports torch): the instruction for a boxed answer, unless given."""
    low = prompt.lower()
    boxed = "\nPut your final answer within \\boxed{}."
    return prompt if ("boxed" in low or "####" in prompt or "final answer" in low) else prompt + boxed


_HYDRA_PLAIN = re.compile(r"[A-Za-z0-9_./~+\-@]*")


def _hydra(value: Any) -> str:
    """A value in Hydra's override grammar: a string with any of its special characters (``, = : ( ) [ ] { }``,
    spaces, quotes, ``${``) is single-quoted with its quotes and interpolations escaped, so a model path such as
    ``/m/a,b=c`` reaches verl as one string (the shell quoting is applied on top, in the launch script).
    Backslashes are left alone (Hydra un-escapes them only before a quote); a trailing run is doubled."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, list):
        return "[" + ",".join(_hydra(v) for v in value) + "]"
    text = str(value)
    if isinstance(value, str) and not _HYDRA_PLAIN.fullmatch(text):
        body = text.replace("'", "\\'").replace("${", "\\${")
        tail = len(body) - len(body.rstrip("\\"))
        return "'" + body + "\\" * tail + "'"
    return text


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

_VERL_NOTES = """# verl export: what maps and what to check (keys checked against verl {version})

- Launch: `bash launch.sh` on a node of a Ray cluster with verl {version} and Research Radar installed
  (radar_reward.py imports `radar.repro.export`). One `python3 -m verl.trainer.main_ppo` per arm.
- Steps: {trl_steps} TRL optimiser steps at mu = {mu} (`num_iterations`) = {rollouts} verl rollouts
  (`trainer.total_training_steps` = ceil({trl_steps} / {mu})); each rollout is followed by `actor.ppo_epochs` = {mu}
  updates on the whole batch (`ppo_mini_batch_size` = `train_batch_size`), so both engines make the same
  number of optimiser updates on the same number of generation batches.
- Micro-batches (`actor.ppo_micro_batch_size_per_gpu`, the rollout's and the reference's
  `log_prob_micro_batch_size_per_gpu`) divide the per-GPU mini-batch; lower them if a GPU runs out of memory.
- The policy is the run's first warm start (a --model run: its checkpoint); verl's RLHFDataset applies the
  tokenizer's chat template to `prompt`. For another model, point `actor_rollout_ref.model.path` at it.
- Reward: `reward.custom_reward_function` = radar_reward.py:compute_score, the local run's correctness (1.0)
  + format (0.1) on the task's checker (math: final-answer equivalence + an explicit final answer). verl
  decodes responses with skip_special_tokens=True, so the local token-level rule (EOS at the end, no pad/unk
  inside) cannot be applied; well-formed completions score the same.
- DAPO (the `dapo` preset): `reward.reward_manager.name=dapo` with `+reward.reward_kwargs.overlong_buffer_cfg`
  (the same soft punishment as the local run, over the tokens no answer needs) and `algorithm.filter_groups`
  (dynamic sampling on `acc`), which the local TRL run does not reproduce. Other verl versions may name these
  differently: rerun `pytest -m slow tests/test_repro_export.py` against the version you launch with.
- cispo: TRL's epsilon_high is the absolute IS-weight cap (1.28); verl clamps to [1 - low, 1 + high], so
  the export writes clip_ratio_high = 0.28 and clip_ratio_low = 1.0 (no lower bound, as MiniMax-M1).
  sapo: TRL's temperatures are written as `actor.tau_pos` / `actor.tau_neg`.
"""
