"""[embedding] and [search] sections of radar.toml; each ``from_section`` takes its table as radar.toml parsed
it (``TomlTable``: the parse edge) and ``store.config.dataclass_from`` checks its keys and values."""

from __future__ import annotations

from dataclasses import dataclass

from radar.store.config import TomlTable, dataclass_from
from radar.store.errors import ConfigError

BACKENDS = ("auto", "onnx", "torch")


@dataclass(frozen=True)
class EmbeddingConfig:
    """Which model embeds documents, and how fast."""

    model: str = "default"  # the packaged all-MiniLM-L6-v2, or any sentence-transformers name or local path
    # Each document is embedded as windows of max_seq_length tokens (MiniLM was trained at 128)
    # covering its first max_tokens tokens; the window vectors are averaged (weighted by length).
    max_seq_length: int = 128
    max_tokens: int = 256
    batch_size: int = 32
    backend: str = "auto"  # auto: ONNX Runtime on CPU when the model allows it, torch on GPU
    # int8 dynamic quantization (ONNX, CPU). "auto": int8 on CPU, float on GPU. It changes the
    # vectors slightly, so it is part of the model id: int8 and float vectors are never mixed.
    quantize: bool | str = "auto"
    threads: int = 0  # 0 = all cores
    # what one `radar weekly` embeds at most (the newest documents; the rest wait for the next run or `radar
    # index`): about 7 minutes on 2 cores, so a flooded source cannot hold the weekly report for hours
    weekly_max_documents: int = 20_000

    def __post_init__(self) -> None:
        if not 8 <= self.max_seq_length <= 8192:
            raise ConfigError("[embedding] max_seq_length must be 8..8192 tokens")
        if not self.max_seq_length <= self.max_tokens <= 65536:
            raise ConfigError("[embedding] max_tokens must be >= max_seq_length (one window at least)")
        if self.quantize not in (True, False, "auto"):
            raise ConfigError('[embedding] quantize must be true, false or "auto"')
        if not 1 <= self.batch_size <= 4096:
            raise ConfigError("[embedding] batch_size must be 1..4096")
        if self.backend not in BACKENDS:
            raise ConfigError(f"[embedding] backend must be one of {', '.join(BACKENDS)}")
        if self.threads < 0:
            raise ConfigError("[embedding] threads must be >= 0 (0 = all cores)")
        if self.weekly_max_documents < 1:
            raise ConfigError("[embedding] weekly_max_documents must be >= 1 (documents one weekly run embeds)")

    def int8_on(self, device: str) -> bool:
        return self.quantize is True or (self.quantize == "auto" and device == "cpu")

    @classmethod
    def from_section(cls, table: TomlTable) -> EmbeddingConfig:
        return dataclass_from(cls, table, "[embedding]")


@dataclass(frozen=True)
class SearchConfig:
    """Vector index and hybrid ranking."""

    exact_below: int = 200_000  # flat (exact) index below this many vectors, IVF above
    nprobe: int = 24  # IVF lists searched per query, at least (5% of the lists if more; see vectors.py)
    rrf_k: int = 30  # reciprocal rank fusion constant (of the votes of index/rerank.py)
    candidates: int = 100  # per retriever, before fusion

    def __post_init__(self) -> None:
        if self.exact_below < 1000:
            raise ConfigError("[search] exact_below must be >= 1000")
        if self.nprobe < 1 or self.rrf_k < 1 or self.candidates < 1:
            raise ConfigError("[search] nprobe, rrf_k and candidates must be >= 1")

    @classmethod
    def from_section(cls, table: TomlTable) -> SearchConfig:
        return dataclass_from(cls, table, "[search]")
