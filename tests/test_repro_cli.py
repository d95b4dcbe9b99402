"""`radar repro ...` end to end: a real tiny run (real TRL, real model) on CPU, then the run's
life cycle: a killed worker is marked failed with its log, cancel stops a running run."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
import torch

from radar.repro import runner
from radar.repro.policy import cached_policy, get_size
from radar.repro.tasks import get_task
from radar.store import Workspace
from tests.cli_helpers import run_cli


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """A workspace whose sorting/tiny warm start is already cached (a few seconds to train)."""
    workspace, _ = Workspace.init(tmp_path_factory.mktemp("repro") / "ws")
    cached_policy(
        runner.policy_cache_dir(workspace),
        get_task("sorting"),
        get_size("tiny"),
        torch.device("cpu"),
        log=lambda _: None,
    )
    return workspace


def _wait(ws: Workspace, run_id: str, cond, timeout: float = 120.0) -> dict:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = runner.get(ws, run_id)
        if cond(run):
            return run
        time.sleep(0.3)
    raise AssertionError(f"run {run_id} never reached the expected state: {runner.get(ws, run_id)}")


@pytest.mark.parametrize(
    "argv",
    [["repro", "--help"], *[["repro", c, "--help"] for c in ("run", "list", "show", "methods", "export", "cancel")]],
)
def test_help(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    result = run_cli(capsys, *argv)
    assert result.code == 0 and "usage:" in result.out


def test_methods_and_errors(capsys: pytest.CaptureFixture[str], ws: Workspace) -> None:
    result = run_cli(capsys, "--workspace", str(ws.root), "repro", "methods", "--json")
    names = {m["name"]: m for m in result.json()}
    assert {"grpo", "dr_grpo", "dapo", "gspo", "cispo", "sapo", "gmpo"} <= set(names)
    assert names["dapo"]["arxiv"] == "2503.14476" and names["gmpo"]["loss_plugin"] == "gmpo"
    bad = run_cli(capsys, "--workspace", str(ws.root), "repro", "run", "--method", "nope")
    assert bad.code == 1 and "unknown method 'nope'" in bad.err and "dapo" in bad.err
    assert len(bad.err.strip().splitlines()) == 1
    missing = run_cli(capsys, "--workspace", str(ws.root), "repro", "show", "no-such-run")
    assert missing.code == 1 and "radar repro list" in missing.err


@pytest.mark.slow
def test_tiny_run_end_to_end(capsys: pytest.CaptureFixture[str], ws: Workspace) -> None:
    result = run_cli(
        capsys,
        "--workspace",
        str(ws.root),
        "repro",
        "run",
        "--method",
        "dapo",
        "--baseline",
        "grpo",
        "--task",
        "sorting",
        "--seeds",
        "2",
        "--steps",
        "8",
        "--device",
        "auto",
        "--json",
    )
    assert result.code == 0, result.err
    doc = result.json()
    assert set(doc) >= {"id", "status", "verdict", "metrics", "plots"}
    assert doc["status"] == "done"
    v = doc["verdict"]
    assert v["overall"] in ("better", "worse", "mixed", "no clear difference")
    assert v["final_reward"]["seeds"] == [0, 1] and len(v["final_reward"]["ci"]) == 2
    assert v["claim"]["status"] in ("holds", "refuted", "inconclusive")
    assert doc["metrics"]["device"] == "cpu" and doc["metrics"]["steps_per_s"] > 0
    assert all(Path(p).read_bytes()[:4] == b"\x89PNG" for p in doc["plots"])
    folder = ws.run_dir(doc["id"])
    record = json.loads((folder / "run.json").read_text())
    assert record["configs"]["baseline"]["loss_type"] == "grpo" and record["configs"]["baseline"]["beta"] > 0
    assert record["configs"]["method"]["epsilon_high"] == 0.28 and record["configs"]["method"]["num_iterations"] > 1
    assert record["git_commit"] and record["packages"]["trl"].startswith("1.")
    lines = (folder / "metrics" / "method-seed1.jsonl").read_text().splitlines()
    steps = [json.loads(line) for line in lines]
    assert [s["step"] for s in steps] == list(range(1, 9))
    assert {"correct", "entropy", "reward_std", "frac_reward_zero_std", "clip_ratio", "time"} <= set().union(*steps)

    shown = run_cli(capsys, "--workspace", str(ws.root), "repro", "show", doc["id"], "--json").json()
    assert shown["verdict"] == doc["verdict"]
    listed = run_cli(capsys, "--workspace", str(ws.root), "repro", "list", "--json").json()
    assert doc["id"] in [r["id"] for r in listed]
    human = run_cli(capsys, "--workspace", str(ws.root), "repro", "show", doc["id"])
    assert "dapo vs grpo" in human.out
    for engine in ("trl", "verl"):
        exported = run_cli(
            capsys, "--workspace", str(ws.root), "repro", "export", doc["id"], "--engine", engine, "--json"
        ).json()
        assert all(Path(p).exists() for p in exported["files"])
    verl = (folder / "export" / "verl" / "launch.sh").read_text()
    assert "actor_rollout_ref.actor.clip_ratio_high=0.28" in verl and "kl_loss_coef=0.04" in verl
    trl_script = folder / "export" / "trl" / "train_grpo.py"
    compile(trl_script.read_text(), str(trl_script), "exec")


@pytest.mark.slow
def test_killed_run_is_marked_failed_with_its_log(
    capsys: pytest.CaptureFixture[str], ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RADAR_REPRO_ARMS_AT_ONCE", "2")  # both arms in child processes, whatever the load
    result = run_cli(
        capsys,
        "--workspace",
        str(ws.root),
        "repro",
        "run",
        "--method",
        "gspo",
        "--task",
        "sorting",
        "--seeds",
        "1",
        "--steps",
        "5000",
        "--background",
        "--json",
    )
    run_id = result.json()["id"]
    run = _wait(ws, run_id, lambda r: r["status"] == "running" and r["progress"] > 0)
    os.kill(run["pid"], signal.SIGKILL)
    run = _wait(ws, run_id, lambda r: r["status"] != "running", timeout=30)
    assert run["status"] == "failed" and "log.txt" in run["error"]
    assert "training" in run["result"]["log_tail"]
    listed = run_cli(capsys, "--workspace", str(ws.root), "repro", "list", "--status", "running", "--json").json()
    assert run_id not in [r["id"] for r in listed]
    # the arms' child processes (parallel CPU arms) notice their worker is gone and exit
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _children_of(run["pid"]):
        time.sleep(0.5)
    assert not _children_of(run["pid"])


def _children_of(pid: int) -> list[int]:
    """Live processes whose parent was ``pid`` (re-parented orphans are found by their spawn args)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            cmd = stat.read_bytes().decode(errors="replace")
            state = (stat.parent / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if "multiprocessing" in cmd and "spawn_main" in cmd and state not in ("Z", "X"):
            try:
                environ = (stat.parent / "environ").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if f"RADAR_REPRO_PARENT={pid}" in environ:
                found.append(int(stat.parent.name))
    return found


@pytest.mark.slow
def test_cancel_running_and_queued(
    capsys: pytest.CaptureFixture[str], ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RADAR_REPRO_ARMS_AT_ONCE", "2")
    result = run_cli(
        capsys,
        "--workspace",
        str(ws.root),
        "repro",
        "run",
        "--method",
        "dr_grpo",
        "--task",
        "sorting",
        "--seeds",
        "1",
        "--steps",
        "5000",
        "--background",
        "--json",
    )
    run_id = result.json()["id"]
    _wait(ws, run_id, lambda r: r["status"] == "running" and r["progress"] > 0)
    assert run_cli(capsys, "--workspace", str(ws.root), "repro", "cancel", run_id).code == 0
    run = _wait(ws, run_id, lambda r: r["status"] != "running", timeout=60)
    assert run["status"] == "cancelled" and run["progress"] < 1.0

    queued = runner.submit(ws, runner.RunSpec(method="dapo", task="sorting", seeds=1, steps=5))
    assert runner.cancel(ws, queued)["status"] == "cancelled"


def test_sigterm_marks_failed(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker told to stop (SIGTERM, e.g. a shutdown) records failed itself, not via the reaper."""
    monkeypatch.setenv("RADAR_REPRO_ARMS_AT_ONCE", "1")  # the in-process path (the others test children)
    run_id = runner.submit(ws, runner.RunSpec(method="cispo", task="sorting", seeds=1, steps=5000))
    proc = runner.start(ws, run_id)
    _wait(ws, run_id, lambda r: r["status"] == "running" and r["progress"] > 0)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 1
    run = runner.get(ws, run_id, reap_first=False)
    assert run["status"] == "failed" and "SIGTERM" in run["error"]
