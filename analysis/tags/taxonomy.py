"""The taxonomy as data: tags with a group, a description and seed keywords.

The packaged default is ``taxonomy.toml`` next to this module (from the lab's labelling guide);
``[tagging] taxonomy = "FILE"`` in radar.toml replaces it (a path relative to the workspace).
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from radar.analysis.tags.boundaries import BOUNDARIES
from radar.analysis.tags.errors import TaggingError

DEFAULT_TAXONOMY = Path(__file__).with_name("taxonomy.toml")
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")


@dataclass(frozen=True)
class Tag:
    name: str
    group: str
    description: str
    keywords: tuple[str, ...]
    boundaries: tuple[str, ...] = ()  # boundary features (boundaries.py) its regression also sees


@dataclass(frozen=True)
class Taxonomy:
    tags: tuple[Tag, ...]
    source: str
    digest: str  # changes whenever the file's content changes: a trained model is tied to it

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tags]

    @property
    def groups(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for t in self.tags:
            out.setdefault(t.group, []).append(t.name)
        return out

    def get(self, name: str) -> Tag:
        for t in self.tags:
            if t.name == name:
                return t
        raise TaggingError(f"unknown tag {name!r}; valid tags: {', '.join(self.names)}")

    def check(self, names: Iterable[str], where: str = "") -> None:
        """Raise one error naming every unknown tag and listing the valid ones."""
        unknown = sorted({n for n in names if n not in self.names})
        if unknown:
            place = f" in {where}" if where else ""
            raise TaggingError(
                f"unknown tag(s) {', '.join(unknown)}{place}; valid tags: {', '.join(self.names)} "
                f"(add new tags to the taxonomy file {self.source})"
            )


def parse_taxonomy(text: str, source: str) -> Taxonomy:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TaggingError(f"{source}: not valid TOML ({exc}); fix the file or remove [tagging] taxonomy") from None
    entries = data.get("tag", [])
    if not isinstance(entries, list) or not entries:
        raise TaggingError(
            f"{source}: the taxonomy has no [[tag]] entries; add at least one tag (see the default {DEFAULT_TAXONOMY})"
        )
    tags: list[Tag] = []
    for i, entry in enumerate(entries, 1):
        if not isinstance(entry, dict):
            raise TaggingError(f"{source}: tag #{i} is not a table; write it as [[tag]] with name = ...")
        name = entry.get("name", "")
        if not isinstance(name, str) or not _NAME.match(name):
            raise TaggingError(
                f"{source}: tag #{i} needs a name of lower-case letters, digits and dashes, got {name!r}"
            )
        if name in {t.name for t in tags}:
            raise TaggingError(f"{source}: tag {name!r} is defined twice; keep one")
        unknown = sorted(set(entry) - {"name", "group", "description", "keywords", "boundaries"})
        if unknown:
            raise TaggingError(
                f"{source}: tag {name!r} has unknown key(s) {', '.join(unknown)}; "
                "valid: name, group, description, keywords, boundaries"
            )
        boundaries = entry.get("boundaries", [])
        if not isinstance(boundaries, list) or not all(isinstance(b, str) and b in BOUNDARIES for b in boundaries):
            raise TaggingError(
                f"{source}: tag {name!r}: boundaries is a list of names from {', '.join(BOUNDARIES)}; "
                f"got {boundaries!r}"
            )
        description = entry.get("description", "")
        keywords = entry.get("keywords", [])
        if (
            not isinstance(description, str)
            or not isinstance(keywords, list)
            or not all(isinstance(k, str) and k.strip() for k in keywords)
        ):
            raise TaggingError(
                f"{source}: tag {name!r}: description must be a string and keywords a list of non-empty strings"
            )
        if not description.strip() and not keywords:
            raise TaggingError(
                f"{source}: tag {name!r} has neither a description nor keywords; give it at least "
                "one so it can be learned before any labeled example exists"
            )
        tags.append(
            Tag(name, str(entry.get("group", "other")), description.strip(), tuple(keywords), tuple(boundaries))
        )
    return Taxonomy(tuple(tags), source, hashlib.sha1(text.encode()).hexdigest()[:12])


def load_taxonomy_file(path: Path) -> Taxonomy:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TaggingError(
            f"cannot read the taxonomy {path} ({exc.strerror}); fix [tagging] taxonomy "
            "in radar.toml or remove it to use the default"
        ) from None
    return parse_taxonomy(text, str(path))


def load_taxonomy(path: Path | None) -> Taxonomy:
    """The taxonomy file [tagging] names (resolved by the caller), or the packaged default."""
    return load_taxonomy_file(path or DEFAULT_TAXONOMY)
