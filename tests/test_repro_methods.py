"""Each method preset maps onto a valid TRL GRPOConfig (and a verl config) with the paper's knobs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from radar.repro.errors import ReproError
from radar.repro.export import verl_overrides
from radar.repro.methods import BUILTIN, METHODS, describe, settings
from radar.repro.plugins import BUILTIN_CATALOG
from radar.repro.policy import SIZES, get_size
from radar.repro.runs_table import Runs
from radar.repro.tasks import TASKS, get_task
from radar.repro.trainer import build_config, overlong_buffer, reward_functions

ROOT = Path(__file__).resolve().parents[1]

PARAMS = {"task": "addition", "preset": "tiny", "total_steps": 10, "seeds": 1}
get_method = BUILTIN.get


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
    for point, plugin in method.plugins().items():
        assert (point, plugin) in BUILTIN_CATALOG.plugins, (name, point, plugin)
    assert describe(method).name == name


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
    own = ("overlong_shaping", "dynamic_sampling", "loss_plugin", "advantage", "batch", "plugin_args")
    extra = {k for k in own if settings(method).get(k) != settings(base).get(k)}
    return changed | extra


@pytest.mark.parametrize("name", sorted(n for n, m in METHODS.items() if m.baseline))
def test_declared_changes_equal_the_real_difference(name: str, tmp_path: Path) -> None:
    method = get_method(name)
    assert method.baseline in METHODS and method.deviations
    assert set(method.changes) == _real_difference(name, tmp_path)


def test_presets_without_new_plugins_keep_their_settings_and_keys() -> None:
    """The advantage and batch points came later: a preset that fills neither has the settings (and so the run
    dedupe key) it had before them: nothing already queued or done is asked for again."""
    assert set(settings(get_method("dapo"))) == set(get_method("dapo").config) | {
        "overlong_shaping",
        "dynamic_sampling",
        "loss_plugin",
    }
    assert settings(get_method("qae"))["advantage"] == "qae" and "batch" not in settings(get_method("qae"))


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
    assert buffer >= 4 and buffer == t.buffer
    if not t.overlong_buffer:  # the default buffer punishes no well-formed answer (addition-work's reaches them)
        assert t.max_completion_tokens - buffer >= t.max_answer_chars + 1
    from radar.repro.policy import build_tokenizer

    funcs = reward_functions(get_method("dapo"), t, build_tokenizer(t))
    assert len(funcs) == 3
    punish = funcs[2]
    eos = build_tokenizer(t).eos_token_id
    longest = [[5] * (t.max_completion_tokens - buffer - 1) + [eos]]
    assert punish(prompts=["p"], completions=["x"], completion_ids=longest) == [0.0]
    rambling = [[5] * t.max_completion_tokens]
    assert punish(prompts=["p"], completions=["x"], completion_ids=rambling)[0] < -0.5


def test_paper_hyperparameters(tmp_path: Path) -> None:
    dapo = _config("dapo", tmp_path)
    assert (dapo.epsilon, dapo.epsilon_high, dapo.beta, dapo.loss_type) == (0.2, 0.28, 0.0, "dapo")
    assert get_method("dapo").overlong_shaping and get_method("dapo").dynamic_sampling
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


# -- user presets ([[repro.presets]] in radar.toml) ---------------------------------------------------------
EPS03 = {
    "name": "dapo-eps03",
    "base": "dapo",
    "settings": {"epsilon_high": 0.3},
    "arxiv": "2503.14476",
    "claim": "a wider upper clip keeps entropy higher",
}


def test_user_preset_is_its_base_plus_the_settings_that_differ(tmp_path: Path) -> None:
    from radar.repro.methods import user_preset

    m = user_preset(EPS03)
    assert m.baseline == "grpo" and m.overlong_shaping and m.arxiv == "2503.14476"
    assert m.config == get_method("dapo").config | {"epsilon_high": 0.3}
    cfg = build_config(m, get_size("tiny"), get_task("addition"), steps=10, seed=0, output_dir=tmp_path, device="cpu")
    assert cfg.epsilon_high == 0.3 and cfg.loss_type == "dapo"
    # declared changes equal the real difference from the baseline, as for the built-ins
    base = build_config(
        get_method("grpo"), get_size("tiny"), get_task("addition"), steps=10, seed=0, output_dir=tmp_path, device="cpu"
    )
    a, b = cfg.to_dict(), base.to_dict()
    real = {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)} | {"overlong_shaping", "dynamic_sampling"}
    assert set(m.changes) == real
    check = user_preset(EPS03 | {"check": {"metric": "entropy", "direction": "higher", "min_effect": 0.02}})
    assert (check.claim.metric, check.claim.direction, check.claim.min_effect) == ("entropy", "higher", 0.02)
    assert user_preset(EPS03 | {"name": "kl-vs-dapo", "baseline": "dapo"}).baseline == "dapo"


def test_user_preset_settings_are_trl_fields_and_plugins_are_known() -> None:
    import dataclasses

    from trl import GRPOConfig

    from radar.repro.methods import CHOICES, PRESET_SETTINGS
    from radar.repro.user_presets import PLUGIN_ARGS, PLUGIN_SETTINGS

    fields = {f.name for f in dataclasses.fields(GRPOConfig)}
    assert set(PRESET_SETTINGS) - {"overlong_shaping", "dynamic_sampling", *PLUGIN_SETTINGS, *PLUGIN_ARGS} <= fields
    assert "loss_plugin" not in CHOICES  # plug-in names are checked against the plug-in catalog (not a fixed list)
    shared = {"max_steps", "learning_rate", "per_device_train_batch_size", "num_generations", "num_iterations"}
    assert not shared & set(PRESET_SETTINGS)  # both arms keep the run's batch shape and step count


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (
            {"settings": {"learning_rate": 1e-4}},
            "unknown setting(s) learning_rate in [[repro.presets]] 'dapo-eps03'; valid settings: advantage, "
            "advantage_args, batch, batch_args, beta, delta, dynamic_sampling, epsilon,",
        ),
        ({"settings": {"loss_type": "ppo"}}, "loss_type = 'ppo' is not one of 'grpo', 'dr_grpo'"),
        ({"settings": {"beta": "high"}}, "setting beta must be a number"),
        (
            {"settings": {"advantage": "qea"}},
            "setting advantage: unknown advantage plug-in 'qea'; registered: gpg, ngrpo, opo, passk, qae,",
        ),
        ({"settings": {"loss_plugin": "ppo"}}, "unknown ratio/loss plug-in 'ppo'; registered: ce_gppo, clip_cov,"),
        ({"settings": {"advantage": "qae", "advantage_args": {"kk": 1}}}, "has no setting kk; valid: k"),
        ({"settings": {"loss_args": {"alpha": 1}}}, "loss_args needs a ratio/loss plug-in (set it in settings)"),
        ({"settings": {"advantage": "qae", "advantage_args": {"k": "x"}}}, "advantage_args.k must be a number"),
        ({"settings": {}}, "settings must be a non-empty table"),
        ({"name": "dapo"}, "clashes with a built-in preset"),
        ({"name": "Bad Name!"}, "must be 1-40 lower-case letters"),
        ({"base": "ppo"}, "base 'ppo' is not a built-in preset; choose one of: grpo"),
        ({"baseline": "nope"}, "baseline 'nope' is not a built-in preset"),
        ({"arxiv": "dapo paper"}, "is not an arXiv id"),
        ({"lr": 1}, "unknown key(s) lr in [[repro.presets]] 'dapo-eps03'; valid keys: name, base, settings"),
        ({"check": {"metric": "vibes", "direction": "higher", "min_effect": 1}}, "check metric 'vibes' is not one of"),
        ({"check": {"metric": "entropy", "direction": "higher"}}, "needs a minimum effect"),
        ({"check": {"metric": "heldout", "direction": "not_lower", "margin": "2 points"}}, "margin must be a number"),
    ],
)
def test_bad_user_presets_are_refused_in_one_line(change: dict, needle: str) -> None:  # type: ignore[type-arg]
    from radar.repro.methods import user_preset

    with pytest.raises(ReproError) as err:
        user_preset(EPS03 | change)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_user_presets_form_a_catalog_value_that_travels_with_a_run() -> None:
    """The presets are a value built from the settings (no registry): another catalog knows nothing of radar.toml's
    presets, and a recorded run's params rebuild its own."""
    from radar.repro.methods import catalog, user_presets
    from radar.repro.spec import make_spec, spec_of

    with pytest.raises(ReproError, match="defined twice"):
        user_presets([EPS03, EPS03])
    mine = catalog([EPS03])
    assert mine.get("dapo-eps03").config["epsilon_high"] == 0.3 and "dapo-eps03" not in BUILTIN
    assert mine.definitions("dapo-eps03", "grpo") == [EPS03]  # built-ins need no definition
    assert [d.source for d in mine.describe() if d.name == "dapo-eps03"] == ["radar.toml"]
    with pytest.raises(ReproError, match="unknown method 'dapo-eps03'"):
        make_spec(BUILTIN, method="dapo-eps03")  # a worker knows only what the run's params carry
    spec = spec_of({"method": "dapo-eps03", "baseline": "grpo", "user_presets": [EPS03], "seeds": 2})
    assert spec.method == "dapo-eps03" and spec.seeds == 2 and spec.task == "addition"
    with pytest.raises(TypeError):
        mine.methods["x"] = get_method("grpo")  # type: ignore[index]  # a value: read-only


def test_user_preset_fills_plug_in_points_with_settings() -> None:
    """A radar.toml preset can name plug-ins and change their settings; its changes against the baseline list them."""
    from radar.repro.methods import user_preset

    qae6 = user_preset(
        {"name": "qae-k06", "base": "qae", "settings": {"advantage_args": {"k": 0.6}}, "arxiv": "2509.22611"}
    )
    assert (qae6.advantage, qae6.plugin_args) == ("qae", {"advantage": {"k": 0.6}})
    assert qae6.changes == ("advantage", "plugin_args") and qae6.levers == BUILTIN.get("qae").levers
    mixed = user_preset({"name": "qae-pspo", "base": "grpo", "settings": {"advantage": "qae", "loss_plugin": "pspo"}})
    assert mixed.plugins() == {"advantage": "qae", "ratio/loss": "pspo"}


def test_two_catalogs_never_see_each_others_definitions() -> None:
    """An old run's preset definition (for its dedupe key) and radar.toml's current one live side by side."""
    from radar.repro.methods import catalog

    old, now = catalog([EPS03 | {"settings": {"epsilon_high": 0.25}}]), catalog([EPS03])
    assert old.get("dapo-eps03").config["epsilon_high"] == 0.25 and now.get("dapo-eps03").config["epsilon_high"] == 0.3
    assert old.settings("dapo-eps03") != now.settings("dapo-eps03")


@pytest.mark.slow  # a detached worker and its arm processes
def test_user_preset_from_radar_toml_runs_through_the_queue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The dashboard button's path: queue a radar.toml preset; the detached `radar repro work` runs it (nobody types
    a command); the worker learns the preset from the run's params; asking again finds it done. The worker's
    processes are real; they train with tests/fast_toy_engine.py (what reaches TRL's GRPOConfig from a user preset
    is tested above, in process)."""
    import json
    import time

    from radar.app import wiring
    from radar.app.context import Radar
    from radar.repro.execute import TOY_ENGINE_ENV
    from radar.store import Workspace
    from tests import fast_toy_engine

    monkeypatch.setenv(TOY_ENGINE_ENV, fast_toy_engine.ENGINE)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))

    ws, _ = Workspace.init(tmp_path / "ws")
    ws.config_path.write_text(
        ws.config_path.read_text() + '\n[repro]\nseeds = 1\nsteps = 2\ntask = "sorting"\ndevice = "cpu"\n\n'
        '[[repro.presets]]\nname = "dapo-eps03"\nbase = "dapo"\narxiv = "2503.14476"\n'
        'claim = "a wider upper clip keeps entropy higher"\nsettings = { epsilon_high = 0.3 }\n'
    )
    queued = wiring.reproductions(Radar.at(ws.root)).reproduce("dapo-eps03", queued_by="test")
    assert queued.new
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        with ws.store() as store:
            run = Runs(store).get_run(queued.run_id)
        if run and not run.active:
            break
        time.sleep(2)
    log = ""
    while time.monotonic() < deadline + 30 and f"{queued.run_id}: done" not in log:  # the worker logs after the run
        log = (ws.runs_dir / "queue.log").read_text()
        time.sleep(0.5)
    assert run and run.status == "done", (run, log)
    assert run.params["user_presets"][0]["name"] == "dapo-eps03" and f"{queued.run_id}: done" in log
    record = json.loads((ws.run_dir(queued.run_id) / "run.json").read_text())
    assert record["engine"] == fast_toy_engine.ENGINE
    methods = record["methods"]
    assert methods["method"]["config"]["epsilon_high"] == 0.3 and methods["baseline"]["config"]["loss_type"] == "grpo"
    assert run.verdict is not None and run.verdict.overall == "too few seeds"
    assert run.verdict.evidence_class == "pipeline check"
    again = wiring.reproductions(Radar.at(ws.root)).reproduce("dapo-eps03", queued_by="test")
    assert (again.status, again.run_id) == ("already done", queued.run_id)


def test_a_built_in_preset_is_written_whole() -> None:
    """The built-in presets are data (repro/presets_*.toml) converted into Methods by msgspec; run.json writes each
    arm's Method with msgspec: every field, its nested claim's and levers' defaults included (what asdict wrote)."""
    import dataclasses

    import msgspec

    from radar.repro.builtin import METHODS

    for method in METHODS.values():
        written = json.loads(msgspec.json.encode(method))
        assert written == json.loads(json.dumps(dataclasses.asdict(method))), method.name
        assert list(written["claim"]) == [f.name for f in dataclasses.fields(method.claim)], method.name
