"""Plain values that cross package boundaries: UTC stamps, upsert counts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime


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
