"""Commands: report (one period's report, optionally sent) and weekly (the whole cron job)."""

from __future__ import annotations

import argparse
from contextlib import nullcontext
from pathlib import Path

import msgspec

from radar.app.cli_helpers import JSON_HELP, add_command, add_day, add_json, add_week, open_radar
from radar.app.output import console, err_console, print_json
from radar.reports.errors import DeliveryError, ReportError
from radar.reports.period import resolve_period


def cmd_report(args: argparse.Namespace) -> int:
    from radar.app import steps  # defers scipy, faiss, bm25s
    from radar.reports.build import BuiltReportJson  # defers jinja2
    from radar.reports.deliver import summarize_outcomes  # defers requests, jinja2

    radar = open_radar(args)
    radar.settings.with_formats(args.format)  # a bad --format or radar.toml: one line, before anything is written
    with radar.store() as store:
        period = resolve_period(store, week=args.week, since=args.date_from, until=args.date_to)
    status = nullcontext() if args.json else err_console.status(f"writing the report for {period.label}")
    with status:
        built = steps.report(radar, period, formats=args.format, folder=Path(args.out) if args.out else None)
    outcomes = steps.deliver_report(radar, built) if args.send else []
    doc = BuiltReportJson.of(built)
    if args.json:
        print_json(msgspec.to_builtins(doc) | {"deliveries": msgspec.to_builtins(outcomes)})
    else:
        note = f" ({built.trends_note})" if built.trends_note else ""
        console.print(
            f"report {period.label}: {doc.documents} documents, {doc.recommendations} "
            f"recommendations in {built.seconds:.1f} s{note}",
            markup=False,
        )
        for fmt, path in built.paths.items():
            console.print(f"  {fmt}: {path}", markup=False)
        if outcomes:
            console.print(summarize_outcomes(outcomes), markup=False)
    if doc.documents == 0:
        err_console.print(
            f"note: no documents were published in {period.label}; `--week latest` reports the "
            "latest week the workspace covers",
            markup=False,
        )
    failed = [o for o in outcomes if o.status == "failed"]
    if failed:
        raise DeliveryError(
            f"{len(failed)} delivery(ies) failed ({failed[0].channel} {failed[0].recipient}: "
            f"{failed[0].error}); the report is written and `--send` retries them"
        )
    return 0


def cmd_weekly(args: argparse.Namespace) -> int:
    from radar.app import weekly  # defers scipy, faiss, bm25s (through app.steps)

    radar = open_radar(args)
    skip = tuple(s.strip() for s in (args.skip or "").split(",") if s.strip())
    bad = [s for s in skip if s not in weekly.WEEKLY_STEPS]
    if bad:
        raise ReportError(f"--skip {','.join(bad)}: unknown step; steps are {','.join(weekly.WEEKLY_STEPS)}")
    with radar.store() as store:
        period = resolve_period(store, week=args.week)
    log = None if args.json else (lambda msg: err_console.print(msg, markup=False))
    result = weekly.run(radar, period, skip=skip, log=log)
    if args.json:
        print_json(msgspec.to_builtins(weekly.WeeklyJson.of(result)))
    else:
        console.print(result.line(), markup=False)
    return result.exit_code


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "report", cmd_report, help="write one week's report (Markdown, HTML) and optionally send it")
    add_week(
        p,
        "ISO week, e.g. 2025-W20; 'last' (default) = the last full week; 'latest' = the latest "
        "full week the papers in the workspace cover",
    )
    add_day(p, "--from", "a date range instead of a week (with --to)", dest="date_from")
    add_day(p, "--to", "last day of the range, inclusive", dest="date_to")
    p.add_argument("--format", metavar="md,html,pdf", help="formats to write (default: [report] formats)")
    p.add_argument(
        "--send",
        action="store_true",
        help="deliver by the [delivery] channels (each recipient gets a period once; failures retried)",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="write the files into DIR instead of the workspace's reports/<week>/ (a read-only workspace works)",
    )
    add_json(p, JSON_HELP + " (the paths)")

    p = add_command(
        sub,
        "weekly",
        cmd_weekly,
        help="crawl, index, alerts, tag, trends, report, deliver, digests, reproduce: the job for cron",
    )
    add_week(p, "ISO week to report (default: the last full week)")
    p.add_argument(
        "--skip",
        metavar="STEP[,STEP]",
        help="steps to skip: crawl,index,alerts,tag,trends,report,deliver,digests,reproduce",
    )
    add_json(p)
