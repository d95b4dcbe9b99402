from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from radar.crawler.documents import Documents
from radar.crawler.state import CrawlStates
from tests.cli_helpers import run_cli
from tests.conftest import ROOT, make_workspace
from tests.feedserver import FeedServer, Reply, arxiv_pages, fixture_bytes
from tests.test_arxiv import arxiv_source


def feed_sources(server: FeedServer) -> str:
    return f"""
[[sources]]
name = "lilianweng"
type = "feed"
url = "{server.url}/lilianweng.xml"

[[sources]]
name = "hamel"
type = "feed"
url = "{server.url}/hamel.xml"

[[sources]]
name = "broken"
type = "feed"
url = "{server.url}/broken.xml"

[[sources]]
name = "listing"
type = "arxiv-rss"
base_url = "{server.url}/atom/"
categories = ["cs.AI", "cs.LG"]
min_interval_s = 0.0
"""


def serve_all(server: FeedServer) -> None:
    server.routes["/api/query"] = arxiv_pages(total=20)
    server.static("/lilianweng.xml", fixture_bytes("blog_lilianweng_lillog.xml"))
    server.static("/hamel.xml", fixture_bytes("blog_hamel_dev.xml"))
    server.static(
        "/broken.xml",
        b"<html><head><title>Moved</title></head><body>We moved our blog!</body></html>",
        content_type="text/html",
    )
    server.static("/atom/cs.AI+cs.LG", fixture_bytes("arxiv_rss_atom_cs.AI_2025-08-20.xml"), "application/atom+xml")


def test_partial_failure_stores_healthy_sources_and_exits_2(
    server: FeedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    serve_all(server)
    ws = make_workspace(tmp_path / "ws", arxiv_source(server) + feed_sources(server))
    res = run_cli(capsys, "--workspace", str(ws.root), "crawl")
    assert res.code == 2
    assert "broken: FAILED:" in res.err and "is not an RSS/Atom feed" in res.err and "Traceback" not in res.err
    assert "lilianweng: 53 new" in res.out and "hamel: 20 new" in res.out and "arxiv: 20 new" in res.out
    stats = run_cli(capsys, "--workspace", str(ws.root), "stats", "--json").json()
    assert stats["by_source"] == {"arxiv": 20, "hamel": 20, "lilianweng": 53, "listing": 7}
    with ws.store() as store:
        assert "not an RSS/Atom feed" in CrawlStates(store).get("broken").last_error
        assert CrawlStates(store).get("hamel").last_success and CrawlStates(store).get("hamel").etag

    # second run: feeds answer 304 to the conditional GET, nothing is stored twice
    again = run_cli(capsys, "--workspace", str(ws.root), "crawl", "--json")
    assert again.code == 2
    by_name = {s["source"]: s for s in again.json()["sources"]}
    assert by_name["lilianweng"]["not_modified"] and by_name["hamel"]["not_modified"]
    assert all(h.headers.get("if-none-match") for h in server.hits("/hamel.xml")[1:])
    assert run_cli(capsys, "--workspace", str(ws.root), "stats", "--json").json()["documents"] == stats["documents"]


def test_single_source_and_since(server: FeedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    serve_all(server)
    ws = make_workspace(tmp_path / "ws", feed_sources(server))
    res = run_cli(
        capsys, "--workspace", str(ws.root), "crawl", "--source", "lilianweng", "--since", "2025-01-01", "--json"
    )
    assert res.code == 0
    (only,) = res.json()["sources"]
    assert only["source"] == "lilianweng" and 0 < only["added"] < 53
    assert set(only) == {  # the --json shape, key for key
        "source", "ok", "added", "updated", "unchanged", "requests", "seconds", "not_modified", "message",
    }  # fmt: skip
    assert isinstance(only["seconds"], float) and only["seconds"] == round(only["seconds"], 2)
    assert not server.hits("/hamel.xml")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["crawl", "--source", "nope"], "unknown source 'nope'; configured sources: lilianweng, hamel"),
        (["crawl", "--since", "last week"], "use YYYY-MM-DD"),
    ],
)
def test_usage_errors_exit_1(
    server: FeedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    ws = make_workspace(tmp_path / "ws", feed_sources(server))
    res = run_cli(capsys, "--workspace", str(ws.root), *argv)
    assert res.code == 1 and message in res.err and len(res.err.strip().splitlines()) == 1


def test_arxiv_503_then_recovery_is_transparent(
    server: FeedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.routes["/api/query"] = arxiv_pages(total=20)
    server.fail_next("/api/query", Reply(503, b"busy", {"Retry-After": "0"}), Reply(429, b"slow down"))
    ws = make_workspace(tmp_path / "ws", arxiv_source(server))
    res = run_cli(capsys, "--workspace", str(ws.root), "crawl")
    assert res.code == 0 and "arxiv: 20 new" in res.out


def _radar(ws: Path, *argv: str) -> subprocess.Popen[str]:
    env = {**os.environ, "RADAR_HOME": str(ws)}
    # A shell's background job starts with SIGINT ignored, and a child inherits that; restore the
    # default so Python installs its KeyboardInterrupt handler, as in a terminal.
    return subprocess.Popen(
        [sys.executable, "-m", "radar.app.cli", *argv],
        cwd=ROOT,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _wait_for(predicate, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_crawl_killed_between_pages_resumes_without_loss(server: FeedServer, tmp_path: Path, sig: int) -> None:
    pages = arxiv_pages(total=20)
    hang = {"on": True}

    def handler(req):  # type: ignore[no-untyped-def]
        if req.query["start"] == "10" and hang["on"]:
            return Reply(200, b"", delay=30)
        return pages(req)

    server.routes["/api/query"] = handler
    ws = make_workspace(tmp_path / "ws", arxiv_source(server))
    proc = _radar(ws.root, "crawl")
    _wait_for(lambda: any(h.query["start"] == "10" for h in server.hits("/api/query")))
    with ws.store() as store:
        assert Documents(store).count() == 10  # page one was stored before page two was asked for
        cursor = CrawlStates(store).get("arxiv").cursor
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=20)
    if sig == signal.SIGINT:
        assert proc.returncode == 130 and "rerun the command to resume" in err and "Traceback" not in err
    hang["on"] = False
    rerun = _radar(ws.root, "crawl")
    out, err = rerun.communicate(timeout=60)
    assert rerun.returncode == 0, err
    with ws.store() as store:
        assert Documents(store).count() == 20
        assert CrawlStates(store).get("arxiv").cursor >= cursor
    last_query = server.hits("/api/query")[-1].query["search_query"]
    assert "lastUpdatedDate:[" + cursor[:16].replace("-", "").replace("T", "").replace(":", "") in last_query


def test_concurrent_crawls_are_refused(server: FeedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server.routes["/api/query"] = lambda req: Reply(200, b"", delay=5)
    ws = make_workspace(tmp_path / "ws", arxiv_source(server))
    proc = _radar(ws.root, "crawl")
    try:
        _wait_for(lambda: bool(server.hits("/api/query")))
        res = run_cli(capsys, "--workspace", str(ws.root), "crawl")
        assert res.code == 1 and "another `radar crawl` is running" in res.err
    finally:
        proc.kill()
        proc.communicate()
