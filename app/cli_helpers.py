"""What the command modules (app/cmd_*.py) share: the workspace and settings an invocation names, dates given
as flags, and the options many commands declare alike (one spelling each: ``add_json``, ``add_week``, ...).
Light to import (no stage's heavy dependency): `radar --help` imports every command module."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import UTC, datetime

from radar.app.context import Radar
from radar.app.output import print_json
from radar.store import ConfigError, Workspace, resolve_root


def open_workspace(args: argparse.Namespace) -> Workspace:
    return Workspace.open(resolve_root(args.workspace))


def open_radar(args: argparse.Namespace) -> Radar:
    """The workspace of --workspace / $RADAR_HOME with its settings (radar.toml is read once, when first used)."""
    return Radar(open_workspace(args))


def parse_date(value: str | None, flag: str) -> datetime | None:
    """``--since 2025-05-01`` as a UTC datetime (None when the flag is not given); a bad value names the fix."""
    if not value:
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        raise ConfigError(f"{flag} {value!r} is not a date; use YYYY-MM-DD, e.g. {flag} 2025-05-01") from None


JSON_HELP = "print one JSON document"
DAY = "YYYY-MM-DD"


def add_json(p: argparse.ArgumentParser, help: str | None = JSON_HELP) -> None:
    """``--json``: print one JSON document instead of the tables."""
    p.add_argument("--json", action="store_true", help=help)


def add_week(p: argparse.ArgumentParser, help: str, metavar: str = "YYYY-Www") -> None:
    """``--week``: an ISO week (or 'last'/'latest' where the command resolves them)."""
    p.add_argument("--week", metavar=metavar, help=help)


def add_day(p: argparse.ArgumentParser, flag: str, help: str, dest: str | None = None) -> None:
    """A day given as a flag (``--since``, ``--as-of``), read later with ``parse_date``."""
    p.add_argument(flag, dest=dest, metavar=DAY, help=help)


def add_limit(p: argparse.ArgumentParser, default: int, help: str) -> None:
    """``--limit N``: how many rows a table shows."""
    p.add_argument("--limit", type=int, default=default, metavar="N", help=help)


def add_command(
    sub: argparse._SubParsersAction,
    name: str,
    func: Callable[[argparse.Namespace], int],
    help: str,
    *positional: str,
    description: str | None = None,
) -> argparse.ArgumentParser:
    """A (sub)command that calls ``func``, with its positional arguments; the parser, for its options."""
    p: argparse.ArgumentParser = sub.add_parser(name, help=help, description=description)
    for arg in positional:
        p.add_argument(arg)
    p.set_defaults(func=func)
    return p


def json_or(args: argparse.Namespace, doc: Callable[[], object], show: Callable[[], None]) -> int:
    """The tail many commands share: with --json print ``doc()`` as one JSON document, else ``show()``; exit 0."""
    if args.json:
        print_json(doc())
    else:
        show()
    return 0
