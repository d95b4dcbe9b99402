"""Damaged, empty and foreign workspaces as named states: each ends in one line and changes nothing stored.

Probes (each failed before the fix): 2,000 flipped bytes in radar.db gave a UnicodeDecodeError traceback from
every command; a zero-byte radar.db beside an index of 300 vectors opened as a new empty workspace (a report was
written from nothing); a workspace owned by another user (radar.toml 0600, index/bm25 0700) gave PermissionError
tracebacks from stats, search, methods and `report --out`; `radar index` with index/ not writable embedded
everything and then failed with a traceback; a full disk named no path and quoted the current folder's free
space. The foreign-user cases run the real CLI in a subprocess that drops to another uid (tests run as root, and
the interpreter's own files are root's: every module a command needs is imported first, by running the same
commands as root on a copy)."""

from __future__ import annotations

import errno
import gzip
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from radar.crawler.snapshot import import_snapshot
from radar.store import Workspace
from radar.store.doctor import salvage
from tests.cli_helpers import run_cli
from tests.conftest import ROOT

OTHER_UID = 1001  # "this user" in the foreign-workspace tests; the workspace's owner is OWNER_UID
OWNER_UID = 1000
READERS = [["stats", "--json"], ["search", "policy optimization", "--json"], ["methods", "--json"]]


def _one_error(err: str) -> str:
    """The one error line (the last; a progress line before it is allowed), and no traceback."""
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("radar: error:")]
    assert len(errors) == 1 and lines[-1] == errors[0] and "Traceback" not in err, err
    return errors[0]


def _fingerprint(root: Path) -> dict[str, str]:
    """Every file of a workspace by its content hash: what 'nothing stored changed' compares. Lock files, SQLite's
    shared-memory index and an empty write-ahead log (what opening a database makes beside it) hold nothing."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and "locks" not in p.parts
        and not p.name.endswith("-shm")
        and not (p.name.endswith("-wal") and p.stat().st_size == 0)
    }


@pytest.fixture(scope="module")
def papers_ws(tmp_path_factory: pytest.TempPathFactory, small_snapshot: Path) -> Workspace:
    """500 snapshot papers, imported (read-only: copy it)."""
    ws, _ = Workspace.init(tmp_path_factory.mktemp("papers") / "ws")
    with ws.store() as store:
        import_snapshot(store, small_snapshot)
    return ws


def _flipped(src: Workspace, dst: Path, flips: int, seed: int, skip: int = 0) -> Workspace:
    shutil.copytree(src.root, dst)
    db = dst / "radar.db"
    data = bytearray(db.read_bytes())
    rng = random.Random(seed)
    for _ in range(flips):
        i = rng.randrange(skip, len(data))
        data[i] ^= 0xFF
    db.write_bytes(bytes(data))
    return Workspace(dst)


# -- damaged ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("seed", "skip"), [(1, 0), (2, 0), (3, 4096)])
def test_flipped_bytes_are_one_damaged_line_naming_doctor_and_change_nothing(
    papers_ws: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: int, skip: int
) -> None:
    """2,000 flipped bytes, anywhere or past the first page: every command says "damaged" and `radar doctor` in
    one line (not UnicodeDecodeError or "malformed" tracebacks), and writes nothing."""
    ws = _flipped(papers_ws, tmp_path / "ws", 2000, seed, skip)
    before = _fingerprint(ws.root)
    for argv in (
        ["stats"],
        ["search", "policy"],
        ["methods"],
        ["report", "--week", "2024-W07", "--out", str(tmp_path / "out")],
        ["trends"],
        ["people", "list"],
        ["repro", "list"],
        ["tag"],
        ["import", str(tmp_path / "none.jsonl")],
    ):
        res = run_cli(capsys, "-w", str(ws.root), *argv)
        line = _one_error(res.err)
        assert res.code == 1 and "is damaged" in line and "radar doctor" in line, (argv, res.err)
    doctor = run_cli(capsys, "-w", str(ws.root), "doctor", "--json")  # ends, even where the damaged tree loops
    assert doctor.code == 1 and doctor.json()["damaged"], doctor.err
    assert _fingerprint(ws.root) == before


def test_doctor_says_what_it_can_recover_and_writes_it_to_a_new_file(
    papers_ws: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A few flipped bytes past the schema page: the doctor names the damage, recovers the rest into a new file
    that opens as a workspace, and never touches the damaged one."""
    ws = _flipped(papers_ws, tmp_path / "ws", 40, seed=5, skip=4096)
    before = _fingerprint(ws.root)
    looked = run_cli(capsys, "-w", str(ws.root), "doctor", "--json")
    found = looked.json()
    assert looked.code == 1 and found["damaged"], looked.out
    docs = found["tables"]["documents"]
    assert 400 <= docs["rows"] < 500 and docs["unreadable"] + docs["not_utf8"] + docs["altered"] >= 1, docs
    assert _fingerprint(ws.root) == before and not (ws.root / "radar.recovered.db").exists()
    fixed = run_cli(capsys, "-w", str(ws.root), "doctor", "--recover")
    assert fixed.code == 0 and "radar.recovered.db" in fixed.out and "left as it is" in fixed.out, fixed
    assert _fingerprint(ws.root) == before | {"radar.recovered.db": _fingerprint(ws.root)["radar.recovered.db"]}
    again = run_cli(capsys, "-w", str(ws.root), "doctor", "--recover")
    assert again.code == 1 and "exists" in _one_error(again.err)  # never overwrites
    moved = tmp_path / "moved"
    shutil.copytree(ws.root, moved, ignore=shutil.ignore_patterns("radar.db*"))
    (moved / "radar.recovered.db").rename(moved / "radar.db")
    stats = run_cli(capsys, "-w", str(moved), "stats", "--json")
    assert stats.code == 0 and stats.json()["documents"] == docs["rows"]
    assert not salvage(moved / "radar.db").damaged  # the recovered file is healthy, every text UTF-8
    healthy = run_cli(capsys, "-w", str(papers_ws.root), "doctor")
    assert healthy.code == 0 and "is healthy" in healthy.out


# -- a new empty database beside an existing index ------------------------------------------------------------------
def test_an_empty_database_beside_an_index_is_refused_until_init_force(
    indexed: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(indexed.root, tmp_path / "ws")
    ws = Workspace(tmp_path / "ws")
    for extra in ("radar.db-wal", "radar.db-shm"):
        (ws.root / extra).unlink(missing_ok=True)
    ws.db_path.write_bytes(b"")
    before = _fingerprint(ws.root)
    for argv in (["stats"], ["report", "--week", "latest"], ["search", "policy"], ["init"], ["methods"]):
        res = run_cli(capsys, "-w", str(ws.root), *argv)
        line = _one_error(res.err)
        assert res.code == 1 and "empty (0 bytes)" in line and "310 vectors" in line, (argv, line)
        assert "radar init --force" in line
    assert _fingerprint(ws.root) == before and not ws.reports_dir.joinpath("latest").exists()
    assert run_cli(capsys, "-w", str(ws.root), "init", "--force").code == 0
    stats = run_cli(capsys, "-w", str(ws.root), "stats", "--json")
    assert stats.code == 0 and stats.json()["documents"] == 0


# -- a workspace owned by another user, a folder this user cannot write -----------------------------------------
CHILD = r"""
import contextlib, io, json, os, shutil, sys, traceback
from radar.app.cli import main
spec = json.loads(sys.argv[1])
def run(ws, argv):
    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        try:
            code = main(["--workspace", ws, *argv])
        except SystemExit as exc:
            code = int(exc.code or 0)
        except BaseException:
            traceback.print_exc(file=e); code = -1
    return {"argv": argv, "code": code, "out": o.getvalue(), "err": e.getvalue()}
# the same commands as root on a copy first: every module they import is loaded before the uid changes
shutil.copytree(spec["ws"], spec["warm"])
for argv in spec["commands"]:
    run(spec["warm"], [a.replace(spec["out"], spec["warm_out"]) for a in argv])
os.setgroups([]); os.setgid(spec["uid"]); os.setuid(spec["uid"])
print("RESULTS" + json.dumps([run(spec["ws"], argv) for argv in spec["commands"]]))
"""


def _as_user(ws: Path, tmp_path: Path, commands: list[list[str]], out: Path) -> dict[str, dict[str, Any]]:
    env = os.environ | {"HOME": str(tmp_path)}
    shared = os.environ.get("RADAR_MODEL_CACHE")
    if shared:  # the run's exported model, linked where the other user can read it (as a shared cache would be)
        models = tmp_path / "models"
        shutil.copytree(shared, models, copy_function=os.link)
        for p in [models, *models.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        env["RADAR_MODEL_CACHE"] = str(models)
    spec = {
        "ws": str(ws),
        "warm": str(tmp_path / "warm"),
        "warm_out": str(tmp_path / "warm-out"),
        "out": str(out),
        "uid": OTHER_UID,
        "commands": commands,
    }
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CHILD), json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=env,
    )
    assert "RESULTS" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]
    return {" ".join(r["argv"][:2]): r for r in json.loads(proc.stdout.split("RESULTS", 1)[1])}


needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="simulating another user needs root (os.setuid in a subprocess); tests run as root in CI",
)


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A folder every user can reach (pytest's own temporary folders are 0700 up the path)."""
    folder = Path(tempfile.mkdtemp(prefix="radar-user-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _chown(root: Path, uid: int) -> None:
    for p in [root, *root.rglob("*")]:
        os.chown(p, uid, uid, follow_symlinks=False)


@needs_root
@pytest.mark.slow
def test_a_workspace_owned_by_another_user_is_read_and_writers_say_so(indexed: Workspace, open_tmp: Path) -> None:
    """radar.toml 0600 and index/bm25 0700, owned by someone else: stats, search, methods and `report --out` work
    (the defaults stand in for the unreadable radar.toml, the keyword index is rebuilt in memory); every writer is
    one line before any work; nothing in the workspace changes."""
    tmp_path = open_tmp
    ws = tmp_path / "ws"
    shutil.copytree(indexed.root, ws)
    out = tmp_path / "out"
    out.mkdir(mode=0o777)
    out.chmod(0o777)
    paper = tmp_path / "paper.jsonl"
    paper.write_text(json.dumps({"id": "2402.99999", "title": "T", "abstract": "A.", "published": "2024-02-14"}))
    paper.chmod(0o644)
    _chown(ws, OWNER_UID)
    (ws / "radar.toml").chmod(0o600)
    (ws / "index" / "bm25").chmod(0o700)
    before = _fingerprint(ws)
    writers = [
        ["tag"],
        ["index"],
        ["people", "add", "zed"],
        ["import", str(paper)],
        ["report", "--week", "latest"],
    ]
    got = _as_user(ws, tmp_path, [*READERS, ["report", "--week", "latest", "--out", str(out)], *writers], out)
    for name in ("stats --json", "search policy optimization", "methods --json"):
        assert got[name]["code"] == 0 and "Traceback" not in got[name]["err"], got[name]["err"]
        json.loads(got[name]["out"])
        assert "radar.toml is not readable by this user" in got[name]["err"] or name.startswith(("stats", "methods"))
    assert json.loads(got["search policy optimization"]["out"])  # hits, BM25 rebuilt in memory
    assert got["report --week"]["code"] == 1  # the one writing into the workspace
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "report.json", "report.md"]
    for argv in writers:  # the report into the workspace too: said before the report is gathered
        res = got[" ".join(argv[:2])]
        line = _one_error(res["err"].replace(_note(res["err"]), ""))
        assert res["code"] == 1 and ("this user" in line or "permission denied" in line), (argv, line)
    assert _fingerprint(ws) == before


def _note(err: str) -> str:
    return next((line + "\n" for line in err.splitlines() if line.startswith("radar: note:")), "")


@needs_root
@pytest.mark.slow
def test_index_refuses_before_embedding_when_index_is_not_writable(
    indexed: Workspace, small_snapshot: Path, open_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The probe embedded every new paper, then failed saving the index with a traceback."""
    tmp_path = open_tmp
    ws = tmp_path / "ws"
    shutil.copytree(indexed.root, ws)
    new = tmp_path / "new.jsonl.gz"
    with gzip.open(small_snapshot) as src, gzip.open(new, "wb") as dst:
        dst.writelines(line for _, line in zip(range(20), src, strict=False))
    assert run_cli(capsys, "-w", str(ws), "import", str(new)).code == 0  # 20 papers waiting to be embedded
    _chown(ws, OTHER_UID)
    os.chown(ws / "index", 0, 0)  # index/ is root's: this user cannot replace what is in it
    (ws / "index").chmod(0o755)
    before = _fingerprint(ws)
    got = _as_user(ws, tmp_path, [["index"]], tmp_path / "unused")
    line = _one_error(got["index"]["err"])
    assert got["index"]["code"] == 1 and "`radar index` cannot start" in line and f"{ws}/index" in line, line
    assert _fingerprint(ws) == before  # no vector stored, nothing embedded


# -- the disk-full line names the folder and its free space --------------------------------------------------------
def test_a_disk_error_with_no_path_names_the_workspace_not_the_current_folder(
    workspace: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk met where no stage caught it (no file name on the error) quoted the current folder's free
    space; it names the workspace and the free space there."""
    from radar.app import cmd_core

    def full(args: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cmd_core, "cmd_stats", full)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    res = run_cli(capsys, "-w", str(workspace.root), "stats")
    line = _one_error(res.err)
    assert f"free in {workspace.root}" in line and str(elsewhere) not in line, line


def test_a_full_disk_while_saving_the_vector_index_is_one_line_naming_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FAISS reports a failed write as a RuntimeError quoting strerror: it was a traceback from `radar index`."""
    import faiss
    import numpy as np

    from radar.index.vectors import VectorIndex
    from radar.store.errors import DiskError

    index = VectorIndex.build("m", np.arange(3), np.eye(3, 4, dtype=np.float32), exact_below=10, nprobe=1)

    def full(idx: object, path: str) -> None:
        raise RuntimeError(f"Error in faiss::write_index: write error in {path}: 0 != 48 (No space left on device)")

    monkeypatch.setattr(faiss, "write_index", full)
    with pytest.raises(DiskError) as err:
        index.save(tmp_path / "vectors")
    assert "the disk is full" in str(err.value) and f"free in {tmp_path / 'vectors'}" in str(err.value)
    assert list((tmp_path / "vectors").iterdir()) == []  # no temporary file left
