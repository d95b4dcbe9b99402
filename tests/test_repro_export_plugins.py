"""Exports of plug-in presets, and exports of hostile runs.

verl: the launcher registers radar's plug-ins through verl's own ``register_adv_est`` / ``register_policy_loss`` and
the config names what it registered. Checked against verl 0.9.1's source (tests/fixtures/verl/core_algos_api.json:
its registry functions and ``agg_loss`` verbatim, the keyword arguments its trainer passes): the launcher runs on
that registry code, and the registered functions are called as verl calls them.

Hostile runs (a copied workspace): ids, task names, paths and settings that are code in every field an export
reads; the exported scripts' ``--help`` runs no planted command, and nothing is written outside the export folder.
"""

from __future__ import annotations

import ast
import inspect
import json
import shlex
import subprocess
import sys
import types
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
import torch

from radar.repro.errors import ReproError
from radar.repro.export import export_run
from radar.repro.methods import BUILTIN
from radar.repro.plugins import BUILTIN_CATALOG
from radar.repro.plugins.points import AdvantageInputs, aggregate
from radar.repro.records import RunRecord
from tests.test_repro_export import DEFAULTS, _check_keys, _launch_overrides, _math_record, _run, _toy_record

ROOT = Path(__file__).resolve().parents[1]
API = json.loads((ROOT / "tests" / "fixtures" / "verl" / "core_algos_api.json").read_text())


def _verl_registry() -> types.ModuleType:
    """verl 0.9.1's own registry code (the fixture's verbatim source) as ``verl.trainer.ppo.core_algos``."""
    module = types.ModuleType("verl.trainer.ppo.core_algos")
    masked_sum = types.SimpleNamespace(masked_sum=lambda values, mask, axis=None: (values * mask).sum(axis=axis))
    namespace = module.__dict__ | {
        "Enum": Enum,
        "Any": Any,
        "Callable": Any,
        "Optional": Any,
        "torch": torch,
        "PolicyLossFn": Any,
        "AdvantageEstimator": Enum,
        "verl_F": masked_sum,
    }
    for source in API["registry_source"]:
        exec(compile(source, "verl/trainer/ppo/core_algos.py", "exec"), namespace)  # noqa: S102 - verl's code
    module.__dict__.update(namespace)
    return module


def test_verl_export_registers_plugins_through_verls_registries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # noqa: E501
    run = _math_record(tmp_path, "gpg", "grpo", "/models/qwen2.5-0.5b-instruct")
    out = tmp_path / "out"
    export_run(run, "verl", out, 4, runs_root=tmp_path)
    launch = (out / "launch.sh").read_text()
    method, baseline = _launch_overrides(launch)
    for overrides in (method, baseline):
        _check_keys(overrides, DEFAULTS)  # external_lib and the loss_mode/adv_estimator keys are verl's own
    assert "python3 radar_verl_plugins.py" in launch and "python3 -m verl.trainer.main_ppo" in launch  # baseline
    assert method["algorithm.adv_estimator"] == "radar_method_gpg"
    assert method["actor_rollout_ref.actor.policy_loss.loss_mode"] == "radar_method_gpg"
    assert method["actor_rollout_ref.model.external_lib"] == "radar_verl_plugins"
    assert "actor_rollout_ref.model.external_lib" not in baseline and baseline["algorithm.adv_estimator"] == "grpo"
    assert API["hf_model_config_imports_external_lib"]  # verl imports external_lib in every worker's model config
    spec = json.loads((out / "radar_plugins.json").read_text())
    assert [e["registered"] for e in spec["adv_estimator"]] == ["radar_method_gpg"]
    assert [e["registered"] for e in spec["policy_loss"]] == ["radar_method_gpg"]

    # the launcher imports verl's own register functions by name, and defines nothing from stored text
    tree = ast.parse((out / "radar_verl_plugins.py").read_text())
    imported = {
        a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module == "verl.trainer.ppo.core_algos"
        for a in n.names
    }
    assert imported == {"agg_loss", "register_adv_est", "register_policy_loss"}
    assert all(name in "".join(API["registry_source"]) for name in (f"def {n}(" for n in imported))

    # registered on verl's own registry code, called with the keyword arguments verl's trainer passes
    monkeypatch.setitem(sys.modules, "verl", types.ModuleType("verl"))
    core = _verl_registry()
    monkeypatch.setitem(sys.modules, "verl.trainer.ppo.core_algos", core)
    monkeypatch.syspath_prepend(str(out))
    monkeypatch.delitem(sys.modules, "radar_verl_plugins", raising=False)
    __import__("radar_verl_plugins")
    estimate = core.get_adv_estimator_fn("radar_method_gpg")
    scores = torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    mask = torch.ones(6, 3)
    rewards = torch.zeros(6, 3)
    rewards[:, -1] = scores
    uids = ["a", "b", "a", "b", "c", "c"]  # verl's uids: groups need not be contiguous
    kwargs = dict.fromkeys(API["adv_kwargs"]) | {"token_level_rewards": rewards, "response_mask": mask, "index": uids}
    assert set(kwargs) <= set(inspect.signature(estimate).parameters) | {"index"}
    advantages, _ = estimate(**kwargs)
    gpg = BUILTIN_CATALOG.get("advantage", "gpg").function()
    expected = gpg(
        AdvantageInputs(
            torch.tensor([1.0, 0, 0, 1, 1, 1]),
            torch.tensor([1.0, 0, 0, 1, 1, 1]),
            torch.full((6,), 3.0),
            2,
            {"f_norm": 1.0},
        )
    ).advantages  # a,a,b,b,c,c order
    assert advantages[:, 0].tolist() == pytest.approx([expected[i].item() for i in (0, 2, 1, 3, 4, 5)])
    loss_fn = core.get_policy_loss_fn("radar_method_gpg")
    logp = torch.log(torch.full((2, 3), 0.5))
    adv = torch.tensor([[2.0] * 3, [-1.0] * 3])
    config = types.SimpleNamespace(clip_ratio=0.2, clip_ratio_low=0.2, clip_ratio_high=0.2, global_batch_info={})
    call = dict.fromkeys(API["policy_loss_kwargs"]) | {
        "old_log_prob": logp,
        "log_prob": logp,
        "advantages": adv,
        "response_mask": torch.ones(2, 3),
        "loss_agg_mode": "token-mean",
        "config": config,
    }
    value, metrics = loss_fn(**call)
    assert value.item() == pytest.approx(aggregate(-logp * adv, torch.ones(2, 3), "token-mean").item())  # -A log pi


def test_every_verl_route_plugin_runs_on_verls_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each plug-in that declares a verl route wraps into verl's signatures (the loss through verl's agg_loss)."""
    from radar.repro.verl_plugins import advantage_estimator, policy_loss

    core = _verl_registry()
    rewards = torch.zeros(8, 2)
    rewards[:, -1] = torch.tensor([1.0, 0.0, 1.1, 0.1, 0.0, 1.0, 1.0, 1.1])
    for plugin in (p for p in BUILTIN_CATALOG.all() if p.verl == "adv_estimator"):
        adv, _ = advantage_estimator(plugin.name, {})(rewards, torch.ones(8, 2), index=["x"] * 4 + ["y"] * 4)
        assert adv.shape == (8, 2) and torch.isfinite(adv).all(), plugin.name
    config = types.SimpleNamespace(clip_ratio=0.2, clip_ratio_low=None, clip_ratio_high=0.28, global_batch_info={})
    logp = torch.log(torch.tensor([[0.5, 0.4], [0.3, 0.2]]))
    for plugin in (p for p in BUILTIN_CATALOG.all() if p.verl == "policy_loss"):
        value, _ = policy_loss(plugin.name, {}, core.agg_loss)(
            logp - 0.1, logp, torch.tensor([[1.0] * 2, [-1.0] * 2]), torch.ones(2, 2), "token-mean", config, None
        )
        assert value.dim() == 0 and torch.isfinite(value), plugin.name


# -- hostile runs ------------------------------------------------------------------------------------------------
EVIL = 'x"""+__import__("os").system("touch PWNED")+"""'
EVIL_PATH = "/tmp/a b'$(touch PWNED)`touch PWNED`\n; touch PWNED"


def _hostile(run: RunRecord, tmp_path: Path) -> RunRecord:
    """The run with code in every free-text field an export reads: its id, its warm starts' paths, its recorded
    settings and its data set path (method and baseline stay known names: unknown ones are refused first)."""
    folder = Path(run.params["folder"])
    record = json.loads((folder / "run.json").read_text())
    for i, p in enumerate(record["policies"]):
        p["path"] = f"{EVIL_PATH}{i}"
    record["policy"] = record["policies"][0]
    for cfg in record["configs"].values():
        cfg["lr_scheduler_type"] = EVIL
        cfg["report_to"] = EVIL
    (folder / "run.json").write_text(json.dumps(record))
    return RunRecord(id=EVIL, kind="repro", status="done", params=run.params | {"dataset_path": EVIL_PATH})


def test_hostile_ids_paths_and_settings_never_run_and_stay_in_the_export_folder(tmp_path: Path) -> None:
    run = _hostile(_toy_record(tmp_path, "qae", "grpo"), tmp_path)
    out = tmp_path / "out"
    written = export_run(run, "trl", out, 1, runs_root=tmp_path)
    assert all(p.parent == out.resolve() for p in written)
    for script in ("train_grpo.py",):
        text = (out / script).read_text()
        assert "PWNED" not in text and "__import__" not in text  # nothing stored is in the code
        ast.parse(text)
        done = subprocess.run([sys.executable, script, "--help"], cwd=out, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "--arm" in done.stdout, done.stderr[-2000:]
    spec = json.loads((out / "export.json").read_text())
    assert spec["run_id"] == EVIL and spec["policies"]["0"] == f"{EVIL_PATH}0"  # kept as data
    launch = (out / "launch.sh").read_text()
    assert "PWNED" not in launch
    subprocess.run(["bash", "-n", str(out / "launch.sh")], check=True)
    assert not list(tmp_path.rglob("PWNED")) and not (ROOT / "PWNED").exists()


def test_hostile_checkpoint_run_to_verl_keeps_code_out_of_every_file(tmp_path: Path) -> None:
    run = _math_record(tmp_path, "pspo", "grpo", EVIL_PATH)
    run = RunRecord(id=EVIL, kind="repro", status="done", params=run.params | {"task": "math"})
    out = tmp_path / "out"
    export_run(run, "verl", out, 4, runs_root=tmp_path)
    for name in ("radar_reward.py", "radar_verl_plugins.py"):
        text = (out / name).read_text()
        assert "PWNED" not in text
        ast.parse(text)
    done = subprocess.run(
        [sys.executable, "radar_verl_plugins.py", "--help"], cwd=out, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "radar_method_pspo" in done.stdout, done.stderr[-2000:]
    launch = (out / "launch.sh").read_text()
    subprocess.run(["bash", "-n", str(out / "launch.sh")], check=True)
    words = shlex.split(launch, comments=True)  # as the shell splits it: the path is one word, whatever it holds
    paths = [w for w in words if w.startswith("actor_rollout_ref.model.path=")]
    assert len(paths) == 2 and all("touch PWNED" in w for w in paths)
    assert not any("PWNED" in w for w in words if w not in paths)
    assert "PWNED" not in "\n".join(line for line in launch.splitlines() if line.startswith("#"))
    assert not list(tmp_path.rglob("PWNED"))


def test_a_run_folder_outside_the_workspace_is_refused_in_one_line(tmp_path: Path) -> None:
    """A copied workspace whose runs table points a run at another folder: the export writes nothing there."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = _toy_record(elsewhere, "qae", "grpo")
    runs = tmp_path / "ws" / "runs"
    runs.mkdir(parents=True)
    with pytest.raises(ReproError) as err:
        export_run(run, "trl", None, 1, runs_root=runs)
    assert "outside this workspace's runs folder" in str(err.value) and "\n" not in str(err.value)
    assert not (elsewhere / "run" / "export").exists()
    link = runs / "linked"
    link.symlink_to(elsewhere / "run")  # a run folder inside runs/ that is a link out of it
    with pytest.raises(ReproError, match="outside this workspace's runs folder"):
        export_run(_run(run.params | {"folder": str(link)}), "trl", None, 1, runs_root=runs)
    inside = _toy_record(runs, "qae", "grpo")  # runs/run: the default export folder is runs/run/export/trl
    written = export_run(inside, "trl", None, 1, runs_root=runs)
    assert all((runs / "run" / "export" / "trl").resolve() in p.parents for p in written)


def test_unknown_method_names_in_a_stored_run_are_refused_before_any_file(tmp_path: Path) -> None:
    run = _toy_record(tmp_path, "qae", "grpo")
    bad = _run(run.params | {"method": "../../evil"})
    with pytest.raises(ReproError, match="unknown method '../../evil'"):
        export_run(bad, "trl", tmp_path / "out", 1, runs_root=tmp_path)
    assert not (tmp_path / "out").exists()
    assert BUILTIN.get("qae").advantage == "qae"
