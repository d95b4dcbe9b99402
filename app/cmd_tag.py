"""Commands: tag, tag eval, tag fix.

Command modules import ``radar.app.steps`` inside the command (it loads scikit-learn, numpy and the
indexes): building the parser for `radar --help` or `radar stats` must not pay for them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import msgspec
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from radar.analysis.tags.errors import TaggingError
from radar.app.cli_helpers import add_command, add_json, open_radar
from radar.app.output import console, err_console, print_json


def cmd_tag(args: argparse.Namespace) -> int:
    from radar.app import steps  # defers scipy, faiss, bm25s

    radar = open_radar(args)
    with (
        Progress(
            TextColumn("tagging"),
            BarColumn(),
            TextColumn("{task.completed:,}/{task.total:,} docs"),
            TimeElapsedColumn(),
            console=err_console,
            disable=args.json,
        ) as bar,
    ):
        task = bar.add_task("tag", total=0)
        if not args.json:
            err_console.print(
                "training the tag model if needed (seconds: the 1,898 shipped labeled papers come with their vectors)"
            )
        report = steps.tag(
            radar, retrain=args.retrain, progress=lambda done, total: bar.update(task, completed=done, total=total)
        )
    for note in report.notes:
        err_console.print(f"radar: note: {note}", markup=False, highlight=False)
    if args.json:
        from radar.analysis.tags.tagger import TagReportJson  # defers the tagger (numpy, scipy, the embedder)

        print_json(msgspec.to_builtins(TagReportJson.of(report)))
        return 0
    table = Table(title=f"tags (model {report.version}{', trained now' if report.trained else ''})")
    for col in ("tag", "decided by", "documents"):
        table.add_column(col, justify="right" if col == "documents" else "left")
    for name, count in report.per_tag.items():
        table.add_row(name, report.strategies[name], f"{count:,}")
    console.print(table)
    console.print(
        f"tagged {report.decided:,} documents in {report.seconds:.1f} s ({report.docs_per_s:,.0f} docs/s)"
        + (f"; training took {report.train_seconds:.1f} s" if report.trained else "")
        + (f"; {report.unembedded:,} not embedded yet: run `radar index`" if report.unembedded else "")
    )
    return 0


def cmd_tag_eval(args: argparse.Namespace) -> int:
    from radar.app import steps  # defers scipy, faiss, bm25s

    result = steps.evaluate_tags(open_radar(args), Path(args.labels))
    for note in result.notes:
        err_console.print(f"radar: note: {note}", markup=False, highlight=False)
    if result.unknown_ids:
        err_console.print(
            f"radar: warning: {len(result.unknown_ids)} labeled id(s) are not in this workspace "
            f"and were skipped (first: {result.unknown_ids[0]})"
        )
    if args.json:
        print_json(msgspec.to_builtins(result))
        return 0
    table = Table(
        title=f"tag evaluation: {result.documents} documents"
        + (f" ({result.out_of_fold} scored out of fold)" if result.out_of_fold else "")
    )
    for col in ("tag", "precision", "recall", "F1", "support"):
        table.add_column(col, justify="left" if col == "tag" else "right")
    base = Table(title="keyword baseline (a tag applies when any of its seed keywords appears), same documents")
    for col in ("tag", "keyword P", "keyword R", "keyword F1"):
        base.add_column(col, justify="left" if col == "tag" else "right")
    for name, row in result.tags.items():
        table.add_row(name, f"{row.precision:.2f}", f"{row.recall:.2f}", f"{row.f1:.2f}", str(row.support))
        kw = result.keyword_baseline.tags[name]
        base.add_row(name, f"{kw.precision:.2f}", f"{kw.recall:.2f}", f"{kw.f1:.2f}")
    table.add_row("macro", "", "", f"[bold]{result.macro_f1:.3f}", "")
    base.add_row("macro", "", "", f"{result.keyword_baseline.macro_f1:.3f}")
    console.print(table)
    console.print(base)
    return 0


def cmd_tag_fix(args: argparse.Namespace) -> int:
    from radar.app import steps  # defers scipy, faiss, bm25s

    add, remove = [], []
    for change in [*args.changes, *getattr(args, "extra", [])]:
        if change.startswith("+") and len(change) > 1:
            add.append(change[1:])
        elif change.startswith("-") and len(change) > 1:
            remove.append(change[1:])
        else:
            raise TaggingError(f"{change!r}: write +TAG to confirm a tag or -TAG to remove it")
    tags = steps.fix_tags(open_radar(args), args.id, add, remove)
    if args.json:
        print_json({"id": args.id, "added": add, "removed": remove, "tags": tags})
    else:
        console.print(
            f"{args.id}: tags now {', '.join(tags) or '(none)'}; the correction is kept and used by "
            "the next `radar tag --retrain`"
        )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "tag",
        cmd_tag,
        help="tag documents with the taxonomy; eval and fix subcommands",
        description="Tag embedded documents the current model has not decided yet. "
        "Subcommands: `radar tag eval LABELS.jsonl`, `radar tag fix ID +TAG -TAG`.",
    )
    p.add_argument("--retrain", action="store_true", help="retrain (uses new corrections) and re-decide every document")
    add_json(p)
    tag_sub = p.add_subparsers(dest="tag_command", metavar="{eval,fix}", parser_class=type(p))

    e = tag_sub.add_parser("eval", help="per-tag precision/recall/F1 and macro-F1 against a label file")
    e.add_argument("labels", metavar="LABELS.jsonl", help='JSON lines {"id": ..., "tags": [...]}')
    add_json(e)
    e.set_defaults(func=cmd_tag_eval)

    f = tag_sub.add_parser("fix", help="record a correction: +TAG confirms, -TAG removes")
    f.add_argument("id", metavar="ID", help="document id, e.g. 2503.14476")
    f.add_argument("changes", nargs="*", metavar="+TAG|-TAG", help="tags to confirm (+) or remove (-)")
    add_json(f)
    f.set_defaults(func=cmd_tag_fix, accepts_extra=True)
