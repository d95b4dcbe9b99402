"""Plain values that cross package boundaries: documents, upsert counts."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime

KINDS = ("paper", "post")


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_utc(value: datetime | str) -> str:
    """Normalise a datetime or a 'YYYY-MM-DD[THH:MM:SS[Z|+hh:mm]]' string to 'YYYY-MM-DDTHH:MM:SSZ'."""
    if isinstance(value, str):
        text = value.strip()
        if len(text) == 10:
            datetime.strptime(text, "%Y-%m-%d")  # validates
            return text + "T00:00:00Z"
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class Document:
    """A paper or a post. ``id`` is the bare arXiv id for papers, ``post:<hash>`` for posts."""

    id: str
    kind: str
    source: str
    title: str
    abstract: str
    published: str
    updated: str = ""
    authors: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    primary_category: str = ""
    url: str = ""
    version: int = 0
    date_estimated: bool = False
    extra: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def content_hash(self) -> str:
        text = "\x1e".join((self.title, self.abstract, "\x1f".join(self.authors), "\x1f".join(self.categories)))
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


@dataclass
class UpsertCounts:
    added: int = 0
    updated: int = 0
    unchanged: int = 0

    def __iadd__(self, other: UpsertCounts) -> UpsertCounts:
        self.added += other.added
        self.updated += other.updated
        self.unchanged += other.unchanged
        return self

    @property
    def seen(self) -> int:
        return self.added + self.updated + self.unchanged
