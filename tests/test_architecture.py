"""The intended import graph and the composition-root rule, checked in `make test` (CI runs it).

1. The import-linter contracts in pyproject.toml ``[tool.importlinter]`` (the same check as ``lint-imports`` in
   ``make lint``): store <- crawler <- index <- analysis <- reports <- app, nothing imports app, repro imports only
   the store and only app imports repro. A planted-violation test shows each contract can fail and that grimp
   follows the radar/ symlinks to the stage folders.
2. No stage module reads radar.toml or builds a workspace path: only app/ (the composition root) and
   store/workspace.py (which names every path) may. An AST check per stage package.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
CONTRACT_IDS = [
    c["id"] for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
]


def lint_imports(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("contract", CONTRACT_IDS)
def test_import_contract_is_kept(contract: str) -> None:
    proc = lint_imports(ROOT, "--contract", contract)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "KEPT" in proc.stdout and "BROKEN" not in proc.stdout, proc.stdout


def test_contracts_cover_the_spec() -> None:
    assert {"layers", "repro-only-store", "only-app-imports-repro"} <= set(CONTRACT_IDS)


STAGES = ["store", "crawler", "index", "analysis", "reports", "repro", "app"]


def _mini_tree(tmp: Path, plant: dict[str, str]) -> dict[str, str]:
    """The repository's layout in miniature: top-level stage folders, radar/ linking to them, the real contracts.
    ``plant`` maps a stage to the import its __init__.py makes."""
    (tmp / "radar").mkdir()
    (tmp / "radar" / "__init__.py").write_text("")
    for stage in STAGES:
        (tmp / stage).mkdir()
        (tmp / stage / "__init__.py").write_text(plant.get(stage, "") + "\n")
        (tmp / "radar" / stage).symlink_to(Path("..") / stage, target_is_directory=True)
    (tmp / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    return {**os.environ, "PYTHONPATH": str(tmp)}


@pytest.mark.parametrize(
    ("plant", "broken"),
    [
        ({}, set()),
        ({"store": "import radar.crawler"}, {"layers"}),
        ({"crawler": "from radar import reports"}, {"layers"}),
        ({"reports": "import radar.app"}, {"layers"}),
        ({"analysis": "def f():\n    import radar.index\n    import radar.reports"}, {"layers"}),  # in a function too
        ({"repro": "import radar.index"}, {"repro-only-store"}),
        ({"repro": "import radar.app"}, {"repro-only-store"}),
        ({"reports": "import radar.repro"}, {"only-app-imports-repro"}),
        ({"store": "import radar.repro"}, {"only-app-imports-repro"}),
        ({"app": "import radar.repro, radar.reports, radar.crawler", "repro": "import radar.store"}, set()),
    ],
)
def test_contracts_catch_a_planted_import(tmp_path: Path, plant: dict[str, str], broken: set[str]) -> None:
    env = _mini_tree(tmp_path, plant)
    results = {}
    for contract in CONTRACT_IDS:
        proc = lint_imports(tmp_path, "--contract", contract, env=env)
        assert "Could not" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
        results[contract] = proc.returncode
    assert {c for c, rc in results.items() if rc != 0} == broken


# ---------------------------------------------------------------------------------------------------------------
# No stage reads radar.toml or builds a workspace path.

# Path segments of the workspace layout (store/workspace.py); a stage joining one of them onto a path is building a
# workspace path that the workspace module should name.
WORKSPACE_SEGMENTS = {
    "radar.toml",
    "radar.db",
    "index",
    "reports",
    "runs",
    "locks",
    "vectors",
    "bm25",
    "models",
    "tagger",
    "model.pkl",
    "model.npz",
    "trends",
    "terms.npz",
    "topics",
}
WORKSPACE_ENV = {"RADAR_HOME", "RADAR_MODEL_CACHE"}
WORKSPACE_NAMES = {"Workspace", "resolve_root"}
EXEMPT = {"store/workspace.py"}  # the one module that names every path and reads radar.toml
MAY_EXPORT_WORKSPACE = {"store/__init__.py"}  # the store package's facade re-exports it for app/


@dataclass(frozen=True)
class Finding:
    where: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.where}:{self.line}: {self.what}"


def _is_segment(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value in WORKSPACE_SEGMENTS


def findings_in(source: str, where: str) -> list[Finding]:
    """Every place in one module that reads radar.toml or builds a workspace path."""
    tree = ast.parse(source)
    found: list[Finding] = []

    def add(node: ast.AST, what: str) -> None:
        found.append(Finding(where, getattr(node, "lineno", 0), what))

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.module and node.module.endswith("store.workspace") and where not in MAY_EXPORT_WORKSPACE:
                add(node, f"imports {node.module}")
            names = {a.name for a in node.names} & WORKSPACE_NAMES
            if names and where not in MAY_EXPORT_WORKSPACE:
                add(node, f"imports {', '.join(sorted(names))}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.endswith("store.workspace"):
                    add(node, f"imports {alias.name}")
        elif isinstance(node, ast.Name) and node.id in WORKSPACE_NAMES and where not in MAY_EXPORT_WORKSPACE:
            add(node, f"uses {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in WORKSPACE_NAMES:
            add(node, f"uses .{node.attr}")
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "config" and not node.args and not node.keywords:
                add(node, "reads radar.toml (.config())")
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name == "parse_config" and where != "store/config.py":
                add(node, "parses radar.toml (parse_config)")
            if name in {"Path", "PurePath", "join", "joinpath"} and any(_is_segment(a) for a in node.args):
                add(node, f"builds a workspace path ({name}(... {_segments(node.args)}))")
            if name in {"getenv", "get"} and node.args and _env_name(node.args[0]):
                add(node, f"reads ${_env_name(node.args[0])}")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            if _is_segment(node.right) or _is_segment(node.left):
                add(node, f"builds a workspace path (/ {_segments([node.left, node.right])})")
        elif isinstance(node, ast.Subscript) and _env_name(node.slice):
            add(node, f"reads ${_env_name(node.slice)}")
        for annotation in _string_annotations(node):
            if re.search(r"\b(Workspace)\b", annotation.value):
                add(annotation, f"annotates with {annotation.value!r}")
    return sorted(set(found), key=lambda f: f.line)


def _string_annotations(node: ast.AST) -> list[ast.Constant]:
    """Annotations written as strings, e.g. ``ws: "Workspace | None"``."""
    if isinstance(node, ast.arg | ast.AnnAssign):
        candidates = [node.annotation]
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        candidates = [node.returns]
    else:
        return []
    return [c for c in candidates if isinstance(c, ast.Constant) and isinstance(c.value, str)]


def _segments(nodes: list[ast.expr]) -> str:
    return ", ".join(repr(n.value) for n in nodes if _is_segment(n) and isinstance(n, ast.Constant))


def _env_name(node: ast.expr) -> str:
    return node.value if isinstance(node, ast.Constant) and node.value in WORKSPACE_ENV else ""


def stage_modules(stage: str) -> Iterator[tuple[str, str]]:
    for path in sorted((ROOT / stage).rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        if where not in EXEMPT:
            yield where, path.read_text(encoding="utf-8")


@pytest.mark.parametrize("stage", ["store", "crawler", "index", "analysis", "reports", "repro"])
def test_stage_reads_no_config_and_builds_no_workspace_path(stage: str) -> None:
    modules = list(stage_modules(stage))
    assert modules, f"no modules found under {stage}/"
    found = [str(f) for where, source in modules for f in findings_in(source, where)]
    assert not found, "only app/ and store/workspace.py may read radar.toml or build workspace paths:\n" + "\n".join(
        found
    )


@pytest.mark.parametrize(
    "source",
    [
        "from radar.store import Store, Workspace",
        "from radar.store.workspace import resolve_root",
        "import radar.store.workspace",
        "def f(ws: Workspace) -> None: ...",
        "def f(ws: 'Workspace | None') -> None: ...",
        "import radar.store as s\ndef f(): return s.Workspace",
        "def f(ws): return ws.config().section('trends')",
        "from radar.store.config import parse_config\ncfg = parse_config(text)",
        "def f(root): return root / 'index' / 'trends'",
        "def f(root): return root / 'radar.toml'",
        "from pathlib import Path\np = Path(home, 'runs')",
        "import os\np = os.path.join(home, 'reports', week)",
        "import os\nshared = os.environ.get('RADAR_MODEL_CACHE')",
        "import os\nhome = os.environ['RADAR_HOME']",
        "import os\nhome = os.getenv('RADAR_HOME')",
    ],
)
def test_the_check_finds_each_kind_of_violation(source: str) -> None:
    assert findings_in(source, "analysis/x.py"), source


@pytest.mark.parametrize(
    "source",
    [
        "def f(store, cfg, vector_dir): return vector_dir / 'index.faiss'",
        "raise ConfigError('fix its categories in radar.toml')",
        "def f(model_dir): return model_dir / 'modules.json'",
        "def parse(text: str, origin: str = 'radar.toml'): ...",
        "x = cfg.section('trends')",
    ],
)
def test_the_check_passes_clean_stage_code(source: str) -> None:
    assert findings_in(source, "analysis/x.py") == []
