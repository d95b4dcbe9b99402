"""What the command modules (app/cmd_*.py) share: the workspace and settings an invocation names, and dates given
as flags. Light to import (no stage's heavy dependency): `radar --help` imports every command module."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from radar.app.context import Radar
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
