"""Labeled examples for the tagger: label files, the shipped dev labels, and user corrections.

A label file has one JSON object per line: {"id": "2503.14476", "tags": ["rl-policy-optimization"]}.
The shipped ``labels/dev.jsonl``, ``labels/dev2.jsonl`` and ``labels/dev3.jsonl`` (750 + 750 + 398 hand-labeled
papers, copied from the project's shared labels; dev3 was drawn at the tagger's boundaries; see labels/SOURCES.md)
come with the papers' titles and abstracts (``labels/dev*_papers.jsonl.gz``), so a workspace that never imported
them still trains. Their vectors by the default embedding model ship too (``labels/vectors.npz``, built by
``data/build_embeddings.py --labels``: int8 with a scale per row, stamped with the model id and each paper's
text hash); under another model, or for a paper whose text changed, they are computed once and cached.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from radar.analysis.tags.errors import TaggingError
from radar.analysis.tags.taxonomy import Taxonomy

LABELS_DIR = Path(__file__).with_name("labels")
DEV_LABELS = LABELS_DIR / "dev.jsonl"
DEV_PAPERS = LABELS_DIR / "dev_papers.jsonl.gz"
DEV2_LABELS = LABELS_DIR / "dev2.jsonl"
DEV2_PAPERS = LABELS_DIR / "dev2_papers.jsonl.gz"
DEV3_LABELS = LABELS_DIR / "dev3.jsonl"
DEV3_PAPERS = LABELS_DIR / "dev3_papers.jsonl.gz"
SHIPPED_LABELS = (DEV_LABELS, DEV2_LABELS, DEV3_LABELS)
SHIPPED_VECTORS = LABELS_DIR / "vectors.npz"


def read_label_file(path: Path, taxonomy: Taxonomy, *, drop_unknown_tags: bool = False) -> dict[str, set[str]]:
    """{id: tags}; a malformed line, a duplicate id or an unknown tag is an error naming the line
    (``drop_unknown_tags``: tags outside the taxonomy are ignored, for the shipped labels when a user's
    taxonomy leaves some default tags out)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise TaggingError(f"cannot read the label file {path} ({exc.strerror}); check the path") from None
    except UnicodeDecodeError:
        raise TaggingError(
            f"{path} is not UTF-8 text; a label file has JSON lines like "
            '{"id": "2503.14476", "tags": ["llm-reasoning"]}'
        ) from None
    labels: dict[str, set[str]] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            doc_id, tags = row["id"], row["tags"]
            if not isinstance(doc_id, str) or not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            raise TaggingError(
                f"{path}:{number}: expected a JSON line like "
                '{"id": "2503.14476", "tags": ["llm-reasoning"]}; fix or remove that line'
            ) from None
        if doc_id in labels:
            raise TaggingError(f"{path}:{number}: id {doc_id} is labeled twice; keep one line per id")
        if drop_unknown_tags:
            tags = [t for t in tags if t in taxonomy.names]
        taxonomy.check(tags, where=f"{path}:{number}")
        labels[doc_id] = set(tags)
    if not labels:
        raise TaggingError(
            f'{path} has no labels; add JSON lines like {{"id": "2503.14476", "tags": ["llm-reasoning"]}}'
        )
    return labels


def shipped_papers() -> dict[str, tuple[str, str]]:
    """{id: (title, abstract)} of every shipped labeled paper (dev, dev2 and dev3)."""
    out: dict[str, tuple[str, str]] = {}
    for path in (DEV_PAPERS, DEV2_PAPERS, DEV3_PAPERS):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            out.update({row["id"]: (row["title"], row["abstract"]) for row in map(json.loads, fh)})
    return out


@dataclass
class Examples:
    """Documents with (partial) labels: y[i, j] is 1/0 where known[i, j], unknown elsewhere."""

    ids: list[str]
    titles: list[str]
    abstracts: list[str]
    vectors: np.ndarray
    y: np.ndarray
    known: np.ndarray
    weight: np.ndarray  # per document and tag
    user: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))  # rows from corrections

    def __len__(self) -> int:
        return len(self.ids)

    def subset(self, rows: np.ndarray) -> Examples:
        return Examples(
            [self.ids[i] for i in rows],
            [self.titles[i] for i in rows],
            [self.abstracts[i] for i in rows],
            self.vectors[rows],
            self.y[rows],
            self.known[rows],
            self.weight[rows],
            self.user[rows] if len(self.user) else self.user,
        )
