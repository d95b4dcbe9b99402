"""Import papers in the corpus schema from JSONL or JSONL.gz (see ../shared/data/SOURCES.md).

One JSON object per line: id, title, abstract, authors, categories, primary_category,
published (YYYY-MM-DD), optional source_* fields. Idempotent: a re-import changes nothing.
Good lines before a bad one are kept; a truncated .gz keeps everything read before the cut.

Every line is checked at the boundary and a bad line costs only itself (it is skipped and counted
with its reason): ids must look like arXiv ids with a version of at most 9999, ``published`` must
be a real date between 1990-01-01 and today + 2 days (a year-0 or year-9999 date would break every
later date computation), and text is clipped like feed text (title 500, abstract 10,000 characters,
5,000 authors of 300 characters); control characters (NUL, escape codes) are removed.
"""

from __future__ import annotations

import gzip
import re
import sqlite3
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import orjson

from radar.crawler.documents import Document, Documents
from radar.crawler.errors import SnapshotError
from radar.crawler.text import clean_text as _clean
from radar.store import UpsertCounts
from radar.store.table import Database

BATCH = 5000
_ID_RE = re.compile(r"^(?:\d{4}\.\d{4,5}|[a-z\-]{1,40}(?:\.[A-Z]{2})?/\d{7})$")
_VERSION_RE = re.compile(r"v(\d+)$")
MAX_VERSION = 9999
EARLIEST = date(1990, 1, 1)  # arXiv started in 1991
MAX_TITLE = 500  # the feed parsers' caps (crawler/feeds.py)
MAX_ABSTRACT = 10_000
MAX_AUTHORS = 5000  # the corpus's longest author list has 3,303
MAX_NAME = 300
MAX_CATEGORIES = 50
REQUIRED = ("id", "title", "published")
SOURCE_FIELDS = ("source_repo", "source_path", "source_commit")  # provenance kept in Document.extra


def latest_date() -> date:
    """The newest ``published`` date accepted: today + 2 days (time zones, announcement lag)."""
    return date.today() + timedelta(days=2)


def _published(value: Any, newest: date) -> str:
    text = str(value)[:10]
    try:
        day = date.fromisoformat(text) if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text) else None
    except ValueError:
        day = None
    if day is None:
        raise ValueError(f"published {str(value)[:40]!r} is not a YYYY-MM-DD date")
    if not EARLIEST <= day <= newest:
        raise ValueError(f"published {text} is outside {EARLIEST}..{newest}")
    return text


# what the database raises for one bad row (an integer beyond 64 bits, a constraint); not "locked"
_ROW_ERRORS = (OverflowError, ValueError, TypeError, sqlite3.IntegrityError, sqlite3.InterfaceError)


@dataclass
class ImportResult:
    counts: UpsertCounts = field(default_factory=UpsertCounts)
    lines: int = 0
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return not self.bad_lines and not self.truncated


def source_name(record: dict[str, Any], default: str) -> str:  # a snapshot line's JSON object, as parsed
    """'snapshot/<repo>' from source_repo, so trends can normalise per source."""
    repo = record.get("source_repo")
    if isinstance(repo, str) and repo:
        return "snapshot/" + repo.rsplit("/", 1)[-1]
    return default


def record_to_document(record: Any, default_source: str = "snapshot", *, newest: date | None = None) -> Document:
    """Map one corpus-schema object to a Document; raises ValueError naming the bad field.
    ``newest``: the latest accepted ``published`` date (default: today + 2 days)."""
    if not isinstance(record, dict):
        raise ValueError("line is not a JSON object")
    missing = [k for k in REQUIRED if not record.get(k)]
    if missing:
        raise ValueError(f"missing field(s) {', '.join(missing)}")
    raw_id = str(record["id"]).strip()[:80]
    version = 0
    if m := _VERSION_RE.search(raw_id):
        if len(m.group(1)) > 4:
            raise ValueError(f"id {raw_id[:40]!r} has version {m.group(1)[:12]}..., more than v{MAX_VERSION}")
        version = int(m.group(1))
        raw_id = raw_id[: m.start()]
    if not _ID_RE.match(raw_id):
        raise ValueError(f"id {raw_id[:40]!r} is not an arXiv id like 2401.00642")
    published = _published(record["published"], newest or latest_date())
    authors = record.get("authors") or []
    categories = record.get("categories") or []
    if not isinstance(authors, list) or not isinstance(categories, list):
        raise ValueError("authors and categories must be lists")
    title = _clean(str(record["title"]), MAX_TITLE)
    if not title:
        raise ValueError("title is empty")
    extra = {k: _clean(str(record[k]), MAX_NAME) for k in SOURCE_FIELDS if record.get(k)}
    cats = tuple(c for c in (_clean(str(c), 40) for c in categories[:MAX_CATEGORIES]) if c)
    return Document(
        id=raw_id,
        kind="paper",
        source=_clean(source_name(record, default_source), 100),
        title=title,
        abstract=_clean(str(record.get("abstract") or ""), MAX_ABSTRACT),
        published=published + "T00:00:00Z",
        authors=tuple(_clean(str(a), MAX_NAME) for a in authors[:MAX_AUTHORS]),
        categories=cats,
        primary_category=_clean(str(record.get("primary_category") or (cats[0] if cats else "")), 40),
        url=f"https://arxiv.org/abs/{raw_id}",
        version=version,
        extra=extra,
    )


def _lines(path: Path) -> Iterator[bytes]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:  # type: ignore[operator]
        yield from fh


def import_snapshot(
    store: Database,
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
    batch_lines: list[int] = []
    newest = latest_date()

    def flush() -> None:
        if not batch:
            return
        try:
            result.counts += Documents(store).upsert(batch)
        except _ROW_ERRORS:  # one row the database refuses must not cost the others: store them one by one
            for doc, at in zip(batch, batch_lines, strict=True):
                try:
                    result.counts += Documents(store).upsert([doc])
                except _ROW_ERRORS as exc:
                    result.bad_lines.append((at, f"not storable ({type(exc).__name__}: {str(exc)[:80]})"))
        if progress:
            progress(len(batch))
        batch.clear()
        batch_lines.clear()

    lineno = 0
    try:
        for lineno, line in enumerate(_lines(path), start=1):  # noqa: B007 (lineno used after the loop)
            if not line.strip():
                continue
            try:
                batch.append(record_to_document(orjson.loads(line), source, newest=newest))
                batch_lines.append(lineno)
            except (orjson.JSONDecodeError, ValueError, TypeError, RecursionError) as exc:
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
