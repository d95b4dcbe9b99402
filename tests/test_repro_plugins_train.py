"""Each plug-in point reaches TRL's training: two real steps per preset (an untrained char-level policy, in
process), and the step records carry the plug-in's mechanism rate (``rate/NAME``), which the verdict's levers read.

An untrained policy answers everything wrong, so every group has zero variance: what each point does with that is
known (QAE's and GRPO's advantages are all 0; RL-ZVP trains those groups; VCRL drops them and re-generates).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from radar.repro.errors import ReproError
from radar.repro.grpo_trainer import plugin_set
from radar.repro.methods import BUILTIN
from radar.repro.plugins import BUILTIN_CATALOG
from radar.repro.shapes import StepRecord


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from radar.repro.policy import build_model, build_tokenizer
    from radar.repro.sizes import get_size
    from radar.repro.tasks import get_task

    folder = tmp_path_factory.mktemp("policy")
    tok = build_tokenizer(get_task("addition"))
    torch.manual_seed(0)
    build_model(get_size("tiny"), tok).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def _train(policy: Path, name: str, tmp_path: Path) -> list[StepRecord]:
    from radar.repro.policy import eval_sets
    from radar.repro.sizes import get_size
    from radar.repro.tasks import get_task
    from radar.repro.toy_arm import ToyArm
    from radar.repro.trainer import train_arm

    task, size = get_task("addition"), get_size("tiny")
    sets = {k: v[:4] for k, v in eval_sets(task, size).items()}
    records: list[StepRecord] = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        arm = ToyArm(policy, BUILTIN.get(name), task, size, 2, 0, "cpu", tmp_path / name, records.append, lambda: False)
        train_arm(arm, eval_sets=sets, pass_samples=1)
    finally:
        torch.set_num_threads(threads)
    return records


@pytest.mark.parametrize(
    ("name", "rate"),
    [
        ("qae", "zero_adv_share"),  # advantage point
        ("rl-zvp", "zvp_trained"),  # ratio/loss point, with each row's group success rate
        ("vcrl", "vcrl_dropped"),  # batch point: drops and re-generates
        ("opsm", "opsm_masked"),  # TRL's own mask, measured
        ("forking-tokens", "entropy_kept"),  # TRL's own mask, measured
    ],
)
def test_each_point_trains_and_logs_its_rate(policy: Path, tmp_path: Path, name: str, rate: str) -> None:
    records = _train(policy, name, tmp_path)
    assert len(records) == 2
    values = [r[f"rate/{rate}"] for r in records if f"rate/{rate}" in r]
    # advantage and batch rates come with each generation (mu = 2: one per two steps), loss rates with every step
    assert values and all(0.0 <= v <= 1.0 for v in values), records
    if name in ("qae", "rl-zvp", "vcrl"):  # (nearly) every group of an untrained policy has zero variance
        assert values[0] >= 0.5
    if name == "vcrl":
        assert records[0]["resampled_groups"] > 0
    if name == "forking-tokens":  # the top 20% of tokens by entropy (ties may keep a few more)
        assert all(0.15 <= v <= 0.5 for v in values)


def test_a_plugin_name_or_setting_that_is_not_registered_is_refused_in_one_line() -> None:
    from dataclasses import replace

    bad = replace(BUILTIN.get("qae"), advantage="qea")
    with pytest.raises(ReproError) as err:
        plugin_set(bad, BUILTIN_CATALOG)
    assert "unknown advantage plug-in 'qea'; registered:" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ReproError, match="has no setting kk"):
        plugin_set(replace(BUILTIN.get("qae"), plugin_args={"advantage": {"kk": 1.0}}), BUILTIN_CATALOG)
    with pytest.raises(ReproError, match="plugin_args for batch but no plug-in"):
        plugin_set(replace(BUILTIN.get("qae"), plugin_args={"batch": {"kappa": 1.0}}), BUILTIN_CATALOG)
    dapo = plugin_set(BUILTIN.get("dapo"), BUILTIN_CATALOG)  # dynamic sampling is the built-in batch plug-in
    assert dapo.batch is not None and dapo.batch.name == "dapo_filter"
