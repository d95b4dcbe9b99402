"""The arXiv API (export.arxiv.org/api/query): an incremental, polite, resumable fetcher.

``ArxivQuery`` says what to fetch; ``ArxivClient`` says how (page size, interval, retries).
Pages come sorted by lastUpdatedDate ascending, so the caller can store a page and advance the
cursor to its newest ``updated`` before asking for the next one: a crawl killed between pages
resumes from the last stored page. Parsing uses the ``arxiv`` package's own feed parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import KW_ONLY, dataclass
from datetime import datetime

import arxiv
from arxiv import _feed as arxiv_feed  # the package's lxml parser: bytes -> arxiv.Result

from radar.crawler.documents import Document
from radar.crawler.errors import FeedParseError, FetchError
from radar.crawler.http import HttpClient, Response, RetryableEmpty
from radar.crawler.text import clean_text
from radar.store import iso_utc

_ENTRY_ID = re.compile(r"arxiv\.org/abs/(?P<id>.+?)(?:v(?P<v>\d+))?$")


@dataclass(frozen=True)
class ArxivQuery:
    """What to fetch: categories OR free queries, updated within [since, until]."""

    categories: tuple[str, ...] = ()
    queries: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None

    def search_query(self) -> str:
        terms = [f"cat:{c}" for c in self.categories] + [f"({q})" for q in self.queries]
        if not terms:
            raise ValueError("an arXiv query needs categories or queries")
        query = terms[0] if len(terms) == 1 else "(" + " OR ".join(terms) + ")"
        if self.since or self.until:
            lo = self.since.strftime("%Y%m%d%H%M") if self.since else "190001010000"
            hi = self.until.strftime("%Y%m%d%H%M") if self.until else "299912312359"
            query += f" AND lastUpdatedDate:[{lo} TO {hi}]"
        return query

    def to_search(self) -> arxiv.Search:
        return arxiv.Search(
            query=self.search_query(),
            max_results=None,
            sort_by=arxiv.SortCriterion.LastUpdatedDate,
            sort_order=arxiv.SortOrder.Ascending,
        )


@dataclass(frozen=True)
class Page:
    start: int
    total_results: int
    documents: list[Document]

    @property
    def newest_update(self) -> str:
        return max((d.updated for d in self.documents), default="")


def result_to_document(result: arxiv.Result, source: str) -> Document:
    match = _ENTRY_ID.search(result.entry_id)
    if not match:
        raise FeedParseError(f"unexpected arXiv entry id {result.entry_id!r}", source=source)
    paper_id = match.group("id")
    extra = {
        k: v for k, v in (("comment", result.comment), ("journal_ref", result.journal_ref), ("doi", result.doi)) if v
    }
    return Document(
        id=paper_id,
        kind="paper",
        source=source,
        title=clean_text(result.title, 500),
        abstract=clean_text(result.summary, 10_000),
        published=iso_utc(result.published),
        updated=iso_utc(result.updated),
        authors=tuple(clean_text(a.name, 300) for a in result.authors[:5000]),
        categories=tuple(clean_text(c, 40) for c in result.categories[:50]),
        primary_category=result.primary_category,
        url=f"https://arxiv.org/abs/{paper_id}",
        version=int(match.group("v") or 0),
        extra=extra,
    )


def _api_error(resp: Response) -> str | None:
    """arXiv reports bad queries as an Atom feed with one entry titled 'Error'."""
    parsed = arxiv_feed.parse(resp.body)
    for result in parsed.results:
        if "/api/errors" in result.entry_id:
            return " ".join(result.summary.split())
    if b"/api/errors" in resp.body:
        m = re.search(rb"<summary>(.*?)</summary>", resp.body, re.S)
        return m.group(1).decode("utf-8", "replace").strip() if m else "unknown error"
    return None


@dataclass
class _Checked:
    """What ``fetch_page``'s validate callback found in the response it accepted."""

    parsed: arxiv_feed.ParsedFeed | None = None
    error: str | None = None  # arXiv's error feed: the request itself was rejected


@dataclass(frozen=True)
class ArxivClient:
    """How to fetch: the API's largest page, one request per ``min_interval_s``, bounded retries."""

    http: HttpClient
    base_url: str
    _: KW_ONLY
    page_size: int = 2000
    min_interval_s: float = 3.0
    source: str = "arxiv"

    def _params(self, query: ArxivQuery, start: int) -> dict[str, str]:
        args = query.to_search()._url_args()
        args.update(start=str(start), max_results=str(self.page_size))
        return args

    def fetch_page(self, query: ArxivQuery, start: int) -> Page:
        holder = _Checked()

        def validate(resp: Response) -> None:
            parsed = arxiv_feed.parse(resp.body)
            if parsed.malformed:
                raise RetryableEmpty(f"unparseable page ({parsed.error})")
            if error := _api_error(resp):
                holder.error = error
                return
            total = parsed.header.total_results
            if not parsed.results and start < total:
                # arXiv sometimes serves an empty page in the middle of a result set: retry it
                raise RetryableEmpty(f"spurious empty page at start={start} of {total}")
            holder.parsed = parsed

        resp = self.http.get(
            self.base_url,
            params=self._params(query, start),
            min_interval_s=self.min_interval_s,
            validate=validate,
            source=self.source,
        )
        if resp.status >= 400 or holder.error is not None:
            detail = holder.error or _api_error(resp) or f"HTTP {resp.status}"
            raise FetchError(
                f"arXiv API rejected the request for source '{self.source}': {detail}; "
                "fix its categories/queries in radar.toml",
                url=resp.url,
                status=resp.status,
                source=self.source,
            )
        parsed = holder.parsed
        assert parsed is not None  # validate ran (status < 400) and found no error: it kept the parsed page
        docs = [result_to_document(r, self.source) for r in parsed.results]
        return Page(start=start, total_results=parsed.header.total_results, documents=docs)

    def pages(self, query: ArxivQuery, *, start: int = 0, max_results: int = 30000) -> Iterator[Page]:
        """Yield pages lazily until the result set (or ``max_results``) is exhausted."""
        fetched = 0
        while fetched < max_results:
            page = self.fetch_page(query, start)
            yield page
            n = len(page.documents)
            fetched += n
            start += n
            if n == 0 or start >= page.total_results:
                return
