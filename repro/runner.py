"""Run records and their life cycle: submit, execute (in a worker process), cancel, reap.

    queued --worker starts--> running --all arms trained--> done
                                  |--exception / signal----> failed  (error + log path)
                                  |--cancel flag------------> cancelled
    running, but the worker process is gone --reap()--> failed ("worker died", log path)

A run always executes in a worker subprocess (``python -m radar.repro.worker --db DB RUN_ID``) whose
output goes to RUN_DIR/log.txt: ``radar repro run`` waits for it (and stops it when it receives
SIGINT, SIGTERM or SIGHUP), ``--background`` does not, and a dashboard can call ``launch(...)``.
Every read of the run list first reaps runs whose worker died (SIGKILL, OOM, reboot), so no run is
left "running" for ever.

Functions take a ``Store`` and explicit paths; the app hands in the run folder and the warm-start
cache at submit (they are kept in the run's params), so nothing here knows the workspace layout.
Run folder: run.json (the record: configs, seeds, warm starts, eval_overlap, device, git commit,
package versions), log.txt, metrics/{method,baseline}-seed{N}.jsonl, plots/*.png, verdict.json.
"""

from __future__ import annotations

import contextlib
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
from radar.repro.methods import baseline_of, get_method, register_user_presets, user_definitions
from radar.repro.sizes import get_checkpoint_preset, get_size
from radar.repro.tasks import get_task
from radar.store import Store, utc_now
from radar.store.files import write_text_atomic
from radar.store.runs import RunRecord

KIND = "repro"
ACTIVE = ("queued", "running")
STALE_HEARTBEAT_S = 30 * 60  # a live worker beats every step / 50 SFT steps; this only catches pid reuse
BASELINE_SEED_OFFSET = 1000  # the baseline arm of pair s trains with RL seed 1000 + s (independent of the method's)


@dataclass(frozen=True)
class RunSpec:
    """What to run. Validated at construction; errors name the valid values."""

    method: str
    baseline: str = ""  # "" = the method's own baseline (grpo; gspo for luspo)
    task: str = "addition"
    preset: str = "tiny"
    seeds: int = 5
    steps: int = 0  # 0 = the preset's default
    device: str = "auto"
    model: str = ""  # a local Hugging Face model folder or cached name ("" = the toy tasks' tiny policies)
    dataset: str = ""  # JSONL of {prompt, answer} (with model)
    lora: bool = False  # train a LoRA adapter (peft) instead of every weight (with model)

    def __post_init__(self) -> None:
        method = get_method(self.method)
        if not self.baseline:
            object.__setattr__(self, "baseline", baseline_of(method))
        get_method(self.baseline)
        if self.model or self.dataset or self.lora:
            if not self.model:
                raise ReproError("--dataset and --lora need --model PATH_OR_NAME (a local Hugging Face checkpoint)")
            if not self.dataset:
                raise ReproError('--model needs --dataset FILE.jsonl (one {"prompt", "answer"} object per line)')
            object.__setattr__(self, "task", CHECKPOINT_TASK)
            if self.preset in ("", "tiny"):  # the toy default: a checkpoint run's default shape instead
                object.__setattr__(self, "preset", "ckpt")
            get_checkpoint_preset(self.preset)
        else:
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
        if self.model:
            return self.steps or get_checkpoint_preset(self.preset).default_steps
        return self.steps or get_size(self.preset).default_steps


CHECKPOINT_TASK = "math"  # the task name of --model/--dataset runs
TINY_MODEL_BYTES = 50 * 2**20  # a checkpoint whose weights are smaller trains on one CPU thread


def checkpoint_threads(device: str, model: dict[str, Any]) -> int:
    """1 when a checkpoint's weights are tiny and it trains on CPU (one thread), else 0 (torch's default)."""
    return int(device == "cpu" and sum((model.get("weights") or {}).values()) < TINY_MODEL_BYTES)


def check_inputs(spec: RunSpec) -> dict[str, Any]:
    """Resolve the model and read the data set of a checkpoint run before anything is stored
    (one-line errors); returns what the run's params record about them. No torch."""
    if not spec.model:
        return {}
    from radar.repro.checkpoint import load_dataset, resolve_model

    folder = resolve_model(spec.model)
    data = load_dataset(spec.dataset)
    if spec.lora:
        import importlib.util

        if importlib.util.find_spec("peft") is None:
            raise ReproError("--lora needs the peft package; install it (`pip install peft`) or drop --lora")
    return {"model_path": str(folder), "dataset_path": data.path, "dataset_sha256": data.sha256}


def spec_of(params: dict[str, Any]) -> RunSpec:
    """The RunSpec of a recorded run. User presets ([[repro.presets]]) travel in its params (``user_presets``,
    written by ``submit``), so the worker knows them without reading radar.toml (helper B, issue 14)."""
    register_user_presets(params.get("user_presets") or [])
    return RunSpec(**{k: params[k] for k in RunSpec.__dataclass_fields__ if k in params})


def rl_seed(arm: str, pair: int) -> int:
    """Independent RL seeds per arm: an A/A run (method == baseline) measures seed noise, not zero."""
    return pair if arm == "method" else BASELINE_SEED_OFFSET + pair


# -- paths (all from the run record: the app hands them in at submit) --------------------------------
def run_folder(run: dict[str, Any] | RunRecord) -> Path:
    params = run.params if isinstance(run, RunRecord) else run["params"]
    if not params.get("folder"):
        raise ReproError(f"run {run.id if isinstance(run, RunRecord) else run['id']} has no folder in its record")
    return Path(params["folder"])


def metrics_path(folder: Path, arm: str, seed: int) -> Path:
    return folder / "metrics" / f"{arm}-seed{seed}.jsonl"


def log_path(folder: Path) -> Path:
    return folder / "log.txt"


def new_run_id(spec: RunSpec) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{spec.method}-vs-{spec.baseline}-{secrets.token_hex(2)}"


# -- device -----------------------------------------------------------------------------------------
def check_device(requested: str) -> None:
    """Fail before any worker starts when --device cuda is asked for and no GPU is visible."""
    if requested != "cuda":
        return
    import torch

    if not torch.cuda.is_available():
        raise ReproError("--device cuda asked for, but torch sees no GPU; use --device auto or cpu")


# -- submit / start / cancel ------------------------------------------------------------------------
def submit(store: Store, spec: RunSpec, run_id: str, run_dir: Path, policy_cache: Path) -> str:
    """Record a queued run. ``run_dir``: its folder; ``policy_cache``: the shared warm starts.
    A checkpoint run's model and data set are checked first (nothing is stored when they are bad)."""
    inputs = check_inputs(spec)
    params = asdict(spec) | {"total_steps": spec.total_steps, "folder": str(run_dir), "policy_cache": str(policy_cache)}
    params |= inputs
    if defs := user_definitions(spec.method, spec.baseline):  # user presets travel with the run (spec_of)
        params["user_presets"] = defs
    store.create_run(run_id, KIND, params)
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_id


def start(store: Store, run_id: str) -> subprocess.Popen[bytes]:
    """Start the worker process for a queued run; its output goes to the run's log.txt."""
    run = _require(store, run_id)
    log = log_path(run_folder(run))
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
            [sys.executable, "-m", "radar.repro.worker", "--db", str(store.path), run_id],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    store.update_run(run_id, pid=proc.pid, heartbeat_at=utc_now())
    return proc


def launch(store: Store, spec: RunSpec, run_id: str, run_dir: Path, policy_cache: Path) -> str:
    """Submit and start in the background: what a dashboard calls. Returns the run id at once."""
    check_device(spec.device)
    submit(store, spec, run_id, run_dir, policy_cache)
    start(store, run_id)
    return run_id


STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


def wait(store: Store, run_id: str, proc: subprocess.Popen[bytes], on_progress: Any = None) -> dict[str, Any]:
    """Wait for a worker started by ``start`` (the foreground `radar repro run`).

    SIGINT, SIGTERM or SIGHUP to this process cancel the run and stop its worker (and the worker's
    arm processes: its whole process group), so no training outlives the command. Returns the final run.
    """
    received: list[str] = []

    def on_signal(signum: int, _frame: Any) -> None:
        received.append(signal.Signals(signum).name)

    previous = {}
    for name in STOP_SIGNALS:
        if hasattr(signal, name):
            previous[name] = signal.signal(getattr(signal, name), on_signal)
    last = -1.0
    try:
        while proc.poll() is None and not received:
            time.sleep(0.3)
            if on_progress is not None:
                run = _require(store, run_id)
                if run["progress"] != last:
                    last = run["progress"]
                    on_progress(run)
        if received:
            stop_worker(store, run_id, proc, received[0])
    finally:
        for name, handler in previous.items():
            signal.signal(getattr(signal, name), handler)
    reap(store)
    return _require(store, run_id)


def stop_worker(store: Store, run_id: str, proc: subprocess.Popen[bytes], why: str, grace_s: float = 20.0) -> None:
    """Cancel the run and terminate its worker's process group; SIGKILL after ``grace_s``."""
    store.update_run(run_id, cancel_requested=1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    run = _require(store, run_id)
    if run["status"] in (*ACTIVE, "cancelled"):  # a run that finished meanwhile keeps its result
        store.update_run(
            run_id, status="cancelled", finished_at=utc_now(), error=f"stopped by {why} to `radar repro run`"
        )


def cancel(store: Store, run_id: str) -> dict[str, Any]:
    """A queued run is cancelled at once; a running one at its worker's next step."""
    run = _require(store, run_id)
    if run["status"] == "queued" and not run["pid"]:
        store.update_run(run_id, status="cancelled", finished_at=utc_now(), error="cancelled before it started")
    elif run["status"] in ACTIVE:
        store.update_run(run_id, cancel_requested=1)
    return _require(store, run_id)


# -- reading ----------------------------------------------------------------------------------------
def get(store: Store, run_id: str, reap_first: bool = True) -> dict[str, Any]:
    if reap_first:
        reap(store)
    return _require(store, run_id)


def list_runs(store: Store, status: str = "") -> list[dict[str, Any]]:
    reap(store)
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


def reap(store: Store) -> list[str]:
    """Mark failed every active run whose worker is gone (or silent for too long). Returns their ids."""
    reaped = []
    for run in store.list_runs(kind=KIND):
        if run["status"] not in ACTIVE or not run["pid"]:
            continue
        if _pid_alive(run["pid"]) and _age_s(run["heartbeat_at"]) < STALE_HEARTBEAT_S:
            continue
        log = log_path(Path(run["params"]["folder"])) if run["params"].get("folder") else Path("(no run folder)")
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


def calibration_for(
    store: Store, task: str, preset: str, steps: int, exclude: str = "", model: str = ""
) -> dict[str, Any] | None:
    """The seed noise of the newest finished A/A run on this task, preset and step count (and, for
    a checkpoint run, model), if any."""
    for run in store.run_records(kind=KIND, status="done"):
        p = run.params
        if run.id == exclude or p.get("method") != p.get("baseline") or run.verdict is None:
            continue
        if (p.get("task"), p.get("preset"), p.get("total_steps")) != (task, preset, steps):
            continue
        if (p.get("model_path") or "") != model:
            continue
        noise = run.verdict.seed_noise
        if noise is not None and noise.sd_difference is not None:
            return {
                "run": run.id,
                "method": p.get("method"),
                "seeds": p.get("seeds"),
                "sd_difference": noise.sd_difference,
            }
    return None


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


def _store(db: Path | str) -> Store:
    return Store(Path(db))


def execute(db: Path, run_id: str, log: Any = print) -> dict[str, Any]:
    """Train every (arm, seed), then write plots and the verdict. Runs inside the worker process."""
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGHUP, _on_signal)
    with _store(db) as store:
        run = _require(store, run_id)
        if run["status"] != "queued":
            raise ReproError(f"run {run_id} is {run['status']}, not queued; submit a new run")
        store.update_run(run_id, status="running", pid=os.getpid(), started_at=utc_now(), heartbeat_at=utc_now())
    try:
        result = _execute(db, run_id, run["params"], log)
    except RunCancelled:
        with _store(db) as store:
            store.update_run(run_id, status="cancelled", finished_at=utc_now(), error="cancelled by request")
        log("run cancelled")
        with _store(db) as store:
            return _require(store, run_id)
    except BaseException as exc:
        logfile = log_path(run_folder(run))
        message = f"{type(exc).__name__}: {exc}"
        import traceback

        log(traceback.format_exc())
        with _store(db) as store:
            if isinstance(exc, _Terminated) and _require(store, run_id)["cancel_requested"]:
                store.update_run(run_id, status="cancelled", finished_at=utc_now(), error=f"cancelled ({exc})")
                return _require(store, run_id)
            store.update_run(
                run_id,
                status="failed",
                finished_at=utc_now(),
                error=f"{message}; see {logfile}",
                result={"log": str(logfile)},
            )
        raise
    with _store(db) as store:
        store.update_run(run_id, status="done", progress=1.0, finished_at=utc_now(), result=result)
        return _require(store, run_id)


def parallel_arms(device: str, size: Any, jobs: int) -> int:
    """Arms trained at once: for single-threaded CPU presets, one per *idle* core; else one (a GPU is shared).

    Idle cores = cores - (1-minute load - 1, this worker's own share). On 2 cores with another busy
    process, two arm processes were slower than one (91 s vs 75 s to a verdict), hence the load check.
    ``RADAR_REPRO_ARMS_AT_ONCE=N`` overrides.
    """
    forced = os.environ.get("RADAR_REPRO_ARMS_AT_ONCE", "")
    if forced.isdigit() and int(forced) > 0:
        return min(jobs, int(forced))
    if device != "cpu" or getattr(size, "cpu_threads", 0) != 1:
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
    db: str, run_id: str, arm: str, pair: int, parent_pid: int, on_step: Any = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Train one (arm, seed pair): in the worker itself, or in a spawned child when arms run in parallel.

    Writes metrics/{arm}-seed{pair}.jsonl as it goes; stops at the next step when the run's cancel
    flag is set, when RUN_DIR/.stop appears, or when the parent process is gone.
    """
    import torch

    from radar.repro.policy import eval_sets
    from radar.repro.trainer import train_arm

    with _store(db) as store:
        params = _require(store, run_id)["params"]
    spec = spec_of(params)
    folder = Path(params["folder"])
    record = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    device = record["device"]
    method = get_method(spec.method if arm == "method" else spec.baseline)
    path = metrics_path(folder, arm, pair)
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
        with _store(db) as store:
            return bool(_require(store, run_id)["cancel_requested"])

    if spec.model:
        from radar.repro.checkpoint import eval_rows, load_dataset
        from radar.repro.trainer import train_checkpoint_arm

        data = load_dataset(params["dataset_path"])
        if data.sha256 != params["dataset_sha256"]:
            raise ReproError(f"{data.path} changed since the run was submitted; submit a new run")
        preset = get_checkpoint_preset(spec.preset)
        if checkpoint_threads(device, record.get("model") or {}):
            torch.set_num_threads(1)  # a tiny model on CPU: one thread (as the tiny toy preset; see sizes.py)
        summary = train_checkpoint_arm(
            model_path=Path(params["model_path"]),
            method=method,
            preset=preset,
            data=data,
            steps=record["steps"],
            seed=rl_seed(arm, pair),
            device=device,
            lora=spec.lora,
            output_dir=folder / "trl" / f"{arm}-seed{pair}",
            on_record=on_record,
            should_cancel=should_cancel,
            eval_rows=eval_rows(data, preset.eval_prompts),
        )
        return summary, records
    task, size = get_task(spec.task), get_size(spec.preset)
    if device == "cpu" and size.cpu_threads:
        torch.set_num_threads(size.cpu_threads)
    summary = train_arm(
        policy_path=Path(record["policies"][pair]["path"]),
        method=method,
        task=task,
        size=size,
        steps=record["steps"],
        seed=rl_seed(arm, pair),
        device=device,
        output_dir=folder / "trl" / f"{arm}-seed{pair}",
        on_record=on_record,
        should_cancel=should_cancel,
        eval_sets=eval_sets(task, size),
    )
    return summary, records


def eval_overlap(task: Any, size: Any, steps: int, pairs: list[int], warm: list[dict[str, Any]]) -> dict[str, Any]:
    """Measured share of held-out problems that also occur in the SFT data or an RL prompt stream
    (by canonical problem key, so a reordering of a training problem counts as seen)."""
    from radar.repro.policy import eval_sets
    from radar.repro.tasks import rl_stream

    rl_keys = {
        task.key(ex)
        for pair in pairs
        for arm in ("method", "baseline")
        for ex in rl_stream(task, steps * size.prompts_per_step, rl_seed(arm, pair), size.difficulty)
    }
    out: dict[str, Any] = {"by": "canonical problem key (reorderings of a problem count as the same problem)"}
    for name, exs in eval_sets(task, size).items():
        if name == "curve":
            continue
        in_rl = sum(task.key(e) in rl_keys for e in exs)
        in_sft = max(int(((w.get("eval_overlap") or {}).get(name) or {}).get("in_sft", 0)) for w in warm)
        measured = all(name in (w.get("eval_overlap") or {}) for w in warm)
        out[name] = {
            "prompts": len(exs),
            "in_sft": in_sft if measured else None,
            "in_rl": in_rl,
            "share": round(max(in_sft, in_rl) / len(exs), 4) if exs and measured else None,
        }
    out["share"] = max(
        (v["share"] for k, v in out.items() if isinstance(v, dict) and v["share"] is not None), default=None
    )
    return out


def _toy_record(
    db: Path,
    run_id: str,
    spec: RunSpec,
    params: dict[str, Any],
    device: str,
    steps: int,
    pairs: list[int],
    arms: dict[str, Any],
    log: Any,
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """The run record of a toy-task run: its warm starts (trained and cached on first use) and overlap."""
    import torch

    from radar.repro.policy import cached_policy
    from radar.repro.trainer import build_config

    task, size = get_task(spec.task), get_size(spec.preset)
    folder = Path(params["folder"])

    def log_and_beat(msg: str) -> None:  # the warm start logs every 50 SFT steps: keep the heartbeat fresh
        log(msg)
        with _store(db) as store:
            store.update_run(run_id, heartbeat_at=utc_now())

    policies = []
    for pair in pairs:
        path, warm = cached_policy(
            Path(params["policy_cache"]), task, size, torch.device(device), log=log_and_beat, pair=pair
        )
        policies.append({"path": str(path), **warm})
    overlap = eval_overlap(task, size, steps, pairs, policies)
    record = {
        "id": run_id,
        "spec": asdict(spec),
        "device": device,
        "steps": steps,
        "seeds": pairs,
        "rl_seeds": {arm: [rl_seed(arm, p) for p in pairs] for arm in arms},
        "policies": policies,
        "policy": policies[0],  # the first warm start (exports use it)
        "eval_overlap": overlap,
        "configs": {
            arm: build_config(m, size, task, steps=steps, seed=0, output_dir=folder / "trl", device=device).to_dict()
            for arm, m in arms.items()
        },
        "methods": {arm: asdict(m) for arm, m in arms.items()},
        "cuda_device": torch.cuda.get_device_name(0) if device == "cuda" else None,
        "torch_threads": torch.get_num_threads(),
        **provenance(),
    }
    return record, overlap, policies


def _checkpoint_record(
    run_id: str,
    spec: RunSpec,
    params: dict[str, Any],
    device: str,
    steps: int,
    pairs: list[int],
    arms: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """The run record of a checkpoint run: every seed pair starts from the checkpoint itself; the
    held-out overlap is measured against every arm's RL prompt stream."""
    import torch

    from radar.repro.checkpoint import eval_overlap as math_overlap
    from radar.repro.checkpoint import load_dataset, model_fingerprint, rl_stream
    from radar.repro.trainer import build_checkpoint_config

    preset = get_checkpoint_preset(spec.preset)
    folder = Path(params["folder"])
    data = load_dataset(params["dataset_path"])
    if data.sha256 != params["dataset_sha256"]:
        raise ReproError(f"{data.path} changed since the run was submitted; submit a new run")
    streams = [
        rl_stream(data, steps * preset.prompts_per_step, rl_seed(arm, p))
        for p in pairs
        for arm in ("method", "baseline")
    ]
    overlap = math_overlap(data, streams, preset.eval_prompts)
    model = model_fingerprint(Path(params["model_path"]))
    if checkpoint_threads(device, model):
        torch.set_num_threads(1)  # recorded below as the arms will run
    policies = [{"path": params["model_path"], "checkpoint": True} for _ in pairs]
    record = {
        "id": run_id,
        "spec": asdict(spec),
        "device": device,
        "steps": steps,
        "seeds": pairs,
        "rl_seeds": {arm: [rl_seed(arm, p) for p in pairs] for arm in arms},
        "model": model,
        "dataset": data.summary(),
        "lora": spec.lora,
        "policies": policies,
        "policy": policies[0],  # exports use it: the checkpoint itself
        "eval_overlap": overlap,
        "configs": {
            arm: build_checkpoint_config(
                m, preset, steps=steps, seed=0, output_dir=folder / "trl", device=device, lora=spec.lora
            ).to_dict()
            for arm, m in arms.items()
        },
        "methods": {arm: asdict(m) for arm, m in arms.items()},
        "cuda_device": torch.cuda.get_device_name(0) if device == "cuda" else None,
        "torch_threads": torch.get_num_threads(),
        **provenance(),
    }
    return record, overlap, policies


def _execute(db: Path, run_id: str, params: dict[str, Any], log: Any) -> dict[str, Any]:
    import torch

    from radar.repro.plots import plot_run
    from radar.repro.profile import mean_profile
    from radar.repro.verdict import verdict

    spec = spec_of(params)
    method, baseline = get_method(spec.method), get_method(spec.baseline)
    device = resolve_device(spec.device)
    steps = spec.total_steps
    folder = Path(params["folder"])
    arms = {"method": method, "baseline": baseline}
    pairs = list(range(spec.seeds))
    started = time.perf_counter()
    size: Any
    if spec.model:
        size = get_checkpoint_preset(spec.preset)
        record, overlap, policies = _checkpoint_record(run_id, spec, params, device, steps, pairs, arms)
        title_what = f"{Path(params['model_path']).name} on {Path(params['dataset_path']).name}"
    else:
        task, size = get_task(spec.task), get_size(spec.preset)
        title_what = task.name
        if device == "cpu" and size.cpu_threads:
            torch.set_num_threads(size.cpu_threads)  # 2 threads on a tiny model are ~15x slower under load
        record, overlap, policies = _toy_record(db, run_id, spec, params, device, steps, pairs, arms, log)
    warm_s = time.perf_counter() - started  # ~0 when every warm start was cached
    write_text_atomic(folder / "run.json", json.dumps(record, indent=2, default=str))
    if overlap["share"]:
        raise ReproError(f"held-out problems overlap training data ({overlap}); this is a bug in repro/tasks.py")

    total = len(arms) * len(pairs) * steps
    runs: dict[str, dict[int, dict[str, Any]]] = {arm: {} for arm in arms}
    summaries: dict[str, dict[int, dict[str, Any]]] = {arm: {} for arm in arms}
    # arms interleaved per pair (a partial run pairs), their order alternating between pairs so that
    # order effects on timing (the process's first arm pays one-off costs) fall on both arms alike
    jobs = [(arm, pair) for pair in pairs for arm in (list(arms) if pair % 2 == 0 else list(arms)[::-1])]
    workers = parallel_arms(device, size, len(jobs))
    last_beat = 0.0

    def beat(force: bool = False) -> None:
        nonlocal last_beat
        now = time.perf_counter()
        if force or now - last_beat > 1.0:
            last_beat = now
            done = sum(_count_lines(metrics_path(folder, a, s)) for a, s in jobs)
            with _store(db) as store:
                store.update_run(run_id, progress=round(min(done / total, 1.0), 4), heartbeat_at=utc_now())

    def keep(arm: str, pair: int, summary: dict[str, Any], records: list[dict[str, Any]]) -> None:
        runs[arm][pair] = {"records": records, "final": summary["final"]}
        summaries[arm][pair] = summary
        log(f"  {arm} seed pair {pair} (RL seed {rl_seed(arm, pair)}): {summary}")

    train_started = time.perf_counter()
    log(
        f"training {len(jobs)} arms ({', '.join(f'{a} pair {s}' for a, s in jobs)}), {steps} steps each on "
        f"{device}, {workers} at a time"
    )
    if workers == 1:
        for arm, pair in jobs:
            keep(arm, pair, *arm_job(str(db), run_id, arm, pair, os.getpid(), on_step=beat))
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
            futures = {pool.submit(arm_job, str(db), run_id, arm, pair, os.getpid()): (arm, pair) for arm, pair in jobs}
            pending = set(futures)
            while pending:
                finished, pending = wait_futures(pending, timeout=1.0, return_when=FIRST_EXCEPTION)
                beat()
                for fut in finished:
                    keep(*futures[fut], *fut.result())  # re-raises the arm's error (or RunCancelled)
        except BaseException:
            stop.touch()  # the other arms stop at their next step
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
    train_wall = time.perf_counter() - train_started
    beat(force=True)

    with _store(db) as store:
        calibration = calibration_for(
            store, spec.task, spec.preset, steps, exclude=run_id, model=params.get("model_path") or ""
        )
    profiles = {arm: {p: s["profile"] for p, s in per.items() if s.get("profile")} for arm, per in summaries.items()}
    doc = verdict(method, baseline, runs, calibration=calibration, profiles=profiles)
    names = {"method": method.name, "baseline": f"{baseline.name} (baseline)"}
    title = f"{method.name} vs {baseline.name} on {title_what} ({size.name}, {len(pairs)} seed pairs, {device})"
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
        "warm_start_cached": all(warm_s < 0.5 * float(p.get("seconds") or 0) for p in policies),
        "warm_start_sampled_accuracy": [p.get("sampled_accuracy") for p in policies],
        "heldout": {arm: {str(s): v["final"] for s, v in per.items()} for arm, per in summaries.items()},
        "final_heldout_greedy": {arm: doc["metrics"]["heldout_greedy"][f"{arm}_mean"] for arm in arms},
        "eval_seconds": round(sum(s["eval_seconds"] for arm in summaries.values() for s in arm.values()), 2),
        "device": device,
    }
    write_text_atomic(folder / "verdict.json", json.dumps(doc | {"metrics": metrics}, indent=2))
    log(doc["summary"])
    prov = {k: record[k] for k in ("git_commit", "repro_dirty", "python", "packages")}
    return {
        "verdict": doc,
        "metrics": metrics,
        "plots": [str(p) for p in plots],
        "folder": str(folder),
        "eval_overlap": overlap,
        "profile": {
            arm: mean_profile([per[p] for p in sorted(per)]) | {"per_seed": {str(p): per[p] for p in sorted(per)}}
            for arm, per in profiles.items()
        },
        "record": {"device": device, "cuda_device": record["cuda_device"], "seeds": pairs, **prov},
    }
