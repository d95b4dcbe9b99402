"""`radar`: a thin command line over the library. main(argv) -> exit code.

Exit codes: 0 success; 1 usage or input error (one line naming the fix); 2 partial failure.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sqlite3
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import NoReturn

from radar.store.doctor import damaged
from radar.store.errors import RadarError, disk_error, disk_message, one_line
from radar.store.workspace import ENV_VAR

# Each module has register(subparsers); add a stage's command module here.
COMMAND_MODULES = tuple(
    f"radar.app.cmd_{name}"
    for name in ("core", "index", "tag", "repro", "app", "report", "trends", "admin", "methods", "people")
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 1 (argparse's default is 2)
        self.exit(1, f"radar: error: {one_line(message)} (see `{self.prog} --help`)\n")


def installed_version() -> str:
    try:
        return metadata.version("research-radar")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


def _root(args: argparse.Namespace) -> Path:
    """The workspace folder this command names (what an error line names when the failing path is unknown)."""
    chosen = getattr(args, "workspace", None) or os.environ.get(ENV_VAR) or "."
    return Path(chosen).expanduser().absolute()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="radar", description="Research Radar: track, tag, trend, report, reproduce.")
    parser.add_argument("--workspace", "-w", metavar="DIR", help="workspace folder (default: $RADAR_HOME)")
    parser.add_argument("--version", action="version", version=f"radar {installed_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    # bytes the locale could not decode arrive as surrogates (`radar search $'\xff\xfe'`): one line, not a crash later
    for arg in sys.argv[1:] if argv is None else argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            raw = arg.encode("utf-8", "surrogateescape")
            parser.error(f"argument {ascii(raw)} is not valid UTF-8 text; retype it")
    # `radar tag fix ID -TAG`: "-TAG" is a value, not an option; commands that take such values say so
    args, extra = parser.parse_known_args(argv)
    if extra:
        if not getattr(args, "accepts_extra", False):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.extra = extra
    try:
        return int(args.func(args) or 0)
    except RadarError as exc:
        print(f"radar: error: {one_line(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:  # a full disk, a read-only mount, a size limit met where no stage caught it: one line
        err = disk_error(exc, exc.filename or _root(args), "using")
        if err is None:
            raise
        print(f"radar: error: {one_line(str(err))}", file=sys.stderr)
        return 1
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # met by SQLite outside a store transaction
        db = _root(args) / "radar.db"
        if isinstance(exc, sqlite3.OperationalError) and ("full" in str(exc) or "readonly" in str(exc)):
            code = errno.ENOSPC if "full" in str(exc) else errno.EROFS
            print(f"radar: error: {one_line(disk_message(code, db))}", file=sys.stderr)
            return 1
        damage = damaged(db, exc)  # a flipped byte: SQLite's "malformed", or text that is not UTF-8
        if damage is None:
            raise
        print(f"radar: error: {one_line(str(damage))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("radar: interrupted; what was stored is kept, rerun the command to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
