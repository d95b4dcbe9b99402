"""Polite HTTP: per-host minimum interval, bounded retries with exponential backoff, Retry-After.

The arXiv package's Client has a fixed delay and no backoff or Retry-After; this wraps requests
with what it lacks. ``file://`` URLs are read from disk (bundled feeds, offline demo).

Redirects are followed here, not by requests (``request_checked``, also used by the webhook and the summary
endpoint): at most 5 hops, each one passing ``radar.store.urls.check_hop`` (http(s) only; a loopback,
private or metadata address only when the configured URL named that same host), and a 307/308 never
re-sends a body to another host.
"""

from __future__ import annotations

import email.utils
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlparse

import requests

from radar.crawler.config import CrawlConfig
from radar.crawler.errors import FetchError
from radar.store.urls import MAX_REDIRECTS, UrlRefused, check_hop

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_PERSONAL = ("authorization", "cookie", "proxy-authorization")  # never sent on to another host
_BODY_HEADERS = ("content-type", "content-length", "content-encoding", "transfer-encoding")


def request_checked(
    session: requests.Session | Any,
    method: str,
    url: str,
    *,
    data: bytes | str | None = None,
    params: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float,
    stream: bool = False,
    max_hops: int = MAX_REDIRECTS,
) -> requests.Response:
    """``session.request`` with redirects followed by hand: every hop passes ``check_hop`` against the
    configured URL's host (UrlRefused otherwise), at most ``max_hops`` of them; 301/302/303 continue as a GET
    without the body (what browsers and requests do), 307/308 keep method and body but only to the same host.
    Credentials and cookies are dropped when the host changes."""
    origin = (urlparse(url).hostname or "").lower()
    current, body, sent = url, data, dict(headers or {})
    for hop in range(max_hops + 1):
        resp = session.request(
            method,
            current,
            data=body,
            params=params if hop == 0 else None,
            headers=sent,
            timeout=timeout,
            stream=stream,
            allow_redirects=False,
        )
        location = resp.headers.get("Location")
        if resp.status_code not in REDIRECT_STATUSES or not location:
            return resp
        resp.close()
        here = urlparse(resp.url or current)
        target = urljoin(resp.url or current, location)
        if hop == max_hops:
            raise UrlRefused(f"{origin} redirected more than {max_hops} times; refused (give the final URL)")
        check_hop(target, origin)
        there = (urlparse(target).hostname or "").lower()
        if resp.status_code in (307, 308):
            if body is not None and there != (here.hostname or "").lower():
                raise UrlRefused(
                    f"{here.hostname} answered {resp.status_code} to {there}: the request body is not re-sent to "
                    "another host; configure the final URL"
                )
        elif method.upper() not in ("GET", "HEAD"):
            method, body = "GET", None
            sent = {k: v for k, v in sent.items() if k.lower() not in _BODY_HEADERS}
        if there != (here.hostname or "").lower():
            sent = {k: v for k, v in sent.items() if k.lower() not in _PERSONAL}
        current = target
    raise AssertionError("unreachable")  # the loop returns or raises


@dataclass(frozen=True)
class Response:
    url: str
    status: int
    headers: Mapping[str, str]
    body: bytes

    @property
    def not_modified(self) -> bool:
        return self.status == 304


class RetryableEmpty(Exception):
    """Raised by a validator to ask for a retry (e.g. arXiv's spurious empty pages)."""


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date); None if absent/garbled."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (now if now is not None else time.time()))


class HttpClient:
    """GETs with politeness and bounded retries. ``sleep`` and ``clock`` are injectable for tests."""

    def __init__(
        self,
        policy: CrawlConfig,
        *,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        jitter: float = 0.1,
    ) -> None:
        self.policy = policy
        self.session = session or requests.Session()
        self.session.headers["User-Agent"] = policy.user_agent
        self.sleep = sleep
        self.clock = clock
        self.jitter = jitter
        self._last_request: dict[str, float] = {}
        self._lock = threading.Lock()
        self.requests_made = 0

    def _wait_turn(self, host: str, min_interval: float) -> None:
        with self._lock:
            last = self._last_request.get(host)
            if last is not None:
                wait = min_interval - (self.clock() - last)
                if wait > 0:
                    self.sleep(wait)
            self._last_request[host] = self.clock()

    def _finished(self, host: str) -> None:
        """The interval counts from the end of the previous response too: a slow first request (connection
        set-up) followed by a fast one must not reach the server closer together than ``min_interval``."""
        with self._lock:
            self._last_request[host] = self.clock()

    def backoff(self, attempt: int, retry_after: float | None = None) -> float:
        delay = min(self.policy.max_backoff_s, self.policy.backoff_base_s * (2**attempt))
        delay *= 1 + self.jitter * random.random()
        if retry_after is not None:
            delay = max(delay, retry_after)
        return delay

    def get(
        self,
        url: str,
        *,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        min_interval_s: float = 0.0,
        validate: Callable[[Response], None] | None = None,
        source: str = "",
    ) -> Response:
        """GET with retries on 429/5xx/connection errors and on RetryableEmpty from ``validate``."""
        if url.startswith("file://"):
            self.requests_made += 1
            return self._get_file(url, source)
        host = urlparse(url).netloc
        last_problem = ""
        attempts = self.policy.max_retries + 1
        for attempt in range(attempts):
            self._wait_turn(host, min_interval_s)
            self.requests_made += 1
            retry_after = None
            try:
                raw = request_checked(
                    self.session, "GET", url, params=params, headers=headers, timeout=self.policy.timeout_s, stream=True
                )
                try:
                    resp = Response(raw.url, raw.status_code, raw.headers, self._read_capped(raw, host, source))
                finally:
                    raw.close()
                    self._finished(host)
            except UrlRefused as exc:
                self._finished(host)
                raise FetchError(
                    f"{exc}; source '{source}' is skipped this run", url=url, source=source, attempt=attempt + 1
                ) from None
            except requests.RequestException as exc:
                last_problem = f"connection failed ({type(exc).__name__})"
            else:
                if resp.status in RETRY_STATUSES:
                    retry_after = parse_retry_after(resp.headers.get("Retry-After"))
                    if retry_after is not None and retry_after > self.policy.max_backoff_s:
                        raise FetchError(
                            f"{host} answered {resp.status} and asks to wait {retry_after:.0f} s "
                            f"(more than max_backoff_s={self.policy.max_backoff_s:g}); try again later",
                            url=resp.url,
                            status=resp.status,
                            source=source,
                            attempt=attempt + 1,
                        )
                    last_problem = f"HTTP {resp.status}"
                elif resp.status >= 400:
                    return resp  # not retryable; the caller explains it (e.g. arXiv's error feed)
                else:
                    try:
                        if validate is not None:
                            validate(resp)
                        return resp
                    except RetryableEmpty as exc:
                        last_problem = str(exc) or "empty page"
            if attempt + 1 < attempts:
                self.sleep(self.backoff(attempt, retry_after))
        raise FetchError(
            f"{host} failed {attempts} times, last: {last_problem}; the source is skipped this run, "
            "rerun later (already stored entries are kept)",
            url=url,
            source=source,
            attempt=attempts,
        )

    def _too_big(self, what: str, host: str, source: str, url: str) -> FetchError:
        cap = self.policy.max_response_mb
        return FetchError(
            f"{host} sent {what} than [crawl] max_response_mb = {cap:g} MB; source '{source}' is skipped this run "
            "(raise max_response_mb in radar.toml if the source is really that large)",
            url=url,
            source=source,
        )

    def _read_capped(self, raw: requests.Response, host: str, source: str) -> bytes:
        """The body, never more than max_response_mb on the wire (compressed) nor after decoding."""
        cap = int(self.policy.max_response_mb * 1_000_000)
        declared = str(raw.headers.get("Content-Length", ""))
        if declared.isdigit() and int(declared) > cap:
            raise self._too_big(f"{int(declared):,} bytes, more", host, source, raw.url)
        chunks, total = [], 0
        wire = getattr(raw.raw, "tell", None)  # urllib3: bytes read off the socket, before decompression
        for chunk in raw.iter_content(64 * 1024):
            total += len(chunk)
            if total > cap:
                raise self._too_big("more (decompressed)", host, source, raw.url)
            if wire is not None and wire() > cap:
                raise self._too_big("more", host, source, raw.url)
            chunks.append(chunk)
        return b"".join(chunks)

    def _get_file(self, url: str, source: str) -> Response:
        path = Path(unquote(urlparse(url).path))
        try:
            if path.stat().st_size > self.policy.max_response_mb * 1_000_000:
                raise self._too_big("a file larger", path.name, source, url)
            return Response(url, 200, {}, path.read_bytes())
        except OSError as exc:
            raise FetchError(
                f"cannot read {path} ({exc.strerror}); fix the url of source '{source}'", url=url, source=source
            ) from None
