"""The workspace folder: every path Radar writes lives here and is named here.

WORKSPACE/
  radar.toml        configuration (commented; `radar init` writes it)
  radar.db          SQLite database, WAL mode (documents, crawl state, tags, runs)
  index/            vector and keyword indexes
  reports/YYYY-Www/ weekly reports
  runs/RUN_ID/      reproduction run outputs
  locks/            lock files for commands that must not overlap
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from radar.store.config import DEFAULT_CONFIG_TEXT, Config, parse_config
from radar.store.db import Store
from radar.store.errors import WorkspaceError

ENV_VAR = "RADAR_HOME"


def resolve_root(workspace: str | os.PathLike[str] | None) -> Path:
    """--workspace wins, then $RADAR_HOME; one of them is required."""
    chosen = workspace or os.environ.get(ENV_VAR)
    if not chosen:
        raise WorkspaceError(f"no workspace given: pass --workspace DIR or set {ENV_VAR}=DIR")
    return Path(chosen).expanduser().resolve()


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root

    # -- paths -----------------------------------------------------------------------------------
    @property
    def config_path(self) -> Path:
        return self.root / "radar.toml"

    @property
    def db_path(self) -> Path:
        return self.root / "radar.db"

    @property
    def index_dir(self) -> Path:
        return self.root / "index"

    @property
    def reports_dir(self) -> Path:
        return self.root / "reports"

    @property
    def runs_dir(self) -> Path:
        return self.root / "runs"

    @property
    def locks_dir(self) -> Path:
        return self.root / "locks"

    def report_dir(self, iso_week: str) -> Path:
        return self.reports_dir / iso_week

    def run_dir(self, run_id: str) -> Path:
        return self.runs_dir / run_id

    # -- life cycle ------------------------------------------------------------------------------
    @classmethod
    def init(cls, root: Path, config_text: str = DEFAULT_CONFIG_TEXT) -> tuple[Workspace, bool]:
        """Create the folder, radar.toml (if absent) and the database. Returns (workspace, created)."""
        ws = cls(root)
        created = not ws.config_path.exists()
        try:
            root.mkdir(parents=True, exist_ok=True)
            for sub in (ws.index_dir, ws.reports_dir, ws.runs_dir, ws.locks_dir):
                sub.mkdir(exist_ok=True)
        except OSError as exc:
            raise WorkspaceError(f"cannot create workspace {root} ({exc.strerror}); choose a writable folder") from None
        if created:
            parse_config(config_text)  # never write a config we could not read back
            ws.write_text_atomic(ws.config_path, config_text)
        Store(ws.db_path).close()
        return ws, created

    @classmethod
    def open(cls, root: Path) -> Workspace:
        ws = cls(root)
        if not ws.config_path.exists():
            raise WorkspaceError(
                f"{root} is not a Radar workspace (no radar.toml); run `radar --workspace {root} init`"
            )
        return ws

    def config(self) -> Config:
        return parse_config(self.config_path.read_text(encoding="utf-8"), origin=str(self.config_path))

    def store(self) -> Store:
        return Store(self.db_path)

    # -- safe writes -----------------------------------------------------------------------------
    @staticmethod
    def write_bytes_atomic(path: Path, data: bytes) -> None:
        """Write to a temp file in the same folder, fsync, rename: readers see old or new, never half."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def write_text_atomic(cls, path: Path, text: str) -> None:
        cls.write_bytes_atomic(path, text.encode("utf-8"))

    @contextmanager
    def lock(self, name: str) -> Iterator[None]:
        """An exclusive, non-blocking lock (flock); released when the process dies."""
        self.locks_dir.mkdir(parents=True, exist_ok=True)
        with open(self.locks_dir / f"{name}.lock", "w") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise WorkspaceError(
                    f"another `radar {name}` is running in {self.root}; wait for it to finish"
                ) from None
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
