"""Crawl configured sources into the store: one source failing never stops the others.

Every page is stored in its own transaction and the source's cursor moves with it, so a crawl
killed between pages resumes where it stopped, and a rerun stores nothing twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol, TypeVar

import msgspec

from radar.crawler.arxiv_api import ArxivClient, ArxivQuery
from radar.crawler.config import ArxivRssSource, ArxivSource, CrawlerConfig, FeedSource, FrameworkSource, Source
from radar.crawler.documents import Documents
from radar.crawler.errors import CrawlError, FetchError
from radar.crawler.feeds import ParsedFeed, parse_arxiv_rss, parse_feed
from radar.crawler.frameworks import FrameworkEntries, framework_entries
from radar.crawler.http import HttpClient, Response
from radar.crawler.state import CrawlState, CrawlStates
from radar.store import UpsertCounts, utc_now
from radar.store.scrub import scrub_line, url_secrets
from radar.store.table import Database

# progress(source_name, documents_in_this_step, total_expected_or_None)
ProgressFn = Callable[[str, int, int | None], None]


class SourceResult(msgspec.Struct):
    """One source's crawl; as it is (``msgspec.to_builtins``), one source of `radar crawl --json`."""

    source: str
    ok: bool = True
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    requests: int = 0
    seconds: float = 0.0  # rounded to 0.01 s
    not_modified: bool = False
    message: str = ""

    def count(self, counts: UpsertCounts) -> None:
        """Add what one store call did."""
        self.added += counts.added
        self.updated += counts.updated
        self.unchanged += counts.unchanged

    def line(self) -> str:
        if not self.ok:
            return f"{self.source}: FAILED: {self.message}"
        if self.not_modified:
            return f"{self.source}: not modified since last crawl ({self.requests} request, {self.seconds:.1f} s)"
        text = (
            f"{self.source}: {self.added} new, {self.updated} updated, {self.unchanged} unchanged "
            f"({self.requests} requests, {self.seconds:.1f} s)"
        )
        return text + (f"; {self.message}" if self.message else "")


def _parse_stamp(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)


@dataclass(frozen=True, slots=True)
class _Crawl:
    """What one source's crawl works with: the store, the HTTP client, the source's crawl state (its cursor and
    validators move as pages are stored), the result it fills, the ``--since`` bound and the progress callback."""

    store: Database
    http: HttpClient
    state: CrawlState
    result: SourceResult
    since: datetime | None
    progress: ProgressFn | None

    def stored(self, src: Source, n: int, total: int) -> None:
        if self.progress:
            self.progress(src.name, n, total)


class _Dated(Protocol):
    @property
    def published(self) -> str: ...


D = TypeVar("D", bound=_Dated)


def _newest(items: list[D], since: datetime | None, cap: int) -> tuple[list[D], int]:
    """The items published at or after ``since``, at most ``cap`` of them (the newest: a feed of 100,000 would take
    minutes to store and hours to embed), and how many were left."""
    if since is not None:
        cutoff = since.strftime("%Y-%m-%dT%H:%M:%SZ")
        items = [i for i in items if i.published >= cutoff]
    if len(items) <= cap:
        return items, 0
    return sorted(items, key=lambda i: i.published, reverse=True)[:cap], len(items) - cap


def _validated(state: CrawlState, resp: Response) -> None:
    """Keep the response's validators for the next conditional GET (only once its entries are stored, so a failed
    store re-fetches next time)."""
    state.etag = resp.headers.get("ETag", "") or ""
    state.last_modified = resp.headers.get("Last-Modified", "") or ""


def crawl_arxiv(run: _Crawl, src: ArxivSource) -> None:
    now = datetime.now(UTC)
    if run.since is not None:
        start = run.since
    elif run.state.cursor:
        start = _parse_stamp(run.state.cursor)
    else:
        start = now - timedelta(days=src.initial_days)
    query = ArxivQuery(categories=src.categories, queries=src.queries, since=start, until=now)
    client = ArxivClient(
        run.http, src.base_url, page_size=src.page_size, min_interval_s=src.min_interval_s, source=src.name
    )
    for page in client.pages(query, max_results=src.max_results):
        run.result.count(Documents(run.store).upsert(page.documents))
        if page.newest_update and page.newest_update > run.state.cursor:
            run.state.cursor = page.newest_update
        CrawlStates(run.store).save(run.state)  # the cursor moves only after the page is stored
        run.stored(src, len(page.documents), min(page.total_results, src.max_results))


def _conditional_get(http: HttpClient, url: str, src: Source, state: CrawlState) -> Response:
    headers = {}
    if state.etag:
        headers["If-None-Match"] = state.etag
    if state.last_modified:
        headers["If-Modified-Since"] = state.last_modified
    resp = http.get(
        url,
        headers=headers,
        min_interval_s=src.min_interval_s if isinstance(src, ArxivRssSource) else 0.0,
        source=src.name,
    )
    if resp.status >= 400:
        raise FetchError(
            f"{url} answered HTTP {resp.status}; check the url of source '{src.name}' in radar.toml",
            url=url,
            status=resp.status,
            source=src.name,
        )
    return resp


def crawl_feed(run: _Crawl, src: ArxivRssSource | FeedSource) -> None:
    url = src.feed_url
    resp = _conditional_get(run.http, url, src, run.state)
    if resp.not_modified:
        run.result.not_modified = True
        return
    cap = run.http.policy.max_feed_entries
    parsed: ParsedFeed
    if isinstance(src, ArxivRssSource):
        parsed = parse_arxiv_rss(resp.body, url=url, source=src.name, headers=resp.headers)
    else:
        parsed = parse_feed(
            resp.body, url=url, source=src.name, headers=resp.headers, fetched_at=utc_now(), max_entries=cap
        )
    docs, left = _newest(parsed.documents, run.since, cap)
    left += int(parsed.extra.get("cut", 0))
    run.result.count(Documents(run.store).upsert(docs))
    run.result.message = "; ".join(
        m
        for m in (
            parsed.warning,
            f"{parsed.skipped} entries without title or link skipped" if parsed.skipped else "",
            _left_line(left, cap),
        )
        if m
    )
    _validated(run.state, resp)
    run.stored(src, len(docs), len(docs))


def _left_line(left: int, cap: int) -> str:
    return f"{left:,} entries left ([crawl] max_feed_entries = {cap:,} per crawl: the newest are kept)" if left else ""


def crawl_framework(run: _Crawl, src: FrameworkSource) -> None:
    """Both feeds of a framework (releases, commits), each with its own validators (crawl state
    "<source>#<kind>"): entries go to the framework tables, never to the documents. A feed that fails leaves the
    other's entries stored, and the source is reported failed with the feed named."""
    cap = run.http.policy.max_feed_entries
    notes: list[str] = []
    failed: list[str] = []
    seen = 0
    states = CrawlStates(run.store)
    for kind, url in src.framework_feeds():
        feed_state = states.get(f"{src.name}#{kind}")
        try:
            resp = _conditional_get(run.http, url, src, feed_state)
            if resp.not_modified:
                continue
            feed = parse_feed(
                resp.body, url=url, source=src.name, headers=resp.headers, fetched_at=utc_now(), max_entries=cap
            )
            parsed = framework_entries(feed, src, kind)
        except CrawlError as exc:
            failed.append(f"{kind}s feed: {exc}")
            continue
        entries, left = _newest(parsed.entries, run.since, cap)
        entries = sorted(entries, key=lambda e: e.published, reverse=True)  # stored newest first
        run.result.count(FrameworkEntries(run.store).upsert_framework_entries(entries))
        seen += 1
        skipped = f"{parsed.skipped} {kind}s without title or link skipped" if parsed.skipped else ""
        notes += [m for m in (parsed.warning, skipped, _left_line(left + parsed.cut, cap)) if m]
        _validated(feed_state, resp)
        feed_state.last_success = utc_now()
        states.save(feed_state)
        run.stored(src, len(entries), len(entries))
    run.result.message = "; ".join(notes)
    if failed:
        raise CrawlError("; ".join(failed), url=src.url, source=src.name)
    run.result.not_modified = seen == 0


def _record_failure(result: SourceResult, state: CrawlState, message: str, src: Source) -> None:
    """The error, scrubbed of the source URL's credentials and query, goes to the CLI and the database."""
    message = scrub_line(message, url_secrets(src.target), 500)
    result.ok = False
    result.message = message
    state.last_error = message
    state.last_error_at = utc_now()


def crawl_source(
    store: Database,
    src: Source,
    http: HttpClient,
    *,
    since: datetime | None = None,
    progress: ProgressFn | None = None,
) -> SourceResult:
    """One source's crawl; the source's type picks its fetch."""
    states = CrawlStates(store)
    run = _Crawl(store, http, states.get(src.name), SourceResult(src.name), since, progress)
    run.state.last_attempt = utc_now()
    requests_before = http.requests_made
    started = time.perf_counter()
    try:
        match src:
            case ArxivSource():
                crawl_arxiv(run, src)
            case ArxivRssSource() | FeedSource():
                crawl_feed(run, src)
            case FrameworkSource():
                crawl_framework(run, src)
    except CrawlError as exc:
        _record_failure(run.result, run.state, str(exc), src)
    except Exception as exc:  # noqa: BLE001 - one broken source must not stop the others
        msg = f"unexpected {type(exc).__name__}: {exc}; the source is skipped this run"
        _record_failure(run.result, run.state, msg, src)
    else:
        run.state.last_success = utc_now()
        run.state.last_error = ""
    finally:
        run.result.requests = http.requests_made - requests_before
        run.result.seconds = round(time.perf_counter() - started, 2)
        run.state.last_summary = run.result.line()
        states.save(run.state)
    return run.result


def crawl(
    store: Database,
    config: CrawlerConfig,
    *,
    only: str | None = None,
    since: datetime | None = None,
    http: HttpClient | None = None,
    progress: ProgressFn | None = None,
) -> list[SourceResult]:
    sources = [config.source(only)] if only else [s for s in config.sources if s.enabled]
    http = http or HttpClient(config.crawl)
    return [crawl_source(store, src, http, since=since, progress=progress) for src in sources]
