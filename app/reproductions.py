"""The repro API: every reproduction run is specified, planned, submitted, listed, cancelled, exported and
queued here. Built by ``app.wiring.reproductions`` and used by the CLI (app/cmd_repro.py), the dashboard
(app/dashboard/page_repro.py, reproduce.py) and `radar weekly`'s reproduce step; the one call of
``repro.supervise.submit`` is in ``Reproductions.submit``.

- **Presets**: a ``Catalog`` value (built-in plus radar.toml's [[repro.presets]]), never a global registry.
- **Power up front**: ``plan`` gives the minimum detectable effect at the run's seed pairs from the matching
  A/A run or the stored seed noise of that model and task (repro/power.py), before anything trains.
- **Seeds fixed before the run; looks**: ``submit`` numbers the run as the next look at its experiment (all
  its settings but the seed pairs) and gives it seed pairs no earlier look used, so a re-run is a replication
  and adding seeds is a new run; repro/adoption.py corrects across the looks.
- **The queue** (weekly, the dashboard's Reproduce button): ``queue`` submits a run with [repro]'s settings
  unless the same experiment with the same seeds is queued, running or done (its ``dedupe_key``); ``work``
  runs the queue (one worker per workspace, `radar repro work`), ``start_worker`` starts that detached.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import msgspec

from radar.app.run_summaries import finished_runs
from radar.app.settings import ReproConfig
from radar.reports.recommend import Recommendation
from radar.reports.runs import RunSummary
from radar.repro import supervise
from radar.repro.export import export_run
from radar.repro.methods import Catalog, PresetSettings
from radar.repro.records import RunAdoption, RunRecord
from radar.repro.runs_table import Runs
from radar.repro.spec import (
    KIND,
    RunSpec,
    check_device,
    check_inputs,
    log_path,
    make_spec,
    new_run_id,
    record_params,
    run_catalog,
    spec_of,
    spec_params,
)
from radar.repro.verdict_record import Power
from radar.store import Workspace, WorkspaceError
from radar.store.errors import RadarError

Log = Callable[[str], None]
REPRO_LOCK = "repro work"  # one queue worker per workspace
QUEUE_LOCK = "repro queue"
DEDUPE_STATUSES = ("queued", "running", "done")  # a failed or cancelled run does not block a new one
LOOK_STATUSES = ("queued", "running", "done")  # earlier looks at an experiment (their seed pairs are taken)
DEFAULT_EFFECT = 0.05  # repro.power.DEFAULT_EFFECT (imported there with scipy, so only when a plan is made)


@dataclass
class Queued:
    """One reproduction the queue was asked for: ``status`` "queued" (new run) or "already <status>"."""

    method: str
    run_id: str
    status: str
    key: str

    @property
    def new(self) -> bool:
        return self.status == "queued"


# what identifies an experiment: the RunSpec's fields but the device and seed pairs, the steps, each arm's settings
ExperimentDoc = dict[str, str | int | bool | dict[str, PresetSettings]]


def _hash(doc: ExperimentDoc) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()[:20]


def _experiment_doc(spec: RunSpec, presets: Catalog, dataset_sha256: str = "") -> ExperimentDoc:
    doc: ExperimentDoc = {k: v for k, v in asdict(spec).items() if k not in ("device", "seeds", "first_pair")}
    doc["steps"] = spec.total_steps
    doc["settings"] = {arm: presets.settings(getattr(spec, arm)) for arm in ("method", "baseline")}
    dataset = doc.get("dataset")
    if not dataset_sha256 and isinstance(dataset, str) and dataset and Path(dataset).is_file():
        dataset_sha256 = hashlib.sha256(Path(dataset).read_bytes()).hexdigest()
    if dataset_sha256:  # the data, not where it lies (`radar repro run --dataset` keeps a relative path)
        doc["dataset"] = f"sha256:{dataset_sha256}"
    return doc


def experiment_key(spec: RunSpec, presets: Catalog, dataset_sha256: str = "") -> str:
    """What makes two runs looks at the same experiment: both arms' full settings, the task or data (its content
    hash), model, size and steps; not the seed pairs nor the device."""
    return _hash(_experiment_doc(spec, presets, dataset_sha256))


def dedupe_key(spec: RunSpec, presets: Catalog, dataset_sha256: str = "") -> str:
    """What makes two runs the same queued request: the experiment and its number of seed pairs."""
    return _hash(_experiment_doc(spec, presets, dataset_sha256) | {"seeds": spec.seeds})


def _keys_of(run: RunRecord) -> tuple[str, str] | None:
    """(experiment, dedupe) keys of a stored run, from its params (older records: from its own spec and presets)."""
    p = run.params
    if p.get("experiment") and p.get("dedupe_key"):
        return str(p["experiment"]), str(p["dedupe_key"])
    try:
        spec = spec_of(p)  # the run's own preset definitions, not radar.toml's current ones
        presets, sha = run_catalog(p), str(p.get("dataset_sha256") or "")
        return experiment_key(spec, presets, sha), dedupe_key(spec, presets, sha)
    except RadarError:  # an old record or a preset no longer defined
        return None


@dataclass(frozen=True)
class Reproductions:
    """The repro API of one workspace (see the module docstring)."""

    ws: Workspace
    config: ReproConfig
    presets: Catalog

    # -- specs and power ------------------------------------------------------------------------------
    def spec(self, method: str, baseline: str = "", **fields: Any) -> RunSpec:
        """A validated run of ``method`` (a built-in or radar.toml preset) against ``baseline`` (its own by
        default)."""
        return make_spec(self.presets, method=method, baseline=baseline, **fields)

    def configured_spec(self, method: str) -> RunSpec:
        """The run `radar weekly` and the dashboard's Reproduce button queue for ``method``: [repro]'s settings."""
        cfg = self.config
        return self.spec(
            method,
            task=cfg.task,
            preset=cfg.preset,
            seeds=cfg.seeds,
            steps=cfg.steps,
            device=cfg.device,
            model=cfg.model,  # RunSpec's defaults ("", False) when [repro] names no checkpoint
            dataset=cfg.dataset,
            lora=cfg.lora,
        )

    @contextmanager
    def runs_table(self) -> Iterator[Runs]:
        """The workspace's runs table (its repository over a Store opened for the block)."""
        with self.ws.store() as store:
            yield Runs(store)

    def plan(self, spec: RunSpec, effect: float = DEFAULT_EFFECT, store: Runs | None = None) -> Power:
        """The run's power at its seed pairs, from the matching A/A run or stored seed noise of that setting."""
        from radar.repro.power import TOY_ASSUMED_SD, plan  # defers scipy

        if store is None:
            with self.runs_table() as opened:
                return self.plan(spec, effect, opened)
        from radar.repro.adoption import stored_noise  # defers scipy

        params = spec_params(spec)
        params |= check_inputs(spec)  # a bad model or data set: one line, before anything is printed or stored
        found = stored_noise(store.list_runs(kind=KIND), params)
        if found is None and spec.toy:
            found = (TOY_ASSUMED_SD, "assumed: the upper end measured on the toy tasks; run an A/A to measure it")
        sd, source = found if found is not None else (None, "")
        return msgspec.convert(plan(spec.seeds, sd, source, effect), Power, from_attributes=True)

    # -- submit (the one call site of repro.supervise.submit) ------------------------------------------
    def submit(
        self,
        spec: RunSpec,
        *,
        power: Power | None = None,
        store: Runs | None = None,
        queued_by: str = "",
        week: str = "",
        first_pair: int | None = None,
    ) -> RunRecord:
        """Record a queued run: the next look at its experiment on fresh seed pairs, with its power plan.
        ``first_pair``: start at this pair instead (a benchmark's timing re-run; that look is then not
        independent of the earlier ones, which repro/adoption.py's replication rule checks)."""
        if store is None:
            with self.runs_table() as opened:
                return self.submit(
                    spec, power=power, store=opened, queued_by=queued_by, week=week, first_pair=first_pair
                )
        experiment = experiment_key(spec, self.presets)
        earlier = [
            r
            for r in store.list_runs(kind=KIND)
            if r.status in LOOK_STATUSES and (keys := _keys_of(r)) is not None and keys[0] == experiment
        ]
        first = max((int(r.params.get("first_pair") or 0) + r.seeds for r in earlier), default=0)
        spec = replace(spec, first_pair=max(spec.first_pair, first) if first_pair is None else first_pair)
        power = power or self.plan(spec, store=store)
        run_id = new_run_id(spec)
        params = record_params(spec, self.presets, self.ws.run_dir(run_id), self.ws.policy_cache_dir) | {
            "experiment": experiment,
            "dedupe_key": dedupe_key(spec, self.presets),
            "look": len(earlier) + 1,
            "power": msgspec.structs.asdict(power),
        }
        if queued_by:
            params |= {"queued_by": queued_by, "queued_for": week}
        return supervise.submit(store, run_id, params)

    def launch(self, spec: RunSpec, power: Power | None = None) -> tuple[RunRecord, subprocess.Popen[bytes]]:
        """Submit and start the worker in the background (the CLI's run, the dashboard's Start run)."""
        check_device(spec.device)
        with self.runs_table() as store:
            run = self.submit(spec, power=power, store=store)
            return run, supervise.start(store, run.id)

    def wait(
        self, run_id: str, proc: subprocess.Popen[bytes], on_progress: Callable[[RunRecord], None] | None = None
    ) -> RunRecord:
        """Wait for a started run (SIGINT/SIGTERM/SIGHUP stop its worker: repro.supervise.wait)."""
        with self.runs_table() as store:
            return supervise.wait(store, run_id, proc, on_progress=on_progress)

    def log_path(self, run_id: str) -> Path:
        return log_path(self.ws.run_dir(run_id))

    # -- reading and control ----------------------------------------------------------------------------
    def runs(self, status: str = "") -> list[RunRecord]:
        with self.runs_table() as store:
            return supervise.list_runs(store, status=status)

    def get(self, run_id: str, reap_first: bool = True) -> RunRecord:
        with self.runs_table() as store:
            return supervise.get(store, run_id, reap_first=reap_first)

    def cancel(self, run_id: str) -> RunRecord:
        with self.runs_table() as store:
            return supervise.cancel(store, run_id)

    def export(self, run_id: str, engine: str, out_dir: Path | None = None, gpus: int = 8) -> list[Path]:
        return export_run(
            self.get(run_id), engine=engine, out_dir=out_dir, num_processes=gpus, runs_root=self.ws.runs_dir
        )

    def adoptions(self, store: Runs) -> dict[str, RunAdoption]:
        from radar.repro.adoption import adoptions  # defers scipy

        return adoptions(store.list_runs(kind=KIND))

    def finished(self, store: Runs) -> list[RunSummary]:
        """Finished runs for the report, each with whether it may drive an "adopt"."""
        return finished_runs(store, self.ws.runs_dir, self.adoptions(store))

    # -- the queue ----------------------------------------------------------------------------------------
    def queue(self, method: str, *, queued_by: str, week: str = "", store: Runs | None = None) -> Queued:
        """Queue ``method`` with [repro]'s settings unless the same experiment with the same seeds is queued,
        running or done (also one started by hand). Nothing is started here."""
        if store is None:
            with self.runs_table() as opened:
                return self.queue(method, queued_by=queued_by, week=week, store=opened)
        spec = self.configured_spec(method)
        key = dedupe_key(spec, self.presets)
        with self._queue_lock():  # look-up and submit as one: two clicks (or weekly and a click) queue one run
            for run in store.list_runs(kind=KIND):  # newest first
                if run.status in DEDUPE_STATUSES and (keys := _keys_of(run)) is not None and keys[1] == key:
                    return Queued(method, run.id, f"already {run.status}", key)
            run = self.submit(spec, store=store, queued_by=queued_by, week=week)
        return Queued(method, run.id, "queued", key)

    @contextmanager
    def _queue_lock(self, wait_s: float = 30.0) -> Iterator[None]:
        """The workspace's queue lock, waited for (a look-up and a submit take well under a second)."""
        deadline = time.monotonic() + wait_s
        while True:
            held = ExitStack()
            try:
                held.enter_context(self.ws.lock(QUEUE_LOCK))
            except WorkspaceError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
                continue
            with held:  # only the acquisition is retried, never the caller's block
                yield
            return

    def queue_recommended(
        self, recommendations: Sequence[Recommendation], budget: int, week: str
    ) -> tuple[list[Queued], int]:
        """Queue the ``reproduce`` recommendations' presets, at most ``budget`` new runs for ``week`` (runs queued
        for it earlier count; duplicates cost nothing). Returns (asked for, budget left)."""
        out: list[Queued] = []
        presets = [r.evidence.preset for r in recommendations if r.action == "reproduce"]
        with self.runs_table() as store:
            left = budget - sum(r.params.get("queued_for") == week for r in store.list_runs(kind=KIND))
            for preset in dict.fromkeys(p for p in presets if p):
                if left <= 0:
                    break
                queued = self.queue(preset, queued_by="weekly", week=week, store=store)
                out.append(queued)
                left -= queued.new
        return out, max(left, 0)

    def queued(self, store: Runs) -> list[RunRecord]:
        """Runs the queue holds (queued by weekly or the dashboard, no worker yet), oldest first."""
        runs = store.list_runs(kind=KIND, status="queued")
        return [r for r in reversed(runs) if r.params.get("queued_by") and not r.pid]

    def work(self, *, log: Log | None = None, max_runs: int = 0) -> list[RunRecord]:
        """`radar repro work`: run the queued reproductions one after another (one worker per workspace), until
        the queue is empty (or ``max_runs`` are done). Returns the finished runs."""
        say = log or (lambda _msg: None)
        done: list[RunRecord] = []
        with self.ws.lock(REPRO_LOCK):
            stopped = self._work(say, max_runs, done)
        # A run queued while this worker was finding the queue empty saw the lock held and started no worker:
        # look again now that the lock is released (start_worker probes the lock only after submitting).
        while not stopped and (not max_runs or len(done) < max_runs):
            with self.runs_table() as store:
                if not self.queued(store):
                    break
            held = ExitStack()
            try:
                held.enter_context(self.ws.lock(REPRO_LOCK))
            except WorkspaceError:
                break  # another worker took the queue over
            with held:
                stopped = self._work(say, max_runs, done)
        return done

    def _work(self, say: Log, max_runs: int, done: list[RunRecord]) -> bool:
        """Run queued runs (appended to ``done``) until none waits or ``max_runs`` are done; True when told to stop."""
        while not max_runs or len(done) < max_runs:
            with self.runs_table() as store:
                waiting = self.queued(store)
                if not waiting:
                    break
                run_id = waiting[0].id
                check_device(waiting[0].params.get("device", "auto"))
                say(f"{run_id}: starting ({len(waiting) - 1} more queued)")
                proc = supervise.start(store, run_id)
                run = supervise.wait(store, run_id, proc)
            verdict = run.verdict.overall if run.verdict else ""
            say(
                f"{run_id}: {run.status}"
                + (f", {verdict}" if verdict else "")
                + (f" ({run.error})" if run.error else "")
            )
            done.append(run)
            if run.status == "cancelled" and "stopped by" in run.error:
                return True  # the worker itself was told to stop
        return False

    def start_worker(self) -> int | None:
        """Start `radar repro work` detached (its output: runs/queue.log) unless one is running; returns its pid."""
        try:
            with self.ws.lock(REPRO_LOCK):
                pass
        except WorkspaceError:
            return None  # a worker is draining the queue already; it picks up the new runs
        log = self.ws.queue_log_path
        try:
            self.ws.runs_dir.mkdir(parents=True, exist_ok=True)
            with open(log, "ab") as out:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "radar.app.cli", "--workspace", str(self.ws.root), "repro", "work"],
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
        except OSError as exc:  # a full disk or a process limit: one line, the run stays queued
            raise WorkspaceError(
                f"could not start the queue worker ({exc.strerror or exc}); the run stays queued: `radar repro work`"
            ) from exc
        return proc.pid

    def reproduce(self, method: str, *, queued_by: str) -> Queued:
        """The dashboard's Reproduce button: queue (the same dedupe as weekly) and make sure a worker runs it."""
        queued = self.queue(method, queued_by=queued_by)
        if queued.new and self.config.run_queued:
            self.start_worker()
        return queued

    def weekly_step(self, recommendations: Sequence[Recommendation], week: str) -> tuple[bool, str]:
        """`radar weekly`'s reproduce step: queue this week's reproduce recommendations within the budget."""
        cfg = self.config
        if not cfg.weekly_runs:
            return True, "off ([repro] weekly_runs = 0)"
        queued, left = self.queue_recommended(recommendations, cfg.weekly_runs, week)
        new = [q for q in queued if q.new]
        parts = [f"{len(new)} queued" + (f" ({', '.join(q.method for q in new)})" if new else "")]
        if len(queued) > len(new):
            parts.append(", ".join(f"{q.method} {q.status}" for q in queued if not q.new))
        wanted = {r.evidence.preset for r in recommendations if r.action == "reproduce"} - {""}
        if not left and len(wanted) > len(queued):
            parts.append(f"this week's budget of {cfg.weekly_runs} is used")
        if new and cfg.run_queued:
            pid = self.start_worker()
            parts.append(f"worker pid {pid}" if pid else "a worker is already running them")
        elif new:
            parts.append("run them with `radar repro work`")
        return True, "; ".join(parts)
