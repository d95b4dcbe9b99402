"""`radar repro export --engine verl` writes a launch verl accepts: every emitted hydra override names a key of
verl's own composed default trainer config (tests/fixtures/verl, verl 0.9.1) or is an allowed ``+new.key``; the
batch sizes pass verl's validate_config rules (micro-batches set, divisibility); CISPO bounds in verl's
convention; steps as rollouts; DAPO's overlong buffer and group filtering; the reward equal to the local run's.
A toy-task run is refused in one line (verl builds chat-template prompts; the char-level tokenizer has none).

`--engine trl`: the exported script trains one step on a tiny saved checkpoint (a subprocess, as a cluster would
run it), each seed pair from its own warm start and each arm with its own RL seeds.

The slow test downloads the verl wheel (network) and checks that the fixture is still verl's composition."""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import socket
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from radar.repro.errors import ReproError
from radar.repro.export import FORMAT_WEIGHT, VERL_VERSION, rollouts, verl_overrides, verl_score
from radar.repro.export import export_run as _export_run
from radar.repro.methods import BUILTIN, METHODS
from radar.repro.records import RunRecord
from radar.repro.sizes import get_size
from radar.repro.tasks import TASKS, get_task

FIXTURES = Path(__file__).parent / "fixtures" / "verl"
get_method = BUILTIN.get
NEW_KEYS = ("reward.reward_kwargs.",)  # keys verl's defaults lack, read by its dapo reward manager


def _verl_route(name: str) -> bool:
    from radar.repro.export_verl import verl_plugins

    try:
        verl_plugins(METHODS[name], "method")
    except ReproError:
        return False
    return METHODS[name].config.get("loss_type") not in ("luspo", "vespo")


VERL_METHODS = sorted(n for n in METHODS if _verl_route(n))


def export_run(run: RunRecord, engine: str, out: Path | None = None, num_processes: int = 8) -> list[Path]:
    """The export of a test run whose folder lies in tmp_path (the test's runs/ folder)."""
    return _export_run(run, engine, out, num_processes, runs_root=Path(run.params["folder"]).parent)


def _composed() -> dict[str, Any]:
    return yaml.safe_load((FIXTURES / "_generated_ppo_trainer.yaml").read_text(encoding="utf-8"))


DEFAULTS = _composed()
REGISTRIES = json.loads((FIXTURES / "registries.json").read_text(encoding="utf-8"))


def _has(tree: dict[str, Any], dotted: str) -> bool:
    node: Any = tree
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _check_keys(overrides: dict[str, Any], config: dict[str, Any]) -> None:
    for key in overrides:
        if key.startswith("+"):
            assert key[1:].startswith(NEW_KEYS), f"{key}: a new key outside the allowed ones"
            assert not _has(config, key[1:]), f"{key}: already in verl's defaults, drop the +"
        else:
            assert _has(config, key), f"{key}: not a key of verl {VERL_VERSION}'s default trainer config"


def _params(task: str = "addition", steps: int = 200) -> dict[str, Any]:
    return {"task": task, "preset": "tiny", "total_steps": steps, "seeds": 2}


@pytest.mark.parametrize("task", sorted(TASKS))
@pytest.mark.parametrize("name", VERL_METHODS)
def test_every_override_is_a_verl_key_and_a_valid_value(name: str, task: str) -> None:
    o = verl_overrides(get_method(name), _params(task), "/models/policy")
    _check_keys(o, DEFAULTS)
    a = "actor_rollout_ref.actor."
    # verl's own names, or the ones the export's launcher registers (tests/test_repro_export_plugins.py)
    radar = {f"radar_method_{p}" for p in get_method(name).plugins().values()}
    assert o[a + "policy_loss.loss_mode"] in {*REGISTRIES["policy_loss"], *radar}
    assert o[a + "loss_agg_mode"] in REGISTRIES["loss_agg_mode"]
    assert o["algorithm.adv_estimator"] in {*REGISTRIES["adv_estimator"], *radar}
    assert bool(radar & {v for v in o.values() if isinstance(v, str)}) == ("actor_rollout_ref.model.external_lib" in o)
    assert o.get("reward.reward_manager.name", "naive") in REGISTRIES["reward_manager"]
    assert o["reward.custom_reward_function.path"] == "radar_reward.py"  # verl 0.9 reads reward.*, not the legacy key


@pytest.mark.parametrize("n_gpus", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("name", ["grpo", "grpo-kl", "dapo"])
def test_batch_sizes_pass_verls_validation(name: str, n_gpus: int) -> None:
    """The rules of verl's validate_config / ActorConfig.validate and the trainer's mini-batch split."""
    o = verl_overrides(get_method(name), _params(), "/m", n_gpus=n_gpus)
    n, batch = o["actor_rollout_ref.rollout.n"], o["data.train_batch_size"]
    mini = o["actor_rollout_ref.actor.ppo_mini_batch_size"]
    assert (batch * n) % n_gpus == 0 and batch >= mini
    per_gpu = mini * n // n_gpus
    assert per_gpu >= 1 and (mini * n) % n_gpus == 0
    for key in (
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu",
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu",  # needed once the reference exists (beta > 0)
    ):
        assert isinstance(o[key], int) and o[key] >= 1 and per_gpu % o[key] == 0, key
        default = key.rsplit(".", 1)[0] + "." + key.rsplit(".", 1)[1].replace("_per_gpu", "")
        assert _has(DEFAULTS, default)  # the deprecated twin stays unset (verl refuses both)
        assert default not in o
    assert o["actor_rollout_ref.actor.use_kl_loss"] is (name == "grpo-kl")
    assert o["trainer.n_gpus_per_node"] == n_gpus


def test_batch_that_cannot_split_over_the_gpus_is_refused_in_one_line() -> None:
    with pytest.raises(ReproError, match="--gpus") as err:
        verl_overrides(get_method("grpo"), _params(), "/m", n_gpus=3)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("steps", [1, 8, 199, 200])
def test_steps_are_rollouts_with_the_same_number_of_updates(steps: int) -> None:
    mu = get_size("tiny").num_iterations
    o = verl_overrides(get_method("dapo"), _params(steps=steps), "/m")
    assert o["trainer.total_training_steps"] == rollouts(steps, mu) == math.ceil(steps / mu)
    assert o["actor_rollout_ref.actor.ppo_epochs"] == mu
    assert o["actor_rollout_ref.actor.ppo_mini_batch_size"] == o["data.train_batch_size"]  # one update per epoch
    updates = o["trainer.total_training_steps"] * mu
    assert steps <= updates < steps + mu


def test_cispo_bounds_in_verls_convention() -> None:
    cap = get_method("cispo").config["epsilon_high"]  # TRL: the absolute cap on the IS weight
    o = verl_overrides(get_method("cispo"), _params(), "/m")
    low, high = o["actor_rollout_ref.actor.clip_ratio_low"], o["actor_rollout_ref.actor.clip_ratio_high"]
    assert 1 + high == pytest.approx(cap) and 1 - low == 0.0  # verl clamps to [1 - low, 1 + high]: no lower bound
    assert o["actor_rollout_ref.actor.policy_loss.loss_mode"] == "cispo"


def test_sapo_temperatures_are_verls_tau() -> None:
    o = verl_overrides(get_method("sapo"), _params(), "/m")
    cfg = get_method("sapo").config
    assert o["actor_rollout_ref.actor.tau_pos"] == cfg["sapo_temperature_pos"]
    assert o["actor_rollout_ref.actor.tau_neg"] == cfg["sapo_temperature_neg"]


@pytest.mark.parametrize("task", sorted(TASKS))
def test_dapo_overlong_buffer_and_group_filtering_match_the_local_run(task: str) -> None:
    from trl.rewards import get_soft_overlong_punishment

    from radar.repro.trainer import overlong_buffer

    t = get_task(task)
    o = verl_overrides(get_method("dapo"), _params(task), "/m")
    assert o["reward.reward_manager.name"] == "dapo"
    assert o["+reward.reward_kwargs.overlong_buffer_cfg.enable"] is True
    buffer, max_len = o["+reward.reward_kwargs.overlong_buffer_cfg.len"], o["+reward.reward_kwargs.max_resp_len"]
    assert buffer == overlong_buffer(t) and max_len == o["data.max_response_length"] == t.max_completion_tokens
    assert o["algorithm.filter_groups.enable"] is True and o["algorithm.filter_groups.metric"] == "acc"
    factor = o["+reward.reward_kwargs.overlong_buffer_cfg.penalty_factor"]
    local = get_soft_overlong_punishment(t.max_completion_tokens, overlong_buffer(t))
    for length in range(1, max_len + 1):  # verl's DAPORewardManager formula, from its source
        verl = min(-(length - (max_len - buffer)) / buffer * factor, 0)
        assert local(completion_ids=[[1] * length])[0] == pytest.approx(verl), length
    assert "reward.reward_manager.name" not in verl_overrides(get_method("dapo-clip-higher"), _params(), "/m")


def test_methods_verl_lacks_are_refused() -> None:
    """TRL losses verl lacks, a batch plug-in (verl has no batch registry), a plug-in verl's loss signature cannot
    feed (RL-ZVP needs entropies), and TRL settings with no verified verl mapping: one line naming --engine trl."""
    for name in ("luspo", "vespo", "vcrl", "rl-zvp", "opsm", "forking-tokens", "lite-ppo", "gdpo"):
        with pytest.raises(ReproError, match="--engine trl") as err:
            verl_overrides(get_method(name), _params(), "/m")
        assert "\n" not in str(err.value)
    assert len(VERL_METHODS) >= 20  # the rest go to verl (checked key by key above)


# -- the reward: the exported compute_score against the local run's reward functions -----------------
def _completions(task: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(name, completion text, example) rows: right, wrong, malformed, empty, padded with spaces."""
    t = get_task(task)
    ex = t.eval_set(3)[0]
    answer = str(ex["answer"]) if "answer" in ex else ""
    rows = [("wrong", "0", ex), ("empty", "", ex), ("malformed", "=" * 3, ex)]
    if task == "countdown":
        from radar.repro.tasks import eval_expression

        numbers = list(ex["numbers"])
        expr = "+".join(map(str, numbers))
        target = {**ex, "target": eval_expression(expr)}  # a problem this expression solves
        rows += [("right", expr, target), ("right-but-reordered", "+".join(map(str, numbers[::-1])), target)]
    else:
        rows += [("right", answer, ex), ("right-with-space", " " + answer, ex), ("too-long", answer + "1", ex)]
    return rows


@pytest.mark.parametrize("task", sorted(TASKS))
def test_exported_reward_equals_the_local_reward(task: str) -> None:
    from radar.repro.policy import build_tokenizer
    from radar.repro.trainer import reward_functions

    t = get_task(task)
    tok = build_tokenizer(t)
    correct, fmt = reward_functions(get_method("grpo"), t, tok)
    for name, text, ex in _completions(task):
        ids = tok(text, add_special_tokens=False)["input_ids"] + [tok.eos_token_id] if text else [tok.eos_token_id]
        if tok.unk_token_id in ids:
            continue  # a character outside the task's alphabet: not a completion the policy can emit
        cols = {k: [v] for k, v in ex.items() if k != "prompt"}
        local = correct(prompts=[ex["prompt"]], completions=[text], completion_ids=[ids], **cols)[0]
        local += fmt(prompts=[ex["prompt"]], completions=[text], completion_ids=[ids])[0]
        # verl: the response decoded without special tokens, the example as ground_truth (export_run's rows)
        decoded = tok.decode(ids, skip_special_tokens=True)
        got = verl_score(task, decoded, json.dumps(ex))
        assert got["score"] == pytest.approx(local), (name, text)
        assert got["acc"] == (1.0 if local >= 1.0 else 0.0), (name, text)
    assert FORMAT_WEIGHT == 0.1


def test_the_token_level_rule_is_the_documented_difference() -> None:
    """Padding or no EOS earns nothing locally; verl's decoded text cannot show them (NOTES.md says so)."""
    from radar.repro.policy import build_tokenizer
    from radar.repro.trainer import reward_functions

    t = get_task("addition")
    tok = build_tokenizer(t)
    correct, _ = reward_functions(get_method("grpo"), t, tok)
    ex = {"prompt": "7+7=", "answer": "14"}
    digits = tok("14", add_special_tokens=False)["input_ids"]
    for ids in ([tok.pad_token_id, tok.pad_token_id, *digits, tok.eos_token_id], digits):
        assert correct(prompts=["7+7="], completions=["14"], completion_ids=[ids], answer=["14"])[0] == 0.0
        assert verl_score("addition", tok.decode(ids, skip_special_tokens=True), json.dumps(ex))["acc"] == 1.0


# -- the written launch: every override of launch.sh against the defaults ----------------------------
def _run(params: dict[str, Any], run_id: str = "r1") -> RunRecord:
    return RunRecord(id=run_id, kind="repro", status="done", params=params)  # type: ignore[arg-type]


def _toy_record(tmp_path: Path, method: str, baseline: str, steps: int = 8, pairs: int = 2) -> RunRecord:
    from radar.repro.trainer import build_config

    size, task = get_size("tiny"), get_task("addition")
    folder = tmp_path / "run"
    folder.mkdir()
    configs = {
        arm: build_config(get_method(n), size, task, steps=steps, seed=0, output_dir=folder, device="cpu").to_dict()
        for arm, n in (("method", method), ("baseline", baseline))
    }
    policies = [{"pair": p, "path": f"/models/warm{p}"} for p in range(pairs)]
    record = {"policy": policies[0], "policies": policies, "configs": configs}
    (folder / "run.json").write_text(json.dumps(record, default=str))
    params = _params(steps=steps) | {"method": method, "baseline": baseline, "folder": str(folder), "seeds": pairs}
    return _run(params)


def _math_record(tmp_path: Path, method: str, baseline: str, model: str, steps: int = 8) -> RunRecord:
    from radar.repro.sizes import get_checkpoint_preset
    from radar.repro.trainer import build_checkpoint_config

    params = _math_params(tmp_path, model=model) | {"total_steps": steps, "preset": "ckpt-quick"}
    folder = tmp_path / "run"
    folder.mkdir()
    ck = get_checkpoint_preset("ckpt-quick")
    configs = {
        arm: build_checkpoint_config(
            get_method(n), ck, steps=steps, seed=0, output_dir=folder, device="cpu", lora=False
        ).to_dict()
        for arm, n in (("method", method), ("baseline", baseline))
    }
    policies = [{"pair": p, "path": model, "checkpoint": True} for p in range(2)]
    record = {"policy": policies[0], "policies": policies, "configs": configs, "model": {"chat_template": True}}
    (folder / "run.json").write_text(json.dumps(record, default=str))
    return _run(params | {"method": method, "baseline": baseline, "folder": str(folder)})


def _launch_overrides(launch: str) -> list[dict[str, str]]:
    lines = launch.replace("\\\n", " ").splitlines()
    out = []
    for cmd in lines:
        if cmd.startswith("python3 -m verl.trainer.main_ppo"):
            out.append(dict(w.split("=", 1) for w in shlex.split(cmd)[3:]))
        elif cmd.startswith("python3 radar_verl_plugins.py"):
            out.append(dict(w.split("=", 1) for w in shlex.split(cmd)[2:]))
    return out


def test_a_toy_run_is_refused_by_verl_in_one_line(tmp_path: Path) -> None:
    """verl builds every prompt with the tokenizer's chat template (the old toy export failed at verl's start):
    the char-level tokenizer has none, so the export says so instead of writing a launch that cannot start."""
    with pytest.raises(ReproError, match="cannot go to verl") as err:
        export_run(_toy_record(tmp_path, "dapo", "grpo"), "verl", tmp_path / "out")
    assert "\n" not in str(err.value) and "--engine trl" in str(err.value)
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_written_launch_uses_only_verl_keys(tmp_path: Path) -> None:
    run = _math_record(tmp_path, "dapo", "grpo", "/models/qwen2.5-0.5b-instruct")
    written = export_run(run, "verl", tmp_path / "out", num_processes=4)
    folder = tmp_path / "out"
    assert {p.name for p in written} >= {"launch.sh", "radar_reward.py", "NOTES.md", "train.parquet", "val.parquet"}
    launch = (folder / "launch.sh").read_text()
    commands = _launch_overrides(launch)
    assert len(commands) == 2
    for overrides in commands:
        _check_keys(overrides, DEFAULTS)
        assert overrides["trainer.total_training_steps"] == "4"  # 8 TRL steps at mu = 2
        assert overrides["trainer.n_gpus_per_node"] == "4"
        assert "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu" in overrides
    assert (
        commands[0]["algorithm.filter_groups.enable"] == "True" and "algorithm.filter_groups.enable" not in commands[1]
    )
    assert (
        "8 TRL optimiser steps at mu = 2 are 4 verl" in launch
        and "4 verl rollouts" in (folder / "NOTES.md").read_text()
    )
    assert (folder / "launch.sh").stat().st_mode & 0o111
    subprocess.run(["bash", "-n", str(folder / "launch.sh")], check=True)  # the shell parses it
    # the reward file verl loads calls the same function
    namespace: dict[str, Any] = {"__file__": str(folder / "radar_reward.py")}
    exec(compile((folder / "radar_reward.py").read_text(), "radar_reward.py", "exec"), namespace)  # noqa: S102
    gt = json.dumps({"prompt": "p", "answer": "13"})
    assert namespace["compute_score"]("radar/math", "The answer is \\boxed{13}", gt) == {"score": 1.1, "acc": 1.0}
    import pyarrow.parquet as pq

    train = pq.read_table(folder / "train.parquet").to_pylist()
    assert len(train) == 4 * 4 and train[0]["reward_model"]["style"] == "rule"  # 4 rollouts x 4 prompts
    val_keys = {r["prompt"][0]["content"] for r in pq.read_table(folder / "val.parquet").to_pylist()}
    assert not val_keys & {r["prompt"][0]["content"] for r in train}  # held-out prompts never train


def test_trl_export_trains_each_pair_from_its_warm_start_with_each_arms_seeds(tmp_path: Path) -> None:
    """launch.sh runs every (pair, arm); export.json gives pair p its own warm start and the baseline arm RL seed
    1000 + p (the old export trained every seed from warm start 0, with the baseline on the method's seeds)."""
    export_run(_toy_record(tmp_path, "dapo", "grpo"), "trl", tmp_path / "out", num_processes=1)
    spec = json.loads((tmp_path / "out" / "export.json").read_text())
    assert spec["policies"] == {"0": "/models/warm0", "1": "/models/warm1"}
    assert spec["rl_seeds"] == {"method": {"0": 0, "1": 1}, "baseline": {"0": 1000, "1": 1001}}
    launch = (tmp_path / "out" / "launch.sh").read_text()
    assert launch.count("train_grpo.py --arm") == 4 and "--arm baseline --pair 1" in launch
    (tmp_path / "x").mkdir()
    with pytest.raises(ReproError, match="--gpus 1"):  # dapo's dynamic sampling runs in one process
        export_run(_toy_record(tmp_path / "x", "dapo", "grpo"), "trl", tmp_path / "out8", num_processes=8)


def test_trl_export_of_a_tiny_checkpoint_run_trains_one_step(tmp_path: Path) -> None:
    """The exported train_grpo.py, run as a cluster would (its own process), trains one step of each arm of pair 1 on
    a tiny saved checkpoint, with the arm's own RL seed: the method arm with GPG's two plug-ins (advantage and
    ratio/loss), the baseline with DAPO's dynamic sampling (the built-in batch plug-in dapo_filter).
    tests/test_repro_cli.py runs a toy run's export the same way."""
    from tests.test_repro_hf import build_checkpoint

    model = build_checkpoint(tmp_path / "model")
    run = _math_record(tmp_path, "gpg", "dapo", str(model))
    export_run(run, "trl", tmp_path / "out", num_processes=1)
    env = os.environ | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    for arm, seed in (("method", 1), ("baseline", 1001)):
        args = ["--arm", arm, "--pair", "1", "--max-steps", "1", "--cpu"]
        done = subprocess.run(
            [sys.executable, str(tmp_path / "out" / "train_grpo.py"), *args],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            cwd=Path(__file__).resolve().parents[1],
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert f"trained {arm} pair 1 (RL seed {seed}" in done.stdout and ": 1 steps" in done.stdout


# -- slow: the fixture is still verl's own composition ------------------------------------------------
def _online() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=3).close()
        return True
    except OSError:
        return False


def _merge(dst: dict[str, Any], src: dict[str, Any]) -> dict[str, Any]:
    for k, v in src.items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            _merge(dst[k], v)
        else:
            dst[k] = v
    return dst


def compose(files: dict[str, str], rel: str, variables: dict[str, Any] | None = None) -> tuple[dict[str, Any], bool]:
    """Hydra's defaults-list composition, as much of it as verl's trainer configs use: ``group@package: name``
    (``${var}`` from ``# @package _global_`` files), ``name`` (same group), relative ``../group``, ``_self_``."""
    variables = {} if variables is None else variables
    text = files[rel]
    doc = yaml.safe_load(text) or {}
    is_global = text.lstrip().startswith("# @package _global_")
    folder = os.path.dirname(rel)
    out: dict[str, Any] = {}
    self_done = False
    for entry in doc.pop("defaults", []):
        if entry == "_self_":
            _merge(out, doc)
            self_done = True
        elif isinstance(entry, str):
            _merge(out, compose(files, os.path.join(folder, entry) + ".yaml", variables)[0])
        else:
            ((key, name),) = entry.items()
            name = re.sub(r"\$\{(\w+)\}", lambda m: str(variables[m.group(1)]), str(name))
            group, _, package = key.partition("@")
            path = os.path.normpath(os.path.join(folder, group))
            sub, is_glob = compose(files, f"{path}/{name}.yaml", variables)
            if is_glob:
                variables.update({k: v for k, v in sub.items() if not isinstance(v, dict)})
                continue
            node = out
            for part in (package or os.path.basename(path)).split("."):
                node = node.setdefault(part, {})
            _merge(node, sub)
    if not self_done:
        _merge(out, doc)
    return out, is_global


def _keys(tree: dict[str, Any], prefix: str = "") -> set[str]:
    out = set()
    for k, v in tree.items():
        out.add(prefix + str(k))
        if isinstance(v, dict):
            out |= _keys(v, f"{prefix}{k}.")
    return out


@pytest.mark.slow
def test_fixture_is_verls_composed_default_config(tmp_path: Path) -> None:
    if not _online():
        pytest.skip("no network: cannot download the verl wheel")
    cmd = [sys.executable, "-m", "pip", "download", f"verl=={VERL_VERSION}", "--no-deps", "-d", str(tmp_path), "-q"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if done.returncode:
        pytest.skip(f"pip download verl failed: {done.stderr.strip()[-200:]}")
    (wheel,) = tmp_path.glob("verl-*.whl")
    prefix = "verl/trainer/config/"
    with zipfile.ZipFile(wheel) as zf:
        files = {
            n[len(prefix) :]: zf.read(n).decode() for n in zf.namelist() if n.startswith(prefix) and n.endswith(".yaml")
        }
        sources = {n: zf.read(n).decode() for n in zf.namelist() if n.endswith(".py") and n.startswith("verl/")}
    composed, _ = compose(files, "ppo_trainer.yaml")
    generated = yaml.safe_load(files["_generated_ppo_trainer.yaml"])
    assert _keys(composed) - {"model_engine"} == _keys(generated)  # verl's flattened file is the composition
    registries = {
        "policy_loss": sorted(
            set(re.findall(r'register_policy_loss\("([\w-]+)"\)', sources["verl/trainer/ppo/core_algos.py"]))
        ),
        "adv_estimator": sorted(
            set(re.findall(r'^\s+[A-Z_]+ = "([\w-]+)"', sources["verl/trainer/ppo/core_algos.py"], re.M))
        ),
        "reward_manager": sorted(
            {
                m
                for n, s in sources.items()
                if "reward_loop/reward_manager/" in n
                for m in re.findall(r'@register\("(\w+)"\)', s)
            }
        ),
        "loss_agg_mode": sorted(
            re.findall(
                r'"([\w-]+)"',
                re.search(r"valid_loss_agg_modes = \[(.*?)\]", sources["verl/workers/config/actor.py"], re.S).group(1),
            )  # type: ignore[union-attr]
        ),
    }
    from tests.verl_api import extract

    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(tmp_path / "wheel", [n for n in zf.namelist() if n.endswith(".py") and n.startswith("verl/")])
    api = extract(tmp_path / "wheel")  # the registries, agg_loss and call signatures the plug-in launcher relies on
    if os.environ.get("RADAR_VERL_UPDATE_FIXTURE"):
        (FIXTURES / "_generated_ppo_trainer.yaml").write_text(files["_generated_ppo_trainer.yaml"], encoding="utf-8")
        (FIXTURES / "registries.json").write_text(json.dumps(registries, indent=2) + "\n", encoding="utf-8")
        (FIXTURES / "core_algos_api.json").write_text(json.dumps(api, indent=1) + "\n", encoding="utf-8")
    assert generated == _composed(), "tests/fixtures/verl is stale: rerun with RADAR_VERL_UPDATE_FIXTURE=1"
    assert registries == REGISTRIES
    assert api == json.loads((FIXTURES / "core_algos_api.json").read_text()), "core_algos_api.json is stale"
    for name in VERL_METHODS:  # and every emitted key is in the freshly composed config
        _check_keys(verl_overrides(get_method(name), _params(), "/m"), composed)


# -- --model/--dataset (math) runs ----------------------------------------------------------------------
def _math_params(tmp_path: Path, lora: bool = False, model: str = "/models/qwen2.5-0.5b-instruct") -> dict[str, Any]:
    from radar.repro.checkpoint import load_dataset
    from tests.test_repro_hf import write_dataset

    data = load_dataset(write_dataset(tmp_path / "math.jsonl", 40))
    return {
        "task": "math",
        "preset": "ckpt",
        "total_steps": 100,
        "seeds": 2,
        "lora": lora,
        "model_path": model,
        "dataset_path": data.path,
        "dataset_sha256": data.sha256,
    }


@pytest.mark.parametrize("name", VERL_METHODS)
def test_math_run_overrides_are_verl_keys(name: str, tmp_path: Path) -> None:
    from radar.repro.sizes import get_checkpoint_preset

    ck = get_checkpoint_preset("ckpt")
    o = verl_overrides(get_method(name), _math_params(tmp_path, lora=True), "/models/qwen2.5-0.5b-instruct")
    _check_keys(o, DEFAULTS)
    assert o["data.train_batch_size"] == ck.prompts_per_step and o["actor_rollout_ref.rollout.n"] == ck.num_generations
    assert o["data.max_response_length"] == ck.max_completion_tokens
    assert o["actor_rollout_ref.actor.optim.lr"] == ck.lora_lr and o["actor_rollout_ref.model.lora_rank"] == ck.lora_r
    assert o["trainer.total_training_steps"] == math.ceil(100 / ck.num_iterations)
    if get_method(name).overlong_shaping:
        assert o["+reward.reward_kwargs.overlong_buffer_cfg.len"] == ck.overlong_buffer


def test_math_reward_equals_the_local_math_reward(tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    from radar.repro.mathpolicy import FORMAT_WEIGHT as MATH_FORMAT_WEIGHT
    from radar.repro.mathpolicy import eos_ids, reward_functions
    from tests.test_repro_hf import build_checkpoint

    tok = AutoTokenizer.from_pretrained(build_checkpoint(tmp_path / "model"))
    correct, fmt = reward_functions(tok, eos_ids(tok))
    assert MATH_FORMAT_WEIGHT == FORMAT_WEIGHT
    table = [  # (completion, reference final answer)
        ("The answer is \\boxed{13}", "13"),
        ("so 6 + 7 = 13\n#### 13", "13"),
        ("\\boxed{\\frac{1}{2}}", "0.5"),
        ("\\boxed{12}", "13"),
        ("13", "13"),
        ("I think it is 12 or 13", "12"),
        ("no number here", "3"),
        ("", "3"),
    ]
    for text, answer in table:
        ids = tok(text, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
        local = correct(prompts=[""], completions=[text], completion_ids=[ids], answer=[answer])[0]
        local += fmt(prompts=[""], completions=[text], completion_ids=[ids])[0]
        decoded = tok.decode(ids, skip_special_tokens=True)
        got = verl_score("math", decoded, json.dumps({"prompt": "p", "answer": answer}))
        assert got["score"] == pytest.approx(local), (text, answer)


def test_math_run_export_writes_the_data_sets_prompts_and_answers(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from radar.repro.checkpoint import load_dataset
    from radar.repro.mathpolicy import user_text
    from radar.repro.sizes import get_checkpoint_preset
    from radar.repro.trainer import build_checkpoint_config

    params = _math_params(tmp_path)
    folder = tmp_path / "run"
    folder.mkdir()
    ck = get_checkpoint_preset("ckpt")
    configs = {
        arm: build_checkpoint_config(
            get_method(n), ck, steps=100, seed=0, output_dir=folder, device="cpu", lora=False
        ).to_dict()
        for arm, n in (("method", "dapo"), ("baseline", "grpo"))
    }
    record = {"policy": {"path": params["model_path"]}, "configs": configs}
    (folder / "run.json").write_text(json.dumps(record, default=str))
    run = _run(params | {"method": "dapo", "baseline": "grpo", "folder": str(folder)}, "m1")
    export_run(run, "verl", tmp_path / "out", num_processes=8)
    for overrides in _launch_overrides((tmp_path / "out" / "launch.sh").read_text()):
        _check_keys(overrides, DEFAULTS)
        assert overrides["actor_rollout_ref.model.path"] == params["model_path"]
    data = load_dataset(params["dataset_path"])
    train = pq.read_table(tmp_path / "out" / "train.parquet").to_pylist()
    val = pq.read_table(tmp_path / "out" / "val.parquet").to_pylist()
    assert len(train) == 50 * ck.prompts_per_step  # 50 rollouts x 8 prompts
    by_prompt = {r["prompt"]: r["answer"] for r in data.rows}
    for row in train + val:
        gt = json.loads(row["reward_model"]["ground_truth"])
        assert row["prompt"][0]["content"] == user_text(gt["prompt"]) and gt["answer"] == by_prompt[gt["prompt"]]
    assert {json.loads(r["reward_model"]["ground_truth"])["prompt"] for r in val} <= {r["prompt"] for r in data.eval}
    assert not {r["prompt"][0]["content"] for r in val} & {r["prompt"][0]["content"] for r in train}


def test_hydra_values_with_special_characters_are_one_quoted_string() -> None:
    """A model path or name with Hydra's special characters is single-quoted (quotes and ${ escaped); plain
    values, numbers and booleans are written as before."""
    from radar.repro.export import hydra_value as _hydra

    assert _hydra("/models/qwen2.5-0.5b-instruct") == "/models/qwen2.5-0.5b-instruct"
    assert _hydra(1e-6) == "1e-06" and _hydra(True) == "True" and _hydra([1, 2]) == "[1,2]"
    assert _hydra("/m/a,b=c") == "'/m/a,b=c'"
    assert _hydra("dapo vs grpo") == "'dapo vs grpo'"
    assert _hydra("it's ${oops}") == "'it\\'s \\${oops}'"
    assert _hydra("C:\\dir\\") == "'C:\\dir\\\\'"  # a trailing backslash would escape the closing quote
