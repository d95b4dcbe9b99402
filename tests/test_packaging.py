"""The package installs without radar/'s symbolic links.

pyproject maps the top-level stage folders into the one installed package (``radar.store <- store/`` ...):

1. the mapping names every folder that holds modules or package data (a new sub-package missing from the list
   would be left out of the wheel);
2. (slow) the sdist and the wheel build from a copy of the checkout whose links are plain files, as a clone with
   ``core.symlinks=false`` has them; the wheel installs in a fresh venv (offline, from uv's cache) and, from a
   folder outside the checkout, ``radar --version``, ``radar demo --help`` and ``radar demo --no-app`` run on the
   bundled data it carries (its data folder is the wheel's; the demo runs on a 400-paper cut of its snapshot).
"""

from __future__ import annotations

import gzip
import itertools
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
UV = Path(sys.executable).with_name("uv")
MAX_WHEEL_MB = 30  # the bundled snapshot, its vectors and contributions are 21 MB of it


def tracked_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    return [name for name in out.decode().split("\0") if name and os.path.lexists(ROOT / name)]


def test_the_mapping_names_every_folder() -> None:
    mapping: dict[str, str] = SETUPTOOLS["package-dir"]
    folders = {path: package for package, path in mapping.items()}
    expected = set()
    for name in tracked_files():
        parts = Path(name).parts
        if len(parts) > 1 and parts[0] in folders and parts[0] != "radar" and "__pycache__" not in parts:
            expected.add(".".join([folders[parts[0]], *parts[1:-1]]))
    assert expected, "no stage folder found"
    assert set(SETUPTOOLS["packages"]) == expected | {"radar"}


def checkout_without_links(dest: Path) -> None:
    """The tracked and untracked (not ignored) files of the checkout; each symbolic link becomes a plain file
    holding its target, as git writes it with core.symlinks=false."""
    for name in tracked_files():
        src, dst = ROOT / name, dest / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            dst.write_text(os.readlink(src))
        else:
            shutil.copy2(src, dst)


def find_links() -> list[str]:
    """pip's find-links (PIP_FIND_LINKS, else pip.conf), where the CPU torch lies; uv reads neither (Makefile)."""
    links = os.environ.get("PIP_FIND_LINKS")
    if links is None:
        links = subprocess.run(
            [sys.executable, "-m", "pip", "config", "get", "global.find-links"], capture_output=True, text=True
        ).stdout
    return [flag for link in links.split() for flag in ("--find-links", link)]


def run(argv: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (
        f"{' '.join(argv)}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    return proc.stdout


def demo_on_a_cut(radar: str, shipped_data: Path, tmp_path: Path, cwd: Path, env: dict[str, str] | None) -> None:
    """`radar demo --no-app` on a 400-paper cut of ``shipped_data``'s snapshot (with its feeds and vectors), and
    what it must print: the whole 20,000-paper demo is what `make demo` runs; here it would add minutes to every
    `make test` for no other check. The shipped labeled papers come from the run's tag-example cache, as a second
    demo on this machine finds them."""
    cut = tmp_path / "cut"
    cut.mkdir()
    with gzip.open(shipped_data / "snapshot.jsonl.gz", "rb") as src, gzip.open(cut / "snapshot.jsonl.gz", "wb") as dst:
        dst.writelines(itertools.islice(src, 0, 20000, 50))
    (cut / "feeds").symlink_to(shipped_data / "feeds")
    (cut / "snapshot_vectors.npz").symlink_to(shipped_data / "snapshot_vectors.npz")  # as shipped
    argv = [radar, "--workspace", str(tmp_path / "ws"), "demo", "--no-app", "--data", str(cut)]
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    out = proc.stdout
    assert proc.returncode == 0, f"exit {proc.returncode}\n{out[-3000:]}\n{proc.stderr[-3000:]}"
    assert "400 added" in out and "lilianweng: 53 new" in out, out[-3000:]
    # the 400 papers and the 622 posts come with prebuilt vectors: nothing is embedded
    assert "indexed: 0 embedded" in out and "reused from prebuilt vectors" in out, out[-3000:]
    assert "What was imported" in out and "What the report says" in out  # the summary: the report's own brief
    assert "trends as of" in out and "Emerging terms" in out and "Topics" in out
    assert "Tags (change in share" in out  # the week's tags, as `radar trends --week` prints them
    assert "Traceback" not in proc.stderr
    report = re.search(r"html: (\S+/reports/(\d{4}-W\d{2})/report\.html)", out)  # the weekly report step
    assert report and Path(report.group(1)).is_file(), out[-2000:]
    assert "the dashboard: `radar --workspace" in out and " app`" in out


@pytest.mark.slow
def test_the_wheel_installs_and_runs_the_demo_outside_the_checkout(tmp_path: Path, tag_examples: Path) -> None:
    """The wheel and sdist built from a checkout without the radar/ links install in a fresh venv, and the
    installed console script runs the demo offline from outside the checkout on the wheel's own data. Without uv
    (`make setup` fell back to pip) nothing builds offline: the editable install's console script runs the same
    demo on the checkout's data instead."""
    if not UV.is_file():
        demo_on_a_cut(str(Path(sys.executable).with_name("radar")), ROOT / "data", tmp_path, ROOT, None)
        return
    started = time.perf_counter()
    src, dist, venv, elsewhere = (tmp_path / name for name in ("src", "dist", "venv", "elsewhere"))
    checkout_without_links(src)
    elsewhere.mkdir()
    # --no-build-isolation: the venv's setuptools builds, nothing is downloaded; the wheel is built from the sdist
    run([str(UV), "build", "--no-build-isolation", "--python", sys.executable, "--out-dir", str(dist), "."], src, 300)
    built = time.perf_counter()
    (wheel,) = dist.glob("*.whl")
    assert len(list(dist.glob("*.tar.gz"))) == 1
    size_mb = wheel.stat().st_size / 1e6
    assert size_mb < MAX_WHEEL_MB, f"the wheel is {size_mb:.1f} MB"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    for shipped in (
        "radar/data/snapshot.jsonl.gz",
        "radar/data/snapshot_vectors.npz",
        "radar/data/snapshot_contributions.jsonl.gz",
        "radar/store/default_config.toml",
        "radar/reports/templates/report.html.j2",
        "radar/analysis/tags/labels/vectors.npz",
        "radar/analysis/contributions/model.json",
        "radar/app/dashboard/main.py",
    ):
        assert shipped in names, f"{shipped} is not in the wheel"
    assert not any(name.startswith(("store/", "app/", "data/")) for name in names), "a stage installed at top level"

    # the versions of this venv (all in uv's cache): offline, nothing is resolved anew
    pins = tmp_path / "pins.txt"
    pins.write_text(run([str(UV), "pip", "freeze", "--python", sys.executable, "--exclude-editable"], ROOT, 60))
    run([str(UV), "venv", "--quiet", "--python", sys.executable, str(venv)], tmp_path, 120)
    install = [str(UV), "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), *find_links()]
    run([*install, "--offline", "--constraint", str(pins), str(wheel)], tmp_path, 600)

    installed = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "RADAR_HOME", "VIRTUAL_ENV"}}
    radar = str(venv / "bin" / "radar")
    assert run([radar, "--version"], elsewhere, 120, env).strip() == "radar 0.1.0"
    assert "--no-app" in run([radar, "demo", "--help"], elsewhere, 120, env)
    where = run(
        [str(venv / "bin" / "python"), "-c", "import radar.app.cmd_core as m; print(m.DATA_DIR)"], elsewhere, 120, env
    )
    assert Path(where.strip()).is_relative_to(venv), where  # the wheel's own data, not the checkout's
    shipped_data = Path(where.strip())
    assert (shipped_data / "snapshot.jsonl.gz").is_file() and (shipped_data / "feeds").is_dir()
    demo_on_a_cut(radar, shipped_data, tmp_path, elsewhere, env)
    done = time.perf_counter()
    print(
        f"wheel {size_mb:.1f} MB; build {built - started:.0f} s, install {installed - built:.0f} s, "
        f"commands and demo {done - installed:.0f} s"
    )


def test_provenance_names_the_commit_of_the_code_not_of_a_checkout_around_it(tmp_path: Path) -> None:
    """A wheel installed in a venv inside some checkout: that checkout's HEAD is not the installed code's commit
    (the old lookup, `git rev-parse` two folders up, reported it). The checkout's own file answers with HEAD."""
    from radar.repro import record

    def git(*argv: str) -> str:
        return run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *argv], tmp_path, 30)

    git("init", "-q")
    (tmp_path / "tracked.py").write_text("")
    git("add", "tracked.py")
    git("commit", "-q", "-m", "x")
    installed = tmp_path / ".venv" / "lib" / "site-packages" / "radar" / "repro" / "record.py"
    installed.parent.mkdir(parents=True)
    installed.write_text("")
    assert record.source_commit(installed) == ("unknown", False)
    assert record.source_commit(tmp_path / "tracked.py")[0] == git("rev-parse", "HEAD").strip()
    commit, _ = record.source_commit(Path(record.__file__))
    assert commit == run(["git", "rev-parse", "HEAD"], ROOT, 30).strip()
