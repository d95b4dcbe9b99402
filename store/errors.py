"""The exception base every Research Radar package derives from.

Each error carries a one-line message that names the fix; the CLI prints it and
turns it into an exit code. Nothing else prints tracebacks at users.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # and the Unicode line/paragraph separators


def one_line(message: str) -> str:
    """A message that stays one line wherever it is shown: control characters (a newline or an escape
    code in a value the user typed or a file held) are shown escaped."""
    return _CONTROL.sub(lambda m: ascii(m.group())[1:-1], message)


class RadarError(Exception):
    """Base of all expected errors. ``exit_code`` 1 = usage/input, 2 = partial failure."""

    exit_code = 1

    def __init__(self, message: str, **context: object) -> None:
        super().__init__(one_line(message))
        self.context = context

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else self.__class__.__name__


class ConfigError(RadarError):
    """radar.toml or a command-line value is invalid."""


class WorkspaceError(RadarError):
    """The workspace is missing or unusable."""


class StoreError(RadarError):
    """The database could not be read or written."""


class DiskError(StoreError, OSError):
    """A write failed because the disk is full, the file system is read-only or a size limit was hit; the
    message names the path and the fix. Also an OSError, so code that tolerates a failed cache write still does."""

    def __init__(self, message: str, code: int, path: Path | str) -> None:
        super().__init__(message)
        self.errno = code
        self.filename = str(path)


DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG})


def free_bytes(path: Path | str) -> int | None:
    """Bytes free to this user on the file system holding ``path`` (its nearest existing parent)."""
    p = Path(path)
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        st = os.statvfs(p)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def human(n: int | None) -> str:
    if n is None:
        return "unknown"
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{n:,.0f} {unit}"
        n //= 1024
    return f"{n} GB"  # unreachable


def disk_message(code: int, path: Path | str, doing: str = "writing") -> str:
    """One line for a full disk / read-only file system / size limit met while ``doing`` ``path``."""
    if code in (errno.ENOSPC, errno.EDQUOT):
        what = "the disk quota is used up" if code == errno.EDQUOT else "the disk is full"
        return (
            f"{what} {doing} {path} ({human(free_bytes(path))} free there); free space on that disk (old "
            "reports/<week>/ folders, runs/, index/models) or move the workspace, then rerun; what was stored "
            "before is kept"
        )
    if code == errno.EROFS:
        return (
            f"{path} is on a read-only file system; this command writes there: remount it writable or copy the "
            "workspace somewhere writable (reading commands such as stats, search, methods and "
            "`radar report --out DIR` work on a read-only workspace)"
        )
    return f"a file grew past this process's file-size limit {doing} {path} (`ulimit -f`); raise the limit and rerun"


def disk_error(exc: OSError, path: Path | str | None = None, doing: str = "writing") -> DiskError | None:
    """The DiskError for ``exc`` when it is a full disk, read-only file system or size limit; else None."""
    if isinstance(exc, DiskError):
        return exc
    if exc.errno not in DISK_ERRNOS:
        return None
    where = path or exc.filename or "the workspace"
    return DiskError(disk_message(exc.errno, where, doing), exc.errno, where)
