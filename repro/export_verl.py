"""The verl export of a run: Hydra overrides, data, reward, and the launcher that registers radar's plug-ins.

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

Plug-ins (repro/plugins): an arm whose preset fills the advantage or ratio/loss point with a radar plug-in is
launched with ``python3 radar_verl_plugins.py KEY=VALUE ...``: the launcher (static code, the same for every export)
reads radar_plugins.json, registers each plug-in through verl's own ``register_adv_est`` / ``register_policy_loss``
(the adapters of repro/verl_plugins.py) under the name the config gives (``algorithm.adv_estimator=radar_ARM_NAME``,
``actor.policy_loss.loss_mode=radar_ARM_NAME``) and runs ``verl.trainer.main_ppo``'s ``main``; the Ray workers
import it too through ``actor_rollout_ref.model.external_lib=radar_verl_plugins`` (verl's ``HFModelConfig`` imports
it). A preset verl cannot express (a batch plug-in, a plug-in without a verl route, TRL settings verl lacks) is
refused in one line naming ``--engine trl``.

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

import msgspec
import yaml

from radar.repro.checkpoint import eval_rows, load_dataset
from radar.repro.checkpoint import rl_stream as math_stream
from radar.repro.errors import ReproError
from radar.repro.export_templates import VERL_LAUNCHER, VERL_NOTES, VERL_REWARD
from radar.repro.mathreward import equivalent, final_answer, has_final_marker
from radar.repro.methods import Catalog, Method
from radar.repro.plugins.catalog import BUILTIN_CATALOG, PluginCatalog
from radar.repro.records import RunParams
from radar.repro.shapes import Example, GrpoConfigJson, RunJson
from radar.repro.sizes import get_checkpoint_preset, get_size
from radar.repro.tasks import get_task, rl_stream

VERL_VERSION = "0.9.1"  # the version whose default config the test checks the keys against
FORMAT_WEIGHT = 0.1  # repro.tasks.format_reward's weight; the local run's reward is correct + format
MAX_MICRO_BATCH = 8  # per-GPU micro-batch ceiling (memory); the largest divisor of the mini-batch below it
LAUNCHER = "radar_verl_plugins"  # the launcher module (and the workers' external_lib)
PLUGINS_FILE = "radar_plugins.json"
VERL_TRL_SETTINGS = {  # TRL settings a preset may set that have no verified verl mapping: refused with the reason
    "off_policy_mask_threshold": "off-policy sequence masking",
    "top_entropy_quantile": "the high-entropy token mask",
    "multi_objective_aggregation": "decoupled reward normalisation",
}

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


@dataclass(frozen=True, slots=True)
class VerlPlugin:
    """One plug-in the launcher registers (radar_plugins.json, as msgspec encodes it): verl's name for it, radar's,
    its settings."""

    registered: str
    plugin: str
    args: dict[str, float]


def verl_plugins(method: Method, arm: str, plugins: PluginCatalog = BUILTIN_CATALOG) -> dict[str, VerlPlugin]:
    """The radar plug-ins ``method`` registers in verl, by registry ("adv_estimator", "policy_loss"): the name it is
    registered under, the plug-in and its settings; one line when the preset has no verl route."""
    out: dict[str, VerlPlugin] = {}
    for key, why in VERL_TRL_SETTINGS.items():
        if key in method.config:
            raise ReproError(
                f"{method.name} sets {key} ({why}), which has no verified verl mapping; export it with --engine trl"
            )
    if method.config.get("scale_rewards") == "batch":
        raise ReproError(
            f"{method.name} normalises by the batch std (scale_rewards = batch), which verl's grpo estimator lacks; "
            "export it with --engine trl"
        )
    if method.batch:
        raise ReproError(
            f"{method.name}'s batch plug-in {method.batch!r} has no verl route (verl has no batch-selection "
            "registry); export it with --engine trl"
        )
    for point, name in (("advantage", method.advantage), ("ratio/loss", method.loss_plugin)):
        if not name or (point == "ratio/loss" and name == "gmpo"):  # gmpo: verl's own geo_mean
            continue
        plugin = plugins.get(point, name)
        if not plugin.verl:
            raise ReproError(f"{method.name}'s {point} plug-in {name!r} cannot go to verl: {plugin.no_verl}")
        out[plugin.verl] = VerlPlugin(f"radar_{arm}_{name}", name, dict(method.plugin_args.get(point, {})))
    return out


def verl_overrides(
    method: Method,
    params: RunParams,
    model_path: str,
    trl_config: GrpoConfigJson | None = None,
    n_gpus: int = 8,
    arm: str = "method",
    plugins: PluginCatalog = BUILTIN_CATALOG,
) -> dict[str, Any]:  # the file edge: verl_ARM_NAME.yaml and launch.sh's Hydra overrides
    """Hydra overrides for ``python3 -m verl.trainer.main_ppo`` (or the plug-in launcher) that reproduce ``method``.

    ``trl_config``: the arm's recorded GRPOConfig (run.json); batch shape, mu and lr come from it,
    else from the preset. ``n_gpus``: GPUs on the one node (``trainer.n_gpus_per_node``). ``arm`` names the
    registered plug-ins (radar_ARM_NAME).
    """
    registered = verl_plugins(method, arm, plugins)
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
    if "policy_loss" in registered:
        loss_mode = registered["policy_loss"].registered
    eps_low = cfg.get("epsilon", 0.2)
    eps_high = cfg.get("epsilon_high") or eps_low
    if loss_type == "cispo":  # TRL's epsilon_high is the absolute cap; verl clamps to [1 - low, 1 + high]
        eps_low, eps_high = 1.0, round(float(eps_high) - 1.0, 6)  # MiniMax-M1: no lower bound
    beta = float(cfg.get("beta", 0.0))
    actor = "actor_rollout_ref.actor."
    out = {
        "algorithm.adv_estimator": registered["adv_estimator"].registered if "adv_estimator" in registered else "grpo",
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
    if registered:  # the Ray workers import the launcher (it registers the plug-ins in their registries too)
        out["actor_rollout_ref.model.external_lib"] = LAUNCHER
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


HYDRA_PLAIN = re.compile(r"[A-Za-z0-9_./~+\-@]*")


def hydra_value(value: Any) -> str:
    """A value in Hydra's override grammar: a string with any of its special characters (``, = : ( ) [ ] { }``,
    spaces, quotes, ``${``) is single-quoted with its quotes and interpolations escaped, so a model path such as
    ``/m/a,b=c`` reaches verl as one string (the shell quoting is applied on top, in the launch script).
    Backslashes are left alone (Hydra un-escapes them only before a quote); a trailing run is doubled."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, list):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    text = str(value)
    if isinstance(value, str) and not HYDRA_PLAIN.fullmatch(text):
        body = text.replace("'", "\\'").replace("${", "\\${")
        tail = len(body) - len(body.rstrip("\\"))
        return "'" + body + "\\" * tail + "'"
    return text


def write_verl(
    folder: Path,
    params: RunParams,
    record: RunJson,
    presets: Catalog,
    num_processes: int,
    write: Callable[[str, str], Path],
) -> list[Path]:
    """The verl files of a run into ``folder`` (``write(name, text)`` writes one checked file); the parquet files."""
    arms = {"method": params["method"], "baseline": params["baseline"]}
    configs = record["configs"]
    model_path = record["policy"]["path"]
    overrides = {
        arm: verl_overrides(
            presets.get(name), params, model_path, configs[arm], n_gpus=num_processes, arm=arm, plugins=presets.plugins
        )
        for arm, name in arms.items()
    }
    registered = {arm: verl_plugins(presets.get(name), arm, presets.plugins) for arm, name in arms.items()}
    steps = int(overrides["method"]["trainer.total_training_steps"])
    prompts = int(overrides["method"]["data.train_batch_size"])
    from datasets import Dataset, disable_progress_bars

    disable_progress_bars()  # one "wrote ..." line per file is the output
    written: list[Path] = []
    for split, examples, user in _verl_data(params, steps * prompts):
        rows = [
            {
                "data_source": "radar",
                "prompt": [{"role": "user", "content": user(ex["prompt"])}],
                "reward_model": {"style": "rule", "ground_truth": json.dumps(ex, default=str)},
            }
            for ex in examples
        ]
        path = write(f"{split}.parquet", "")
        Dataset.from_list(rows).to_parquet(str(path))
        written.append(path)
    written.append(write("radar_reward.json", json.dumps({"task": str(params["task"])})))
    written.append(write("radar_reward.py", VERL_REWARD))
    spec = {kind: [r[kind] for r in registered.values() if kind in r] for kind in ("adv_estimator", "policy_loss")}
    if any(spec.values()):
        written.append(write(PLUGINS_FILE, json.dumps(msgspec.to_builtins(spec), indent=2)))
        written.append(write(f"{LAUNCHER}.py", VERL_LAUNCHER))
    mu = int(configs["method"].get("num_iterations", _shape(params).mu))
    trl_steps = int(params["total_steps"])
    lines = [
        "#!/usr/bin/env bash",
        f"# verl launch exported by Research Radar (keys checked against verl {VERL_VERSION}); the run: export.json.",
        f"# Steps: the local run's {trl_steps} TRL optimiser steps at mu = {mu} are {steps} verl",
        f"# rollouts (trainer.total_training_steps = ceil({trl_steps} / {mu})), each followed by",
        f"# actor.ppo_epochs = {mu} updates on the whole batch: the same number of optimiser updates.",
        "# Needs verl and radar importable on every Ray worker (radar_reward.py imports radar.repro).",
        "set -euo pipefail",
        'cd "$(dirname "$0")"',
        'export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # the plug-in launcher, for the Ray workers',
    ]
    for arm, name in arms.items():
        method = presets.get(name)
        written.append(write(f"verl_{arm}_{method.name}.yaml", yaml.safe_dump(overrides[arm], sort_keys=False)))
        args = " \\\n    ".join(shlex.quote(f"{k}={hydra_value(v)}") for k, v in overrides[arm].items())
        command = f"python3 {LAUNCHER}.py" if registered[arm] else "python3 -m verl.trainer.main_ppo"
        lines.append(f"# {arm}: {method.name}\n{command} \\\n    {args}\n")
    written.append(write("launch.sh", "\n".join(lines)))
    written.append(
        write("NOTES.md", VERL_NOTES.format(version=VERL_VERSION, trl_steps=trl_steps, mu=mu, rollouts=steps))
    )
    return written
