from __future__ import annotations

import argparse
import io
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


def test_ids_dates_and_tags_stay_whole_at_80_columns() -> None:
    """`keep_whole` (used by `radar trends`' tables): on an 80-column terminal the free-text column wraps and
    the tag, id and date columns keep their values on one line (rich alone folded "preference-optimization")."""
    from rich.console import Console
    from rich.table import Table

    from radar.app.output import keep_whole

    rows = [["preference-optimization", "2506.21355", "2025-06-26", "a long free-text label " * 4, "0.00% -> 0.00%"]]
    columns = ["tag", "first paper", "first seen", "label", "share (baseline -> recent)"]

    def render(whole: bool) -> str:
        table = Table()
        for col in columns:
            table.add_column(col, overflow="fold")
        for row in rows:
            table.add_row(*row)
        if whole:
            keep_whole(table, rows, {"tag", "first paper", "first seen"})
        console = Console(width=80, record=True, file=io.StringIO())
        console.print(table)
        return console.export_text()

    assert "preference-optimization" not in render(whole=False)  # the failure this guards against
    text = render(whole=True)
    assert all(value in text for value in rows[0][:3]) and max(len(line) for line in text.splitlines()) <= 80


def test_starting_a_command_imports_no_heavy_library() -> None:
    """Every command module loads without scikit-learn, torch or transformers (each costs 1.5-4 s at the start
    of every `radar` call): they are imported where a model is fitted or trained. The packaged embedding model's
    tokenizer needs neither (index.embedder.FastTokenizer)."""
    code = (
        "import sys, importlib\n"
        "from radar.app.cli import COMMAND_MODULES\n"
        "for name in COMMAND_MODULES: importlib.import_module(name)\n"
        "from radar.index.embedder import FastTokenizer, resolve_model_dir\n"
        "FastTokenizer(resolve_model_dir('default'))\n"
        "print(sorted(m for m in ('sklearn', 'torch', 'transformers', 'trl') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
