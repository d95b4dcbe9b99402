"""What radar's verl export relies on in verl's own source, extracted from a verl tree (a wheel unpacked).

``extract(root)``: the source of verl's plug-in registries and ``agg_loss`` (``verl/trainer/ppo/core_algos.py``,
verbatim), the keyword arguments ``ray_trainer.compute_advantage`` passes an advantage estimator, those
``workers/utils/losses.py`` passes a policy loss, and whether ``HFModelConfig`` imports ``model.external_lib``.
tests/fixtures/verl/core_algos_api.json holds verl 0.9.1's; the slow test of tests/test_repro_export.py extracts
it again from the downloaded wheel and compares (``RADAR_VERL_UPDATE_FIXTURE=1`` rewrites it).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

REGISTRY = (
    "POLICY_LOSS_REGISTRY",
    "register_policy_loss",
    "get_policy_loss_fn",
    "ADV_ESTIMATOR_REGISTRY",
    "register_adv_est",
    "get_adv_estimator_fn",
    "agg_loss",
)


def extract(root: Path) -> dict[str, Any]:  # the fixture's JSON as it is written
    core = (root / "verl/trainer/ppo/core_algos.py").read_text(encoding="utf-8")
    parts: dict[str, str] = {}
    for node in ast.parse(core).body:
        name = (
            node.name
            if isinstance(node, ast.FunctionDef)
            else (node.target.id if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) else "")
        )
        if name in REGISTRY:
            parts[name] = ast.get_source_segment(core, node) or ""
    adv: list[str] = []
    optional: list[str] = []
    for node in ast.walk(ast.parse((root / "verl/trainer/ppo/ray_trainer.py").read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Assign):
            continue
        if isinstance(node.value, ast.Dict) and any(
            isinstance(t, ast.Name) and t.id == "adv_kwargs" for t in node.targets
        ):
            adv = [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
        for t in node.targets:
            named = isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == "adv_kwargs"
            if named and isinstance(t.slice, ast.Constant):  # type: ignore[attr-defined]
                optional.append(t.slice.value)  # type: ignore[attr-defined]
    loss: list[str] = []
    for node in ast.walk(ast.parse((root / "verl/workers/utils/losses.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "policy_loss_fn":
            loss = [k.arg for k in node.keywords if k.arg]
    model = (root / "verl/workers/config/model.py").read_text(encoding="utf-8")
    imports_lib = any(
        isinstance(n, ast.FunctionDef)
        and n.name == "__post_init__"
        and "import_external_libs(self.external_lib)" in (ast.get_source_segment(model, n) or "")
        for c in ast.parse(model).body
        if isinstance(c, ast.ClassDef) and c.name == "HFModelConfig"
        for n in c.body
    )
    return {
        "registry_source": [parts[n] for n in REGISTRY],
        "adv_kwargs": adv,
        "adv_optional_kwargs": optional,
        "policy_loss_kwargs": loss,
        "hf_model_config_imports_external_lib": imports_lib,
    }
