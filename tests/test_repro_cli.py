"""`radar repro ...` end to end: a real tiny run (real TRL, real model) on CPU, an A/A run, then
the run's life cycle: a killed worker is marked failed with its log, cancel stops a running run, a
foreground run killed by SIGINT/SIGTERM/SIGHUP stops its worker, --device cuda without a GPU fails
before any worker starts, and listing/showing runs never imports torch. Runs are made through the repro
API (app/reproductions.py), as the CLI, the dashboard and weekly make them.

The life-cycle tests that kill, cancel or signal a run (``fast_engine``) and the A/A run train with
tests/fast_toy_engine.py in their real worker and arm processes: what they test is those processes (and, for the
A/A run, the RL seeds the runner hands its arms), and TRL's import (6-9 CPU-s in each process) and training made
them the suite's slowest tests. The tiny run and the worker told to stop by SIGTERM (in the middle of a TRL step,
whose exception transformers wraps) train with TRL; that the real engine trains an arm by its RL seed is checked
in-process (``train_arm`` up to the trainer)."""

from __future__ import annotations

import json
import os
import runpy
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from radar.app import wiring
from radar.app.context import Radar
from radar.app.reproductions import Reproductions
from radar.repro import supervise
from radar.repro.execute import TOY_ENGINE_ENV
from radar.repro.policy import cached_policy, get_size
from radar.repro.records import RunRecord
from radar.repro.runs_table import Runs
from radar.repro.spec import record_path
from radar.repro.tasks import get_task
from radar.repro.toy_arm import ToyArm
from radar.store import Workspace
from tests import fast_toy_engine
from tests.cli_helpers import run_cli
from tests.conftest import shared_dir

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """A workspace whose two sorting/tiny warm starts are already cached (seed pairs 0 and 1). They are trained
    once per run (the pytest-xdist workers share them, see tests/conftest.py shared_dir) and copied in."""
    folder, lock = shared_dir(tmp_path_factory, "repro-warm-starts")
    with lock:
        if not (folder / "complete").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            for pair in (0, 1):
                cached_policy(
                    folder / "cache",
                    get_task("sorting"),
                    get_size("tiny"),
                    torch.device("cpu"),
                    log=lambda _: None,
                    pair=pair,
                )
            (folder / "complete").write_text("built\n")
    workspace, _ = Workspace.init(tmp_path_factory.mktemp("repro") / "ws")
    shutil.copytree(folder / "cache", workspace.policy_cache_dir, dirs_exist_ok=True)
    return workspace


@pytest.fixture
def fast_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's worker and arm processes (real ones) train with tests/fast_toy_engine.py, not TRL."""
    monkeypatch.setenv(TOY_ENGINE_ENV, fast_toy_engine.ENGINE)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))


def _trained_by_the_fast_engine(run: RunRecord) -> bool:
    record = json.loads(record_path(Path(run.params["folder"])).read_text())
    return bool(record.get("engine") == fast_toy_engine.ENGINE)


def _api(ws: Workspace) -> Reproductions:
    return wiring.reproductions(Radar(ws))


def _get(ws: Workspace, run_id: str) -> RunRecord:
    return _api(ws).get(run_id)


def _submit(ws: Workspace, method: str, **fields: object) -> str:
    api = _api(ws)
    return api.submit(api.spec(method, **fields)).id  # type: ignore[arg-type]


def _wait(ws: Workspace, run_id: str, cond, timeout: float = 180.0) -> RunRecord:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = _get(ws, run_id)
        if cond(run):
            return run
        time.sleep(0.3)
    raise AssertionError(f"run {run_id} never reached the expected state: {_get(ws, run_id)}")


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
    noeffect = run_cli(capsys, "--workspace", str(ws.root), "repro", "run", "--method", "dapo", "--effect", "0")
    assert noeffect.code == 1 and "--effect is in points" in noeffect.err
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
        "4",
        "--device",
        "auto",
        "--json",
    )
    assert result.code == 0, result.err
    assert "power: minimum detectable effect" in result.err  # printed before anything trained
    doc = result.json()
    assert set(doc) >= {"id", "status", "verdict", "metrics", "plots", "setup"}
    assert doc["status"] == "done"
    v = doc["verdict"]
    # what a tiny run can support: a pipeline check, with its MDE and each arm's mechanism rates
    assert v["evidence"]["class"] == "pipeline check" and v["evidence"]["power"]["mde"] > 0
    assert v["evidence"]["planned"]["seeds"] == 2 and v["evidence"]["planned"]["noise_source"].startswith("assumed")
    for arm in ("method", "baseline"):
        assert {"clip_high", "clip_low", "zero_var_share", "overlong_rate", "length_slope"} <= set(v["mechanisms"][arm])
    assert (
        v["mechanisms"]["method"]["overlong_rate"] is not None and v["mechanisms"]["baseline"]["overlong_rate"] is None
    )
    assert v["mechanisms"]["method"]["zero_var_trained"] <= v["mechanisms"]["method"]["zero_var_share"]
    lever = v["claim"]["levers"][0]
    assert lever["metric"] == "clip_high" and (v["claim"]["status"] == "not testable here") is (not lever["engaged"])
    assert v["overall"] in ("better", "worse", "mixed", "no clear difference")
    for name in ("heldout_greedy", "heldout_pass1"):
        t = v["metrics"][name]
        assert {"test", "n", "effect", "interval", "p"} <= set(t) and t["n"] == 2 and t["seeds"] == [0, 1]
        assert "paired t" in t["test"] and len(t["interval"]) == 2 and 0 <= t["p"] <= 1
    assert v["seed_noise"]["sd_difference"] is not None and v["seed_noise"]["n"] == 2
    assert v["claim"]["status"] in ("holds", "refuted", "inconclusive", "not testable here")
    overlap = doc["eval_overlap"]
    assert overlap["share"] == 0.0 and overlap["eval"]["prompts"] == overlap["eval"]["distinct"] > 700
    assert overlap["eval"]["in_sft"] == 0
    assert overlap["eval"]["in_rl"] == 0
    assert doc["metrics"]["device"] == "cpu" and doc["metrics"]["steps_per_s"] > 0
    assert all(Path(p).read_bytes()[:4] == b"\x89PNG" for p in doc["plots"])
    folder = ws.run_dir(doc["id"])
    on_disk = json.loads((folder / "verdict.json").read_text())  # the tests survive next to the timing
    assert (
        on_disk["metrics"]["heldout_greedy"] == v["metrics"]["heldout_greedy"]
        and "time_to_verdict_s" in on_disk["timing"]
    )
    # the report's line about it names model, steps and seed pairs, and it never drives an "adopt"
    from radar.reports.recommend import Evidence, decide

    with ws.store() as store:
        (line,) = [r for r in _api(ws).finished(Runs(store)) if r.id == doc["id"]]
    assert "char-level Qwen2" in line.line and "4 steps" in line.line and "2 seed pairs" in line.line
    assert line.evidence_class == "pipeline check" and not line.adoptable and "pipeline check" in line.adoption
    rec = decide(Evidence("DAPO", "test", recent_count=3, count=12, growth=2.0, relevance=0.6, preset="dapo", run=line))
    assert rec.action != "adopt" or rec.rule != "repro-better"
    record = json.loads((folder / "run.json").read_text())
    assert record["configs"]["baseline"]["loss_type"] == "grpo" and record["configs"]["baseline"]["beta"] == 0.0
    assert record["configs"]["method"]["epsilon_high"] == 0.28 and record["configs"]["method"]["num_iterations"] > 1
    assert record["rl_seeds"] == {"method": [0, 1], "baseline": [1000, 1001]}
    assert len({p["path"] for p in record["policies"]}) == 2  # one warm start per seed pair
    assert record["git_commit"] and record["packages"]["trl"].startswith("1.")
    lines = (folder / "metrics" / "method-seed1.jsonl").read_text().splitlines()
    steps = [json.loads(line) for line in lines]
    assert [s["step"] for s in steps] == list(range(1, 5))
    assert {"correct", "entropy", "reward_std", "frac_reward_zero_std", "clip_ratio", "time"} <= set().union(*steps)
    assert [s["step"] for s in steps if "heldout" in s] == [1, 2, 3, 4]  # the held-out curve

    shown = run_cli(capsys, "--workspace", str(ws.root), "repro", "show", doc["id"], "--json").json()
    assert shown["eval_overlap"] == doc["eval_overlap"]
    assert shown["verdict"] == doc["verdict"]
    listed = run_cli(capsys, "--workspace", str(ws.root), "repro", "list", "--json").json()
    assert doc["id"] in [r["id"] for r in listed]
    human = run_cli(capsys, "--workspace", str(ws.root), "repro", "show", doc["id"])
    assert "dapo vs grpo" in human.out
    exported = run_cli(
        capsys, "--workspace", str(ws.root), "repro", "export", doc["id"], "--engine", "trl", "--gpus", "1", "--json"
    ).json()
    assert all(Path(p).exists() for p in exported["files"])
    verl = run_cli(capsys, "--workspace", str(ws.root), "repro", "export", doc["id"], "--engine", "verl")
    assert verl.code == 1 and "cannot go to verl" in verl.err and len(verl.err.strip().splitlines()) == 1
    trl_script = folder / "export" / "trl" / "train_grpo.py"
    # the toy export trains: pair 1's own warm start, the baseline's own RL seed (it raised AttributeError before).
    # In this process, as tests/test_repro_hf.py runs the checkpoint export (torch and TRL are imported here
    # already; tests/test_repro_export.py runs an exported script in its own process, as a cluster would)
    argv, threads = sys.argv, torch.get_num_threads()
    try:
        sys.argv = [str(trl_script), "--arm", "baseline", "--pair", "1", "--max-steps", "1", "--cpu"]
        runpy.run_path(str(trl_script), run_name="__main__")
    finally:
        sys.argv = argv
        torch.set_num_threads(threads)
    assert f"RL seed 1001, {record['policies'][1]['path']}): 1 steps" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.slow
def test_qae_run_ends_in_a_verdict_with_its_mechanism_rate(capsys: pytest.CaptureFixture[str], ws: Workspace) -> None:
    """A plug-in preset through the real command path (worker, TRL, warm starts): QAE against GRPO ends in a verdict
    whose claim carries QAE's lever, the share of zero advantages measured on the method arm, and whose summary
    quotes it; `radar repro show` prints the arm's plug-in rates."""
    argv = ["--workspace", str(ws.root), "repro", "run", "--method", "qae", "--baseline", "grpo", "--task", "sorting"]
    result = run_cli(capsys, *argv, "--seeds", "2", "--steps", "4", "--device", "cpu", "--json")
    assert result.code == 0, result.err
    doc = result.json()
    v = doc["verdict"]
    assert doc["status"] == "done" and v["overall"] in ("better", "worse", "mixed", "no clear difference")
    [lever] = v["claim"]["levers"]
    assert lever["metric"] == "zero_adv_share" and lever["arm"] == "method" and 0.0 <= lever["measured"] <= 1.0
    assert v["mechanisms"]["method"]["zero_adv_share"] == lever["measured"]
    assert "zero_adv_share" not in v["mechanisms"]["baseline"]  # GRPO's arm has no QAE gate
    if lever["engaged"]:
        assert "Mechanism: method zero_adv_share" in v["summary"]
    shown = run_cli(capsys, "--workspace", str(ws.root), "repro", "show", doc["id"])
    assert shown.code == 0 and "qae plug-in rates: zero_adv_share" in shown.out


def test_killed_run_is_marked_failed_with_its_log(
    capsys: pytest.CaptureFixture[str], ws: Workspace, monkeypatch: pytest.MonkeyPatch, fast_engine: None
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
    run = _wait(ws, run_id, lambda r: r.status == "running" and r.progress > 0)
    assert run.pid and _trained_by_the_fast_engine(run)
    assert len(_children_of(run.pid)) == 2  # the arm processes
    os.kill(run.pid, signal.SIGKILL)
    run = _wait(ws, run_id, lambda r: r.status != "running", timeout=30)
    assert run.status == "failed" and "log.txt" in run.error
    assert "training" in run.result["log_tail"]
    listed = run_cli(capsys, "--workspace", str(ws.root), "repro", "list", "--status", "running", "--json").json()
    assert run_id not in [r["id"] for r in listed]
    # the arms' child processes (parallel CPU arms) notice their worker is gone and exit
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _children_of(run.pid):
        time.sleep(0.5)
    assert not _children_of(run.pid)


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
    capsys: pytest.CaptureFixture[str], ws: Workspace, monkeypatch: pytest.MonkeyPatch, fast_engine: None
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
    running = _wait(ws, run_id, lambda r: r.status == "running" and r.progress > 0)
    assert _trained_by_the_fast_engine(running) and len(_children_of(running.pid)) == 2
    assert run_cli(capsys, "--workspace", str(ws.root), "repro", "cancel", run_id).code == 0
    run = _wait(ws, run_id, lambda r: r.status != "running", timeout=60)
    assert run.status == "cancelled" and run.progress < 1.0

    queued = _submit(ws, "dapo", task="sorting", seeds=1, steps=5)
    assert _api(ws).cancel(queued).status == "cancelled"


def test_sigterm_marks_failed(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker told to stop (SIGTERM, e.g. a shutdown) records failed itself, not via the reaper."""
    monkeypatch.setenv("RADAR_REPRO_ARMS_AT_ONCE", "1")  # the in-process path (the others test children)
    run_id = _submit(ws, "cispo", task="sorting", seeds=1, steps=5000)
    with _api(ws).runs_table() as store:
        proc = supervise.start(store, run_id)
    _wait(ws, run_id, lambda r: r.status == "running" and r.progress > 0)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 1
    run = _api(ws).get(run_id, reap_first=False)
    assert run.status == "failed" and "SIGTERM" in run.error


def test_aa_run_has_independent_arms(capsys: pytest.CaptureFixture[str], ws: Workspace, fast_engine: None) -> None:
    """grpo vs grpo: allowed, and its arms train with independent seeds, so they differ (seed noise). The arms
    are trained by the fast test engine, which scores by the seed it is handed: what this tests is that the
    runner hands the two arms different RL seeds and reads the pair as an A/A run. That the real engine trains
    by that seed (its config, its prompt stream) is the next test; the tiny run above trains with TRL."""
    args = ["--method", "grpo", "--baseline", "grpo", "--task", "sorting", "--seeds", "2", "--steps", "4"]
    result = run_cli(capsys, "--workspace", str(ws.root), "repro", "run", *args, "--json")
    assert result.code == 0, result.err
    doc = result.json()
    assert _trained_by_the_fast_engine(_api(ws).get(doc["id"], reap_first=False))
    v = doc["verdict"]
    assert v["aa"] and "A/A run" in v["summary"]
    greedy = v["metrics"]["heldout_greedy"]
    pass1 = v["metrics"]["heldout_pass1"]
    assert greedy["method"] != greedy["baseline"] or pass1["method"] != pass1["baseline"]


def test_the_real_engine_trains_each_arm_by_its_own_rl_seed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An A/A run's two arms differ because each trains by its own RL seed: repro/trainer.py ``train_arm`` hands
    GRPO's trainer a config seeded by it and the RL prompt stream (and dynamic sampling's refill) drawn by it.
    ``train_arm`` runs for real up to the trainer's construction, which is recorded instead of training."""
    from radar.repro import trainer
    from radar.repro.methods import METHODS
    from radar.repro.policy import build_tokenizer
    from radar.repro.spec import rl_seed
    from radar.repro.tasks import refill_stream, rl_stream

    class Built(Exception):
        pass

    built: dict[int, dict[str, object]] = {}

    def record(*, args: Any, train_dataset: Any, refill: Any, **_: Any) -> None:
        built[args.seed] = {
            "seeds": (args.seed, args.data_seed),
            "prompts": train_dataset.to_list(),
            "refill": next(refill),
        }
        raise Built

    monkeypatch.setattr(trainer, "RadarGRPOTrainer", record)
    task, size = get_task("sorting"), get_size("tiny")
    build_tokenizer(task).save_pretrained(tmp_path / "policy")
    seeds = rl_seed("method", 0), rl_seed("baseline", 0)
    assert seeds[0] != seeds[1]
    for seed in seeds:
        with pytest.raises(Built):
            arm = ToyArm(
                tmp_path / "policy",
                METHODS["grpo"],
                task,
                size,
                4,
                seed,
                "cpu",
                tmp_path / f"out{seed}",
                on_record=lambda r: None,
                should_cancel=lambda: False,
            )
            trainer.train_arm(arm, eval_sets={})
    for seed in seeds:
        assert built[seed]["seeds"] == (seed, seed)
        assert built[seed]["prompts"] == rl_stream(task, 4 * size.prompts_per_step, seed, size.difficulty)
        assert built[seed]["refill"] == refill_stream(task, trainer.refill_size(4, size), seed, size.difficulty)[0]
    assert built[seeds[0]]["prompts"] != built[seeds[1]]["prompts"]


def _cli(ws: Workspace, *argv: str, **kw) -> subprocess.Popen[str]:  # type: ignore[no-untyped-def]
    return subprocess.Popen(
        [sys.executable, "-m", "radar.app.cli", "--workspace", str(ws.root), *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def _alive(pid: int) -> bool:
    return supervise.pid_alive(pid)


def test_ctrl_c_hangup_and_term_share_one_stop_path() -> None:
    """supervise.wait handles every stop signal with one handler, so the end-to-end test below runs two of them
    (SIGTERM: cron/systemd; SIGHUP: a closed terminal, with arm processes) and SIGINT takes the same path."""
    assert set(supervise.STOP_SIGNALS) == {"SIGINT", "SIGTERM", "SIGHUP"}


@pytest.mark.slow
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_foreground_run_killed_by_a_signal_stops_its_worker(ws: Workspace, signame: str, fast_engine: None) -> None:
    # SIGHUP with arm processes (their whole process group stops), SIGTERM with the arms in the worker
    env = os.environ | {"RADAR_REPRO_ARMS_AT_ONCE": "2" if signame == "SIGHUP" else "1"}
    before = {r.id for r in _list(ws)}
    argv = ["repro", "run", "--method", "dr_grpo", "--task", "sorting", "--seeds", "1", "--steps", "5000"]
    proc = _cli(ws, *argv, env=env)
    deadline = time.monotonic() + 400  # spawned arm processes start slowly on busy shared cores
    run = None
    while time.monotonic() < deadline and run is None and proc.poll() is None:
        new = [r for r in _list(ws) if r.id not in before and r.status == "running" and r.progress > 0]
        run = new[0] if new else None
        time.sleep(0.3)
    if run is None:
        proc.kill()
        raise AssertionError(f"the run never started training: {proc.communicate()}")
    worker = run.pid
    assert worker and _alive(worker) and _trained_by_the_fast_engine(run)
    children = _children_of(worker)
    assert len(children) == (2 if signame == "SIGHUP" else 0)
    proc.send_signal(getattr(signal, signame))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and f"stopped by {signame}" in err and "Traceback" not in err
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (_alive(worker) or any(_alive(c) for c in children)):
        time.sleep(0.3)
    assert not _alive(worker) and not any(_alive(c) for c in children)
    assert _get(ws, run.id).status == "cancelled"


def _list(ws: Workspace) -> list[RunRecord]:
    with ws.store() as store:
        return Runs(store).list_runs(kind="repro")


def test_device_cuda_without_a_gpu_fails_before_a_worker(capsys: pytest.CaptureFixture[str], ws: Workspace) -> None:
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    before = len(_list(ws))
    result = run_cli(capsys, "--workspace", str(ws.root), "repro", "run", "--method", "dapo", "--device", "cuda")
    assert result.code == 1 and len(result.err.strip().splitlines()) == 1 and "--device auto or cpu" in result.err
    assert len(_list(ws)) == before  # no run recorded, no worker started


def test_a_worker_whose_arms_trained_elsewhere_never_imports_torch(ws: Workspace, fast_engine: None) -> None:
    """The worker's own part of a run (the record, each arm's summary, the verdict, the profiles' means, the
    plots) needs no torch or transformers: repro/profile_stats.py averages the profiles (repro/profile.py, the
    TRL callback, imported both into every worker: 10 CPU-s of a worker whose arms train in other processes)."""
    run_id = _submit(ws, "grpo", baseline="grpo", task="sorting", seeds=1, steps=2)
    code = f"""
import os, sys
os.environ["RADAR_REPRO_ARMS_AT_ONCE"] = "1"  # the arms in this process, with the fast test engine
from radar.repro.worker import main
assert main(["--db", {str(ws.db_path)!r}, {run_id!r}]) == 0
print(sorted(m for m in ("torch", "transformers", "trl") if m in sys.modules))
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip().endswith("[]"), done.stdout[-500:] + done.stderr[-2000:]
    run = _api(ws).get(run_id, reap_first=False)
    assert run.status == "done" and _trained_by_the_fast_engine(run)


def test_listing_and_showing_runs_never_imports_torch(ws: Workspace) -> None:
    run_id = _submit(ws, "dapo", task="sorting", seeds=1, steps=5)
    with ws.store() as store:
        Runs(store).update_run(run_id, status="done", result={"verdict": {"overall": "better", "summary": "s"}})
    code = f"""
import sys
from pathlib import Path
from radar.app.cli import main
from radar.repro.runs_table import Runs
from radar.store import Workspace
assert main(["--workspace", {str(ws.root)!r}, "repro", "list", "--json"]) == 0
assert main(["--workspace", {str(ws.root)!r}, "repro", "show", {run_id!r}]) == 0
with Workspace.open(Path({str(ws.root)!r})).store() as store:
    records = Runs(store).list_runs(kind="repro")
    assert any(r.id == {run_id!r} and r.verdict.overall == "better" and not r.verdict.calibrated for r in records)
assert "torch" not in sys.modules, "reading runs imported torch"
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr
