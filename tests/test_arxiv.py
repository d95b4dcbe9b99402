from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from radar.crawler.arxiv_api import ArxivClient, ArxivQuery
from radar.crawler.config import CrawlConfig, crawler_config
from radar.crawler.documents import Documents
from radar.crawler.errors import FetchError
from radar.crawler.http import HttpClient
from radar.crawler.run import crawl
from radar.crawler.state import CrawlStates
from radar.store import Workspace
from tests.conftest import make_workspace
from tests.feedserver import FeedServer, Reply, arxiv_pages, fixture_bytes

POLICY = CrawlConfig(user_agent="t", timeout_s=5, max_retries=3, backoff_base_s=0.01, max_backoff_s=1.0)


def arxiv_source(server: FeedServer, page_size: int = 10, interval: float = 0.0, extra: str = "") -> str:
    return f"""
[[sources]]
name = "arxiv"
type = "arxiv"
base_url = "{server.url}/api/query"
categories = ["cs.LG", "cs.DC"]
queries = ['all:"GRPO"']
page_size = {page_size}
min_interval_s = {interval}
initial_days = 3650
{extra}
"""


def test_query_is_incremental_and_sorted_for_resumption() -> None:
    q = ArxivQuery(categories=("cs.LG",), queries=("all:GRPO",), since=datetime(2025, 5, 1, 12, 30, tzinfo=UTC))
    assert q.search_query() == "(cat:cs.LG OR (all:GRPO)) AND lastUpdatedDate:[202505011230 TO 299912312359]"
    args = q.to_search()._url_args()
    assert args["sortBy"] == "lastUpdatedDate" and args["sortOrder"] == "ascending"


def test_crawl_pages_store_every_entry_once(server: FeedServer, tmp_path: Path) -> None:
    server.routes["/api/query"] = arxiv_pages(total=20)
    ws = make_workspace(tmp_path / "ws", arxiv_source(server))
    with ws.store() as store:
        (result,) = crawl(store, crawler_config(ws.config()))
        assert result.ok, result.message
        assert (result.added, result.requests) == (20, 2)
        assert Documents(store).count() == 20
        cursor = CrawlStates(store).get("arxiv").cursor
        assert cursor == max(d.updated for d in Documents(store).scan())
    hits = server.hits("/api/query")
    assert [h.query["start"] for h in hits] == ["0", "10"]
    assert all(h.query["max_results"] == "10" for h in hits)
    assert "cat:cs.LG OR cat:cs.DC" in hits[0].query["search_query"]
    # the second crawl asks only for what changed since the cursor, and stores nothing twice
    with ws.store() as store:
        (again,) = crawl(store, crawler_config(ws.config()))
        assert again.added == 0 and Documents(store).count() == 20
    since = server.hits("/api/query")[-1].query["search_query"].split("lastUpdatedDate:[")[1][:12]
    assert since == cursor[:16].replace("-", "").replace("T", "").replace(":", "")


def test_largest_page_size_is_the_default(workspace: Workspace) -> None:
    assert crawler_config(workspace.config()).source("arxiv").page_size == 2000


def test_spurious_empty_page_is_retried(server: FeedServer) -> None:
    handler = arxiv_pages(total=20)
    empty_mid = fixture_bytes("arxiv_api_empty_id_0000.0000.xml").replace(
        b"<opensearch:totalResults>0<", b"<opensearch:totalResults>20<"
    )
    calls = {"n": 0}

    def flaky(req):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if req.query.get("start") == "10" and calls["n"] == 2:
            return Reply(200, empty_mid, conditional=False)
        return handler(req)

    server.routes["/api/query"] = flaky
    client = ArxivClient(HttpClient(POLICY), server.url + "/api/query", page_size=10, min_interval_s=0)
    pages = list(client.pages(ArxivQuery(categories=("cs.LG",))))
    assert [len(p.documents) for p in pages] == [10, 10]
    assert [h.query["start"] for h in server.hits("/api/query")] == ["0", "10", "10"]


def test_error_feed_becomes_one_clear_line(server: FeedServer) -> None:
    body = fixture_bytes("arxiv_api_error_400_id_abc.xml")
    server.routes["/api/query"] = lambda req: Reply(400, body, {"Content-Type": "application/atom+xml"})
    client = ArxivClient(HttpClient(POLICY), server.url + "/api/query", page_size=10, min_interval_s=0)
    with pytest.raises(FetchError, match="incorrect id format for abc; fix its categories"):
        next(client.pages(ArxivQuery(categories=("cs.LG",))))
    assert len(server.hits("/api/query")) == 1  # a 400 is not retried


def test_legacy_2016_format_and_version_update(server: FeedServer, tmp_path: Path) -> None:
    legacy = fixture_bytes("arxiv_api_legacy2016_au_del_maestro.xml")
    server.routes["/api/query"] = lambda req: Reply(
        200,
        legacy if req.query["start"] == "0" else fixture_bytes("arxiv_api_empty_id_0000.0000.xml"),
        conditional=False,
    )
    ws = make_workspace(tmp_path / "ws", arxiv_source(server, page_size=10))
    with ws.store() as store:
        crawl(store, crawler_config(ws.config()))
        n = Documents(store).count()
        assert n == 10
        doc = Documents(store).get("1201.4869")
        assert doc.version == 1 and doc.authors == ("Adrian Del Maestro",)
        first_seen = Documents(store).meta("1201.4869").first_seen
    v2 = legacy.replace(b"1201.4869v1</id>", b"1201.4869v2</id>").replace(
        b"A Luttinger Liquid Core Inside Helium-4 Filled Nanopores", b"A Luttinger Liquid Core (revised)"
    )
    server.routes["/api/query"] = lambda req: Reply(
        200, v2 if req.query["start"] == "0" else fixture_bytes("arxiv_api_empty_id_0000.0000.xml"), conditional=False
    )
    with ws.store() as store:
        (res,) = crawl(store, crawler_config(ws.config()), since=datetime(2010, 1, 1, tzinfo=UTC))
        assert (res.added, res.updated) == (0, 1)
        doc = Documents(store).get("1201.4869")
        assert doc.version == 2 and doc.title == "A Luttinger Liquid Core (revised)"
        assert Documents(store).meta("1201.4869").first_seen == first_seen
        assert Documents(store).count() == n


def test_arxiv_rate_limit_between_pages(server: FeedServer, tmp_path: Path) -> None:
    server.routes["/api/query"] = arxiv_pages(total=20)
    ws = make_workspace(tmp_path / "ws", arxiv_source(server, interval=0.5))
    with ws.store() as store:
        crawl(store, crawler_config(ws.config()))
    a, b = (h.at for h in server.hits("/api/query"))
    assert b - a >= 0.49
