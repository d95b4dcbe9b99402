"""Commands: report (one period's report, optionally sent) and weekly (the whole cron job)."""

from __future__ import annotations

import argparse
from contextlib import nullcontext

from radar.app.cmd_core import open_workspace
from radar.app.output import console, err_console, print_json


def _period(args: argparse.Namespace, store):  # type: ignore[no-untyped-def]
    from radar.reports.period import resolve_period

    return resolve_period(
        store, week=args.week, since=getattr(args, "date_from", None), until=getattr(args, "date_to", None)
    )


def cmd_report(args: argparse.Namespace) -> int:
    from radar.reports.build import build_report, profile_config, report_config
    from radar.reports.config import DeliveryConfig
    from radar.reports.deliver import deliver, delivery_lock, summarize_outcomes
    from radar.reports.errors import DeliveryError

    ws = open_workspace(args)
    cfg = report_config(ws, args.format)
    profile = profile_config(ws)
    delivery = DeliveryConfig.from_section(ws.config().section("delivery")) if args.send else None
    with ws.store() as store:
        period = _period(args, store)
        status = nullcontext() if args.json else err_console.status(f"writing the report for {period.label}")
        with status:
            built = build_report(ws, store, period, cfg, profile)
        outcomes = []
        if delivery is not None:
            if not delivery.any_channel:
                from radar.store import ConfigError

                raise ConfigError(
                    "--send needs a channel: set [delivery] folder, [delivery.email] host/from/to or "
                    "[delivery.webhook] url in radar.toml (or RADAR_SMTP_*/RADAR_WEBHOOK_URL)"
                )
            with delivery_lock(ws):
                outcomes = deliver(store, built, delivery)
    doc = built.as_dict() | {"deliveries": [o.as_dict() for o in outcomes]}
    if args.json:
        print_json(doc)
    else:
        note = f" ({built.trends_note})" if built.trends_note else ""
        console.print(
            f"report {period.label}: {doc['documents']} documents, {doc['recommendations']} "
            f"recommendations in {built.seconds:.1f} s{note}",
            markup=False,
        )
        for fmt, path in built.paths.items():
            console.print(f"  {fmt}: {path}", markup=False)
        if outcomes:
            console.print(summarize_outcomes(outcomes), markup=False)
    if doc["documents"] == 0:
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
    from radar.reports.errors import ReportError
    from radar.reports.weekly import STEPS, run_weekly

    ws = open_workspace(args)
    skip = tuple(s.strip() for s in (args.skip or "").split(",") if s.strip())
    bad = [s for s in skip if s not in STEPS]
    if bad:
        raise ReportError(f"--skip {','.join(bad)}: unknown step; steps are {','.join(STEPS)}")
    with ws.store() as store:
        period = _period(args, store)
    log = None if args.json else (lambda msg: err_console.print(msg, markup=False))
    result = run_weekly(ws, period, skip=skip, log=log)
    if args.json:
        print_json(result.as_dict())
    else:
        console.print(result.line(), markup=False)
    return result.exit_code


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write one week's report (Markdown, HTML) and optionally send it")
    p.add_argument(
        "--week",
        metavar="YYYY-Www",
        help="ISO week, e.g. 2025-W20; 'last' (default) = the last full week; 'latest' = the latest "
        "full week the papers in the workspace cover",
    )
    p.add_argument("--from", dest="date_from", metavar="YYYY-MM-DD", help="a date range instead of a week (with --to)")
    p.add_argument("--to", dest="date_to", metavar="YYYY-MM-DD", help="last day of the range, inclusive")
    p.add_argument("--format", metavar="md,html,pdf", help="formats to write (default: [report] formats)")
    p.add_argument(
        "--send",
        action="store_true",
        help="deliver by the [delivery] channels (each recipient gets a period once; failures retried)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document (the paths)")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("weekly", help="crawl, index, tag, trends, report and deliver: the job for cron")
    p.add_argument("--week", metavar="YYYY-Www", help="ISO week to report (default: the last full week)")
    p.add_argument("--skip", metavar="STEP[,STEP]", help="steps to skip: crawl,index,tag,trends,report,deliver")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_weekly)
