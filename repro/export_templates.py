"""The files an export writes as they are: static code and text, the same for every run.

No stored text is ever formatted into them: each script reads what it needs (the run's arms, seeds, paths, task and
plug-ins) from a JSON file beside it (export.json, radar_reward.json, radar_plugins.json), as data. The only
``str.format`` here fills NOTES.md (Markdown) with integers.
"""

from __future__ import annotations

TRL_SCRIPT = '''"""TRL GRPO launch exported by `radar repro export --engine trl`: one arm and seed pair.

    accelerate launch --config_file accelerate.yaml train_grpo.py --arm method --pair 0
    python train_grpo.py --arm baseline --pair 1 --max-steps 1 --cpu     # a one-process smoke test

Each pair trains from its own warm start (a checkpoint run: the checkpoint) with the arm's own RL seed, as the
local run did (export.json: the run, its arms, policies, rl_seeds; read as data, never as code).
"""
import argparse
import json
import os
from pathlib import Path

HERE = Path(__file__).parent
SPEC = json.loads((HERE / "export.json").read_text(encoding="utf-8"))

parser = argparse.ArgumentParser(description="one arm and seed pair of the exported run (export.json)")
parser.add_argument("--arm", choices=["method", "baseline"], default="method")
parser.add_argument("--pair", type=int, default=SPEC["pairs"][0], choices=SPEC["pairs"], help="seed pair")
parser.add_argument("--model", default="", help="policy folder (default: the pair's warm start)")
parser.add_argument("--max-steps", type=int, default=0, help="optimiser steps (default: the run's)")
parser.add_argument("--cpu", action="store_true", help="train on the CPU (a smoke test)")
args = parser.parse_args()

from datasets import Dataset  # noqa: E402  (after the arguments: --help needs no torch)
from transformers import AutoTokenizer  # noqa: E402
from trl import GRPOConfig  # noqa: E402

from radar.repro.grpo_trainer import RadarGRPOTrainer, plugin_set  # noqa: E402
from radar.repro.methods import catalog  # noqa: E402
from radar.repro.plugins import plugin_catalog  # noqa: E402
from radar.repro.sizes import get_size  # noqa: E402
from radar.repro.tasks import get_task, refill_stream, rl_stream  # noqa: E402
from radar.repro.trainer import refill_size, reward_functions  # noqa: E402

method = catalog(SPEC["user_presets"], plugin_catalog()).get(SPEC["arms"][args.arm])
seed = SPEC["rl_seeds"][args.arm][str(args.pair)]
model = args.model or SPEC["policies"][str(args.pair)]
kwargs = SPEC["grpo_config"][args.arm] | {"output_dir": str(HERE / f"out-{args.arm}-pair{args.pair}"),
                                         "seed": seed, "data_seed": seed, "use_cpu": args.cpu}
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
        raise SystemExit(f"{SPEC['dataset_path']} changed since the run; export the run again or restore the file")
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token

    def rows(stream):
        return [{"prompt": mathpolicy.trl_prompt(r["prompt"], tokenizer), "answer": r["answer"]} for r in stream]

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
    processing_class=tokenizer, plugins=plugin_set(method, plugin_catalog()), peft_config=peft_config,
    refill=iter(refill),
)
trainer.train()
print(f"trained {args.arm} pair {args.pair} (RL seed {seed}, {model}): {trainer.state.global_step} steps")
'''


VERL_REWARD = '''"""Verifiable reward for verl (reward.custom_reward_function): Research Radar's own reward for the
run's task (radar_reward.json), correctness 1.0 + format 0.1 on the task's checker (radar.repro.export.verl_score)."""

import json
from pathlib import Path

from radar.repro.export import verl_score

TASK = json.loads(Path(__file__).with_name("radar_reward.json").read_text(encoding="utf-8"))["task"]


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **_):
    return verl_score(TASK, solution_str, ground_truth)
'''

VERL_LAUNCHER = '''"""Registers Research Radar's plug-ins in verl's own registries, then runs verl's PPO trainer.

    python3 radar_verl_plugins.py KEY=VALUE ...     # the Hydra overrides of verl.trainer.main_ppo (launch.sh)

Written by `radar repro export --engine verl`, the same for every export: what it registers comes from
radar_plugins.json (registered name, radar plug-in, settings), read as data. Imported by the Ray workers too
(actor_rollout_ref.model.external_lib=radar_verl_plugins), so the policy losses exist where they are computed.
"""
import json
import sys
from pathlib import Path

SPEC = json.loads(Path(__file__).with_name("radar_plugins.json").read_text(encoding="utf-8"))


def register():
    from verl.trainer.ppo.core_algos import agg_loss, register_adv_est, register_policy_loss

    from radar.repro.verl_plugins import advantage_estimator, policy_loss

    for entry in SPEC["adv_estimator"]:
        register_adv_est(entry["registered"])(advantage_estimator(entry["plugin"], entry["args"]))
    for entry in SPEC["policy_loss"]:
        register_policy_loss(entry["registered"])(policy_loss(entry["plugin"], entry["args"], agg_loss))


if __name__ == "__main__":
    if {"-h", "--help"} & set(sys.argv[1:]):
        print(__doc__)
        registered = [e["registered"] for kind in ("adv_estimator", "policy_loss") for e in SPEC[kind]]
        print("registers:", ", ".join(registered) or "nothing")
        sys.exit(0)
    sys.path.insert(0, str(Path(__file__).parent))
    import radar_verl_plugins  # noqa: F401  registers once, under the name the workers import

    from verl.trainer.main_ppo import main

    main()
else:
    register()
'''

VERL_NOTES = """# verl export: what maps and what to check (keys checked against verl {version})

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
- Plug-ins: an arm whose preset uses a radar plug-in runs `python3 radar_verl_plugins.py` (it registers the
  plug-ins named in radar_plugins.json through verl's register_adv_est / register_policy_loss, then runs
  main_ppo); the workers import it through `actor_rollout_ref.model.external_lib`, so the export folder must be
  on their PYTHONPATH (launch.sh exports it; on an existing Ray cluster, start the workers with it).
- cispo: TRL's epsilon_high is the absolute IS-weight cap (1.28); verl clamps to [1 - low, 1 + high], so
  the export writes clip_ratio_high = 0.28 and clip_ratio_low = 1.0 (no lower bound, as MiniMax-M1).
  sapo: TRL's temperatures are written as `actor.tau_pos` / `actor.tau_neg`.
"""
