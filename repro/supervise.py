"""A run's life cycle, as the parent process sees it: submit, start the worker, wait, cancel, reap.

    queued --worker starts--> running --all arms trained--> done
                                  |--exception / signal----> failed  (error + log path)
                                  |--cancel flag------------> cancelled
    running, but the worker process is gone --reap()--> failed ("worker died", log path)

A run always executes in a worker subprocess (``python -m radar.repro.worker --db DB RUN_ID``, whose work is
repro/execute.py) with its output in RUN_DIR/log.txt: a foreground ``radar repro run`` waits for it (and stops
it on SIGINT, SIGTERM or SIGHUP), a background one does not. Every read of the run list first reaps runs whose
worker died (SIGKILL, OOM, reboot), so no run is left "running" for ever.

``submit`` is called by the app's repro API only (app/reproductions.py), which also picks the run's folder,
seed pairs and look; nothing here knows the workspace layout.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from radar.repro.errors import ReproError
from radar.repro.records import RunParams, RunRecord
from radar.repro.runs_table import Runs
from radar.repro.spec import ACTIVE, KIND, check_inputs, log_path, run_folder, spec_of
from radar.store import utc_now

STALE_HEARTBEAT_S = 30 * 60  # a live worker beats every step / 50 SFT steps; this only catches pid reuse
STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


def submit(store: Runs, run_id: str, params: RunParams) -> RunRecord:
    """Record a queued run (``params``: repro.spec.record_params plus what the app adds). A checkpoint run's
    model and data set are checked first: nothing is stored when they are bad."""

    spec = spec_of(params)
    stored = params | check_inputs(spec)
    store.create_run(run_id, KIND, stored)
    Path(stored["folder"]).mkdir(parents=True, exist_ok=True)
    return require(store, run_id)


def start(store: Runs, run_id: str) -> subprocess.Popen[bytes]:
    """Start the worker process for a queued run; its output goes to the run's log.txt."""
    run = require(store, run_id)
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


def wait(
    store: Runs,
    run_id: str,
    proc: subprocess.Popen[bytes],
    on_progress: Callable[[RunRecord], None] | None = None,
) -> RunRecord:
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
                run = require(store, run_id)
                if run.progress != last:
                    last = run.progress
                    on_progress(run)
        if received:
            stop_worker(store, run_id, proc, received[0])
    finally:
        for name, handler in previous.items():
            signal.signal(getattr(signal, name), handler)
    reap(store)
    return require(store, run_id)


def stop_worker(store: Runs, run_id: str, proc: subprocess.Popen[bytes], why: str, grace_s: float = 20.0) -> None:
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
    run = require(store, run_id)
    if run.status in (*ACTIVE, "cancelled"):  # a run that finished meanwhile keeps its result
        store.update_run(
            run_id, status="cancelled", finished_at=utc_now(), error=f"stopped by {why} to `radar repro run`"
        )


def cancel(store: Runs, run_id: str) -> RunRecord:
    """A queued run is cancelled at once; a running one at its worker's next step."""
    run = require(store, run_id)
    if run.status == "queued" and not run.pid:
        store.update_run(run_id, status="cancelled", finished_at=utc_now(), error="cancelled before it started")
    elif run.active:
        store.update_run(run_id, cancel_requested=1)
    return require(store, run_id)


# -- reading ----------------------------------------------------------------------------------------
def get(store: Runs, run_id: str, reap_first: bool = True) -> RunRecord:
    if reap_first:
        reap(store)
    return require(store, run_id)


def list_runs(store: Runs, status: str = "") -> list[RunRecord]:
    reap(store)
    return store.list_runs(kind=KIND, status=status)


def require(store: Runs, run_id: str) -> RunRecord:
    run = store.get_run(run_id)
    if run is None or run.kind != KIND:
        raise ReproError(f"no reproduction run {run_id!r}; list them with `radar repro list`")
    return run


def pid_alive(pid: int) -> bool:
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


def reap(store: Runs) -> list[str]:
    """Mark failed every active run whose worker is gone (or silent for too long). Returns their ids."""
    reaped = []
    for run in store.list_runs(kind=KIND):
        if not run.active or not run.pid:
            continue
        if pid_alive(run.pid) and _age_s(run.heartbeat_at) < STALE_HEARTBEAT_S:
            continue
        log = log_path(Path(run.params["folder"])) if run.params.get("folder") else Path("(no run folder)")
        store.update_run(
            run.id,
            status="failed",
            finished_at=utc_now(),
            error=f"worker process {run.pid} died without finishing (killed?); its log: {log}",
            result=run.result | {"log": str(log), "log_tail": _tail(log)},
        )
        reaped.append(run.id)
    return reaped


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
