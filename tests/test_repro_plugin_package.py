"""A third-party plug-in reaches radar the ecosystem's way: a package installed with pip into a fresh virtual
environment declares it in the ``radar.repro.plugins`` entry-point group, and `radar repro methods` lists it, a
radar.toml preset can name it, and a name no package registers is refused in one line. Nothing is read from the
workspace: the plug-in exists only because the package is installed (the environment beside it does not see it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

MODULE = '''"""A test plug-in package: the group median as the baseline (an advantage plug-in)."""
import torch

from radar.repro.plugins import Plugin
from radar.repro.plugins.points import AdvantageResult


def median(x):
    r = x.rewards.view(-1, x.group)
    adv = (r - r.median(dim=1, keepdim=True).values).reshape(-1)
    return AdvantageResult(adv, {"median_zero": float((adv == 0).float().mean())})


PLUGIN = Plugin(
    "median_baseline", "advantage", "radar_median_plugin:median", "the group median as the baseline",
    args={}, rates={"median_zero": "completions at the median"},
)
'''
PYPROJECT = """
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "radar-median-plugin"
version = "0.1"

[tool.setuptools]
py-modules = ["radar_median_plugin"]

[project.entry-points."radar.repro.plugins"]
median = "radar_median_plugin:PLUGIN"
"""


def _radar(python: Path, ws: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from radar.app.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [str(python), "-c", code, "--workspace", str(ws), *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ | {"PYTHONWARNINGS": "ignore"},
    )


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv that sees this environment's packages (radar, torch) and has the test package pip-installed."""
    root = tmp_path_factory.mktemp("plugin-venv")
    pkg = root / "pkg"
    pkg.mkdir()
    (pkg / "radar_median_plugin.py").write_text(MODULE)
    (pkg / "pyproject.toml").write_text(textwrap.dedent(PYPROJECT))
    env = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True, timeout=120)
    python = env / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    here = sysconfig.get_paths()["purelib"]  # this environment's packages, its .pth files (radar's editable) too
    (Path(purelib) / "radar_parent_env.pth").write_text(f"import site; site.addsitedir({here!r})\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-index",
            "--no-build-isolation",
            "--no-deps",
            "-q",
            str(pkg),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return python


def test_an_installed_entry_point_plugin_is_listed_and_usable(venv: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    assert _radar(venv, ws, "init").returncode == 0
    listed = _radar(venv, ws, "repro", "methods")
    assert listed.returncode == 0, listed.stderr
    assert "advantage median_baseline  (entry point of radar-median-plugin)" in listed.stdout
    plugins = json.loads(_radar(venv, ws, "repro", "methods", "--plugins", "--json").stdout)
    [row] = [p for p in plugins["plugins"] if p["name"] == "median_baseline"]
    assert row["point"] == "advantage" and row["source"] == "entry point of radar-median-plugin"
    assert plugins["problems"] == []
    # a radar.toml preset names it; the catalog resolves and runs it
    config = ws / "radar.toml"
    config.write_text(
        config.read_text()
        + '\n[[repro.presets]]\nname = "grpo-median"\nbase = "grpo"\nsettings = { advantage = "median_baseline" }\n'
    )
    presets = json.loads(_radar(venv, ws, "repro", "methods", "--json").stdout)
    [mine] = [p for p in presets if p["name"] == "grpo-median"]
    assert mine["plugins"] == {"advantage": "median_baseline"} and mine["source"] == "radar.toml"
    check = subprocess.run(
        [
            str(venv),
            "-c",
            "import torch; from radar.repro.plugins import plugin_catalog;"
            "from radar.repro.plugins.points import AdvantageInputs as I;"
            "f = plugin_catalog().get('advantage', 'median_baseline').function();"
            "x = I(torch.tensor([0., 1., 1., 0., 0., 1.]), torch.zeros(6), torch.ones(6), 3, {});"
            "print(f(x).advantages.tolist())",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.stdout.strip() == "[-1.0, 0.0, 0.0, 0.0, 0.0, 1.0]", check.stderr[-2000:]


def test_this_environment_does_not_see_it_and_unknown_names_are_refused(tmp_path: Path) -> None:
    """The package is installed only in the test's venv: here the same radar.toml is refused in one line that names
    the registered plug-ins (and how to add one)."""
    ws = tmp_path / "ws"
    assert _radar(Path(sys.executable), ws, "init").returncode == 0
    config = ws / "radar.toml"
    config.write_text(
        config.read_text()
        + '\n[[repro.presets]]\nname = "grpo-median"\nbase = "grpo"\nsettings = { advantage = "median_baseline" }\n'
    )
    done = _radar(Path(sys.executable), ws, "repro", "methods")
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert "unknown advantage plug-in 'median_baseline'; registered: gpg, ngrpo, opo, passk, qae" in line
    assert "radar.repro.plugins" in line
