"""A small real workspace for index tests: real papers, the real packaged model."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from tests.conftest import SNAPSHOT

QUERIES = Path(__file__).parent / "fixtures" / "dev_search_queries.jsonl"


def dev_queries() -> list[dict[str, str]]:
    return [json.loads(line) for line in QUERIES.read_text().splitlines() if line.strip()]


def write_subset(path: Path, n_background: int, step: int = 37) -> list[str]:
    """The dev-query targets plus every ``step``-th other paper of the bundled snapshot."""
    targets = {q["id"] for q in dev_queries()}
    ids: list[str] = []
    with gzip.open(SNAPSHOT, "rt", encoding="utf-8") as src, gzip.open(path, "wt", encoding="utf-8") as dst:
        for i, line in enumerate(src):
            rec = json.loads(line)
            if rec["id"] in targets or (i % step == 0 and len(ids) < n_background + len(targets)):
                dst.write(line)
                ids.append(rec["id"])
    return ids
