"""The [tagging] section of radar.toml."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, cast

from radar.store.config import TomlTable, check_keys, check_types
from radar.store.errors import ConfigError


@dataclass(frozen=True)
class TaggingConfig:
    taxonomy: str = ""  # a taxonomy TOML file (relative to the workspace); "" = the packaged default
    labels: tuple[str, ...] = ()  # extra label files (JSONL {"id", "tags"}) to train on
    use_dev_labels: bool = True  # train on the 1,898 shipped hand-labeled papers (dev + dev2 + dev3)
    min_examples: int = 5  # labeled positives (and negatives) a tag needs for its own classifier
    correction_weight: float = 3.0  # a user correction counts this many labeled examples
    zero_shot_threshold: float = 0.45  # cosine to the description, for a tag with no examples at all
    tfidf: bool = True  # TF-IDF features beside the embedding (off: faster, about 0.03 lower macro-F1)
    # Per-tag preference, e.g. min_precision = {"accelerator-hardware" = 0.8}: the tag's threshold is the
    # best-F1 one among those whose cross-validated precision (recall) reaches the value.
    min_precision: tuple[tuple[str, float], ...] = ()
    min_recall: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        if self.min_examples < 2:
            raise ConfigError("[tagging] min_examples must be at least 2")
        if self.correction_weight <= 0:
            raise ConfigError("[tagging] correction_weight must be positive")
        if not -1.0 <= self.zero_shot_threshold <= 1.0:
            raise ConfigError("[tagging] zero_shot_threshold is a cosine similarity: -1..1")
        for key in ("min_precision", "min_recall"):
            for tag, value in getattr(self, key):
                if not 0.0 <= value <= 1.0:
                    raise ConfigError(
                        f"[tagging] {key} for {tag} must be between 0 and 1, e.g. {key} = {{{tag!r} = 0.8}}"
                    )

    def preference(self, tag: str) -> tuple[float, float]:
        """(min_precision, min_recall) asked for ``tag`` (0 = no preference)."""
        return dict(self.min_precision).get(tag, 0.0), dict(self.min_recall).get(tag, 0.0)

    @classmethod
    def from_section(cls, table: TomlTable) -> TaggingConfig:
        check_keys(table, {f.name for f in fields(cls)}, "[tagging]")
        tables = ("labels", "min_precision", "min_recall")
        check_types(cls, {k: v for k, v in table.items() if k not in tables}, "[tagging]")
        tuples: dict[str, tuple[str, ...] | tuple[tuple[str, float], ...]] = {}  # the tables, as the fields hold them
        for key in ("min_precision", "min_recall"):
            if key in table:
                value = table[key]
                if not isinstance(value, dict) or not all(
                    isinstance(v, int | float) and not isinstance(v, bool) for v in value.values()
                ):
                    raise ConfigError(
                        f'[tagging] {key} is a table of tag = number, e.g. {key} = {{"reward-modeling" = 0.8}}'
                    )
                tuples[key] = tuple(sorted((str(k), float(v)) for k, v in value.items() if isinstance(v, int | float)))
        if "labels" in table:
            labels = table["labels"]
            if not isinstance(labels, list) or not all(isinstance(p, str) for p in labels):
                raise ConfigError('[tagging] labels is a list of file paths, e.g. labels = ["my-labels.jsonl"]')
            tuples["labels"] = tuple(str(p) for p in labels)
        return cls(**cast(Any, {**table, **tuples}))  # every value checked above
