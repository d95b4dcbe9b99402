"""The worker's execution of one run (inside ``python -m radar.repro.worker``): build the run record, train
every (arm, seed pair), then write the verdict, its plots and RUN_DIR/verdict.json.

Arms train one after another in the worker, or in spawned child processes when single-threaded CPU arms
have idle cores (``parallel_arms``). Each arm writes metrics/{arm}-seed{pair}.jsonl as it goes and stops at
its next step when the run's cancel flag is set, RUN_DIR/.stop appears, or the worker is gone.

A toy-task run's device, record and arms come from its engine (``toy_engine``: repro/toy_engine.py, TRL;
``RADAR_REPRO_TOY_ENGINE`` names another module with the same functions, a seam for the test suite).
"""

from __future__ import annotations

import importlib
import json
import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import msgspec

from radar.repro.adoption import calibration_for
from radar.repro.checkpoint import eval_rows, load_dataset
from radar.repro.errors import ReproError, RunCancelled
from radar.repro.methods import Method
from radar.repro.plugins.catalog import plugin_catalog
from radar.repro.power import DEFAULT_EFFECT, Setting
from radar.repro.profile_stats import mean_profile
from radar.repro.record import checkpoint_record, resolve_device
from radar.repro.records import RunParams, RunRecord, setup_text
from radar.repro.runs_table import Runs
from radar.repro.shapes import (
    ArmRun,
    ArmSummary,
    Calibration,
    ModelFingerprint,
    ResultModel,
    ResultRecord,
    RunJson,
    RunMetrics,
    RunResult,
    StepRecord,
    Timing,
    VerdictMetric,
)
from radar.repro.sizes import get_checkpoint_preset, get_size
from radar.repro.spec import (
    KIND,
    TINY_MODEL_BYTES,
    RunSpec,
    checkpoint_threads,
    log_path,
    metrics_path,
    record_path,
    rl_seed,
    run_catalog,
    run_folder,
    spec_of,
    verdict_path,
)
from radar.repro.supervise import pid_alive, require
from radar.repro.tasks import get_task
from radar.repro.toy_arm import ToyArm
from radar.repro.verdict import verdict
from radar.store import Store, utc_now
from radar.store.files import write_text_atomic

Log = Callable[[str], None]
TOY_ENGINE_ENV = "RADAR_REPRO_TOY_ENGINE"


def toy_engine() -> ModuleType:
    """repro/toy_engine.py (TRL), or the module ``RADAR_REPRO_TOY_ENGINE`` names, with the same three functions
    (``resolve_device``, ``toy_record``, ``train_toy_arm``): a test seam, inherited by the worker and its arm
    processes (the suite's life-cycle tests train with tests/fast_toy_engine.py there)."""
    name = os.environ.get(TOY_ENGINE_ENV) or "radar.repro.toy_engine"
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ReproError(f"{TOY_ENGINE_ENV}={name!r} cannot be imported ({exc}); unset it to train with TRL") from exc


class _Terminated(Exception):  # noqa: N818
    pass


def _on_signal(signum: int, _frame: Any) -> None:
    raise _Terminated(f"terminated by {signal.Signals(signum).name}")


def _terminated(exc: BaseException) -> _Terminated | None:
    """The signal's exception in ``exc``'s cause/context chain, if a stop signal is why the run ended."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, _Terminated):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


@contextmanager
def _store(db: Path | str) -> Iterator[Runs]:
    """The runs table of the database at ``db``, on a connection of this process's own."""
    with Store(Path(db)) as store:
        yield Runs(store)


def execute(db: Path, run_id: str, log: Log = print) -> RunRecord:
    """Train every (arm, seed), then write plots and the verdict. Runs inside the worker process."""
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGHUP, _on_signal)
    with _store(db) as store:
        run = require(store, run_id)
        if run.status != "queued":
            raise ReproError(f"run {run_id} is {run.status}, not queued; submit a new run")
        store.update_run(run_id, status="running", pid=os.getpid(), started_at=utc_now(), heartbeat_at=utc_now())
    try:
        result = _execute(db, run_id, run.params, log)
    except RunCancelled:
        with _store(db) as store:
            store.update_run(run_id, status="cancelled", finished_at=utc_now(), error="cancelled by request")
        log("run cancelled")
        with _store(db) as store:
            return require(store, run_id)
    except BaseException as exc:
        logfile = log_path(run_folder(run))
        message = f"{type(exc).__name__}: {exc}"
        import traceback

        log(traceback.format_exc())
        signalled = _terminated(exc)  # a library may wrap the signal's exception in its own (transformers does)
        if signalled is not None:
            message = f"{type(signalled).__name__}: {signalled}"
        with _store(db) as store:
            if signalled is not None and require(store, run_id).cancel_requested:
                store.update_run(run_id, status="cancelled", finished_at=utc_now(), error=f"cancelled ({signalled})")
                return require(store, run_id)
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
        return require(store, run_id)


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
        while pid_alive(parent_pid):
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
) -> tuple[ArmSummary, list[StepRecord]]:
    """Train one (arm, seed pair): in the worker itself, or in a spawned child when arms run in parallel."""
    with _store(db) as store:
        params = require(store, run_id).params
    presets = run_catalog(params, plugin_catalog())
    spec = spec_of(params, presets)
    folder = Path(params["folder"])
    record: RunJson = json.loads(record_path(folder).read_text(encoding="utf-8"))
    device = record["device"]
    method = presets.get(spec.method if arm == "method" else spec.baseline)
    path = metrics_path(folder, arm, pair)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("", encoding="utf-8")
    records: list[StepRecord] = []
    stop = folder / ".stop"

    def on_record(rec: StepRecord) -> None:
        records.append(rec)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec) + "\n")
        if on_step is not None:
            on_step()

    def should_cancel() -> bool:
        if stop.exists() or not pid_alive(parent_pid):
            return True
        with _store(db) as store:
            return require(store, run_id).cancel_requested

    policy = next(p for p in record["policies"] if p.get("pair", pair) == pair)
    if spec.model:
        import torch  # defers torch

        from radar.repro.trainer import train_checkpoint_arm  # defers torch, transformers, trl

        data = load_dataset(params["dataset_path"])
        if data.sha256 != params["dataset_sha256"]:
            raise ReproError(f"{data.path} changed since the run was submitted; submit a new run")
        preset = get_checkpoint_preset(spec.preset)
        if checkpoint_threads(device, cast(ModelFingerprint, record.get("model") or {})):
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
    toy = ToyArm(
        policy_path=Path(policy["path"]),
        method=method,
        task=get_task(spec.task),
        size=get_size(spec.preset),
        steps=record["steps"],
        seed=rl_seed(arm, pair),
        device=device,
        output_dir=folder / "trl" / f"{arm}-seed{pair}",
        on_record=on_record,
        should_cancel=should_cancel,
    )
    summary = toy_engine().train_toy_arm(toy)
    return summary, records


def _execute(db: Path, run_id: str, params: RunParams, log: Log) -> RunResult:
    presets = run_catalog(params, plugin_catalog())
    spec = spec_of(params, presets)
    arms = {"method": presets.get(spec.method), "baseline": presets.get(spec.baseline)}
    engine = None if spec.model else toy_engine()
    device = resolve_device(spec.device) if engine is None else engine.resolve_device(spec.device)
    folder = Path(params["folder"])
    started = time.perf_counter()
    size: Any
    if engine is None:
        size = get_checkpoint_preset(spec.preset)
        record, overlap, policies = checkpoint_record(run_id, spec, params, device, arms)
        title_what = f"{Path(params['model_path']).name} on {Path(params['dataset_path']).name}"
    else:
        task, size = get_task(spec.task), get_size(spec.preset)
        title_what = task.name

        def log_and_beat(msg: str) -> None:  # the warm start logs every 50 SFT steps: keep the heartbeat fresh
            log(msg)
            with _store(db) as store:
                store.update_run(run_id, heartbeat_at=utc_now())

        record, overlap, policies = engine.toy_record(run_id, spec, params, device, arms, log_and_beat)
        record["engine"] = engine.__name__  # provenance: a run trained by a test seam's engine says so in run.json
    warm_s = time.perf_counter() - started  # ~0 when every warm start was cached
    write_text_atomic(record_path(folder), json.dumps(msgspec.to_builtins(record, enc_hook=str), indent=2))
    if overlap.share:
        raise ReproError(f"held-out problems overlap training data ({overlap}); this is a bug in repro/tasks.py")

    pairs, steps = spec.pairs, spec.total_steps
    total = len(arms) * len(pairs) * steps
    summaries: dict[str, dict[int, ArmSummary]] = {arm: {} for arm in arms}
    records: dict[str, dict[int, list[StepRecord]]] = {arm: {} for arm in arms}
    # arms interleaved per pair (a partial run pairs), their order alternating between pairs so that
    # order effects on timing (the process's first arm pays one-off costs) fall on both arms alike
    jobs = [(arm, pair) for i, pair in enumerate(pairs) for arm in (list(arms) if i % 2 == 0 else list(arms)[::-1])]
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

    def keep(arm: str, pair: int, summary: ArmSummary, recs: list[StepRecord]) -> None:
        records[arm][pair] = recs
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
    beat(force=True)

    with _store(db) as store:
        calibration = calibration_for(store.list_runs(kind=KIND), params, exclude=run_id)
    timing = Timing(
        train_wall_s=round(time.perf_counter() - train_started, 2),
        warm_start_seconds=round(warm_s, 2),
        warm_start_cached=all(warm_s < 0.5 * float(p.get("seconds") or 0) for p in policies),
        warm_start_sampled_accuracy=[p.get("sampled_accuracy") for p in policies],
        parallel_arms=workers,
        device=device,
    )
    result = finish(
        folder,
        arms,
        spec,
        params,
        summaries,
        records,
        calibration=calibration,
        title=f"{arms['method'].name} vs {arms['baseline'].name} on {title_what} ({size.name}, {len(pairs)} seed "
        f"pairs, {device})",
        timing=timing,
        started=started,
    )
    log(result.verdict.summary)
    provenance = ResultRecord(  # with the run record's provenance
        device=device,
        cuda_device=record["cuda_device"],
        seeds=pairs,
        git_commit=record["git_commit"],
        repro_dirty=record["repro_dirty"],
        python=record["python"],
        packages=record["packages"],
    )
    return replace(result, eval_overlap=overlap, record=provenance)


def finish(
    folder: Path,
    arms: dict[str, Method],
    spec: RunSpec,
    params: RunParams,
    summaries: dict[str, dict[int, ArmSummary]],
    records: dict[str, dict[int, list[StepRecord]]],
    *,
    calibration: Calibration | None,
    title: str,
    timing: Timing,
    started: float,
) -> RunResult:
    """The verdict of trained arms (summaries and step records per arm and pair), its plots, and
    RUN_DIR/verdict.json: the verdict document with its tests, and the run's timing beside them."""
    from radar.repro.plots import plot_run  # defers matplotlib

    runs: dict[str, dict[int, ArmRun]] = {
        arm: {p: ArmRun(records=records[arm][p], final=s.final) for p, s in per.items()}
        for arm, per in summaries.items()
    }
    profiles = {arm: {p: s.profile for p, s in per.items() if s.profile} for arm, per in summaries.items()}
    parameters = next((s.parameters for per in summaries.values() for s in per.values()), None)
    weights = int(params.get("weights") or 0)
    setting = Setting(
        toy=spec.toy,
        quick=not spec.toy and (spec.preset == "ckpt-quick" or weights < TINY_MODEL_BYTES),
        steps=spec.total_steps,
        seeds=spec.seeds,
        effect=float((params.get("power") or {}).get("effect") or DEFAULT_EFFECT),
        setup=setup_text(params, parameters),
    )
    doc = verdict(
        arms["method"],
        arms["baseline"],
        runs,
        calibration=calibration,
        profiles=profiles,
        setting=setting,
        planned=params.get("power"),
    )
    names = {"method": arms["method"].name, "baseline": f"{arms['baseline'].name} (baseline)"}
    plots = plot_run(runs, names, folder / "plots", title)
    train_s = sum(s.seconds for per in summaries.values() for s in per.values())
    trained_steps = sum(s.steps for per in summaries.values() for s in per.values())
    metrics = RunMetrics(
        **msgspec.structs.asdict(timing),
        time_to_verdict_s=round(time.perf_counter() - started, 2),
        train_seconds=round(train_s, 2),
        steps_per_s=round(trained_steps / train_s, 3) if train_s else None,  # per arm process
        steps_per_s_wall=round(trained_steps / timing.train_wall_s, 3) if timing.train_wall_s else None,
        heldout={arm: {str(p): s.final for p, s in per.items()} for arm, per in summaries.items()},
        final_heldout_greedy={arm: _arm_mean(doc.metrics["heldout_greedy"], arm) for arm in arms},
        eval_seconds=round(sum(s.eval_seconds for per in summaries.values() for s in per.values()), 2),
    )
    written = msgspec.to_builtins(doc) | {"timing": msgspec.to_builtins(metrics)}  # verdict.json: then its timing
    write_text_atomic(verdict_path(folder), json.dumps(written, indent=2))
    return RunResult(
        verdict=doc,
        metrics=metrics,
        plots=[str(p) for p in plots],
        folder=str(folder),
        model=ResultModel(name=setup_text(params, parameters).split(",")[0], parameters=parameters, toy=spec.toy),
        profile={
            arm: mean_profile([per[p] for p in sorted(per)]) | {"per_seed": {str(p): per[p] for p in sorted(per)}}
            for arm, per in profiles.items()
        },
    )


def _arm_mean(test: VerdictMetric, arm: str) -> float | None:
    """The arm's mean held-out score in a verdict metric ("method" or "baseline")."""
    return test.method_mean if arm == "method" else test.baseline_mean
