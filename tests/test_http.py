from __future__ import annotations

import time

import pytest

from radar.crawler.config import CrawlConfig, crawler_config
from radar.crawler.errors import FetchError
from radar.crawler.http import HttpClient, parse_retry_after
from tests.feedserver import FeedServer, Reply

POLICY = CrawlConfig(user_agent="t", timeout_s=5, max_retries=3, backoff_base_s=0.01, max_backoff_s=5.0)


class SleepLog:
    """Records the waits the client asks for (the server is real; only waiting is skipped)."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def test_parse_retry_after() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == pytest.approx(10.0)


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_is_honoured(server: FeedServer, status: int) -> None:
    server.static("/feed", b"<rss version='2.0'><channel><title>t</title></channel></rss>")
    server.fail_next("/feed", Reply(status, b"slow down", {"Retry-After": "2"}))
    sleeps = SleepLog()
    resp = HttpClient(POLICY, sleep=sleeps).get(server.url + "/feed")
    assert resp.status == 200 and len(server.hits("/feed")) == 2
    assert sleeps.waits and sleeps.waits[0] >= 2.0  # waited at least what the server asked


@pytest.mark.parametrize("status", [429, 503])
def test_backoff_is_exponential_without_retry_after(server: FeedServer, status: int) -> None:
    server.static("/feed", b"ok")
    server.fail_next("/feed", *[Reply(status, b"busy") for _ in range(3)])
    sleeps = SleepLog()
    assert HttpClient(POLICY, sleep=sleeps, jitter=0).get(server.url + "/feed").status == 200
    assert sleeps.waits == pytest.approx([0.01, 0.02, 0.04])


def test_retries_are_bounded(server: FeedServer) -> None:
    server.routes["/down"] = lambda req: Reply(503, b"down")
    with pytest.raises(FetchError, match="failed 4 times, last: HTTP 503") as info:
        HttpClient(POLICY, sleep=SleepLog()).get(server.url + "/down", source="s")
    assert len(server.hits("/down")) == 4 and info.value.attempt == 4


def test_retry_after_beyond_the_cap_fails_fast(server: FeedServer) -> None:
    server.routes["/busy"] = lambda req: Reply(429, b"", {"Retry-After": "3600"})
    with pytest.raises(FetchError, match="asks to wait 3600 s"):
        HttpClient(POLICY, sleep=SleepLog()).get(server.url + "/busy")
    assert len(server.hits("/busy")) == 1


def test_connection_reset_mid_body_is_retried(server: FeedServer) -> None:
    body = b"<rss version='2.0'>" + b"x" * 50000 + b"</rss>"
    server.static("/feed", body)
    server.fail_next("/feed", Reply(200, body, reset=True))
    resp = HttpClient(POLICY, sleep=SleepLog()).get(server.url + "/feed")
    assert resp.body == body and len(server.hits("/feed")) == 2


def test_minimum_interval_per_host_with_real_clock(server: FeedServer) -> None:
    server.static("/a", b"a")
    client = HttpClient(POLICY)
    for _ in range(3):
        client.get(server.url + "/a", min_interval_s=0.3)
    times = [r.at for r in server.hits("/a")]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert min(gaps) >= 0.29


def test_client_errors_are_not_retried(server: FeedServer) -> None:
    resp = HttpClient(POLICY, sleep=SleepLog()).get(server.url + "/missing")
    assert resp.status == 404 and len(server.hits("/missing")) == 1


def test_timeout_is_retried_then_reported(server: FeedServer) -> None:
    server.routes["/slow"] = lambda req: Reply(200, b"late", delay=1.0)
    policy = CrawlConfig(user_agent="t", timeout_s=0.2, max_retries=1, backoff_base_s=0.0, max_backoff_s=0.0)
    started = time.monotonic()
    with pytest.raises(FetchError, match="connection failed"):
        HttpClient(policy).get(server.url + "/slow")
    assert time.monotonic() - started < 3


def test_arxiv_politeness_with_the_default_config() -> None:
    """With the shipped config, two requests to one arXiv host are >= 3 s apart (fake clock, no network)."""
    from radar.store.config import DEFAULT_CONFIG_TEXT, parse_config

    src = crawler_config(parse_config(DEFAULT_CONFIG_TEXT)).source("arxiv")
    now = {"t": 100.0}
    waits: list[float] = []

    def sleep(s: float) -> None:
        waits.append(s)
        now["t"] += s

    client = HttpClient(POLICY, sleep=sleep, clock=lambda: now["t"])
    client._wait_turn("export.arxiv.org", src.min_interval_s)
    now["t"] += 0.5
    client._wait_turn("export.arxiv.org", src.min_interval_s)
    client._wait_turn("rss.arxiv.org", src.min_interval_s)  # another host has its own turn
    assert waits == [pytest.approx(2.5)]
    assert src.min_interval_s >= 3.0 and src.page_size == 2000
