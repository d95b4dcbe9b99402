"""Atomic file writes: readers see the old file or the new one, never half of it.

Every file a stage writes into the workspace (indexes, caches, models, reports) goes through these;
the workspace module (store.workspace) names the paths, the composition root hands them to stages.
``write_set_atomic`` writes several files as one (a week's report.md, .html and .json): each is written and
fsynced beside its target first, and only when all are written are they renamed into place, so a full disk
half-way leaves the previous set (or nothing) and no temporary file. A full disk, a read-only file system
or a file-size limit becomes one ``DiskError`` line naming the path and the fix (it is still an OSError).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from radar.store.errors import DiskError, disk_error


def _write_temp(path: Path, data: bytes | memoryview) -> Path:
    """``data`` in a new temp file beside ``path``, fsynced; removed again if anything fails."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def write_set_atomic(files: Mapping[Path, bytes | memoryview]) -> None:
    """Write every file of ``files``; a failure while writing (a full disk) leaves the previous set and no
    temporary file. The renames into place are one per file, so a failure between two of them (an I/O error
    after the first) can leave the set mixed; the module's docstring says why a full disk cannot."""
    written: list[tuple[Path, Path]] = []
    current = next(iter(files), Path("."))
    try:
        for path, data in files.items():
            current = path
            written.append((_write_temp(path, data), path))
        for tmp, path in written:
            current = path
            os.replace(tmp, path)
    except BaseException as exc:
        for tmp, _ in written:
            tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and (err := disk_error(exc, current)) is not None:
            raise err from None
        raise


def write_bytes_atomic(path: Path, data: bytes | memoryview) -> None:
    """Write to a temp file in the same folder, fsync, rename."""
    write_set_atomic({path: data})


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def write_cache_atomic(path: Path, data: bytes | memoryview) -> bool:
    """A cache file (recomputed when missing): written like ``write_bytes_atomic``, but a full disk or a
    read-only workspace only means it is not kept (False), so reading commands still work there."""
    try:
        write_bytes_atomic(path, data)
    except DiskError:
        return False
    return True
