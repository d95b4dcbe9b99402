"""Prebuilt vectors: embeddings shipped with a corpus file, reused by `radar index` instead of re-embedding.

One ``.npz`` file (numpy, no pickle) holds, per document, its id, the content hash the store computed
for it when the vector was made, and the vector as int8 with a float32 scale per row (a quarter of
float32's size; cosine to the original > 0.9999). A JSON stamp names the model id (weights
fingerprint, window settings and precision: see embedder.model_id_for), the window settings again
for people reading the file, and the storage format.

A vector is reused only when the file's model id is the one `radar index` would embed with and the
document's current content hash is the one stamped: anything else is embedded as usual, so reusing
gives the vectors embedding from scratch would (within the int8 storage error).
"""

from __future__ import annotations

import json
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from radar.index.errors import IndexError_

# The JSON stamp: format, storage, model_id, dim, count and what the builder adds (data/build_embeddings.py:
# quantization, max_seq_length, max_tokens, snapshot, embed_seconds, ...), all numbers and strings.
StampValue = str | int | float
FORMAT = "radar-prebuilt-vectors/1"
# what np.load raises on a truncated or corrupt .npz (a zip of .npy files)
DAMAGED_NPZ = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error)
STORAGE = "int8-rowscale"


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of float vectors -> (int8 rows, float32 scale per row); row ~= q * scale."""
    vectors = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(vectors).max(axis=1) if len(vectors) else np.zeros(0, np.float32)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(vectors / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale


def dequantize(q: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """int8 rows and their scales -> L2-normalised float32 rows (as the embedder returns them)."""
    out = q.astype(np.float32) * scale[:, None]
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.maximum(norms, 1e-12)


def write_prebuilt(
    path: Path,
    *,
    model_id: str,
    ids: Sequence[str],
    hashes: Sequence[str],
    vectors: np.ndarray,
    stamp: dict[str, StampValue] | None = None,
) -> Path:
    """Write a prebuilt-vectors file (compressed npz); ``stamp`` adds fields to the JSON stamp."""
    if not (len(ids) == len(hashes) == len(vectors)):
        raise ValueError("ids, hashes and vectors must have the same length")
    q, scale = quantize(vectors)
    meta: dict[str, StampValue] = {
        "format": FORMAT,
        "storage": STORAGE,
        "model_id": model_id,
        "dim": int(vectors.shape[1]) if vectors.ndim == 2 else 0,
        "count": len(ids),
        **(stamp or {}),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(
        tmp,
        meta=np.array(json.dumps(meta, sort_keys=True)),
        ids=np.array(list(ids), dtype=np.str_),
        hashes=np.array(list(hashes), dtype=np.str_),
        q=q,
        scale=scale,
    )
    tmp.replace(path)
    return path


@dataclass
class PrebuiltVectors:
    """One prebuilt-vectors file; the arrays are read on first use (the stamp alone is cheap)."""

    path: Path
    meta: dict[str, StampValue]
    _rows: dict[tuple[str, str], int] | None = field(default=None, repr=False)  # (doc id, content hash) -> row
    _arrays: dict[str, np.ndarray] | None = field(default=None, repr=False)

    @classmethod
    def open(cls, path: Path) -> PrebuiltVectors:
        """Read the stamp; raises IndexError_ naming the file when it is not a prebuilt-vectors file."""
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
        except DAMAGED_NPZ as exc:
            raise IndexError_(
                f"{path} is not a prebuilt-vectors file ({type(exc).__name__}); rebuild it with "
                "data/build_embeddings.py or delete it"
            ) from None
        if meta.get("format") != FORMAT or meta.get("storage") != STORAGE:
            raise IndexError_(
                f"{path} has format {meta.get('format')!r}/{meta.get('storage')!r}, not {FORMAT}/{STORAGE}; "
                "rebuild it with data/build_embeddings.py"
            )
        return cls(path, meta)

    @property
    def model_id(self) -> str:
        return str(self.meta["model_id"])

    def __len__(self) -> int:
        return int(self.meta.get("count", 0))

    def _load(self) -> tuple[dict[tuple[str, str], int], dict[str, np.ndarray]]:
        if self._rows is None or self._arrays is None:
            try:
                with np.load(self.path, allow_pickle=False) as data:
                    self._arrays = {k: data[k] for k in ("ids", "hashes", "q", "scale")}
                # by id and content: an id may come twice (2508.13429: as the snapshot and the bundled arXiv feed
                # have it); by id alone the later row hid the other and its paper was embedded again
                pairs = zip(self._arrays["ids"], self._arrays["hashes"], strict=True)
                self._rows = {(str(d), str(h)): i for i, (d, h) in enumerate(pairs)}
            except DAMAGED_NPZ as exc:
                raise IndexError_(
                    f"{self.path} is damaged ({type(exc).__name__}); rebuild it with data/build_embeddings.py "
                    "or delete it"
                ) from None
        return self._rows, self._arrays

    def take(self, model_id: str, wanted: Sequence[tuple[str, str]]) -> tuple[list[str], np.ndarray]:
        """Of ``wanted`` (doc id, current content hash), the ids this file holds a vector for under
        ``model_id`` and that content, and those vectors (float32, L2-normalised), in ``wanted``'s order."""
        if model_id != self.model_id or not wanted:
            return [], np.zeros((0, int(self.meta.get("dim", 0))), np.float32)
        rows, arrays = self._load()
        hits: list[str] = []
        at: list[int] = []
        for doc_id, content_hash in wanted:
            i = rows.get((doc_id, content_hash))
            if i is not None:
                hits.append(doc_id)
                at.append(i)
        index = np.asarray(at, dtype=np.int64)
        return hits, dequantize(arrays["q"][index], arrays["scale"][index])


def merge_prebuilt(path: Path, parts: Sequence[Path]) -> Path:
    """Join prebuilt-vectors files of one model (e.g. shards built in parallel) into one, as stored."""
    metas: list[dict[str, StampValue]] = []
    arrays: dict[str, list[np.ndarray]] = {k: [] for k in ("ids", "hashes", "q", "scale")}
    for part in parts:
        with np.load(part, allow_pickle=False) as data:
            metas.append(json.loads(str(data["meta"])))
            for key, found in arrays.items():
                found.append(data[key])
    if len({m["model_id"] for m in metas}) != 1:
        raise ValueError(f"cannot merge vectors of different models: {sorted({m['model_id'] for m in metas})}")
    joined = {k: np.concatenate(v) for k, v in arrays.items()}
    meta = {**metas[0], "count": len(joined["ids"])}
    meta.pop("shard", None)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(
        tmp,
        meta=np.array(json.dumps(meta, sort_keys=True)),
        ids=joined["ids"].astype(np.str_),
        hashes=joined["hashes"].astype(np.str_),
        q=joined["q"],
        scale=joined["scale"],
    )
    tmp.replace(path)
    return path
