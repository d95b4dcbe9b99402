"""`radar repro run|list|show|methods|export|cancel`: reproduction runs of GRPO-family methods."""

from __future__ import annotations

import argparse
from typing import Any

from radar.app.output import console, err_console, print_json
from radar.store import Workspace, resolve_root


def _ws(args: argparse.Namespace) -> Workspace:
    return Workspace.open(resolve_root(args.workspace))


def _summary(run: dict[str, Any]) -> dict[str, Any]:
    result = run.get("result") or {}
    return {
        "id": run["id"],
        "status": run["status"],
        "verdict": result.get("verdict"),
        "metrics": result.get("metrics"),
        "plots": result.get("plots", []),
        "params": run["params"],
        "progress": run["progress"],
        "error": run["error"],
        "created_at": run["created_at"],
        "started_at": run["started_at"],
        "finished_at": run["finished_at"],
        "folder": result.get("folder"),
    }


def cmd_run(args: argparse.Namespace) -> int:
    from radar.repro import runner

    ws = _ws(args)
    spec = runner.RunSpec(
        method=args.method,
        baseline=args.baseline,
        task=args.task,
        preset=args.preset,
        seeds=args.seeds,
        steps=args.steps,
        device=args.device,
    )
    run_id = runner.submit(ws, spec)
    proc = runner.start(ws, run_id)
    if args.background:
        run = runner.get(ws, run_id, reap_first=False)
        if args.json:
            print_json(_summary(run))
        else:
            console.print(
                f"started {run_id} in the background (pid {proc.pid}); follow it with "
                f"`radar repro show {run_id}`, log: {runner.log_path(ws, run_id)}"
            )
        return 0
    if not args.json:
        err_console.print(
            f"run {run_id}: {spec.method} vs {spec.baseline} on {spec.task} "
            f"({spec.preset}, {spec.seeds} seeds); log: {runner.log_path(ws, run_id)}"
        )

    def progress(run: dict[str, Any]) -> None:
        if not args.json and err_console.is_terminal:
            err_console.print(f"  {100 * run['progress']:.0f}%", end="\r")

    run = runner.wait(ws, run_id, proc, on_progress=progress)
    if args.json:
        print_json(_summary(run))
    else:
        _print_run(run)
    return 0 if run["status"] in ("done", "cancelled") else 2


def _print_run(run: dict[str, Any]) -> None:
    p = run["params"]
    console.print(
        f"[bold]{run['id']}[/bold]  {run['status']}  {p['method']} vs {p['baseline']} on {p['task']} "
        f"({p['preset']}, {p['seeds']} seeds, {p['total_steps']} steps)"
    )
    result = run.get("result") or {}
    if run["error"]:
        console.print(f"error: {run['error']}")
    verdict = result.get("verdict")
    if verdict:
        console.print(verdict["summary"])
        m = result.get("metrics", {})
        console.print(
            f"time to verdict {m.get('time_to_verdict_s')} s, {m.get('steps_per_s')} steps/s on {m.get('device')}"
        )
        for path in result.get("plots", []):
            console.print(f"plot: {path}")
    elif run["status"] == "running":
        console.print(f"progress {100 * run['progress']:.0f}%")


def cmd_list(args: argparse.Namespace) -> int:
    from radar.repro import runner

    runs = runner.list_runs(_ws(args), status=args.status)
    if args.json:
        print_json([_summary(r) for r in runs])
        return 0
    if not runs:
        console.print("no reproduction runs yet; start one with `radar repro run --method dapo`")
    for r in runs:
        p = r["params"]
        overall = ((r.get("result") or {}).get("verdict") or {}).get("overall", "")
        console.print(
            f"{r['id']}  {r['status']:<9} {p['method']} vs {p['baseline']} on {p['task']} "
            f"({p['preset']}, {p['seeds']} seeds)  {overall}"
        )
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from radar.repro import runner

    run = runner.get(_ws(args), args.run_id)
    if args.json:
        print_json(_summary(run))
    else:
        _print_run(run)
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    from radar.repro import runner

    run = runner.cancel(_ws(args), args.run_id)
    if args.json:
        print_json(_summary(run))
    else:
        console.print(
            f"{run['id']}: {run['status']}"
            + (" (cancel requested; stops at its next step)" if run["cancel_requested"] else "")
        )
    return 0


def cmd_methods(args: argparse.Namespace) -> int:
    from radar.repro.methods import METHODS, describe

    docs = [describe(m) for m in METHODS.values()]
    if args.json:
        print_json(docs)
        return 0
    for d in docs:
        console.print(f"[bold]{d['name']}[/bold]  {d['title']}  arXiv:{d['arxiv'] or '-'}")
        console.print(f"    claim: {d['claim']}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from radar.repro import export, runner

    ws = _ws(args)
    run = runner.get(ws, args.run_id)
    paths = export.export_run(ws, run, engine=args.engine, out_dir=args.out)
    if args.json:
        print_json({"id": run["id"], "engine": args.engine, "files": [str(p) for p in paths]})
    else:
        for p in paths:
            console.print(f"wrote {p}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    repro = sub.add_parser("repro", help="reproduction runs of GRPO-family methods (TRL engine)")
    rsub = repro.add_subparsers(dest="repro_command", metavar="SUBCOMMAND", parser_class=type(repro))
    rsub.required = True

    p = rsub.add_parser("run", help="train a method and a baseline over seeds, then give a verdict")
    p.add_argument("--method", required=True, help="method preset (see `radar repro methods`)")
    p.add_argument("--baseline", default="grpo", help="baseline preset (default: grpo)")
    p.add_argument("--task", default="addition", help="addition, countdown or sorting (default: addition)")
    p.add_argument("--preset", default="tiny", help="policy size: tiny (CPU, minutes) or small (GPU)")
    p.add_argument("--seeds", type=int, default=3, help="seeds per arm (default: 3)")
    p.add_argument("--steps", type=int, default=0, help="optimizer steps per arm (default: the preset's)")
    p.add_argument("--device", default="auto", help="auto (GPU when present), cpu or cuda")
    p.add_argument("--background", action="store_true", help="return at once; the worker keeps running")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_run)

    p = rsub.add_parser("list", help="list runs, newest first")
    p.add_argument("--status", default="", help="only runs with this status")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_list)

    p = rsub.add_parser("show", help="a run's status, verdict, metrics and plots")
    p.add_argument("run_id")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_show)

    p = rsub.add_parser("cancel", help="cancel a queued or running run")
    p.add_argument("run_id")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_cancel)

    p = rsub.add_parser("methods", help="the method presets: paper, config, claim")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_methods)

    p = rsub.add_parser("export", help="write a verl (Ray cluster) or TRL+accelerate (multi-GPU) launch")
    p.add_argument("run_id")
    p.add_argument("--engine", choices=("verl", "trl"), required=True)
    p.add_argument("--out", default="", help="folder to write to (default: the run's export/ folder)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_export)
