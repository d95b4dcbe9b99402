"""The bundled snapshot's papers (data/snapshot.jsonl.gz) as stored documents: the tests' one reader of them."""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from radar.crawler.documents import Document

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "data" / "snapshot.jsonl.gz"


def document_of(r: Mapping[str, Any], *, source: str = "snapshot", authors: bool = False) -> Document:
    """One snapshot (or corpus) row as a stored paper; ``authors``: keep its authors too."""
    return Document(
        id=str(r["id"]),
        kind="paper",
        source=source,
        title=str(r["title"]),
        abstract=str(r["abstract"]),
        published=str(r["published"]),
        categories=tuple(r.get("categories") or ()),
        authors=tuple(r.get("authors") or ()) if authors else (),
    )


def snapshot_rows(path: Path = SNAPSHOT) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rb") as fh:
        for line in fh:
            yield orjson.loads(line)


def snapshot_documents(
    keep: Callable[[Mapping[str, Any]], bool], path: Path = SNAPSHOT, *, authors: bool = False
) -> list[Document]:
    """The rows ``keep`` accepts, as stored papers, in the file's order."""
    return [document_of(r, authors=authors) for r in snapshot_rows(path) if keep(r)]
