"""RSS 2.0 / Atom / RDF feeds: a pure parser from bytes to Documents, and the arXiv RSS listing.

feedparser does the tolerant parsing (encodings, ill-formed XML, relative links, dates); this
module turns its entries into Documents: HTML reduced to plain text, dates in UTC (or estimated
and flagged when the feed has none), ids derived from the link or guid so the same post seen
twice, or in two feeds, is one row.
"""

from __future__ import annotations

import calendar
import hashlib
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urljoin, urlparse, urlunparse

import feedparser

from radar.crawler.documents import Document
from radar.crawler.errors import FeedParseError
from radar.crawler.text import clean_text, html_to_text

_TRACKING = re.compile(r"^(utm_|fbclid$|gclid$|mc_|ref$)")
_ARXIV_OAI = re.compile(r"(?:oai:arXiv\.org:|arxiv\.org/abs/)(?P<id>[^v\s]+?(?:/\d+)?)(?:v(?P<v>\d+))?$")
_ARXIV_SUMMARY = re.compile(r"^arXiv:\S+\s+Announce Type:\s*(?P<type>[\w-]+)\s*Abstract:\s*", re.S)
_SAFE_SCHEMES = ("http", "https")

# RFC 822 dates with day/month names in other languages (seen in real feeds: "Seg, 24 Set 2018").
_MONTHS = {
    "jan": "Jan",
    "fev": "Feb",
    "feb": "Feb",
    "mar": "Mar",
    "mär": "Mar",
    "abr": "Apr",
    "avr": "Apr",
    "apr": "Apr",
    "mai": "May",
    "may": "May",
    "mag": "May",
    "jun": "Jun",
    "juin": "Jun",
    "giu": "Jun",
    "jul": "Jul",
    "juil": "Jul",
    "lug": "Jul",
    "ago": "Aug",
    "aug": "Aug",
    "aoû": "Aug",
    "set": "Sep",
    "sep": "Sep",
    "sept": "Sep",
    "out": "Oct",
    "oct": "Oct",
    "okt": "Oct",
    "ott": "Oct",
    "nov": "Nov",
    "dez": "Dec",
    "dic": "Dec",
    "déc": "Dec",
    "dec": "Dec",
}
_FOREIGN_RFC822 = re.compile(r"^\s*(?:[^\W\d]{2,4}\.?,\s*)?(\d{1,2})\s+([^\W\d]{3,4})\.?\s+(\d{4})\s+(.*)$")


def _foreign_rfc822(value: str) -> time.struct_time | None:
    m = _FOREIGN_RFC822.match(value)
    if not m or m.group(2).lower() not in _MONTHS:
        return None
    english = f"{m.group(1)} {_MONTHS[m.group(2).lower()]} {m.group(3)} {m.group(4)}"
    return feedparser.datetimes._parse_date_rfc822(english)  # type: ignore[attr-defined,no-any-return]


feedparser.registerDateHandler(_foreign_rfc822)


@dataclass
class ParsedFeed:
    title: str
    documents: list[Document]
    skipped: int = 0
    warning: str = ""
    extra: dict[str, int] = field(default_factory=dict)  # "cut": entries past the limit, never parsed


def canonical_url(url: str) -> str:
    """Lower-case scheme/host, drop fragments and tracking parameters, trim a trailing slash."""
    parts = urlparse(url.strip())
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _TRACKING.match(k)])
    path = parts.path
    while True:  # until stable: trimming can expose more to trim
        # "post ?utm=..": the space went with what was dropped; "x;id=1/": urlparse splits ";params" off the last
        # segment only, so trimming the "/" exposes params that the next parse would drop
        head, sep, last = path.rstrip().rstrip("/").rpartition("/")
        trimmed = head + sep + last.split(";", 1)[0].rstrip()
        if trimmed == path:
            break
        path = trimmed
    path = path or "/"
    return urlunparse((parts.scheme.lower(), parts.netloc.lower(), path, "", query, ""))


def post_id(link: str, guid: str, title: str, published: str) -> str:
    """Same post, same id: keyed by its canonical link; a link to a site's home page (seen in real
    feeds for several distinct posts) is no identity, so the title joins the key there."""
    if link:
        key = canonical_url(link)
        if urlparse(key).path in ("", "/"):
            key += "|" + title
    else:
        key = guid or f"{title}|{published}"
    return "post:" + hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _plausible(st: time.struct_time | None) -> bool:
    """Reject placeholder dates (Hugo's year 1, epoch zero) and dates in the future."""
    if not st or not 1991 <= st.tm_year <= 9998:  # year 0 or 9999+ would break date arithmetic later
        return False
    try:
        stamp = calendar.timegm(st)
    except (ValueError, OverflowError):  # month 99 and the like
        return False
    return stamp <= time.time() + 2 * 86400


def _entry_time(entry: Any) -> time.struct_time | None:
    for key in ("published_parsed", "updated_parsed", "created_parsed"):
        value = dict.get(entry, key)  # plain dict access: no feedparser key-fallback warnings
        if _plausible(value):
            return value  # type: ignore[no-any-return]
    return None


def _iso(st: time.struct_time) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(calendar.timegm(st)))


def _safe_link(entry: Any, base: str) -> str:
    link = entry.get("link") or ""
    if not link:
        for candidate in entry.get("links") or []:
            if candidate.get("rel", "alternate") == "alternate" and candidate.get("href"):
                link = candidate["href"]
                break
    link = urljoin(base, link.strip()) if link else ""
    return link if urlparse(link).scheme in _SAFE_SCHEMES else ""


def _authors(entry: Any) -> tuple[str, ...]:
    names = [html_to_text(a.get("name"), 200) for a in entry.get("authors") or [] if a.get("name")]
    if not names and entry.get("author"):
        names = [html_to_text(entry["author"], 200)]
    out: list[str] = []
    for name in names:  # dc:creator in arXiv RSS is one comma-separated string
        out.extend(n.strip() for n in name.split(",") if n.strip())
    return tuple(out)


def _parse(body: bytes, url: str, headers: Mapping[str, str] | None) -> Any:
    if not body.strip():
        raise FeedParseError(f"{url} returned an empty document; check the feed url", url=url)
    response_headers = {k.lower(): v for k, v in (headers or {}).items()}
    response_headers.setdefault("content-location", url)
    response_headers.setdefault("content-type", "application/xml")
    # Markup in entries is reduced to plain text by html_to_text, never kept, so feedparser's HTML
    # sanitizer and relative-URI rewriting inside content (most of its parse time) are skipped;
    # entry links are resolved against the feed url in _safe_link.
    parsed = feedparser.parse(body, response_headers=response_headers, sanitize_html=False, resolve_relative_uris=False)
    if not parsed.entries:
        version = parsed.get("version") or ""
        if not version:
            reason = type(parsed.get("bozo_exception")).__name__
            raise FeedParseError(
                f"{url} is not an RSS/Atom feed ({reason}); check that the url points at the feed, not a web page",
                url=url,
            )
    return parsed


_ENTRY_END = re.compile(rb"</(?:[\w.-]+:)?(?:item|entry)\s*>", re.IGNORECASE)


def first_entries(body: bytes, limit: int) -> tuple[bytes, int]:
    """``body`` cut after its first ``limit`` entries (the document's tail after the last entry, with its
    closing tags, is kept), and how many entries were cut: feedparser reads a whole document, so a feed of
    100,000 entries is cut before it is parsed (about 1 s per 1,000 entries on 2 busy cores)."""
    ends = list(_ENTRY_END.finditer(body))
    if len(ends) <= limit:
        return body, 0
    return body[: ends[limit - 1].end()] + body[ends[-1].end() :], len(ends) - limit


def parse_feed(
    body: bytes,
    *,
    url: str,
    source: str,
    headers: Mapping[str, str] | None = None,
    fetched_at: str = "",
    max_entries: int = 0,
) -> ParsedFeed:
    """Parse a blog/news feed into post Documents. Pure: no network, no store. With ``max_entries``, only the
    first ``2 * max_entries`` entries are parsed (the caller keeps the newest ``max_entries``; ``extra``'s
    "cut" says how many were never parsed)."""
    cut = 0
    if max_entries:
        body, cut = first_entries(body, 2 * max_entries)
    parsed = _parse(body, url, headers)
    feed_time = next(
        (
            t
            for t in (dict.get(parsed.feed, "updated_parsed"), dict.get(parsed.feed, "published_parsed"))
            if _plausible(t)
        ),
        None,
    )
    fallback_date = _iso(feed_time) if feed_time else fetched_at or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    docs: list[Document] = []
    skipped = 0
    for entry in parsed.entries:
        title = html_to_text(entry.get("title"), 500)
        summary_html = entry.get("summary") or ""
        if not summary_html and entry.get("content"):
            summary_html = entry["content"][0].get("value", "")
        abstract = html_to_text(summary_html)
        link = _safe_link(entry, url)
        guid = (entry.get("id") or "").strip()
        if not (title or abstract) or not (link or guid):
            skipped += 1
            continue
        st = _entry_time(entry)
        published = _iso(st) if st else fallback_date
        updated_st = dict.get(entry, "updated_parsed")
        updated_st = updated_st if _plausible(updated_st) else None
        tags = tuple(c for c in (clean_text(str(t.get("term") or ""), 100) for t in entry.get("tags") or []) if c)
        docs.append(
            Document(
                id=post_id(link, guid, title, published),
                kind="post",
                source=source,
                title=title or abstract[:120],
                abstract=abstract,
                published=published,
                updated=_iso(updated_st) if updated_st else published,
                authors=_authors(entry),
                categories=tags[:20],
                primary_category="",
                url=link,
                date_estimated=st is None,
                extra={"guid": clean_text(guid, 500)} if guid else {},
            )
        )
    warning = ""
    if parsed.get("bozo") and docs:
        warning = f"feed is ill-formed ({type(parsed.get('bozo_exception')).__name__}); parsed leniently"
    return ParsedFeed(
        title=html_to_text(parsed.feed.get("title"), 300),
        documents=docs,
        skipped=skipped,
        warning=warning,
        extra={"cut": cut} if cut else {},
    )


def parse_arxiv_rss(body: bytes, *, url: str, source: str, headers: Mapping[str, str] | None = None) -> ParsedFeed:
    """Parse rss.arxiv.org (RSS or Atom flavour) announcements into paper Documents."""
    parsed = _parse(body, url, headers)
    docs: list[Document] = []
    skipped = 0
    for entry in parsed.entries:
        ident = (entry.get("id") or entry.get("link") or "").strip()
        match = _ARXIV_OAI.search(ident)
        if not match:
            skipped += 1
            continue
        paper_id = match.group("id")
        raw_summary = entry.get("summary") or ""
        announce = entry.get("arxiv_announce_type") or ""
        if m := _ARXIV_SUMMARY.match(raw_summary):
            announce = announce or m.group("type")
            raw_summary = raw_summary[m.end() :]
        st = _entry_time(entry)
        stamp = _iso(st) if st else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        cats = tuple(c for c in (clean_text(str(t.get("term") or ""), 40) for t in entry.get("tags") or []) if c)
        docs.append(
            Document(
                id=paper_id,
                kind="paper",
                source=source,
                title=html_to_text(entry.get("title"), 500),
                abstract=html_to_text(raw_summary, 10000),
                published=stamp,
                updated=stamp,
                authors=_authors(entry),
                categories=cats,
                primary_category=cats[0] if cats else "",
                url=f"https://arxiv.org/abs/{paper_id}",
                version=int(match.group("v") or 0),
                # a replacement's announcement date is not the paper's v1 date
                date_estimated=announce.startswith("replace"),
                extra={"announce_type": announce} if announce else {},
            )
        )
    return ParsedFeed(title=html_to_text(parsed.feed.get("title"), 300), documents=docs, skipped=skipped)
