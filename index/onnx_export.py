"""Export a sentence-transformers model (transformer + mean pooling + normalize) to ONNX, once.

The graph includes pooling and L2 normalisation, so ONNX Runtime returns finished sentence
vectors. int8 dynamic quantization (per channel) is a separate file, since it changes the vectors.
(ONNX Runtime's transformer-fusion optimizer was measured and left out: on this CPU the fused
graph was slower, 77 vs 95 windows/s in int8.) Files are
written atomically into the cache folder and reused across runs.

``open_session`` opens a session on such a file. The first one optimises the graph (ONNX Runtime's extended level:
no layout or hardware-specific rewrite) and saves the result beside it, per ONNX Runtime version; later ones load the
saved graph with optimisation off, half the CPU of a `radar search`'s model load, with the same vectors bit for bit
(tests/test_index.py).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from radar.index.errors import IndexError_

if TYPE_CHECKING:
    import onnxruntime


def supports_onnx(model_dir: Path) -> bool:
    """True for a local sentence-transformers folder whose pipeline is Transformer -> mean Pooling [-> Normalize]."""
    modules_file = model_dir / "modules.json"
    if not modules_file.is_file():
        return False
    modules = json.loads(modules_file.read_text())
    kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in modules]
    if kinds[:2] != ["Transformer", "Pooling"] or any(k not in ("Transformer", "Pooling", "Normalize") for k in kinds):
        return False
    pooling = model_dir / modules[1].get("path", "1_Pooling") / "config.json"
    if not pooling.is_file():
        return False
    conf = json.loads(pooling.read_text())
    others = [k for k, v in conf.items() if k.startswith("pooling_mode_") and v and k != "pooling_mode_mean_tokens"]
    return bool(conf.get("pooling_mode_mean_tokens")) and not others


def _replace_atomically(src: Path, dst: Path) -> None:
    """Rename ``src`` over ``dst`` once its bytes are on disk (a crash after the rename leaves the whole file, not
    an empty one)."""
    with open(src, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(src, dst)


_TMP_PREFIX = ".export-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's process: leave its folder alone
    return True


def _sweep_stale(out_dir: Path) -> None:
    """Remove temp folders left by an export that was killed (SIGTERM, SIGKILL, power loss): each is
    named after its process, and only folders of processes no longer running are removed."""
    for tmp in out_dir.glob(_TMP_PREFIX + "*"):
        pid = tmp.name[len(_TMP_PREFIX) :].split("-", 1)[0]
        if tmp.is_dir() and pid.isdigit() and not _pid_alive(int(pid)):
            shutil.rmtree(tmp, ignore_errors=True)


def _tmp_dir(parent: Path) -> tempfile.TemporaryDirectory[str]:
    """A temp folder beside the target (removed on return and on Ctrl-C; a killed run's is swept later)."""
    return tempfile.TemporaryDirectory(dir=parent, prefix=f"{_TMP_PREFIX}{os.getpid()}-")


def onnx_file(out_dir: Path, *, quantize: bool) -> Path:
    """Where ``export`` writes the model's ONNX file (int8 or fp32) in ``out_dir``."""
    return out_dir / ("model_int8.onnx" if quantize else "model.onnx")


def export(model_dir: Path, out_dir: Path, *, quantize: bool) -> Path:
    """Return the path of the ONNX file for this model, exporting it first if needed."""
    target = onnx_file(out_dir, quantize=quantize)
    name = target.name
    _sweep_stale(out_dir)
    if target.is_file():
        return target
    out_dir.mkdir(parents=True, exist_ok=True)
    fp32 = out_dir / "model.onnx"
    if not fp32.is_file():
        _export_fp32(model_dir, fp32)
    if quantize:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        with _tmp_dir(out_dir) as tmp:
            tmp_path = Path(tmp) / name
            import onnx

            # quiet the quantizer's "consider pre-processing" advice, logged on the root logger
            root = logging.getLogger()
            level = root.level
            root.setLevel(logging.ERROR)
            try:
                quantize_dynamic(
                    str(fp32),
                    str(tmp_path),
                    weight_type=QuantType.QInt8,
                    per_channel=True,
                    extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
                )
            except Exception as exc:  # noqa: BLE001 - reported as one line naming the fix
                raise IndexError_(
                    f"int8 quantization of {model_dir.name} failed ({exc}); set [embedding] quantize = false"
                ) from None
            finally:
                root.setLevel(level)
            _replace_atomically(tmp_path, target)
    return target


def optimised_file(onnx_path: Path) -> Path:
    """Where ``open_session`` keeps the optimised graph of ``onnx_path`` (per ONNX Runtime version)."""
    import onnxruntime as ort  # defers onnxruntime

    return onnx_path.with_name(f"{onnx_path.stem}.opt-ort{ort.__version__}.onnx")


def open_session(onnx_path: Path, threads: int) -> onnxruntime.InferenceSession:
    """An ONNX Runtime session on ``onnx_path`` for the CPU, from its saved optimised graph when there is one newer
    than the file (made and saved on the first call otherwise; a session that cannot save it still runs)."""
    import onnxruntime as ort  # defers onnxruntime
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail

    def options(level: ort.GraphOptimizationLevel) -> ort.SessionOptions:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = level
        # idle worker threads sleep instead of spinning: on a shared 2-core machine spinning steals
        # the cores the other threads (tokenizer, SQLite, other processes) need
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return opts

    # whatever ONNX Runtime raises on a file it cannot load (InvalidArgument for an empty one, InvalidProtobuf,
    # InvalidGraph, Fail ...: the set differs between versions)
    unreadable: tuple[type[Exception], ...] = (
        OSError,
        RuntimeError,
        ValueError,
        *(e for e in vars(ort_errors).values() if isinstance(e, type) and issubclass(e, Exception)),
    )
    cpu = ["CPUExecutionProvider"]
    saved = optimised_file(onnx_path)
    try:
        newer = saved.stat().st_mtime_ns >= onnx_path.stat().st_mtime_ns
    except OSError:  # none yet: made below
        newer = False
    if newer:
        try:
            return ort.InferenceSession(str(saved), options(ort.GraphOptimizationLevel.ORT_DISABLE_ALL), providers=cpu)
        except unreadable:  # damaged (cut short by a full disk, emptied by a crash): removed and made again below
            with contextlib.suppress(OSError):
                saved.unlink()
    level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    try:
        with _tmp_dir(onnx_path.parent) as tmp:
            opts = options(level)
            opts.optimized_model_filepath = str(Path(tmp) / saved.name)
            session = ort.InferenceSession(str(onnx_path), opts, providers=cpu)
            _replace_atomically(Path(tmp) / saved.name, saved)
        return session
    except (OSError, Fail):  # a read-only or full cache folder: optimised in memory only, as before
        return ort.InferenceSession(str(onnx_path), options(level), providers=cpu)


def _export_fp32(model_dir: Path, target: Path) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # "Loading weights" bars in the middle of radar's own progress
    try:
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        model = AutoModel.from_pretrained(model_dir).eval()
    except OSError as exc:
        raise IndexError_(f"cannot load the model in {model_dir} ({exc}); check [embedding] model") from None

    class SentenceEncoder(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(
            self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
        ) -> torch.Tensor:
            states = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(states.dtype)
            pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=-1)

    sample = tokenizer(["a sample sentence", "another one, a little longer"], return_tensors="pt", padding=True)
    if "token_type_ids" not in sample:
        sample["token_type_ids"] = torch.zeros_like(sample["input_ids"])
    dynamic = {0: "batch", 1: "tokens"}
    with _tmp_dir(target.parent) as tmp:
        raw = Path(tmp) / "raw.onnx"
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                SentenceEncoder(model),
                (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
                str(raw),
                input_names=["input_ids", "attention_mask", "token_type_ids"],
                output_names=["embedding"],
                dynamic_axes={
                    "input_ids": dynamic,
                    "attention_mask": dynamic,
                    "token_type_ids": dynamic,
                    "embedding": {0: "batch"},
                },
                opset_version=17,
                dynamo=False,
            )
        _replace_atomically(raw, target)
