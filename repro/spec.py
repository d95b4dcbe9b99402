"""What a reproduction run is: its spec (validated before anything is stored), seeds, paths and identity.

A run's seed pairs are fixed when it is submitted: ``seeds`` pairs numbered ``first_pair`` on. Pair ``p`` has
its own warm start (toy tasks: SFT seed 1234 + p) and its two arms train with RL seeds ``p`` (method) and
``1000 + p`` (baseline). Adding seeds to an experiment is a new run (the app numbers it as the next look and
gives it fresh pairs), never an extension of an old one.

No torch here: the CLI validates a run before any worker starts, and reading run records never imports it.
"""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from radar.repro.checkpoint import load_dataset, model_fingerprint, resolve_model
from radar.repro.errors import ReproError
from radar.repro.methods import Catalog, baseline_of, catalog
from radar.repro.plugins.catalog import BUILTIN_CATALOG, PluginCatalog
from radar.repro.records import RunParams, RunRecord
from radar.repro.shapes import ModelFingerprint
from radar.repro.sizes import get_checkpoint_preset, get_size
from radar.repro.tasks import get_task

KIND = "repro"
ACTIVE = ("queued", "running")
BASELINE_SEED_OFFSET = 1000  # the baseline arm of pair s trains with RL seed 1000 + s (independent of the method's)
CHECKPOINT_TASK = "math"  # the task name of --model/--dataset runs
TINY_MODEL_BYTES = 50 * 2**20  # a checkpoint whose weights are smaller trains on one CPU thread
MAX_SEEDS = 20


@dataclass(frozen=True)
class RunSpec:
    """What to run. Validated at construction (errors name the valid values); ``make_spec`` resolves the
    baseline and checks both presets against a catalog."""

    method: str
    baseline: str
    task: str = "addition"
    preset: str = "tiny"
    seeds: int = 5
    steps: int = 0  # 0 = the preset's default
    device: str = "auto"
    model: str = ""  # a local Hugging Face model folder or cached name ("" = the toy tasks' tiny policies)
    dataset: str = ""  # JSONL of {prompt, answer} (with model)
    lora: bool = False  # train a LoRA adapter (peft) instead of every weight (with model)
    first_pair: int = 0  # the seed pairs are first_pair .. first_pair + seeds - 1 (a later look gets fresh ones)

    def __post_init__(self) -> None:
        if not self.method or not self.baseline:
            raise ReproError("a run needs a method and a baseline preset (repro.spec.make_spec resolves it)")
        if self.model or self.dataset or self.lora:
            if not self.model:
                raise ReproError("--dataset and --lora need --model PATH_OR_NAME (a local Hugging Face checkpoint)")
            if not self.dataset:
                raise ReproError('--model needs --dataset FILE.jsonl (one {"prompt", "answer"} object per line)')
            object.__setattr__(self, "task", CHECKPOINT_TASK)
            if self.preset in ("", "tiny"):  # the toy default: a checkpoint run's default shape instead
                object.__setattr__(self, "preset", "ckpt")
            get_checkpoint_preset(self.preset)
        else:
            get_task(self.task)
            get_size(self.preset)
        if not 1 <= self.seeds <= MAX_SEEDS:
            raise ReproError(f"--seeds must be between 1 and {MAX_SEEDS} (got {self.seeds})")
        if not 0 <= self.first_pair <= 10_000:
            raise ReproError(f"first seed pair must be between 0 and 10000 (got {self.first_pair})")
        if not 0 <= self.steps <= 100_000:
            raise ReproError(f"--steps must be between 1 and 100000, or 0 for the preset's default (got {self.steps})")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ReproError(f"--device must be auto, cpu or cuda (got {self.device!r})")

    @property
    def total_steps(self) -> int:
        if self.model:
            return self.steps or get_checkpoint_preset(self.preset).default_steps
        return self.steps or get_size(self.preset).default_steps

    @property
    def pairs(self) -> list[int]:
        return list(range(self.first_pair, self.first_pair + self.seeds))

    @property
    def toy(self) -> bool:
        return not self.model


def make_spec(presets: Catalog, *, method: str, baseline: str = "", **fields: Any) -> RunSpec:
    """A RunSpec whose presets ``presets`` knows; ``baseline`` "" = the method's own (grpo; gspo for luspo)."""
    chosen = presets.get(method)
    other = baseline or baseline_of(chosen)
    presets.get(other)
    return RunSpec(method=method, baseline=other, **fields)


def spec_of(params: RunParams, presets: Catalog | None = None) -> RunSpec:
    """The RunSpec of a recorded run. User presets ([[repro.presets]]) travel in its params (``user_presets``),
    so the worker knows them without reading radar.toml."""
    known = presets if presets is not None else run_catalog(params)
    # RunParams names RunSpec's fields with their types (tests/test_typed.py): the spec's fields of the params
    fields = {k: v for k, v in params.items() if k in RunSpec.__dataclass_fields__ and k not in ("method", "baseline")}
    return make_spec(
        known, method=str(params.get("method") or ""), baseline=str(params.get("baseline") or ""), **fields
    )


def run_catalog(params: RunParams, plugins: PluginCatalog = BUILTIN_CATALOG) -> Catalog:
    """The presets a recorded run can name: the built-ins plus the user presets it carries, whose plug-ins must be
    in ``plugins`` (the worker and exports pass the installed catalog, ``plugin_catalog()``)."""
    return catalog(params.get("user_presets") or [], plugins)


def spec_params(spec: RunSpec) -> RunParams:
    """The params of a run of ``spec``: its fields and its step count."""
    return cast(RunParams, asdict(spec) | {"total_steps": spec.total_steps})  # RunParams names RunSpec's fields


def record_params(spec: RunSpec, presets: Catalog, run_dir: Path, policy_cache: Path) -> RunParams:
    """What a queued run's record keeps: the spec, its step count, its folders and its user presets' tables."""
    params = spec_params(spec) | {"folder": str(run_dir), "policy_cache": str(policy_cache)}
    if defs := presets.definitions(spec.method, spec.baseline):
        params["user_presets"] = defs
    return params


def checkpoint_threads(device: str, model: ModelFingerprint) -> int:
    """1 when a checkpoint's weights are tiny and it trains on CPU (one thread), else 0 (torch's default)."""
    return int(device == "cpu" and sum((model.get("weights") or {}).values()) < TINY_MODEL_BYTES)


def check_inputs(spec: RunSpec) -> RunParams:
    """Resolve the model and read the data set of a checkpoint run before anything is stored
    (one-line errors); returns what the run's params record about them. No torch."""
    if not spec.model:
        return {}

    folder = resolve_model(spec.model)
    data = load_dataset(spec.dataset)
    if spec.lora:
        import importlib.util

        if importlib.util.find_spec("peft") is None:
            raise ReproError("--lora needs the peft package; install it (`pip install peft`) or drop --lora")
    weights = sum(model_fingerprint(folder)["weights"].values())
    return {"model_path": str(folder), "dataset_path": data.path, "dataset_sha256": data.sha256, "weights": weights}


def check_device(requested: str) -> None:
    """Fail before any worker starts when --device cuda is asked for and no GPU is visible."""
    if requested != "cuda":
        return
    import torch

    if not torch.cuda.is_available():
        raise ReproError("--device cuda asked for, but torch sees no GPU; use --device auto or cpu")


def rl_seed(arm: str, pair: int) -> int:
    """Independent RL seeds per arm: an A/A run (method == baseline) measures seed noise, not zero."""
    return pair if arm == "method" else BASELINE_SEED_OFFSET + pair


def new_run_id(spec: RunSpec) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{spec.method}-vs-{spec.baseline}-{secrets.token_hex(2)}"


# -- paths (all from the run record: the app hands them in at submit) --------------------------------
def run_folder(run: RunRecord) -> Path:
    if not run.params.get("folder"):
        raise ReproError(f"run {run.id} has no folder in its record")
    return Path(run.params["folder"])


def metrics_path(folder: Path, arm: str, seed: int) -> Path:
    return folder / "metrics" / f"{arm}-seed{seed}.jsonl"


def log_path(folder: Path) -> Path:
    return folder / "log.txt"


def record_path(folder: Path) -> Path:
    """RUN_DIR/run.json: what the run trained (arms, configs, data, provenance), written when it starts."""
    return folder / "run.json"


def verdict_path(folder: Path) -> Path:
    """RUN_DIR/verdict.json: the verdict document with its tests and the run's timing."""
    return folder / "verdict.json"
