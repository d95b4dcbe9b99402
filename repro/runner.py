"""Run records and their life cycle: submit, execute (in a worker process), cancel, reap.

    queued --worker starts--> running --all arms trained--> done
                                  |--exception / signal----> failed  (error + log path)
                                  |--cancel flag------------> cancelled
    running, but the worker process is gone --reap()--> failed ("worker died", log path)

A run always executes in a worker subprocess (``python -m repro.worker``) whose output goes to
``runs/RUN_ID/log.txt``: ``radar repro run`` waits for it, ``--background`` does not, and a
dashboard can call ``start(...)`` the same way. Every read of the run list first reaps runs whose
worker died (SIGKILL, OOM, reboot), so no run is left "running" for ever.

Run folder (``Workspace.run_dir``): run.json (the record: config, seeds, device, git commit,
package versions), log.txt, metrics/{method,baseline}-seed{N}.jsonl, plots/*.png, verdict.json.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import platform
import secrets
import signal
import subprocess
import sys
import time
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from radar.repro.errors import ReproError, RunCancelled
from radar.repro.methods import get_method
from radar.repro.policy import get_size
from radar.repro.tasks import get_task
from radar.store import Store, Workspace, utc_now

KIND = "repro"
ACTIVE = ("queued", "running")
STALE_HEARTBEAT_S = 30 * 60  # a live worker beats every step / 50 SFT steps; this only catches pid reuse


@dataclass(frozen=True)
class RunSpec:
    """What to run. Validated at construction; errors name the valid values."""

    method: str
    baseline: str = "grpo"
    task: str = "addition"
    preset: str = "tiny"
    seeds: int = 3
    steps: int = 0  # 0 = the preset's default
    device: str = "auto"

    def __post_init__(self) -> None:
        get_method(self.method)
        get_method(self.baseline)
        get_task(self.task)
        get_size(self.preset)
        if not 1 <= self.seeds <= 20:
            raise ReproError(f"--seeds must be between 1 and 20 (got {self.seeds})")
        if not 0 <= self.steps <= 100_000:
            raise ReproError(f"--steps must be between 1 and 100000, or 0 for the preset's default (got {self.steps})")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ReproError(f"--device must be auto, cpu or cuda (got {self.device!r})")

    @property
    def total_steps(self) -> int:
        return self.steps or get_size(self.preset).default_steps


# -- paths ------------------------------------------------------------------------------------------
def policy_cache_dir(ws: Workspace) -> Path:
    """Warm-started policies, shared by runs (keyed by task, size and cache version)."""
    return ws.runs_dir / "_policies"


def metrics_path(ws: Workspace, run_id: str, arm: str, seed: int) -> Path:
    return ws.run_dir(run_id) / "metrics" / f"{arm}-seed{seed}.jsonl"


def log_path(ws: Workspace, run_id: str) -> Path:
    return ws.run_dir(run_id) / "log.txt"


# -- submit / start / cancel ------------------------------------------------------------------------
def submit(ws: Workspace, spec: RunSpec) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    run_id = f"{stamp}-{spec.method}-vs-{spec.baseline}-{secrets.token_hex(2)}"
    with ws.store() as store:
        store.create_run(run_id, KIND, asdict(spec) | {"total_steps": spec.total_steps})
    ws.run_dir(run_id).mkdir(parents=True, exist_ok=True)
    return run_id


def start(ws: Workspace, run_id: str) -> subprocess.Popen[bytes]:
    """Start the worker process for a queued run; its output goes to the run's log.txt."""
    log = log_path(ws, run_id)
    log.parent.mkdir(parents=True, exist_ok=True)
    env = os.environ | {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONUNBUFFERED": "1",
    }
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "radar.repro.worker", "--workspace", str(ws.root), run_id],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    with ws.store() as store:
        store.update_run(run_id, pid=proc.pid, heartbeat_at=utc_now())
    return proc


def launch(ws: Workspace, spec: RunSpec) -> str:
    """Submit and start in the background: what a dashboard calls. Returns the run id at once."""
    run_id = submit(ws, spec)
    start(ws, run_id)
    return run_id


def wait(ws: Workspace, run_id: str, proc: subprocess.Popen[bytes], on_progress: Any = None) -> dict[str, Any]:
    """Wait for a worker started by ``start``; Ctrl-C asks it to cancel. Returns the final run."""
    last = -1.0
    try:
        while proc.poll() is None:
            time.sleep(0.5)
            if on_progress is not None:
                run = get(ws, run_id, reap_first=False)
                if run["progress"] != last:
                    last = run["progress"]
                    on_progress(run)
    except KeyboardInterrupt:
        cancel(ws, run_id)
        proc.wait()
    with ws.store() as store:
        reap(store, ws)
        return _require(store, run_id)


def cancel(ws: Workspace, run_id: str) -> dict[str, Any]:
    """A queued run is cancelled at once; a running one at its worker's next step."""
    with ws.store() as store:
        run = _require(store, run_id)
        if run["status"] == "queued" and not run["pid"]:
            store.update_run(run_id, status="cancelled", finished_at=utc_now(), error="cancelled before it started")
        elif run["status"] in ACTIVE:
            store.update_run(run_id, cancel_requested=1)
        return _require(store, run_id)


# -- reading ----------------------------------------------------------------------------------------
def get(ws: Workspace, run_id: str, reap_first: bool = True) -> dict[str, Any]:
    with ws.store() as store:
        if reap_first:
            reap(store, ws)
        return _require(store, run_id)


def list_runs(ws: Workspace, status: str = "") -> list[dict[str, Any]]:
    with ws.store() as store:
        reap(store, ws)
        return store.list_runs(kind=KIND, status=status)


def _require(store: Store, run_id: str) -> dict[str, Any]:
    run = store.get_run(run_id)
    if run is None or run["kind"] != KIND:
        raise ReproError(f"no reproduction run {run_id!r}; list them with `radar repro list`")
    return run


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (killed, not yet waited for by its parent) is dead for our purposes
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (OSError, IndexError):
        return True


def _age_s(stamp: str) -> float:
    if not stamp:
        return 0.0
    return (datetime.now(UTC) - datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)).total_seconds()


def reap(store: Store, ws: Workspace) -> list[str]:
    """Mark failed every active run whose worker is gone (or silent for too long). Returns their ids."""
    reaped = []
    for run in store.list_runs(kind=KIND):
        if run["status"] not in ACTIVE or not run["pid"]:
            continue
        if _pid_alive(run["pid"]) and _age_s(run["heartbeat_at"]) < STALE_HEARTBEAT_S:
            continue
        log = log_path(ws, run["id"])
        store.update_run(
            run["id"],
            status="failed",
            finished_at=utc_now(),
            error=f"worker process {run['pid']} died without finishing (killed?); its log: {log}",
            result=run["result"] | {"log": str(log), "log_tail": _tail(log)},
        )
        reaped.append(run["id"])
    return reaped


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


# -- provenance -------------------------------------------------------------------------------------
def provenance() -> dict[str, Any]:
    versions: dict[str, str | None] = {}
    for pkg in ("research-radar", "torch", "transformers", "trl", "accelerate", "datasets", "numpy"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parents[1],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = bool(
            subprocess.run(
                ["git", "status", "--porcelain", "--", "repro"],
                cwd=Path(__file__).resolve().parents[1],
                capture_output=True,
                text=True,
                timeout=10,
            ).stdout.strip()
        )
    except (OSError, subprocess.SubprocessError):
        commit, dirty = "unknown", False
    return {
        "git_commit": commit,
        "repro_dirty": dirty,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": versions,
    }


def resolve_device(requested: str) -> str:
    import torch

    if requested == "cuda" and not torch.cuda.is_available():
        raise ReproError("--device cuda asked for, but torch sees no GPU; use --device auto or cpu")
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return requested


# -- execute (inside the worker) --------------------------------------------------------------------
class _Terminated(Exception):  # noqa: N818
    pass


def _on_signal(signum: int, _frame: Any) -> None:
    raise _Terminated(f"terminated by {signal.Signals(signum).name}")


def execute(ws: Workspace, run_id: str, log: Any = print) -> dict[str, Any]:
    """Train every (arm, seed), then write plots and the verdict. Runs inside the worker process."""
    signal.signal(signal.SIGTERM, _on_signal)
    with ws.store() as store:
        run = _require(store, run_id)
        if run["status"] != "queued":
            raise ReproError(f"run {run_id} is {run['status']}, not queued; submit a new run")
        store.update_run(run_id, status="running", pid=os.getpid(), started_at=utc_now(), heartbeat_at=utc_now())
    try:
        result = _execute(ws, run_id, run["params"], log)
    except RunCancelled:
        with ws.store() as store:
            store.update_run(run_id, status="cancelled", finished_at=utc_now(), error="cancelled by request")
        log("run cancelled")
        return get(ws, run_id, reap_first=False)
    except BaseException as exc:
        logfile = log_path(ws, run_id)
        message = f"{type(exc).__name__}: {exc}"
        import traceback

        log(traceback.format_exc())
        with ws.store() as store:
            store.update_run(
                run_id,
                status="failed",
                finished_at=utc_now(),
                error=f"{message}; see {logfile}",
                result={"log": str(logfile)},
            )
        raise
    with ws.store() as store:
        store.update_run(run_id, status="done", progress=1.0, finished_at=utc_now(), result=result)
    return get(ws, run_id, reap_first=False)


def parallel_arms(device: str, size: Any, jobs: int) -> int:
    """Arms trained at once: for single-threaded CPU presets, one per *idle* core; else one (a GPU is shared).

    Idle cores = cores - (1-minute load - 1, this worker's own share). On 2 cores with another busy
    process, two arm processes were slower than one (91 s vs 75 s to a verdict), hence the load check.
    ``RADAR_REPRO_ARMS_AT_ONCE=N`` overrides.
    """
    forced = os.environ.get("RADAR_REPRO_ARMS_AT_ONCE", "")
    if forced.isdigit() and int(forced) > 0:
        return min(jobs, int(forced))
    if device != "cpu" or size.cpu_threads != 1:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    idle = cores - max(0.0, os.getloadavg()[0] - 1.0)
    return max(1, min(jobs, int(idle + 0.5)))


def _exit_with_parent(parent_pid: int) -> None:
    """Pool initializer: a child whose worker died (SIGKILL) exits instead of idling for ever."""
    import threading

    def watch() -> None:
        while _pid_alive(parent_pid):
            time.sleep(1.0)
        os._exit(3)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _count_lines(path: Path) -> int:
    try:
        with open(path, "rb") as fh:
            return sum(1 for _ in fh)
    except OSError:
        return 0


def arm_job(
    root: str, run_id: str, arm: str, seed: int, parent_pid: int, on_step: Any = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Train one (arm, seed): in the worker itself, or in a spawned child when arms run in parallel.

    Writes metrics/{arm}-seed{seed}.jsonl as it goes; stops at the next step when the run's cancel
    flag is set, when runs/RUN_ID/.stop appears, or when the parent process is gone.
    """
    import torch

    from radar.repro.trainer import train_arm

    ws = Workspace(Path(root))
    with ws.store() as store:
        params = _require(store, run_id)["params"]
    spec = RunSpec(**{k: params[k] for k in RunSpec.__dataclass_fields__})
    task, size = get_task(spec.task), get_size(spec.preset)
    folder = ws.run_dir(run_id)
    record = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    device = record["device"]
    if device == "cpu" and size.cpu_threads:
        torch.set_num_threads(size.cpu_threads)
    method = get_method(spec.method if arm == "method" else spec.baseline)
    path = metrics_path(ws, run_id, arm, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("", encoding="utf-8")
    records: list[dict[str, Any]] = []
    stop = folder / ".stop"

    def on_record(rec: dict[str, Any]) -> None:
        records.append(rec)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec) + "\n")
        if on_step is not None:
            on_step()

    def should_cancel() -> bool:
        if stop.exists() or not _pid_alive(parent_pid):
            return True
        with ws.store() as store:
            return bool(_require(store, run_id)["cancel_requested"])

    summary = train_arm(
        policy_path=Path(record["policy"]["path"]),
        method=method,
        task=task,
        size=size,
        steps=record["steps"],
        seed=seed,
        device=device,
        output_dir=folder / "trl" / f"{arm}-seed{seed}",
        on_record=on_record,
        should_cancel=should_cancel,
        eval_examples=task.examples(200, seed=999_999, difficulty=size.difficulty),
    )
    return summary, records


def _execute(ws: Workspace, run_id: str, params: dict[str, Any], log: Any) -> dict[str, Any]:
    import torch

    from radar.repro.plots import plot_run
    from radar.repro.policy import cached_policy
    from radar.repro.trainer import build_config
    from radar.repro.verdict import verdict

    spec = RunSpec(**{k: params[k] for k in RunSpec.__dataclass_fields__})
    method, baseline = get_method(spec.method), get_method(spec.baseline)
    task, size = get_task(spec.task), get_size(spec.preset)
    device = resolve_device(spec.device)
    if device == "cpu" and size.cpu_threads:
        torch.set_num_threads(size.cpu_threads)  # 2 threads on a tiny model are ~15x slower under load
    steps = spec.total_steps
    folder = ws.run_dir(run_id)
    arms = {"method": method, "baseline": baseline}
    seeds = list(range(spec.seeds))

    started = time.perf_counter()

    def log_and_beat(msg: str) -> None:  # the warm start logs every 50 SFT steps: keep the heartbeat fresh
        log(msg)
        with ws.store() as store:
            store.update_run(run_id, heartbeat_at=utc_now())

    policy_path, warm = cached_policy(policy_cache_dir(ws), task, size, torch.device(device), log=log_and_beat)
    warm_s = time.perf_counter() - started  # ~0 when the warm start was cached
    record = {
        "id": run_id,
        "spec": asdict(spec),
        "device": device,
        "steps": steps,
        "seeds": seeds,
        "policy": {"path": str(policy_path), **warm},
        "configs": {
            arm: build_config(m, size, task, steps=steps, seed=0, output_dir=folder / "trl", device=device).to_dict()
            for arm, m in arms.items()
        },
        "methods": {arm: asdict(m) for arm, m in arms.items()},
        "cuda_device": torch.cuda.get_device_name(0) if device == "cuda" else None,
        "torch_threads": torch.get_num_threads(),
        **provenance(),
    }
    Workspace.write_text_atomic(folder / "run.json", json.dumps(record, indent=2, default=str))

    total = len(arms) * len(seeds) * steps
    runs: dict[str, dict[int, list[dict[str, Any]]]] = {arm: {} for arm in arms}
    summaries: dict[str, dict[int, dict[str, Any]]] = {arm: {} for arm in arms}
    jobs = [(arm, seed) for seed in seeds for arm in arms]  # arms interleaved per seed: a partial run pairs
    workers = parallel_arms(device, size, len(jobs))
    last_beat = 0.0

    def beat(force: bool = False) -> None:
        nonlocal last_beat
        now = time.perf_counter()
        if force or now - last_beat > 1.0:
            last_beat = now
            done = sum(_count_lines(metrics_path(ws, run_id, a, s)) for a, s in jobs)
            with ws.store() as store:
                store.update_run(run_id, progress=round(min(done / total, 1.0), 4), heartbeat_at=utc_now())

    train_started = time.perf_counter()
    log(
        f"training {len(jobs)} arms ({', '.join(f'{a} seed {s}' for a, s in jobs)}), {steps} steps each on "
        f"{device}, {workers} at a time"
    )
    if workers == 1:
        for arm, seed in jobs:
            summary, records = arm_job(str(ws.root), run_id, arm, seed, os.getpid(), on_step=beat)
            runs[arm][seed], summaries[arm][seed] = records, summary
            log(f"  {arm} seed {seed}: {summary}")
    else:
        stop = folder / ".stop"
        stop.unlink(missing_ok=True)
        os.environ["RADAR_REPRO_PARENT"] = str(os.getpid())  # marks the arm processes (ps e, tests)
        pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_exit_with_parent,
            initargs=(os.getpid(),),
        )
        try:
            futures = {
                pool.submit(arm_job, str(ws.root), run_id, arm, seed, os.getpid()): (arm, seed) for arm, seed in jobs
            }
            pending = set(futures)
            while pending:
                finished, pending = wait_futures(pending, timeout=1.0, return_when=FIRST_EXCEPTION)
                beat()
                for fut in finished:
                    arm, seed = futures[fut]
                    summary, records = fut.result()  # re-raises the arm's error (or RunCancelled)
                    runs[arm][seed], summaries[arm][seed] = records, summary
                    log(f"  {arm} seed {seed}: {summary}")
        except BaseException:
            stop.touch()  # the other arms stop at their next step
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
    train_wall = time.perf_counter() - train_started
    beat(force=True)

    doc = verdict(method, baseline, runs)
    names = {"method": method.name, "baseline": f"{baseline.name} (baseline)"}
    title = f"{method.name} vs {baseline.name} on {task.name} ({size.name}, {len(seeds)} seeds, {device})"
    plots = plot_run(runs, names, folder / "plots", title)
    train_s = sum(s["seconds"] for arm in summaries.values() for s in arm.values())
    trained_steps = sum(s["steps"] for arm in summaries.values() for s in arm.values())
    metrics = {
        "time_to_verdict_s": round(time.perf_counter() - started, 2),
        "train_seconds": round(train_s, 2),
        "steps_per_s": round(trained_steps / train_s, 3) if train_s else None,  # per arm process
        "train_wall_s": round(train_wall, 2),
        "steps_per_s_wall": round(trained_steps / train_wall, 3) if train_wall else None,  # all arms together
        "parallel_arms": workers,
        "warm_start_seconds": round(warm_s, 2),
        "warm_start_cached": warm_s < 0.5 * float(warm.get("seconds") or 0),
        "warm_start_sampled_accuracy": warm.get("sampled_accuracy"),
        "eval_accuracy": {arm: {str(s): v["eval_accuracy"] for s, v in per.items()} for arm, per in summaries.items()},
        "final_correct": {arm: doc["final_reward"][f"{arm}_mean"] for arm in arms},
        "device": device,
    }
    Workspace.write_text_atomic(folder / "verdict.json", json.dumps(doc | {"metrics": metrics}, indent=2))
    log(doc["summary"])
    prov = {k: record[k] for k in ("git_commit", "repro_dirty", "python", "packages")}
    return {
        "verdict": doc,
        "metrics": metrics,
        "plots": [str(p) for p in plots],
        "folder": str(folder),
        "record": {"device": device, "cuda_device": record["cuda_device"], "seeds": seeds, **prov},
    }
