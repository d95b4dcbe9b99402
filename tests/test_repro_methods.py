"""Each method preset maps onto a valid TRL GRPOConfig (and a verl config) with the paper's knobs."""

from __future__ import annotations

from pathlib import Path

import pytest

from radar.repro.errors import ReproError
from radar.repro.export import verl_overrides
from radar.repro.methods import METHODS, describe, get_method
from radar.repro.policy import SIZES, get_size
from radar.repro.tasks import get_task
from radar.repro.trainer import LOSS_PLUGINS, build_config

PARAMS = {"task": "addition", "preset": "tiny", "total_steps": 10, "seeds": 1}


def _config(name: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    return build_config(
        get_method(name), get_size("tiny"), get_task("addition"), steps=10, seed=0, output_dir=tmp_path, device="cpu"
    )


@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_preset_builds_a_grpo_config(name: str, tmp_path: Path) -> None:
    method = get_method(name)
    cfg = _config(name, tmp_path)
    assert cfg.loss_type == method.config["loss_type"]
    assert cfg.num_iterations > 1, "with mu = 1 all clipping variants coincide (TRL #3120)"
    assert cfg.num_generations >= 2 and cfg.per_device_train_batch_size % cfg.num_generations == 0
    assert not cfg.gradient_checkpointing and cfg.report_to in ([], "none", ["none"])
    assert method.claim.text and method.title
    if method.loss_plugin:
        assert method.loss_plugin in LOSS_PLUGINS
    assert describe(method)["name"] == name


def test_grpo_baseline_overrides_trl_defaults(tmp_path: Path) -> None:
    cfg = _config("grpo", tmp_path)
    assert cfg.loss_type == "grpo"  # TRL's default is "dapo"
    assert cfg.beta > 0  # TRL's default is 0
    assert cfg.scale_rewards == "group"
    assert get_method("grpo").arxiv == "2402.03300"


def test_paper_hyperparameters(tmp_path: Path) -> None:
    dapo = _config("dapo", tmp_path)
    assert (dapo.epsilon, dapo.epsilon_high, dapo.beta, dapo.loss_type) == (0.2, 0.28, 0.0, "dapo")
    assert get_method("dapo").overlong_shaping
    gspo = _config("gspo", tmp_path)
    assert gspo.importance_sampling_level == "sequence" and (gspo.epsilon, gspo.epsilon_high) == (3e-4, 4e-4)
    dr = _config("dr_grpo", tmp_path)
    assert dr.loss_type == "dr_grpo" and dr.scale_rewards == "none" and dr.beta == 0.0
    cispo = _config("cispo", tmp_path)
    assert cispo.loss_type == "cispo" and cispo.epsilon_high == 5.0
    assert _config("sapo", tmp_path).loss_type == "sapo"


def test_unknown_names_list_the_valid_ones() -> None:
    with pytest.raises(ReproError, match="dapo"):
        get_method("ppo2")
    with pytest.raises(ReproError, match="countdown"):
        get_task("chess")
    with pytest.raises(ReproError, match="tiny"):
        get_size("huge")


def test_sizes_have_sane_shapes() -> None:
    for size in SIZES.values():
        assert size.hidden % size.heads == 0 and size.num_iterations > 1 and 0 < size.target_accuracy < 1


@pytest.mark.parametrize(
    ("name", "agg", "loss_mode", "kl"),
    [
        ("grpo", "seq-mean-token-mean", "vanilla", True),
        ("dr_grpo", "seq-mean-token-sum-norm", "vanilla", False),
        ("dapo", "token-mean", "vanilla", False),
        ("gspo", "seq-mean-token-mean", "gspo", False),
        ("cispo", "token-mean", "cispo", False),
        ("gmpo", "seq-mean-token-mean", "geo_mean", False),
    ],
)
def test_verl_mapping(name: str, agg: str, loss_mode: str, kl: bool) -> None:
    o = verl_overrides(get_method(name), PARAMS, "/models/policy")
    assert o["actor_rollout_ref.actor.loss_agg_mode"] == agg
    assert o["actor_rollout_ref.actor.policy_loss.loss_mode"] == loss_mode
    assert o["actor_rollout_ref.actor.use_kl_loss"] is kl
    assert o["algorithm.adv_estimator"] == "grpo"
    assert o["algorithm.norm_adv_by_std_in_grpo"] is (name != "dr_grpo")
    assert o["actor_rollout_ref.actor.ppo_epochs"] > 1
    if name == "dapo":
        assert (o["actor_rollout_ref.actor.clip_ratio_low"], o["actor_rollout_ref.actor.clip_ratio_high"]) == (
            0.2,
            0.28,
        )


def test_verl_refuses_methods_it_lacks() -> None:
    with pytest.raises(ReproError, match="--engine trl"):
        verl_overrides(get_method("vespo"), PARAMS, "/m")
