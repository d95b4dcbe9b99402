"""Embedding through Ray Data, for backfills larger than one machine.

`radar index --engine ray` sends (id, text) rows through ``Dataset.map_batches`` with one embedder
per worker (an actor pool), and streams the vectors back to be stored and indexed exactly as the
local engine does. With RAY_ADDRESS set it joins that cluster; otherwise it starts a local Ray
instance on this machine's cores. Workers build the same embedder from the same config, so the
vectors equal the local engine's.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from radar.index.config import EmbeddingConfig
from radar.index.embedder import make_embedder
from radar.index.errors import IndexError_

ROWS_PER_BLOCK = 2048


class _EmbedBatch:
    """A Ray Data callable class: one embedder per actor, reused for every batch."""

    def __init__(self, cfg: EmbeddingConfig, device: str, cache_dir: str) -> None:
        self.embedder = make_embedder(cfg, device=device, cache_dir=Path(cache_dir))

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        vectors = self.embedder.embed([str(t) for t in batch["text"]])
        return {"id": batch["id"], "vector": vectors}


def ray_batches(cfg: EmbeddingConfig, *, device: str, cache_dir: Path, workers: int = 0):
    """A BatchEmbedder (see index.pipeline) running on Ray."""
    try:
        import ray
    except ImportError:
        raise IndexError_("--engine ray needs Ray: pip install 'research-radar[ray]' (or ray[data])") from None

    def run(items: list[tuple[str, str]]) -> Iterator[tuple[list[str], np.ndarray]]:
        if not items:
            return
        started_here = not ray.is_initialized()
        if started_here:
            ray.init(
                address=os.environ.get("RAY_ADDRESS") or None,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
                runtime_env={"env_vars": {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}},
            )
        try:
            per_worker = EmbeddingConfig(**{**cfg.__dict__, "threads": cfg.threads or 1})
            cpus = int(ray.cluster_resources().get("CPU", 1))
            n_workers = workers or max(1, cpus // per_worker.threads)
            blocks = max(n_workers, len(items) // ROWS_PER_BLOCK)
            ds = ray.data.from_items([{"id": i, "text": t} for i, t in items], override_num_blocks=blocks)
            out = ds.map_batches(
                _EmbedBatch,
                fn_constructor_args=(per_worker, device, str(cache_dir)),
                batch_size=256,
                concurrency=n_workers,
                num_cpus=per_worker.threads,
                num_gpus=1 if device == "cuda" else 0,
                batch_format="numpy",
            )
            for batch in out.iter_batches(batch_size=256, batch_format="numpy"):
                vectors = np.asarray(list(batch["vector"]), dtype=np.float32)
                yield [str(i) for i in batch["id"]], vectors
        finally:
            if started_here:
                ray.shutdown()

    return run
