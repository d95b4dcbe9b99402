"""Crawler errors carry the url, source and attempt so the CLI can print one useful line."""

from __future__ import annotations

from radar.store.errors import RadarError


class CrawlError(RadarError):
    """A source could not be crawled. Partial failure: other sources still run."""

    exit_code = 2

    def __init__(self, message: str, *, url: str = "", source: str = "", attempt: int = 0) -> None:
        super().__init__(message, url=url, source=source, attempt=attempt)
        self.url = url
        self.source = source
        self.attempt = attempt


class FetchError(CrawlError):
    """HTTP failed after bounded retries, or the server refused the request."""

    def __init__(self, message: str, *, status: int | None = None, **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.status = status


class FeedParseError(CrawlError):
    """The response is not a usable RSS/Atom/arXiv feed."""


class SnapshotError(RadarError):
    """A snapshot file is missing, truncated or has bad lines."""
