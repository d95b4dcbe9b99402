"""The workspace folder: every path Radar writes lives here and is named here.

WORKSPACE/
  radar.toml        configuration (commented; `radar init` writes it)
  radar.db          SQLite database, WAL mode (documents, crawl state, tags, runs)
  index/            vector and keyword indexes (index/prebuilt/: vectors shipped with imported files)
  reports/YYYY-Www/ weekly reports
  runs/RUN_ID/      reproduction run outputs
  locks/            lock files for commands that must not overlap
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import filelock

from radar.store.config import DEFAULT_CONFIG_TEXT, Config, parse_config
from radar.store.db import Store
from radar.store.errors import WorkspaceError, disk_error, folder_of, owner_note
from radar.store.files import write_bytes_atomic, write_text_atomic
from radar.store.jsonio import loads_bounded

ENV_VAR = "RADAR_HOME"
MODEL_CACHE_VAR = "RADAR_MODEL_CACHE"


def cannot_write(path: Path) -> str:
    """Why this process cannot write ``path`` (a file or folder; a missing one is made in its nearest existing
    folder), in words; '' when it can. A file is replaced by renaming, so its folder must be writable too."""
    target = path if path.exists() else folder_of(path)
    try:
        if os.statvfs(target).f_flag & os.ST_RDONLY:
            return f"{target} is on a read-only file system"
    except OSError as exc:
        return f"{target} cannot be checked ({exc.strerror})"
    folder = target if target.is_dir() else target.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"this user cannot write {folder} ({owner_note(folder)})"
    if target.is_file() and not os.access(target, os.W_OK):
        return f"this user cannot write {target} ({owner_note(target)})"
    return ""


def resolve_root(workspace: str | os.PathLike[str] | None) -> Path:
    """--workspace wins, then $RADAR_HOME; one of them is required."""
    chosen = workspace or os.environ.get(ENV_VAR)
    if not chosen:
        raise WorkspaceError(f"no workspace given: pass --workspace DIR or set {ENV_VAR}=DIR")
    return Path(chosen).expanduser().resolve()


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.config_unreadable = ""  # why radar.toml could not be read (then the defaults were used), or ''

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

    @property
    def queue_log_path(self) -> Path:
        """The output of the reproduction queue's worker (`radar repro work` started by weekly or the dashboard)."""
        return self.runs_dir / "queue.log"

    @property
    def vector_dir(self) -> Path:
        return self.index_dir / "vectors"

    @property
    def keyword_dir(self) -> Path:
        return self.index_dir / "bm25"

    @property
    def prebuilt_dir(self) -> Path:
        """Prebuilt-vectors files that came with imported corpus files (`radar index` reuses them)."""
        return self.index_dir / "prebuilt"

    @property
    def model_cache_dir(self) -> Path:
        """Exported ONNX models; RADAR_MODEL_CACHE shares one folder between workspaces."""
        shared = os.environ.get(MODEL_CACHE_VAR)
        return Path(shared).expanduser() if shared else self.index_dir / "models"

    @property
    def tag_model_path(self) -> Path:
        return self.index_dir / "tagger" / "model.npz"  # numbers and JSON only: loading it runs no code

    @property
    def legacy_tag_model_path(self) -> Path:
        """Where versions before the .npz model pickled it; never read (a pickle can run code)."""
        return self.index_dir / "tagger" / "model.pkl"

    @property
    def term_cache_path(self) -> Path:
        return self.index_dir / "trends" / "terms.npz"

    @property
    def topics_dir(self) -> Path:
        return self.index_dir / "topics"

    @property
    def trends_parts_dir(self) -> Path:
        """The parts of `radar trends` answers, each under a key of its inputs (analysis/trends/parts.py)."""
        return self.index_dir / "trends" / "parts"

    def period_trends_path(self, label: str) -> Path:
        """One period's trends (2025-W39), as the weekly job computed them: what the report, `radar trends
        --week` and the dashboard read."""
        return self.index_dir / "trends" / f"period-{label}.json"

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """A path from radar.toml: absolute as written, relative to the workspace folder otherwise."""
        p = Path(path).expanduser()
        return p if p.is_absolute() else self.root / p

    def report_dir(self, iso_week: str) -> Path:
        return self.reports_dir / iso_week

    def run_dir(self, run_id: str) -> Path:
        return self.runs_dir / run_id

    @property
    def policy_cache_dir(self) -> Path:
        """Warm-started repro policies shared by runs (runs/_policies)."""
        return self.runs_dir / "_policies"

    # -- life cycle ------------------------------------------------------------------------------
    def data_without_database(self) -> str:
        """What the workspace holds that a database made it (an index, runs, reports) when radar.db is missing
        or empty, e.g. "index/ with 300 vectors and 2 runs in runs/"; '' when the database is there (or nothing
        else is: a new workspace)."""
        try:
            if self.db_path.stat().st_size > 0:
                return ""
        except FileNotFoundError:
            pass
        except OSError:
            return ""  # not readable: opening it says why
        held = []
        manifest = self.vector_dir / "vectors.json"
        if manifest.is_file():
            try:
                count = int(loads_bounded(manifest.read_text(encoding="utf-8")).get("count", 0))
                held.append(f"index/ with {count:,} vectors")
            except (OSError, ValueError, TypeError, AttributeError):
                held.append("index/ with a vector index")
        try:
            runs = [p for p in self.runs_dir.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))]
            reports = [p for p in self.reports_dir.iterdir() if p.is_dir()]
        except OSError:
            runs = reports = []
        if runs:
            held.append(f"{len(runs)} run(s) in runs/")
        if reports:
            held.append(f"{len(reports)} report(s) in reports/")
        return " and ".join(held)

    def _refuse_new_database(self) -> None:
        held = self.data_without_database()
        if held:
            state = "missing" if not self.db_path.exists() else "empty (0 bytes)"
            raise WorkspaceError(
                f"{self.db_path} is {state} but the workspace holds {held}: the database was lost or replaced, and "
                "a new empty one would hide that. Restore radar.db from a backup, or start a new empty database "
                "here with `radar init --force`"
            )

    @classmethod
    def init(cls, root: Path, config_text: str = DEFAULT_CONFIG_TEXT, *, force: bool = False) -> tuple[Workspace, bool]:
        """Create the folder, radar.toml (if absent) and the database. Returns (workspace, created). A missing or
        empty database beside an index, runs or reports is refused unless ``force``."""
        ws = cls(root)
        if not force:
            ws._refuse_new_database()
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
        """radar.toml parsed. One this user may not read (a workspace owned by another user, radar.toml 0600)
        gives the defaults, and ``config_unreadable`` says why: reading commands work on it, and ``lock``
        refuses every writer."""
        try:
            text = self.config_path.read_text(encoding="utf-8")
        except PermissionError:
            self.config_unreadable = (
                f"{self.config_path} is not readable by this user ({owner_note(self.config_path)}); the defaults "
                "are used to read this workspace"
            )
            return parse_config(DEFAULT_CONFIG_TEXT)
        except UnicodeDecodeError as exc:
            raise WorkspaceError(
                f"{self.config_path} is not UTF-8 text (byte {exc.start}); save it as UTF-8 or re-create it with "
                "`radar init` in an empty folder"
            ) from None
        return parse_config(text, origin=str(self.config_path))

    def store(self) -> Store:
        """The database; a missing or empty one beside an index, runs or reports is refused (`radar init --force`
        starts a new one there)."""
        self._refuse_new_database()
        return Store(self.db_path)

    # -- safe writes (store.files does them; kept here for callers holding a workspace) ----------------
    write_bytes_atomic = staticmethod(write_bytes_atomic)
    write_text_atomic = staticmethod(write_text_atomic)

    def read_only_for(self, paths: Iterable[Path]) -> str:
        """Why this user cannot write one of ``paths`` (or could not read radar.toml), in words; '' when every
        one can be written."""
        if self.config_unreadable or not os.access(self.config_path, os.R_OK):  # writers need its settings
            return f"this user cannot read {self.config_path} ({owner_note(self.config_path)})"
        for path in paths:
            why = cannot_write(path)
            if why:
                return why
        return ""

    @contextmanager
    def lock(self, name: str, writes: Iterable[Path] = ()) -> Iterator[None]:
        """An exclusive, non-blocking lock (filelock: flock on POSIX, msvcrt on Windows); released when the
        process dies. ``writes``: what the command writes; one this user cannot write (a read-only workspace)
        refuses the command here, in one line, before it does any work."""
        why = self.read_only_for(writes)
        if why:
            raise WorkspaceError(
                f"`radar {name}` cannot start: it writes to this workspace, but {why}: the workspace is read-only "
                "for this user; "
                "run it as the workspace's owner, or copy the workspace somewhere writable (reading commands such "
                "as stats, search, methods and `radar report --out DIR` work)"
            )
        path = self.locks_dir / f"{name}.lock"
        lock = filelock.FileLock(path, timeout=0)
        try:
            self.locks_dir.mkdir(parents=True, exist_ok=True)
            lock.acquire()
        except filelock.Timeout:
            raise WorkspaceError(f"another `radar {name}` is running in {self.root}; wait for it to finish") from None
        except OSError as exc:  # a read-only mount, a full disk, no permission: `radar {name}` writes, say so
            err = disk_error(exc, path)
            if err is not None:
                raise WorkspaceError(f"`radar {name}` cannot start: {err}") from None
            raise WorkspaceError(
                f"`radar {name}` cannot take its lock {path} ({exc.strerror or exc}); the workspace must be "
                "writable for it: check the folder's owner and permissions"
            ) from None
        try:
            yield
        finally:
            lock.release()
