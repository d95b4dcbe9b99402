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


def damage_message(path: Path | str, detail: str) -> str:
    """The one line for a damaged database (store.doctor decides what is damage)."""
    return (
        f"the database {path} is damaged ({detail}); run `radar doctor` to see what it can recover into a new "
        "file (the damaged one is left as it is), or restore radar.db from a backup"
    )


DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EACCES, errno.EPERM})


def folder_of(path: Path | str) -> Path:
    """``path`` when it is a folder, else the nearest existing folder above it (absolute)."""
    p = Path(path).absolute()
    while not p.is_dir() and p != p.parent:
        p = p.parent
    return p


def free_bytes(path: Path | str) -> int | None:
    """Bytes free to this user on the file system holding ``path`` (its nearest existing folder)."""
    try:
        st = os.statvfs(folder_of(path))
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def owner_note(path: Path | str) -> str:
    """Who owns ``path`` (or its nearest existing folder) and its mode, against who this process is."""
    p = Path(path)
    try:
        st = p.stat() if p.exists() else folder_of(p).stat()
    except OSError:
        return f"this user is uid {os.getuid()}"
    return f"owner uid {st.st_uid}, mode {st.st_mode & 0o777:04o}; this user is uid {os.getuid()}"


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
            f"{what} {doing} {path} ({human(free_bytes(path))} free in {folder_of(path)}); free space on that disk "
            "(old reports/<week>/ folders, runs/, index/models) or move the workspace, then rerun; what was stored "
            "before is kept"
        )
    if code in (errno.EACCES, errno.EPERM):
        return (
            f"permission denied {doing} {path} ({owner_note(path)}); run the command as its owner "
            "or give this user write permission (on a workspace owned by another user, reading commands such as "
            "stats, search, methods and `radar report --out DIR` work)"
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
