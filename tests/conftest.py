from __future__ import annotations

import gzip
import itertools
import os
import shutil
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import filelock
import pytest

from radar.store import Workspace
from radar.store.config import DEFAULT_CONFIG_TEXT
from tests.feedserver import FeedServer

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "data" / "snapshot.jsonl.gz"
FAST_CRAWL = """
[crawl]
user_agent = "radar-tests"
timeout_s = 5.0
max_retries = 3
backoff_base_s = 0.05
max_backoff_s = 2.0
"""


@contextmanager
def main_module_kept() -> Iterator[None]:
    """Puts back the ``__main__`` module on exit when the body replaced it in ``sys.modules``."""
    main = sys.modules.get("__main__")
    try:
        yield
    finally:
        if main is not None and sys.modules.get("__main__") is not main:
            sys.modules["__main__"] = main


@pytest.fixture(autouse=True)
def main_module_restored() -> Iterator[None]:
    """Streamlit's AppTest runs a page as ``__main__`` and leaves it in ``sys.modules``; a later test of the same
    xdist worker that starts spawn processes (contributions' workers) would make each child re-run that page
    (multiprocessing's spawn re-imports the parent's ``__main__`` file) and fail. Each test gets back the
    ``__main__`` it started with (tests/test_contributions.py shows both halves)."""
    with main_module_kept():
        yield


@pytest.fixture
def server() -> Iterator[FeedServer]:
    srv = FeedServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    ws, _ = Workspace.init(tmp_path / "ws", config_text=DEFAULT_CONFIG_TEXT)
    return ws


def make_workspace(root: Path, sources_toml: str) -> Workspace:
    ws, _ = Workspace.init(root, config_text=FAST_CRAWL + sources_toml)
    return ws


def snapshot_cut(path: Path, papers: int) -> Path:
    """The first ``papers`` lines of the bundled snapshot (real papers), written to ``path``."""
    with gzip.open(SNAPSHOT, "rb") as src, gzip.open(path, "wb") as dst:
        for line in itertools.islice(src, papers):
            dst.write(line)
    return path


@pytest.fixture(scope="session")
def small_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 500 lines of the bundled snapshot (real papers)."""
    return snapshot_cut(tmp_path_factory.mktemp("snap") / "small.jsonl.gz", 500)


def shared_dir(tmp_path_factory: pytest.TempPathFactory, name: str) -> tuple[Path, filelock.FileLock]:
    """A folder every pytest-xdist worker of this run sees (the session's own folder without xdist), and the
    lock that makes one worker build what it holds while the others wait and reuse it."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # pytest-of-USER/pytest-N/, above each worker's popen-gwK/
    return base / name, filelock.FileLock(str(base / f"{name}.lock"))


@pytest.fixture(scope="session", autouse=True)
def shared_model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One exported ONNX model for the whole run (RADAR_MODEL_CACHE), as several workspaces would share; with
    pytest-xdist the workers share it too (the first exports it under a lock, the others wait)."""
    path, lock = shared_dir(tmp_path_factory, "models")
    path.mkdir(parents=True, exist_ok=True)
    old = os.environ.get("RADAR_MODEL_CACHE")
    os.environ["RADAR_MODEL_CACHE"] = str(path)
    if os.environ.get("PYTEST_XDIST_WORKER"):  # one worker exports while the others wait (alone: on first use)
        from radar.index.embedder import model_fingerprint, resolve_model_dir
        from radar.index.onnx_export import export

        with lock:
            model_dir = resolve_model_dir("default")
            export(model_dir, path / model_fingerprint(model_dir), quantize=True)
    yield path
    if old is None:
        os.environ.pop("RADAR_MODEL_CACHE", None)
    else:
        os.environ["RADAR_MODEL_CACHE"] = old


N_BACKGROUND = 300


@pytest.fixture(scope="session")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """A real indexed workspace: the dev-query targets and 300 other snapshot papers, embedded from scratch by
    the packaged model (read-only: copy it). Built once per run, shared by the pytest-xdist workers."""
    from radar.app.cli import main
    from tests.index_helpers import write_subset

    folder, lock = shared_dir(tmp_path_factory, "indexed")
    root = folder / "ws"
    with lock:
        if not (folder / "complete").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            subset = folder / "subset.jsonl.gz"
            write_subset(subset, N_BACKGROUND)
            assert main(["--workspace", str(root), "init"]) == 0
            assert main(["--workspace", str(root), "import", str(subset)]) == 0
            assert main(["--workspace", str(root), "index"]) == 0
            (folder / "complete").write_text("built\n")
    return Workspace.open(root)


# Modules whose tests train tag models on the shipped labeled papers (`radar tag`, `radar weekly`, `tag eval`):
# they get `tag_examples` first, so those 1,500 papers are embedded once per run, not by whichever tests get
# there first (two xdist workers arriving together both embedded them: about a minute of CPU each).
TRAINS_TAG_MODELS = {"test_tagging.py", "test_weekly.py"}


@pytest.fixture(scope="session")
def tag_examples(shared_model_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tag model's example-vector cache in the shared model cache, filled once for the run with the
    shipped labeled papers (embedded by the packaged model, as `radar tag` embeds them in an empty
    workspace); the pytest-xdist workers share it (one fills it under a lock, the other waits)."""
    from radar.analysis.tags.tagger import gather_examples
    from radar.app import wiring
    from radar.app.context import Radar

    folder, lock = shared_dir(tmp_path_factory, "tag-examples")
    with lock:
        if not (folder / "complete").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            ws, _ = Workspace.init(folder / "ws")
            with ws.store() as store:
                examples = gather_examples(store, wiring.tag_env(Radar(ws), store, allow_empty=True))
            assert len(examples.ids) >= 1000, "the shipped labeled papers were not found"
            (folder / "complete").write_text("built\n")
    return shared_model_cache


# Modules with long tests that are not marked slow (seconds per test measured in full runs: tag eval 36 s,
# TRL runs on a tiny checkpoint, a Streamlit server per module), weighted like that many slow tests.
LONG_UNMARKED = {"test_tagging.py": 3, "test_repro_hf.py": 2, "test_dashboard_browser.py": 1, "test_demo.py": 1}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Longest first: modules with the most `slow` tests (and those in LONG_UNMARKED) run first, whole modules
    in their own order, so `make test`'s scheduling (`--dist loadfile --no-loadscope-reorder`: each module
    handed whole to the next free worker, in this order) does not start a minute-long module last.
    Deterministic, as xdist requires of every worker's collection."""
    weight = Counter(item.path for item in items if item.get_closest_marker("slow"))
    for path in {item.path for item in items}:
        weight[path] += LONG_UNMARKED.get(path.name, 0)
    first_seen = {path: i for i, path in reversed(list(enumerate(item.path for item in items)))}
    items.sort(key=lambda item: (-weight[item.path], first_seen[item.path]))
    for item in items:
        fixtures = getattr(item, "fixturenames", None)
        if item.path.name in TRAINS_TAG_MODELS and fixtures is not None and "tag_examples" not in fixtures:
            fixtures.insert(0, "tag_examples")
