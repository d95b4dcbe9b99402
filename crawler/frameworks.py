"""Framework sources: a code repository's public Atom feeds (its releases and its branch's commits, as GitHub and
GitLab publish them) as framework entries. Pure: a feed parsed by the blog feeds' parser in, entries out; so the
feed rules are the blog feeds' (crawler/feeds.py: markup reduced to plain text, http(s) links only, implausible dates
replaced, at most twice the entry cap parsed)."""

from __future__ import annotations

from dataclasses import dataclass

from radar.crawler.config import FrameworkSource
from radar.crawler.feeds import ParsedFeed
from radar.store.frameworks import FrameworkEntry


@dataclass(frozen=True)
class ParsedEntries:
    entries: list[FrameworkEntry]
    skipped: int = 0
    warning: str = ""
    cut: int = 0  # entries past twice the cap, never parsed


def framework_entries(parsed: ParsedFeed, src: FrameworkSource, kind: str) -> ParsedEntries:
    """A releases or commits feed of ``src``, parsed as a blog feed (``feeds.parse_feed``), as entries of ``kind``
    (release | commit)."""
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
