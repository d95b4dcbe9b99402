"""Framework sources: a code repository's public Atom feeds (its releases and its branch's commits, as GitHub and
GitLab publish them) parsed into framework entries. Pure: bytes in, entries out; the feed rules are the blog
feeds' (crawler/feeds.py: markup reduced to plain text, http(s) links only, implausible dates replaced, at most
twice the entry cap parsed)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from radar.crawler.config import FrameworkSource
from radar.crawler.feeds import parse_feed
from radar.store.frameworks import FrameworkEntry


@dataclass(frozen=True)
class ParsedEntries:
    entries: list[FrameworkEntry]
    skipped: int = 0
    warning: str = ""
    cut: int = 0  # entries past twice the cap, never parsed


def parse_framework_feed(
    body: bytes,
    *,
    url: str,
    src: FrameworkSource,
    kind: str,
    headers: Mapping[str, str] | None = None,
    fetched_at: str = "",
    max_entries: int = 0,
) -> ParsedEntries:
    """A releases or commits feed of ``src`` as entries of ``kind`` (release | commit)."""
    parsed = parse_feed(body, url=url, source=src.name, headers=headers, fetched_at=fetched_at, max_entries=max_entries)
    entries = [
        FrameworkEntry(
            id="fw:" + d.id.removeprefix("post:"),
            source=src.name,
            framework=src.framework,
            area=src.area,
            kind=kind,
            published=d.published,
            link=d.url,
            title=d.title,
            text=d.abstract,
        )
        for d in parsed.documents
    ]
    return ParsedEntries(entries, parsed.skipped, parsed.warning, int(parsed.extra.get("cut", 0)))
