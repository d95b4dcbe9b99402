from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from radar.app.cli import build_parser
from tests.cli_helpers import run_cli
from tests.conftest import ROOT


def _commands() -> list[list[str]]:
    parser = build_parser()
    found: list[list[str]] = []

    def walk(p: argparse.ArgumentParser, prefix: list[str]) -> None:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    found.append([*prefix, name])
                    walk(child, [*prefix, name])

    walk(parser, [])
    return found


def test_core_commands_exist() -> None:
    names = {" ".join(c) for c in _commands()}
    assert {"init", "import", "crawl", "stats", "demo"} <= names


@pytest.mark.parametrize("command", [[]] + _commands(), ids=lambda c: " ".join(c) or "radar")
def test_every_command_has_help(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    res = run_cli(capsys, *command, "--help")
    assert res.code == 0 and "usage: radar" in res.out


def test_missing_workspace_is_one_line_naming_the_fix(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RADAR_HOME", raising=False)
    res = run_cli(capsys, "stats")
    assert res.code == 1
    assert res.err.strip() == "radar: error: no workspace given: pass --workspace DIR or set RADAR_HOME=DIR"


def test_not_a_workspace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = run_cli(capsys, "--workspace", str(tmp_path), "stats")
    assert res.code == 1 and "run `radar --workspace" in res.err and "init`" in res.err


def test_radar_home_works_like_workspace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RADAR_HOME", str(tmp_path / "home"))
    assert run_cli(capsys, "init").code == 0
    assert run_cli(capsys, "stats", "--json").json()["documents"] == 0


def test_unknown_command_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    res = run_cli(capsys, "frobnicate")
    assert res.code == 1 and "invalid choice" in res.err


def test_broken_config_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_cli(capsys, "--workspace", str(tmp_path), "init")
    (tmp_path / "radar.toml").write_text("[crawl]\ntimeout_s = -1\n")
    res = run_cli(capsys, "--workspace", str(tmp_path), "crawl")
    assert res.code == 1 and "timeout_s must be > 0" in res.err


@pytest.mark.slow
def test_demo_runs_offline(tmp_path: Path) -> None:
    """The installed console script, as `make demo` runs it, on a 400-paper cut of the bundled data."""
    import gzip
    import itertools

    data = tmp_path / "data"
    data.mkdir()
    snapshot = ROOT / "data" / "snapshot.jsonl.gz"
    with gzip.open(snapshot, "rb") as src, gzip.open(data / "snapshot.jsonl.gz", "wb") as dst:
        dst.writelines(itertools.islice(src, 0, 20000, 50))
    (data / "feeds").symlink_to(ROOT / "data" / "feeds")
    (data / "snapshot_vectors.npz").symlink_to(ROOT / "data" / "snapshot_vectors.npz")  # as shipped
    radar = Path(sys.executable).with_name("radar")
    proc = subprocess.run(
        [str(radar), "--workspace", str(tmp_path / "demo"), "demo", "--data", str(data), "--no-app"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    assert "400 added" in proc.stdout and "lilianweng: 53 new" in proc.stdout
    # the 400 papers and the 622 posts come with prebuilt vectors: nothing is embedded
    assert "indexed: 0 embedded" in proc.stdout and "reused from prebuilt vectors" in proc.stdout
    assert "What was imported" in proc.stdout and "The story the trends tell" in proc.stdout  # the summary
    assert "trends as of" in proc.stdout and "Emerging terms" in proc.stdout and "Topics" in proc.stdout
    assert "Traceback" not in proc.stderr
    report = re.search(r"html: (\S+/reports/(\d{4}-W\d{2})/report\.html)", proc.stdout)  # the weekly report step
    assert report and Path(report.group(1)).is_file(), proc.stdout[-2000:]
    assert "the dashboard: `radar --workspace" in proc.stdout and " app`" in proc.stdout
