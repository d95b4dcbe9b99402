"""Import papers in the corpus schema from JSONL or JSONL.gz (see ../shared/data/SOURCES.md).

One JSON object per line: id, title, abstract, authors, categories, primary_category,
published (YYYY-MM-DD), optional source_* fields. Idempotent: a re-import changes nothing.
Good lines before a bad one are kept; a truncated .gz keeps everything read before the cut.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from radar.crawler.errors import SnapshotError
from radar.store import Document, Store, UpsertCounts

BATCH = 5000
_ID_RE = re.compile(r"^(?:\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})$")
_VERSION_RE = re.compile(r"v(\d+)$")
REQUIRED = ("id", "title", "published")
SOURCE_FIELDS = ("source_repo", "source_path", "source_commit")  # provenance kept in Document.extra
_ASCII_SPACE_RUNS = ("  ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")


def _clean(text: str) -> str:
    """Collapse whitespace like " ".join(text.split()); most corpus text is already clean ASCII,
    so substring checks (in C) decide before a new string is built."""
    if not text:
        return text
    if not text.isascii() or text[0] == " " or text[-1] == " " or any(s in text for s in _ASCII_SPACE_RUNS):
        return " ".join(text.split())
    return text


@dataclass
class ImportResult:
    counts: UpsertCounts = field(default_factory=UpsertCounts)
    lines: int = 0
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return not self.bad_lines and not self.truncated


def source_name(record: dict[str, Any], default: str) -> str:
    """'snapshot/<repo>' from source_repo, so trends can normalise per source."""
    repo = record.get("source_repo")
    if isinstance(repo, str) and repo:
        return "snapshot/" + repo.rsplit("/", 1)[-1]
    return default


def record_to_document(record: Any, default_source: str = "snapshot") -> Document:
    """Map one corpus-schema object to a Document; raises ValueError naming the bad field."""
    if not isinstance(record, dict):
        raise ValueError("line is not a JSON object")
    missing = [k for k in REQUIRED if not record.get(k)]
    if missing:
        raise ValueError(f"missing field(s) {', '.join(missing)}")
    raw_id = str(record["id"]).strip()
    version = 0
    if m := _VERSION_RE.search(raw_id):
        version = int(m.group(1))
        raw_id = raw_id[: m.start()]
    if not _ID_RE.match(raw_id):
        raise ValueError(f"id {raw_id!r} is not an arXiv id like 2401.00642")
    published = str(record["published"])[:10]
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", published):
        raise ValueError(f"published {record['published']!r} is not YYYY-MM-DD")
    authors = record.get("authors") or []
    categories = record.get("categories") or []
    if not isinstance(authors, list) or not isinstance(categories, list):
        raise ValueError("authors and categories must be lists")
    extra = {k: str(record[k]) for k in SOURCE_FIELDS if record.get(k)}
    return Document(
        id=raw_id,
        kind="paper",
        source=source_name(record, default_source),
        title=_clean(str(record["title"])),
        abstract=_clean(str(record.get("abstract") or "")),
        published=published + "T00:00:00Z",
        authors=tuple(str(a) for a in authors),
        categories=tuple(str(c) for c in categories),
        primary_category=str(record.get("primary_category") or (categories[0] if categories else "")),
        url=f"https://arxiv.org/abs/{raw_id}",
        version=version,
        extra=extra,
    )


def _lines(path: Path) -> Iterator[bytes]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:  # type: ignore[operator]
        yield from fh


def import_snapshot(
    store: Store,
    path: Path,
    *,
    source: str = "snapshot",
    progress: Callable[[int], None] | None = None,
) -> ImportResult:
    """Stream the file into the store in batches; each batch is one transaction."""
    if not path.is_file():
        raise SnapshotError(f"snapshot {path} not found; give the path of a .jsonl or .jsonl.gz file")
    result = ImportResult()
    batch: list[Document] = []

    def flush() -> None:
        if batch:
            result.counts += store.upsert_documents(batch)
            if progress:
                progress(len(batch))
            batch.clear()

    lineno = 0
    try:
        for lineno, line in enumerate(_lines(path), start=1):  # noqa: B007 (lineno used after the loop)
            if not line.strip():
                continue
            try:
                batch.append(record_to_document(orjson.loads(line), source))
            except (orjson.JSONDecodeError, ValueError, TypeError) as exc:
                reason = "not valid JSON" if isinstance(exc, orjson.JSONDecodeError) else str(exc)
                result.bad_lines.append((lineno, reason))
            if len(batch) >= BATCH:
                flush()
    except (EOFError, zlib.error, gzip.BadGzipFile, OSError) as exc:
        if isinstance(exc, FileNotFoundError | PermissionError):
            raise SnapshotError(f"cannot read {path} ({exc.strerror})") from None
        result.truncated = True
    flush()
    result.lines = lineno
    return result


def describe_problems(path: Path, result: ImportResult) -> str:
    """One line for the CLI about what went wrong, and the fix."""
    parts = []
    if result.truncated:
        parts.append(
            f"{path} is truncated or corrupt after line {result.lines}: the {result.counts.seen} papers "
            "read before it were stored; re-download or re-export the file and import it again"
        )
    if result.bad_lines:
        first_line, reason = result.bad_lines[0]
        parts.append(
            f"skipped {len(result.bad_lines)} bad line(s) in {path} (first: line {first_line}, {reason}); "
            "fix or remove them and import again"
        )
    return "; ".join(parts)
