"""`radar repro run|list|show|methods|export|cancel|work`: reproduction runs of GRPO-family methods.

Every command goes through the repro API (app/reproductions.py, built by app.wiring): it opens the
workspace, knows radar.toml's presets and hands repro a Store and explicit paths. `run` prints the run's
power (minimum detectable effect at its seed pairs) before anything trains, and refuses an underpowered
checkpoint run unless told otherwise. `list` and `show` read run records without importing torch.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from rich.markup import escape

from radar.app.cli_helpers import add_command, add_json, json_or
from radar.app.context import Radar
from radar.app.output import console, err_console, print_json
from radar.repro.records import RunParams, RunRecord
from radar.repro.result_shapes import Json, JsonObject
from radar.repro.shapes import Scalar
from radar.store import Workspace, resolve_root
from radar.store.errors import RadarError

if TYPE_CHECKING:  # the API (and wiring) are imported per command
    from radar.app.reproductions import Reproductions


class Underpowered(RadarError):
    """A checkpoint run whose measured noise makes the asked-for effect undetectable at its seed pairs."""


def _api(args: argparse.Namespace) -> Reproductions:
    from radar.app import wiring  # defers scipy, faiss, bm25s

    return wiring.reproductions(Radar(Workspace.open(resolve_root(args.workspace))))


class ProfileBrief(msgspec.Struct, kw_only=True):
    """An arm's efficiency profile in brief (means over its seeds; each seed's own under ``per_seed``): the stored
    profile's values as stored (a key it lacks reads as null)."""

    step_s: Scalar = None
    generate_s: Scalar = None
    reward_s: Scalar = None
    ref_s: Scalar = None
    train_s: Scalar = None
    tokens_per_s: Scalar = None
    gen_tokens_per_s: Scalar = None
    train_tokens_per_s: Scalar = None
    peak_mem_gb: Scalar = None
    peak_mem_kind: Scalar = None
    ref_model: Scalar = None
    device: Scalar = None
    seeds: Scalar = None
    per_seed: dict[str, dict[str, Scalar]] = {}


class RunJson(msgspec.Struct, kw_only=True):
    """`radar repro run/list/show/cancel --json`: what a run compared on what, its verdict, metrics, plots, params,
    life cycle, and each arm's profile in brief; the stored JSON parts as stored (``RunJson.of``)."""

    id: str
    status: str
    setup: str
    verdict: JsonObject | None
    metrics: JsonObject | None
    plots: list[str]
    params: RunParams
    progress: float
    error: str
    created_at: str
    started_at: str
    finished_at: str
    folder: str | None
    eval_overlap: JsonObject | None
    model: JsonObject | None
    profile: dict[str, ProfileBrief] | None
    efficiency: Json

    @classmethod
    def of(cls, run: RunRecord) -> RunJson:
        result, verdict = run.result, run.result.get("verdict")
        return cls(
            id=run.id,
            status=run.status,
            setup=run.setup,
            verdict=verdict,
            metrics=result.get("metrics"),
            plots=list(run.plots),
            params=run.params,
            progress=run.progress,
            error=run.error,
            created_at=run.created_at,
            started_at=run.started_at,
            finished_at=run.finished_at,
            folder=result.get("folder"),
            eval_overlap=result.get("eval_overlap"),
            model=result.get("model"),
            profile=_profile_summary(result.get("profile")),
            efficiency=verdict.get("efficiency") if isinstance(verdict, dict) else None,
        )


def _runs_json(runs: RunRecord | list[RunRecord]) -> Json:
    """The --json of one run or a list of them."""
    doc: Json = msgspec.to_builtins(RunJson.of(runs) if isinstance(runs, RunRecord) else [RunJson.of(r) for r in runs])
    return doc


def _print_runs(runs: RunRecord | list[RunRecord]) -> None:
    print_json(_runs_json(runs))


def _profile_summary(profile: object) -> dict[str, ProfileBrief] | None:
    """Each arm's efficiency profile in brief (None for a run without profiles). A damaged or foreign profile keeps
    its arm: a value that is not a number, text or null reads as null, a per-seed part that does not read as {}."""
    if not isinstance(profile, dict):
        return None
    out: dict[str, ProfileBrief] = {}
    for arm, prof in profile.items():
        if isinstance(prof, dict):
            try:
                out[arm] = msgspec.convert(prof | {"per_seed": prof.get("per_seed") or {}}, ProfileBrief)
            except msgspec.ValidationError:
                scalars = {k: v for k, v in prof.items() if k != "per_seed" and isinstance(v, str | int | float)}
                out[arm] = msgspec.convert(scalars, ProfileBrief)
    return out


def cmd_run(args: argparse.Namespace) -> int:
    api = _api(args)
    spec = api.spec(
        args.method,
        args.baseline,
        task=args.task,
        preset=args.preset,
        seeds=args.seeds,
        steps=args.steps,
        device=args.device,
        model=args.model,
        dataset=args.dataset,
        lora=args.lora,
    )
    from radar.repro.spec import check_device  # defers repro.spec and repro.checkpoint (~50 ms at every start)

    check_device(spec.device)  # one line, before any worker starts or anything is printed
    if not 0 < args.effect <= 100:
        raise RadarError(f"--effect is in points of held-out accuracy, between 0 and 100 (got {args.effect})")
    power = api.plan(spec, effect=args.effect / 100)
    if power.underpowered and not spec.toy and not args.allow_underpowered:
        raise Underpowered(
            f"underpowered: {power.text}; run with --seeds {power.seeds_needed or 20} or pass --allow-underpowered"
        )
    err_console.print(f"power: {escape(power.text)}")
    if power.underpowered or power.mde is None:
        note = "a pipeline check (toy task) cannot drive an adopt anyway" if spec.toy else "it cannot drive an adopt"
        err_console.print(f"warning: this run is underpowered for +{args.effect:g} pts; {note}")
    run, proc = api.launch(spec, power)
    log = api.log_path(run.id)
    if args.background:
        if args.json:
            _print_runs(api.get(run.id, reap_first=False))
        else:
            console.print(
                f"started {run.id} in the background (pid {proc.pid}); follow it with "
                f"`radar repro show {run.id}`, log: {log}"
            )
        return 0
    if not args.json:
        err_console.print(
            f"run {run.id}: {spec.method} vs {spec.baseline}, {run.setup} (look {run.params.get('look')} at this "
            f"experiment); log: {log}"
        )

    def progress(current: RunRecord) -> None:
        if not args.json and err_console.is_terminal:
            err_console.print(f"  {100 * current.progress:.0f}%", end="\r")

    run = api.wait(run.id, proc, on_progress=progress)
    if args.json:
        _print_runs(run)
    else:
        _print_run(run)
    if run.status == "cancelled" and "stopped by" in run.error:
        err_console.print(f"radar: {run.error}; run {run.id} was cancelled and its worker stopped")
        return 1
    return 0 if run.status in ("done", "cancelled") else 2


def _print_run(run: RunRecord) -> None:
    console.print(
        f"[bold]{run.id}[/bold]  {run.status}  {escape(run.method)} vs {escape(run.baseline)}: {escape(run.setup)}"
    )
    if run.error:
        console.print(f"error: {escape(run.error)}")
    if run.verdict is not None:
        v = run.verdict
        console.print(escape(v.summary))
        if v.evidence_class:
            console.print(f"  evidence: {v.evidence_class} ({escape(v.evidence_reason)})")
        if v.power is not None:
            console.print(f"  power: {escape(v.power.text)}")
        if v.claim:
            why = f" ({escape(v.claim_reason)})" if v.claim_reason else ""
            console.print(f"  claim: {escape(v.claim)} -> {v.claim_status}{why}")
        _print_mechanisms(run)
        for t in run.verdict.metrics:
            lo, hi = t.interval
            console.print(
                f"  {t.title}: {t.label}; effect {_pts(t.effect)} pts, CI [{_pts(lo)}, {_pts(hi)}], "
                f"p {_p(t.p)} (Holm {_p(t.p_adjusted)}), n={t.n}, {t.test}"
            )
        if run.eval_overlap is not None:
            console.print(f"  evaluation prompts seen in training (measured): {run.eval_overlap.share}")
        m: Mapping[str, object] = run.metrics or {}  # a record without metrics prints None, as before
        console.print(
            f"time to verdict {m.get('time_to_verdict_s')} s, {m.get('steps_per_s')} steps/s on {m.get('device')}"
        )
        _print_profile(run)
        for path in run.plots:
            console.print(f"plot: {path}")
    elif run.status == "running":
        console.print(f"progress {100 * run.progress:.0f}%")


def _pts(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:+.1f}"


MECHANISMS = (  # (ArmMechanisms field, header, kind)
    ("overlong_rate", "overlong", "%"),
    ("clip_low", "clip low", "%"),
    ("clip_high", "clip high", "%"),
    ("capped_share", "capped", "%"),
    ("zero_var_share", "0-var grp", "%"),
    ("zero_var_trained", "0-var trained", "%"),
    ("length", "length", "n"),
    ("length_slope", "len/100st", "n"),
    ("correct_length", "len right", "n"),
    ("incorrect_length", "len wrong", "n"),
)


def _print_mechanisms(run: RunRecord) -> None:
    """Per arm: did the levers engage (rates over steps and seed pairs)."""
    mech = run.verdict.mechanisms if run.verdict is not None else {}
    if not mech:
        return
    console.print("  mechanisms (mean over steps and seed pairs):")
    console.print("    " + f"{'arm':<22}" + "".join(f"{h:>14}" for _, h, _ in MECHANISMS))
    names = {"method": run.method, "baseline": f"{run.baseline} (baseline)"}
    for arm, m in mech.items():
        cells = []
        for field, _, kind in MECHANISMS:
            x = getattr(m, field)
            cells.append("n/a" if x is None else f"{100 * x:.2f}%" if kind == "%" else f"{x:.2f}")
        console.print("    " + f"{escape(names.get(arm, arm)):<22}" + "".join(f"{c:>14}" for c in cells))
    for arm, m in mech.items():
        if m.plugin_rates:  # what the arm's plug-ins measured (QAE's zero advantages, PSPO's tokens outside the clip)
            rates = ", ".join(f"{k} {v:.4g}" for k, v in sorted(m.plugin_rates.items()))
            console.print(f"    {escape(names.get(arm, arm))} plug-in rates: {escape(rates)}")


def _print_profile(run: RunRecord) -> None:
    """The efficiency profile beside the verdict: per-step time split, throughput, peak memory."""
    profile = _profile_summary(run.result.get("profile"))
    if not profile:
        return
    console.print("  efficiency profile (mean per optimiser step over seeds):")
    console.print(
        f"    {'arm':<22} {'step s':>8} {'generate':>9} {'reward':>8} {'ref':>7} {'optimise':>9} "
        f"{'tok/s':>8} {'peak GB':>8}"
    )
    names = {"method": run.method, "baseline": f"{run.baseline} (baseline)"}
    for arm, p in profile.items():
        cells = [_num(x, 3) for x in (p.step_s, p.generate_s, p.reward_s, p.ref_s, p.train_s)]
        console.print(
            f"    {escape(names.get(arm, arm)):<22} {cells[0]:>8} {cells[1]:>9} {cells[2]:>8} {cells[3]:>7} "
            f"{cells[4]:>9} {_num(p.tokens_per_s, 1):>8} {_num(p.peak_mem_gb, 2):>8}"
        )
    first = next(iter(profile.values()))
    console.print(f"    device {first.device}; memory: {escape(str(first.peak_mem_kind or ''))}")
    if run.efficiency_text:
        console.print(f"  {escape(run.method)} vs {escape(run.baseline)}: {escape(run.efficiency_text)}")


def _num(x: Scalar, digits: int) -> str:
    return "n/a" if not isinstance(x, int | float) else f"{x:.{digits}f}"


def _p(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3g}"


def cmd_list(args: argparse.Namespace) -> int:
    runs = _api(args).runs(status=args.status)
    return json_or(args, lambda: _runs_json(runs), lambda: _print_list(runs))


def _print_list(runs: list[RunRecord]) -> None:
    if not runs:
        console.print("no reproduction runs yet; start one with `radar repro run --method dapo`")
    for r in runs:
        verdict = f"{r.verdict.evidence_class or 'unclassified'}: {r.verdict.overall}" if r.verdict else ""
        console.print(
            f"{r.id}  {r.status:<9} {escape(r.method)} vs {escape(r.baseline)} ({escape(r.setup)})  {escape(verdict)}"
        )


def cmd_show(args: argparse.Namespace) -> int:
    run = _api(args).get(args.run_id)
    return json_or(args, lambda: _runs_json(run), lambda: _print_run(run))


def cmd_cancel(args: argparse.Namespace) -> int:
    run = _api(args).cancel(args.run_id)
    note = " (cancel requested; stops at its next step)" if run.cancel_requested else ""
    return json_or(args, lambda: _runs_json(run), lambda: console.print(f"{run.id}: {run.status}{note}"))


def cmd_methods(args: argparse.Namespace) -> int:
    presets = _api(args).presets
    plugins = presets.plugins
    if args.plugins:
        rows = [
            {
                "point": p.point,
                "name": p.name,
                "source": plugins.source(p.point, p.name),
                "summary": p.summary,
                "arxiv": p.arxiv,
                "equation": p.equation,
                "settings": dict(p.args),
                "rates": dict(p.rates),
                "verl": p.verl or p.no_verl,
            }
            for p in plugins.all()
        ]
        if args.json:
            print_json({"plugins": rows, "problems": list(plugins.problems)})
            return 0
        for p in plugins.all():
            source = plugins.source(p.point, p.name)
            mark = f"  ({source})" if source != "built-in" else ""
            console.print(f"[bold]{escape(p.point)}[/bold] {escape(p.name)}{escape(mark)}")
            console.print(f"    {escape(p.summary)}  arXiv:{escape(p.arxiv or '-')}")
        for line in plugins.problems:
            err_console.print(f"radar: {escape(line)}")
        return 0
    docs = presets.describe()  # radar.toml's [[repro.presets]] beside the built-ins
    if args.json:
        print_json(msgspec.to_builtins(docs))
        return 0
    for d in docs:
        mark = "  (radar.toml)" if d.source != "built-in" else ""
        console.print(f"[bold]{escape(d.name)}[/bold]  {escape(d.title)}  arXiv:{d.arxiv or '-'}{mark}")
        if d.baseline:
            console.print(f"    vs {d.baseline}, changes: {escape(', '.join(d.changes))}")
        if d.plugins:
            named = ", ".join(f"{point} {name}" for point, name in d.plugins.items())
            console.print(f"    plug-ins: {escape(named)}")
        console.print(f"    claim: {escape(d.claim)}")
    extra = [p for p in plugins.all() if plugins.source(p.point, p.name) != "built-in"]
    if extra:
        console.print("installed plug-ins (entry points; name them in [[repro.presets]] settings):")
        for p in extra:
            console.print(f"  {escape(p.point)} {escape(p.name)}  ({escape(plugins.source(p.point, p.name))})")
    for line in plugins.problems:
        err_console.print(f"radar: {escape(line)}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else None
    paths = _api(args).export(args.run_id, engine=args.engine, out_dir=out, gpus=args.gpus)
    if args.json:
        print_json({"id": args.run_id, "engine": args.engine, "files": [str(p) for p in paths]})
    else:
        for p in paths:
            console.print(f"wrote {p}")
    return 0


def cmd_work(args: argparse.Namespace) -> int:
    """Run the queued reproductions (queued by `radar weekly` or the dashboard) one after another."""

    def log(msg: str) -> None:
        if not args.json:
            console.print(escape(msg))

    done = _api(args).work(log=log, max_runs=args.max_runs)
    if args.json:
        _print_runs(done)
    elif not done:
        console.print("the queue is empty; `radar weekly` queues its `reproduce` recommendations ([repro] weekly_runs)")
    if any(r.status == "cancelled" and "stopped by" in r.error for r in done):
        err_console.print("radar: the queue worker was stopped; the run in progress was cancelled")
        return 1
    return 0 if all(r.status in ("done", "cancelled") for r in done) else 2


def register(sub: argparse._SubParsersAction) -> None:
    repro = sub.add_parser("repro", help="reproduction runs of GRPO-family methods (TRL engine)")
    rsub = repro.add_subparsers(dest="repro_command", metavar="SUBCOMMAND", parser_class=type(repro))
    rsub.required = True

    p = rsub.add_parser("run", help="train a method and a baseline over seeds, then give a verdict")
    p.add_argument("--method", required=True, help="method preset (see `radar repro methods`)")
    p.add_argument(
        "--baseline",
        default="",
        help="baseline preset (default: the method's own, grpo for most; the method itself gives an A/A run)",
    )
    p.add_argument(
        "--task", default="addition", help="addition, addition-work, countdown or sorting (default: addition)"
    )
    p.add_argument("--preset", default="tiny", help="policy size: tiny (CPU, minutes) or small (GPU)")
    p.add_argument("--seeds", type=int, default=5, help="seed pairs, fixed now: each its own warm start (default: 5)")
    p.add_argument(
        "--effect",
        type=float,
        default=5.0,
        help="the held-out effect (points) the run should be able to find; its power is printed first (default: 5)",
    )
    p.add_argument(
        "--allow-underpowered",
        action="store_true",
        help="run a checkpoint run even when its measured noise makes --effect undetectable at --seeds",
    )
    p.add_argument("--steps", type=int, default=0, help="optimizer steps per arm (default: the preset's)")
    p.add_argument("--device", default="auto", help="auto (GPU when present), cpu or cuda")
    p.add_argument(
        "--model",
        default="",
        help="a local Hugging Face model folder or a name in the local HF cache (nothing is downloaded); "
        "needs --dataset; presets ckpt (default) or ckpt-quick",
    )
    p.add_argument("--dataset", default="", help="JSONL of {prompt, answer} (GSM8K/MATH exports), with --model")
    p.add_argument("--lora", action="store_true", help="with --model: train a LoRA adapter (peft), not every weight")
    p.add_argument("--background", action="store_true", help="return at once; the worker keeps running")
    add_json(p)
    p.set_defaults(func=cmd_run)

    p = add_command(rsub, "list", cmd_list, "list runs, newest first")
    p.add_argument("--status", default="", help="only runs with this status")
    add_json(p, help=None)
    add_json(add_command(rsub, "show", cmd_show, "a run's status, verdict, metrics and plots", "run_id"), help=None)
    add_json(add_command(rsub, "cancel", cmd_cancel, "cancel a queued or running run", "run_id"), help=None)

    p = add_command(rsub, "methods", cmd_methods, "the method presets: paper, config, plug-ins, claim")
    p.add_argument("--plugins", action="store_true", help="list the plug-ins (built-in and installed) instead")
    add_json(p, help=None)

    p = add_command(rsub, "work", cmd_work, "run the queued reproductions (from weekly or the dashboard) one at a time")
    p.add_argument("--max-runs", type=int, default=0, help="stop after this many runs (default: until empty)")
    add_json(p, help=None)

    p = add_command(
        rsub, "export", cmd_export, "write a verl (Ray cluster) or TRL+accelerate (multi-GPU) launch", "run_id"
    )
    p.add_argument("--engine", choices=("verl", "trl"), required=True)
    p.add_argument("--out", default="", help="folder to write to (default: the run's export/ folder)")
    p.add_argument("--gpus", type=int, default=8, help="GPUs per node (accelerate processes / verl n_gpus_per_node)")
    add_json(p, help=None)
