"""Each method preset maps onto a valid TRL GRPOConfig (and a verl config) with the paper's knobs."""

from __future__ import annotations

from pathlib import Path

import pytest

from radar.repro.errors import ReproError
from radar.repro.export import verl_overrides
from radar.repro.methods import METHODS, describe, get_method, settings
from radar.repro.policy import SIZES, get_size
from radar.repro.tasks import TASKS, get_task
from radar.repro.trainer import LOSS_PLUGINS, build_config, overlong_buffer, reward_functions

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


def test_grpo_baseline_overrides_trl_defaults_and_is_kl_free(tmp_path: Path) -> None:
    cfg = _config("grpo", tmp_path)
    assert cfg.loss_type == "grpo"  # TRL's default is "dapo"
    assert cfg.beta == 0.0  # KL-free, like every other preset: a verdict never mixes a method with "no KL"
    assert cfg.scale_rewards == "group"
    assert get_method("grpo").arxiv == "2402.03300"
    assert _config("grpo-kl", tmp_path).beta == 0.04
    assert all(m.config.get("beta", 0.0) == 0.0 for m in METHODS.values() if m.name != "grpo-kl")
    assert "bnpo" not in METHODS  # TRL's "bnpo" is not BNPO (2506.02864): removed rather than mislabelled


def _real_difference(name: str, tmp_path: Path) -> set[str]:
    """Settings where the preset's GRPOConfig (and reward shaping, loss plug-in) differ from its baseline's."""
    method = get_method(name)
    base = get_method(method.baseline)
    a, b = _config(name, tmp_path).to_dict(), _config(base.name, tmp_path).to_dict()
    changed = {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)}
    extra = {k for k in ("overlong_shaping", "loss_plugin") if settings(method)[k] != settings(base)[k]}
    return changed | extra


@pytest.mark.parametrize("name", sorted(n for n, m in METHODS.items() if m.baseline))
def test_declared_changes_equal_the_real_difference(name: str, tmp_path: Path) -> None:
    method = get_method(name)
    assert method.baseline in METHODS and method.deviations
    assert set(method.changes) == _real_difference(name, tmp_path)


def test_one_change_presets_and_claim_baselines() -> None:
    assert get_method("grpo-kl").changes == ("beta",)
    assert get_method("dapo-clip-higher").changes == ("epsilon_high",)
    assert get_method("luspo").baseline == "gspo"  # LUSPO's claim is about GSPO's length collapse
    for m in METHODS.values():
        for claim in (m.claim, m.claim.also):
            if claim is not None and claim.direction in ("higher", "lower"):
                assert claim.min_effect > 0, m.name


def test_cispo_uses_minimax_m1_bounds_not_trls_cap(tmp_path: Path) -> None:
    cfg = _config("cispo", tmp_path)
    assert cfg.loss_type == "cispo" and cfg.epsilon_high == pytest.approx(1.28)  # cap 1 + eps_high_IS
    o = verl_overrides(get_method("cispo"), PARAMS, "/m")
    assert o["actor_rollout_ref.actor.clip_ratio_high"] == pytest.approx(0.28)  # verl clamps to 1 + high
    assert o["actor_rollout_ref.actor.clip_ratio_low"] == 1.0  # no lower bound


@pytest.mark.parametrize("task", sorted(TASKS))
def test_dapo_overlong_buffer_fits_the_completion_budget(task: str, tmp_path: Path) -> None:
    t = get_task(task)
    buffer = overlong_buffer(t)
    assert buffer >= 4 and t.max_completion_tokens - buffer >= t.max_answer_chars + 1  # no answer is punished
    from radar.repro.policy import build_tokenizer

    funcs = reward_functions(get_method("dapo"), t, build_tokenizer(t))
    assert len(funcs) == 3
    punish = funcs[2]
    eos = build_tokenizer(t).eos_token_id
    longest = [[5] * t.max_answer_chars + [eos]]
    assert punish(prompts=["p"], completions=["x"], completion_ids=longest) == [0.0]
    rambling = [[5] * t.max_completion_tokens]
    assert punish(prompts=["p"], completions=["x"], completion_ids=rambling)[0] < -0.5


def test_paper_hyperparameters(tmp_path: Path) -> None:
    dapo = _config("dapo", tmp_path)
    assert (dapo.epsilon, dapo.epsilon_high, dapo.beta, dapo.loss_type) == (0.2, 0.28, 0.0, "dapo")
    assert get_method("dapo").overlong_shaping
    gspo = _config("gspo", tmp_path)
    assert gspo.importance_sampling_level == "sequence" and (gspo.epsilon, gspo.epsilon_high) == (3e-4, 4e-4)
    dr = _config("dr_grpo", tmp_path)
    assert dr.loss_type == "dr_grpo" and dr.scale_rewards == "none" and dr.beta == 0.0
    assert _config("cispo", tmp_path).loss_type == "cispo"
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
        ("grpo", "seq-mean-token-mean", "vanilla", False),
        ("grpo-kl", "seq-mean-token-mean", "vanilla", True),
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
