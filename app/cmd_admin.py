"""Admin commands: `radar rm ID...` removes documents and everything derived from them; `radar doctor` says what
state the workspace is in (a damaged or missing database, read-only for this user) and recovers what it can of a
damaged database into a new file."""

from __future__ import annotations

import argparse
import re
from dataclasses import asdict
from pathlib import Path

from rich.text import Text

from radar.app.cli_helpers import open_workspace
from radar.app.output import console, print_json
from radar.crawler.documents import Documents, row_intact
from radar.store import Workspace
from radar.store.doctor import Salvage, salvage
from radar.store.errors import ConfigError

_ID = re.compile(r"^[\w.:/\-]{1,200}$")  # arXiv ids, post:HASH ids; nothing with spaces or control characters


def cmd_rm(args: argparse.Namespace) -> int:
    bad = [i for i in args.ids if not _ID.match(i)]
    if bad:
        raise ConfigError(
            f"{bad[0][:60]!r} is not a document id; ids look like 2401.00642 or post:1a2b3c (see `radar search`)"
        )
    ws = open_workspace(args)
    # the index and tag steps read the documents they work on: removing under them waits for neither
    with ws.lock("index"), ws.lock("tag"), ws.store() as store:
        removed = Documents(store).delete(args.ids)
    missing = [i for i in dict.fromkeys(args.ids) if i not in set(removed)]
    if not removed:
        raise ConfigError(f"no document {missing[0]!r} in {ws.root}; find ids with `radar search` or `radar stats`")
    if args.json:
        print_json({"removed": removed, "missing": missing})
    else:
        console.print(
            f"removed {len(removed)} document(s) with their vectors, tags and corrections"
            + (f"; not in the workspace: {', '.join(missing[:10])}" if missing else "")
        )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rm", help="remove documents (and their vectors, tags, corrections) from the workspace")
    p.add_argument("ids", nargs="+", metavar="ID", help="document ids, e.g. 2401.00642 or post:1a2b3c4d")
    p.add_argument("--json", action="store_true", help="print {removed, missing} as JSON")
    p.set_defaults(func=cmd_rm)

    p = sub.add_parser(
        "doctor",
        help="check the workspace (a damaged or missing database, read-only for this user); recover what it can",
        description="Check the database (SQLite's integrity_check, and that every text is UTF-8) and the folders; "
        "say what of a damaged database can be recovered, and with --recover write it to a new file (the damaged "
        "one is never changed).",
    )
    p.add_argument("--recover", action="store_true", help="write the recoverable rows to a new database file")
    p.add_argument("--out", metavar="FILE", help="the new database file (default: radar.recovered.db in the workspace)")
    p.add_argument("--json", action="store_true", help="print what was found as JSON")
    p.set_defaults(func=cmd_doctor)


def _doctor_lines(ws: Workspace, found: Salvage | None) -> tuple[list[str], bool]:
    """What `radar doctor` says, and whether anything is wrong."""
    lines, wrong = [], False
    held = ws.data_without_database()
    if held:
        lines.append(f"{ws.db_path} is missing or empty but the workspace holds {held}: restore radar.db from a "
                     "backup, or start a new empty database with `radar init --force`")  # fmt: skip
        wrong = True
    why = ws.read_only_for([ws.db_path, ws.index_dir, ws.reports_dir, ws.runs_dir])
    if why:
        lines.append(f"read-only for this user: {why} (reading commands work; writing ones say so and stop)")
    if found is None:
        return lines, wrong
    if not found.damaged:
        lines.append(f"{ws.db_path} is healthy (integrity_check ok, every text is UTF-8): nothing to recover")
        return lines, wrong
    lines.append(f"{ws.db_path} is damaged (integrity_check: {found.integrity[:200]})")
    for table, t in found.tables.items():
        if t.error:
            lines.append(f"  {table:<18} unreadable: {t.error}")
        elif t.rows or t.unreadable or t.not_utf8 or t.altered or t.orphans:
            lost = [
                f"{n:,} {what}"
                for n, what in (
                    (t.unreadable, "unreadable spot(s)"),
                    (t.not_utf8, "row(s) not UTF-8"),
                    (t.altered, "row(s) whose text changed"),
                    (t.orphans, "row(s) whose document was lost"),
                )
                if n
            ]
            lines.append(
                f"  {table:<18} {t.rows:>9,} rows recoverable" + (f"; skipped {', '.join(lost)}" if lost else "")
            )
    return lines, True


def cmd_doctor(args: argparse.Namespace) -> int:
    ws = open_workspace(args)
    found = None
    if ws.db_path.is_file() and ws.db_path.stat().st_size > 0:
        out = Path(args.out).expanduser().absolute() if args.out else ws.root / "radar.recovered.db"
        checks = {"documents": row_intact}
        found = salvage(ws.db_path, checks=checks)
        if found.damaged and args.recover:
            found = salvage(ws.db_path, out, checks)
    lines, wrong = _doctor_lines(ws, found)
    if found is not None and found.damaged:
        if found.written:
            lines.append(
                f"wrote what was recoverable to {found.written}; {ws.db_path.name} is left as it is. To use it: move "
                f"{ws.db_path.name} (and its -wal and -shm files) away, rename {found.written.name} to radar.db, then "
                "run `radar index` and `radar tag` to rebuild what the lost rows held"
            )
        else:
            lines.append(f"`radar doctor --recover` writes the recoverable rows to a new file ({out}); "
                         f"{ws.db_path.name} is never changed")  # fmt: skip
    if args.json:
        print_json(
            {
                "database": str(ws.db_path),
                "damaged": bool(found and found.damaged),
                "integrity": found.integrity if found else "",
                "tables": {k: asdict(v) for k, v in found.tables.items()} if found else {},
                "written": str(found.written) if found and found.written else "",
                "lines": lines,
            }
        )
    else:
        for line in lines:
            console.print(Text(line))
    return 0 if not wrong or (found is not None and found.written) else 1
