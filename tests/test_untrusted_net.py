"""Untrusted links (issue 26): no request reaches a loopback, private or metadata address through a redirect,
no configured or stored person URL is file:// or the metadata service, no header takes a line break, and one
person's bad address or channel costs only their own delivery. Each test failed on the code before the fix
(the probe it reproduces is named in its docstring)."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from radar.crawler.config import CrawlConfig
from radar.crawler.documents import Documents
from radar.crawler.http import HttpClient
from radar.crawler.state import CrawlStates
from radar.reports.deliveries import Deliveries
from radar.reports.people.repository import People
from radar.store import Workspace
from tests.cli_helpers import run_cli
from tests.conftest import make_workspace
from tests.feedserver import FeedServer, QuietHTTPServer, Reply, fixture_bytes
from tests.report_servers import SmtpSink, WebhookSink

FEED = fixture_bytes("blog_hamel_dev.xml")


class Canary:
    """An HTTP server on another loopback address (127.0.0.2: Linux routes all of 127/8 to lo) that records
    every request: a redirect that reached it reached an internal host the configured URL did not name."""

    def __init__(self, host: str = "127.0.0.2") -> None:
        self.hits: list[tuple[str, str, bytes]] = []
        canary = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _record(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
                canary.hits.append((self.command, self.path, body))
                page = FEED if self.command == "GET" else b"ok"
                self.send_response(200)
                self.send_header("Content-Type", "application/rss+xml")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            do_GET = do_POST = _record  # noqa: N815

        self.server = QuietHTTPServer((host, 0), Handler)
        self.url = f"http://{host}:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Redirector:
    """An HTTP server on 127.0.0.1 answering every path in ``routes`` with (status, Location); other paths:
    200 and the request recorded (GET and POST alike)."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, str]] = {}
        self.hits: list[tuple[str, str, bytes]] = []
        me = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _answer(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
                if self.path in me.routes:
                    status, where = me.routes[self.path]
                    self.send_response(status)
                    self.send_header("Location", where)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                me.hits.append((self.command, self.path, body))
                answer = FEED if self.command == "GET" else b'{"choices": [{"message": {"content": "Short."}}]}'
                self.send_response(200)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            do_GET = do_POST = _answer  # noqa: N815

        self.server = QuietHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def canary() -> Iterator[Canary]:
    c = Canary()
    yield c
    c.close()


@pytest.fixture
def redirector() -> Iterator[Redirector]:
    r = Redirector()
    yield r
    r.close()


def _one_line(text: str) -> bool:
    return len([line for line in text.splitlines() if line.strip()]) == 1


def _feed_ws(tmp_path: Path, url: str) -> Workspace:
    return make_workspace(tmp_path / "ws", f'[[sources]]\nname = "blog"\ntype = "feed"\nurl = "{url}"\n')


# -- feeds and arXiv ---------------------------------------------------------------------------------------
def test_a_feed_redirecting_to_another_loopback_address_is_refused_and_nothing_is_stored(
    server: FeedServer, canary: Canary, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Probe: a feed answering 302 to 127.0.0.2 had that host's content stored as posts."""
    server.routes["/feed.xml"] = lambda req: Reply(302, b"", {"Location": canary.url + "/internal"})
    ws = _feed_ws(tmp_path, server.url + "/feed.xml")
    res = run_cli(capsys, "--workspace", str(ws.root), "crawl")
    assert res.code == 2, res
    assert canary.hits == []  # never requested
    assert "redirected to 127.0.0.2" in res.out + res.err and "refused" in res.out + res.err
    with ws.store() as store:
        assert Documents(store).count() == 0
        assert "127.0.0.2" in CrawlStates(store).get("blog").last_error
    assert len(server.hits("/feed.xml")) == 1  # a refusal is not retried


def test_redirects_on_the_configured_host_still_work_and_stop_after_five(server: FeedServer) -> None:
    """A mirror on 127.0.0.1 may move its feed (the configured host itself); a chain longer than 5 is refused."""
    server.routes["/old.xml"] = lambda req: Reply(301, b"", {"Location": "/new.xml"})
    server.static("/new.xml", FEED)
    for i in range(7):
        server.routes[f"/hop{i}"] = lambda req, i=i: Reply(302, b"", {"Location": f"/hop{i + 1}"})
    http = HttpClient(CrawlConfig(max_retries=0), sleep=lambda s: None)
    ok = http.get(server.url + "/old.xml", source="blog")
    assert ok.status == 200 and ok.body == FEED and ok.url.endswith("/new.xml")
    with pytest.raises(Exception, match="redirected more than 5 times") as err:
        http.get(server.url + "/hop0", source="blog")
    assert type(err.value).__name__ == "FetchError" and "\n" not in str(err.value)
    assert len(server.hits("/hop5")) == 1 and not server.hits("/hop6")


@pytest.mark.parametrize(
    "target",
    ["file:///etc/passwd", "http://169.254.169.254/latest/meta-data/", "http://[::ffff:127.0.0.2]:9/", "gopher://x/"],
)
def test_no_redirect_leaves_for_a_file_metadata_or_mapped_internal_address(server: FeedServer, target: str) -> None:
    server.routes["/r"] = lambda req: Reply(307, b"", {"Location": target})
    http = HttpClient(CrawlConfig(max_retries=2, backoff_base_s=0.0), sleep=lambda s: None)
    started = time.monotonic()
    with pytest.raises(Exception, match="refused") as err:
        http.get(server.url + "/r", source="blog")
    assert type(err.value).__name__ == "FetchError" and "\n" not in str(err.value)
    assert time.monotonic() - started < 5  # refused before any connection (169.254.169.254 would hang)
    assert len(server.hits("/r")) == 1


def test_the_hop_check_resolves_names() -> None:
    """A host name that resolves to an internal address counts as one; the configured host is exempt."""
    from radar.store.urls import UrlRefused, check_hop

    internal = {"rebind.example": ["127.0.0.5"], "public.example": ["93.184.215.14"]}

    def resolver(host: str, port: int) -> list[str]:
        return internal[host]

    check_hop("https://public.example/feed", "blog.example", resolver=resolver)
    with pytest.raises(UrlRefused, match="127.0.0.5"):
        check_hop("https://rebind.example/feed", "blog.example", resolver=resolver)
    check_hop("http://rebind.example:81/x", "rebind.example", resolver=resolver)  # the configured host itself
    with pytest.raises(UrlRefused, match="does not resolve"):
        check_hop("https://nowhere.invalid/", "blog.example")


# -- webhooks and the summary endpoint ----------------------------------------------------------------------
def _hook_payload() -> dict[str, Any]:
    return {"text": "the weekly report"}


def test_a_webhook_307_to_the_metadata_service_or_another_loopback_host_is_not_reposted(
    redirector: Redirector, canary: Canary
) -> None:
    """Probe: a webhook answering 307 to 169.254.169.254 re-POSTed the report there."""
    from radar.reports.config import WebhookConfig
    from radar.reports.deliver import post_webhook

    redirector.routes["/meta"] = (307, "http://169.254.169.254/latest/api/token")
    redirector.routes["/canary"] = (308, canary.url + "/hook")
    for path, where in (("/meta", "169.254.169.254"), ("/canary", "127.0.0.2")):
        started = time.monotonic()
        with pytest.raises(ValueError, match=where):  # store.urls.UrlRefused
            post_webhook(_hook_payload(), WebhookConfig(url=redirector.url + path, timeout_s=5))
        assert time.monotonic() - started < 5
    assert canary.hits == []


def test_a_webhook_307_on_its_own_host_keeps_the_body_and_a_303_becomes_a_get(redirector: Redirector) -> None:
    from radar.reports.config import WebhookConfig
    from radar.reports.deliver import post_webhook

    redirector.routes["/moved"] = (307, "/hooks/new")
    redirector.routes["/seeother"] = (303, "/done")
    post_webhook(_hook_payload(), WebhookConfig(url=redirector.url + "/moved", timeout_s=5))
    post_webhook(_hook_payload(), WebhookConfig(url=redirector.url + "/seeother", timeout_s=5))
    assert [(m, p) for m, p, _ in redirector.hits] == [("POST", "/hooks/new"), ("GET", "/done")]
    assert json.loads(redirector.hits[0][2]) == _hook_payload() and redirector.hits[1][2] == b""


def test_the_summary_endpoint_does_not_follow_a_redirect_to_another_internal_host(
    redirector: Redirector, canary: Canary
) -> None:
    from radar.reports.summarize import EndpointSummarizer

    redirector.routes["/v1/chat/completions"] = (307, canary.url + "/v1/chat/completions")
    summ = EndpointSummarizer(redirector.url + "/v1", "tiny", timeout_s=5)
    text = "First sentence about GRPO. Second sentence about variance. Third one."
    assert summ.summarize("A title", text)  # the extractive fallback
    assert summ.failures == 1 and "127.0.0.2" in summ.last_error and canary.hits == []


# -- where a person is reached, and header values from radar.toml ----------------------------------------------
@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--webhook", "file:///etc/passwd"], "must be an http(s) URL"),
        (["--webhook", "http://169.254.169.254/latest/meta-data/"], "metadata"),
        (["--webhook", "http://metadata.google.internal/computeMetadata/v1/"], "metadata"),
        (["--email", "a@x.org\r\nBcc: v@evil.example"], "line break"),
        (["--email", "Alice <a@x.org>"], "not an email address"),
    ],
)
def test_people_add_and_set_refuse_bad_webhooks_and_addresses_in_one_line(
    argv: list[str], expected: str, workspace: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    """Probe: person webhooks were not checked (file://, 169.254.169.254 accepted), nor CR/LF in an address."""
    root = str(workspace.root)
    add = run_cli(capsys, "--workspace", root, "people", "add", "zed", *argv)
    assert add.code == 1 and expected in add.err and _one_line(add.err), add
    assert run_cli(capsys, "--workspace", root, "people", "add", "zed").code == 0
    set_ = run_cli(capsys, "--workspace", root, "people", "set", "zed", *argv)
    assert set_.code == 1 and expected in set_.err and _one_line(set_.err), set_
    with workspace.store() as store:
        zed = People(store).person("zed")
    assert (zed.email, zed.webhook) == ("", "")
    ok = run_cli(capsys, "--workspace", root, "people", "set", "zed", "--webhook", "http://127.0.0.1:9/hook")
    assert ok.code == 0, ok.err  # a local relay is fine


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ('[report]\ntitle = "Weekly\\r\\nBcc: victim@evil.example"\n', "[report] title has a line break"),
        ('[delivery.webhook]\nurl = "http://169.254.169.254/latest/meta-data/"\n', "metadata"),
        (
            '[delivery.email]\nhost = "127.0.0.1"\nfrom = "r@lab.example"\nto = ["a@lab.example\\r\\nBcc: v@evil"]\n',
            "line break",
        ),
        ('[delivery.email]\nhost = "smtp\\nx"\n', "[delivery.email] host has a line break"),
        ('[report]\nsummary_endpoint = "http://169.254.169.254/v1"\nsummary_model = "m"\n', "metadata"),
    ],
)
def test_header_values_and_urls_in_radar_toml_are_refused_at_load_in_one_line(
    toml: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Probe: `[report] title` with CRLF made `report --send` print a traceback."""
    ws, _ = Workspace.init(tmp_path / "ws")
    ws.config_path.write_text(toml)
    res = run_cli(capsys, "--workspace", str(ws.root), "report", "--week", "2024-W07", "--send")
    assert res.code == 1 and expected in res.err and _one_line(res.err) and "Traceback" not in res.err, res
    assert not (ws.root / "reports" / "2024-W07").exists()


def test_a_crlf_report_title_with_mail_configured_is_one_line_and_sends_nothing(
    tmp_path: Path, small_snapshot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Probe: `[report] title` with CRLF made `report --send` print a traceback (the mail's Subject header)."""
    from radar.crawler.snapshot import import_snapshot

    with SmtpSink() as smtp:
        toml = (
            '[report]\ntitle = "Weekly\\r\\nBcc: victim@evil.example"\n'
            f'[delivery.email]\nhost = "127.0.0.1"\nport = {smtp.port}\ntls = "none"\nfrom = "r@lab.example"\n'
            'to = ["a@lab.example"]\ntimeout_s = 5\n'
        )
        ws, _ = Workspace.init(tmp_path / "ws")
        with ws.store() as store:
            import_snapshot(store, small_snapshot)
        ws.config_path.write_text(toml)
        try:
            res = run_cli(capsys, "--workspace", str(ws.root), "report", "--week", "2024-W07", "--send")
        except ValueError as exc:  # what the old code let through
            pytest.fail(f"traceback: {exc!r}")
        sent = smtp.messages
    assert res.code == 1 and "[report] title has a line break" in res.err and _one_line(res.err), res
    assert sent == []


def test_check_configured_url_allows_local_relays_and_refuses_the_rest() -> None:
    from radar.store.urls import UrlRefused, check_configured_url

    for url in ("https://hooks.slack.com/services/T/B/X", "http://127.0.0.1:8080/h", "http://10.0.0.7/hook"):
        assert check_configured_url(url, "w") == url
    for url in ("ftp://x/", "http:///nohost", "http://[fe80::1]/", "http://0.0.0.0/", "https://a b/"):
        with pytest.raises(UrlRefused):
            check_configured_url(url, "w")


# -- one person's bad row costs only that person ----------------------------------------------------------------
def test_one_persons_bad_address_or_webhook_fails_only_their_delivery(
    tmp_path: Path, small_snapshot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Probe: a person whose address carried CR/LF (or whose webhook was file://) made the weekly digests step
    fail for every person. Rows as a workspace made before the checks holds them (written past the checks)."""
    from radar.app import steps_people
    from radar.app.context import Radar
    from radar.crawler.snapshot import import_snapshot
    from radar.reports.period import parse_week

    with SmtpSink() as smtp, WebhookSink() as hook:
        toml = (
            f'[delivery.email]\nhost = "127.0.0.1"\nport = {smtp.port}\ntls = "none"\nfrom = "radar@lab.example"\n'
            "timeout_s = 5\n"
        )
        ws, _ = Workspace.init(tmp_path / "ws", config_text=toml)
        with ws.store() as store:
            import_snapshot(store, small_snapshot)
        for name in ("amy", "bad1", "bad2", "zoe"):
            assert run_cli(capsys, "--workspace", str(ws.root), "people", "add", name).code == 0
        conn = sqlite3.connect(ws.db_path)
        conn.execute("UPDATE people SET email = 'amy@lab.example', webhook = ? WHERE name = 'amy'", (hook.url,))
        conn.execute("UPDATE people SET email = 'a@x.org\r\nBcc: v@evil.example' WHERE name = 'bad1'")
        conn.execute("UPDATE people SET webhook = 'file:///etc/passwd' WHERE name = 'bad2'")
        conn.execute("UPDATE people SET email = 'zoe@lab.example' WHERE name = 'zoe'")
        conn.commit()
        conn.close()
        done = steps_people.digests(Radar.at(ws.root), parse_week("2024-W07"))
        received = sorted(rcpt for rcpt, _ in smtp.messages)
        posts = len(hook.posts)
    outcomes = {(d.digest.person, o.channel): o for d in done for o in d.outcomes}
    assert received == [["amy@lab.example"], ["zoe@lab.example"]] and posts == 1
    assert outcomes[("amy", "email")].status == outcomes[("zoe", "email")].status == "sent"
    for key, words in ((("bad1", "email"), "line break"), (("bad2", "webhook"), "http(s)")):
        assert outcomes[key].status == "failed" and words in outcomes[key].error and "\n" not in outcomes[key].error
    with ws.store() as store:  # recorded, and retried next run like any failed delivery
        failed = {(r.recipient, r.status) for r in Deliveries(store).find(status="failed")}
    assert len(failed) == 2
