"""Hostile input and faults (issue 19): no secret leaves, no bad line breaks the workspace, no traceback
reaches a user. One test (or a few) per finding; every one failed on the code before the fix."""

from __future__ import annotations

import gzip
import logging
import os
import socket
import sqlite3
import time
from pathlib import Path

import orjson
import pytest

from radar.crawler.config import CrawlConfig, crawler_config
from radar.crawler.documents import Document, Documents
from radar.crawler.http import HttpClient
from radar.crawler.snapshot import import_snapshot
from radar.index.embeddings import Embeddings
from radar.reports.deliveries import Deliveries
from radar.store import Store, StoreError, Workspace
from radar.store.config import DEFAULT_CONFIG_TEXT
from radar.store.scrub import scrub, url_secrets
from tests.cli_helpers import run_cli
from tests.conftest import FAST_CRAWL
from tests.feedserver import FeedServer, Reply
from tests.report_servers import SmtpSink, WebhookSink, free_port
from tests.test_report_content import WEEK, tag_rows

PAPER = {
    "title": "A paper",
    "abstract": "An abstract about reinforcement learning.",
    "authors": ["A. Author"],
    "categories": ["cs.LG"],
    "primary_category": "cs.LG",
    "published": "2024-02-14",
}


def _paper(i: int, **over: object) -> bytes:
    return orjson.dumps({**PAPER, "id": f"2402.{10000 + i:05d}", **over}) + b"\n"


def _write(path: Path, lines: list[bytes]) -> Path:
    with gzip.open(path, "wb") as fh:
        fh.writelines(lines)
    return path


def _one_line(err: str) -> bool:
    """What the user sees on stderr is one line (blank lines around it aside)."""
    return len([line for line in err.splitlines() if line.strip()]) == 1


def _everything_written(ws: Workspace) -> str:
    """Every file in the workspace but radar.toml (which holds the configured secrets by design), and
    every row of every table of the database, as one text to grep."""
    parts = []
    for path in ws.root.rglob("*"):
        if path.is_file() and path.name != "radar.toml" and not path.name.startswith("radar.db"):
            parts.append(path.read_bytes().decode("utf-8", "replace"))
    conn = sqlite3.connect(ws.db_path)
    parts.extend(conn.iterdump())
    conn.close()
    return "\n".join(parts)


# -- 1, 2: secrets in reports, delivery errors and crawl errors ----------------------------------------
SECRETS = {
    "endpoint_password": "llm-Pa55word-SECRET",
    "api_key": "sk-API-KEY-SECRET-0123456789",
    "webhook_token": "whk-QUERY-TOKEN-SECRET",
    "webhook_path": "T0~PATH-SECRET-é",
    "smtp_password": "smtp-PASSWORD-SECRET",
    "feed_password": "feed-Pa55word-SECRET",
    "feed_token": "feed-TOKEN-SECRET",
}


def _forms(secret: str) -> list[str]:
    """The secret and the forms it takes in URLs (percent-encoded as requests sends it)."""
    from urllib.parse import quote

    return [secret, quote(secret, safe=""), quote(secret, safe="~"), quote(secret).replace("~", "%7E")]


def test_no_secret_reaches_any_output_file_or_table(
    small_snapshot: Path,
    tmp_path: Path,
    server: FeedServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    s = SECRETS
    dead = free_port()  # nothing listens: connection refused, the error text carries the URL
    monkeypatch.setenv("RADAR_SUMMARY_KEY", s["api_key"])
    monkeypatch.setenv("RADAR_SMTP_PASSWORD", s["smtp_password"])
    feeds = server
    with WebhookSink(status=500) as llm, SmtpSink(password="the-right-one") as smtp:
        feeds.routes["/private/feed.xml"] = lambda req: Reply(401, b"no")
        port = llm.url.split(":")[2].split("/")[0]
        feed_port = feeds.url.rsplit(":", 1)[1]
        toml = f"""
[[sources]]
name = "private-blog"
type = "feed"
url = "http://reader:{s["feed_password"]}@127.0.0.1:{feed_port}/private/feed.xml?token={s["feed_token"]}"
[[sources]]
name = "private-down"
type = "feed"
url = "http://reader:{s["feed_password"]}@127.0.0.1:{dead}/feed.xml?token={s["feed_token"]}"
[report]
summary_endpoint = "http://llm:{s["endpoint_password"]}@127.0.0.1:{port}/v1"
summary_model = "tiny"
summary_api_key_env = "RADAR_SUMMARY_KEY"
summary_timeout_s = 5
[delivery.email]
host = "127.0.0.1"
port = {smtp.port}
tls = "none"
username = "radar"
from = "radar@lab.example"
to = ["alice@lab.example"]
timeout_s = 5
[delivery.webhook]
url = "http://127.0.0.1:{dead}/hooks/{s["webhook_path"].replace("~", "%7E")}/x?token={s["webhook_token"]}#frag"
timeout_s = 5
"""
        ws, _ = Workspace.init(tmp_path / "ws", config_text=FAST_CRAWL + toml)  # only these two sources
        with ws.store() as store:
            import_snapshot(store, small_snapshot)
        tag_rows(ws)
        crawl = run_cli(capsys, "--workspace", str(ws.root), "crawl", "--json")
        report = run_cli(capsys, "--workspace", str(ws.root), "report", "--week", WEEK, "--send", "--json")
        again = run_cli(capsys, "--workspace", str(ws.root), "report", "--week", WEEK, "--send")
    assert crawl.code == 2 and report.code == 2 and again.code == 2, (crawl.err, report.err)
    written = _everything_written(ws)
    # the failures are there, explained, without the secrets
    assert "summary endpoint failed" in written and "private-blog" in written
    with ws.store() as store:
        errors = {r.channel: r.last_error for r in Deliveries(store).find(period=WEEK)}
    assert errors["email"] and errors["webhook"], errors
    assert "535" in errors["email"], errors  # the server refused the login at once (no wait for a timeout)
    seen = "\n".join([crawl.out, crawl.err, report.out, report.err, again.out, again.err, written])
    leaked = [name for name, secret in s.items() for form in _forms(secret) if form.lower() in seen.lower()]
    assert not leaked, f"secrets found: {leaked}"


def test_scrubber_masks_urls_and_requests_reencoding() -> None:
    secret_url = "https://hooks.example/services/T0%7Eab/S3cr3tPathSegment?token=abc123xyz#frag"
    text = (
        "HTTPSConnectionPool(host='hooks.example', port=443): Max retries exceeded with url: "
        "/services/T0~ab/S3cr3tPathSegment?token=abc123xyz (Caused by NewConnectionError); "
        "also https://user:pw1234@hooks.example/p?q=1#x and http://h/é?k=v."
    )
    out = scrub(text, url_secrets(secret_url, path=True))
    for bad in ("S3cr3tPathSegment", "abc123xyz", "pw1234", "q=1", "k=v", "#x"):
        assert bad not in out, (bad, out)
    assert "hooks.example" in out and "NewConnectionError" in out  # the useful part stays


# -- 3: dates out of range ------------------------------------------------------------------------------
def test_year_zero_or_9999_dates_are_skipped_and_trends_and_report_still_work(
    small_snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws, _ = Workspace.init(tmp_path / "ws", config_text=DEFAULT_CONFIG_TEXT)
    with gzip.open(small_snapshot, "rb") as fh:
        good = fh.readlines()
    bad = [
        _paper(1, published="0000-01-01"),
        _paper(2, published="2024-99-01"),
        _paper(3, published="9999-12-31"),
        _paper(4, published="1850-01-01"),
    ]
    snap = _write(tmp_path / "mixed.jsonl.gz", good[:200] + bad + good[200:])
    res = run_cli(capsys, "--workspace", str(ws.root), "import", str(snap), "--json")
    assert res.code == 2 and res.json()["bad_lines"] == 4 and res.json()["added"] == len(good)
    assert "skipped 4 bad line(s)" in res.err and _one_line(res.err)
    with ws.store() as store:
        assert Documents(store).count() == len(good)
    tag_rows(ws)
    res = run_cli(capsys, "--workspace", str(ws.root), "trends", "--as-of", "2024-02-18", "--json")
    assert res.code == 0, res.err
    res = run_cli(capsys, "--workspace", str(ws.root), "report", "--week", WEEK, "--json")
    assert res.code == 0, res.err


# -- 4: size caps ------------------------------------------------------------------------------------
def test_gzip_bomb_and_huge_responses_stop_at_the_cap(server: FeedServer) -> None:
    import resource

    bomb = gzip.compress(b"<rss>" + b" " * 300_000_000 + b"</rss>", compresslevel=9)  # 300 MB inflated
    assert len(bomb) < 400_000
    server.routes["/bomb.xml"] = lambda req: Reply(200, bomb, {"Content-Encoding": "gzip"})
    server.routes["/big.xml"] = lambda req: Reply(200, b"x" * 3_000_000)
    http = HttpClient(CrawlConfig(max_retries=0, max_response_mb=2.0), sleep=lambda s: None)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for path, words in (("/bomb.xml", "decompressed"), ("/big.xml", "3,000,000 bytes")):
        with pytest.raises(Exception) as err:
            http.get(server.url + path, source="s")
        assert type(err.value).__name__ == "FetchError" and "max_response_mb = 2 MB" in str(err.value)
        assert words in str(err.value)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 100, grown_mb  # before the cap: the whole 300 MB (and more) was held
    ok = http.get(server.url + "/big.xml".replace("big", "small"), source="s")  # 404 passes through
    assert ok.status == 404


def test_huge_abstract_and_title_are_clipped_like_feed_text(tmp_path: Path, workspace: Workspace) -> None:
    snap = _write(tmp_path / "big.jsonl.gz", [_paper(1, abstract="word " * 2_000_000, title="T " * 1000)])
    with workspace.store() as store:
        result = import_snapshot(store, snap)
        doc = Documents(store).get("2402.10001")
    assert result.ok and doc is not None
    assert len(doc.abstract) <= 10_000 and len(doc.title) <= 500 and doc.abstract.endswith("…")


# -- 5: one bad line costs only itself ----------------------------------------------------------------------
def test_overflowing_version_costs_only_its_line(tmp_path: Path, workspace: Workspace) -> None:
    lines = [_paper(i) for i in range(5000)]
    lines[2500] = _paper(2500, id="2501.90014v99999999999999999999999")
    snap = _write(tmp_path / "batch.jsonl.gz", lines)
    with workspace.store() as store:
        result = import_snapshot(store, snap)
        assert Documents(store).count() == 4999
    assert result.counts.added == 4999 and [n for n, _ in result.bad_lines] == [2501]
    assert "version" in result.bad_lines[0][1]


def test_a_row_the_database_refuses_costs_only_itself(
    tmp_path: Path, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever slips past the line checks: the batch is retried row by row."""
    real = Documents.upsert

    def picky(self: Documents, docs: list[Document]) -> object:
        if any(d.id == "2402.10007" for d in docs):
            raise OverflowError("Python int too large to convert to SQLite INTEGER")
        return real(self, docs)

    monkeypatch.setattr(Documents, "upsert", picky)
    snap = _write(tmp_path / "b.jsonl.gz", [_paper(i) for i in range(20)])
    with workspace.store() as store:
        result = import_snapshot(store, snap)
        assert Documents(store).count() == 19
    assert result.bad_lines == [(8, "not storable (OverflowError: Python int too large to convert to SQLite INTEGER)")]


# -- 6: one line instead of a traceback, and nothing silently wrong ---------------------------------------------
BAD_CONFIGS = [
    ("sources = [1, 2]\n", "[[sources]] tables"),
    ('[[sources]]\nname = 123\ntype = "feed"\nurl = "http://a/b"\n', "name must be a string"),
    ('[[sources]]\nname = "b"\ntype = "feed"\nurl = "http://a/b"\nenabled = "no"\n', "enabled must be true or false"),
    ("[crawl]\ntimeout_s = nan\n", "timeout_s must be a number, not nan"),
    ('[crawl]\ntimeout_s = "30"\n', "timeout_s must be a number"),
    ("[crawl]\nmax_retries = 2.5\n", "max_retries must be a whole number"),
    ("[trends]\nbaseline_weeks = 100000000\n", "baseline_weeks must be at most 520"),
    ('[app]\nport = "x"\n', "port must be a whole number"),
    ("[delivery]\nfolder = 5\n", "folder must be a string"),
]


@pytest.mark.parametrize(("toml", "message"), BAD_CONFIGS)
def test_wrong_config_types_and_values_are_one_line(
    toml: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from radar.analysis.trends.config import TrendsConfig
    from radar.app.serving import AppConfig
    from radar.reports.config import DeliveryConfig
    from radar.store.errors import ConfigError

    ws, _ = Workspace.init(tmp_path / "ws")
    ws.config_path.write_text(toml)
    try:  # radar.toml as the CLI reads it, then the stage's own section as its command reads it
        config = ws.config()
        crawler_config(config)
        TrendsConfig.from_section(config.section("trends"))
        AppConfig.from_section(config.section("app"))
        DeliveryConfig.from_section(config.section("delivery"), environ={})
    except ConfigError as exc:
        text = str(exc)
    else:
        pytest.fail(f"{toml!r} was accepted")
    assert message in text and "\n" not in text


def test_config_that_is_not_utf8_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws, _ = Workspace.init(tmp_path / "ws")
    ws.config_path.write_bytes(b'[crawl]\nuser_agent = "caf\xe9"\n')
    res = run_cli(capsys, "--workspace", str(ws.root), "crawl")
    assert res.code == 1 and "UTF-8" in res.err and "Traceback" not in res.err and _one_line(res.err)


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "\udcff\udcfe"],  # what Python makes of `radar search $'\xff\xfe'` in a UTF-8 locale
        ["similar", "ID", "-k", "-3"],
        ["search", "grpo", "-k", "-5"],  # returned 95 results
        ["search", "grpo", "-k", "0"],
        ["search", "grpo", "--json", "-k", "100000000000"],
    ],
)
def test_bad_cli_values_are_one_line_exit_1(
    argv: list[str], indexed: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    with indexed.store() as store:
        some_id = next(Documents(store).scan()).id
    argv = [some_id if a == "ID" else a for a in argv]
    res = run_cli(capsys, "--workspace", str(indexed.root), *argv)
    assert res.code == 1 and res.err.startswith("radar: error:") and _one_line(res.err), res
    assert res.out == ""


@pytest.mark.parametrize("argv", [["rm", "not an id"], ["rm", "2402.99999"]])
def test_rm_refuses_bad_or_unknown_ids_in_one_line(
    argv: list[str], workspace: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    res = run_cli(capsys, "--workspace", str(workspace.root), *argv)
    assert res.code == 1 and res.err.startswith("radar: error:") and _one_line(res.err), res
    assert "invalid choice" not in res.err


def test_non_ascii_smtp_password_is_one_line_and_every_recipient_recorded(
    small_snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RADAR_SMTP_PASSWORD", "pässwörd-SECRET")
    with SmtpSink(password="pässwörd-SECRET") as smtp, WebhookSink() as hook:
        toml = f"""[delivery.email]
host = "127.0.0.1"
port = {smtp.port}
tls = "none"
username = "radar"
from = "radar@lab.example"
to = ["alice@lab.example", "bob@lab.example", "carol@lab.example"]
timeout_s = 5
[delivery.webhook]
url = "{hook.url}"
"""
        ws, _ = Workspace.init(tmp_path / "ws", config_text=DEFAULT_CONFIG_TEXT + toml)
        with ws.store() as store:
            import_snapshot(store, small_snapshot)
        res = run_cli(capsys, "--workspace", str(ws.root), "report", "--week", WEEK, "--send")
        assert len(hook.posts) == 1  # the channel after email still ran
    assert res.code == 2 and "Traceback" not in res.err and _one_line(res.err)
    assert "non-ASCII" in res.err and "pässwörd" not in res.out + res.err
    with ws.store() as store:
        rows = {r.recipient: r.status for r in Deliveries(store).find(period=WEEK) if r.channel == "email"}
    assert rows == dict.fromkeys(["alice@lab.example", "bob@lab.example", "carol@lab.example"], "failed")


def test_locked_database_is_one_line_workspace_busy(workspace: Workspace) -> None:
    holder = sqlite3.connect(workspace.db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process mid-write
    try:
        store = Store(workspace.db_path, busy_timeout_s=0.3)
        with pytest.raises(StoreError) as err:
            Documents(store).upsert(
                [
                    Document(
                        id="2402.00001",
                        kind="paper",
                        source="s",
                        title="t",
                        abstract="",
                        published="2024-01-01T00:00:00Z",
                    )
                ]
            )
        store.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert str(err.value).startswith("the workspace is busy:") and "\n" not in str(err.value)


# -- radar rm ---------------------------------------------------------------------------------------------
def test_rm_removes_a_document_and_what_derives_from_it(
    tmp_path: Path, workspace: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = _write(tmp_path / "s.jsonl.gz", [_paper(i) for i in range(3)])
    with workspace.store() as store:
        import_snapshot(store, snap)
        Embeddings(store).save([(f"2402.1000{i}", "m", "h", b"\0" * 16) for i in range(3)])
        store.conn.execute(
            "INSERT INTO document_tags (doc_id, tag, score, origin, created_at) "
            "VALUES ('2402.10001', 'x', 1, 'user', '')"
        )
        generation = Embeddings(store).generation()
    res = run_cli(capsys, "--workspace", str(workspace.root), "rm", "2402.10001", "2402.77777", "--json")
    assert res.code == 0 and res.json() == {"removed": ["2402.10001"], "missing": ["2402.77777"]}
    with workspace.store() as store:
        assert Documents(store).count() == 2 and Documents(store).get("2402.10001") is None
        assert store.conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == 2
        assert store.conn.execute("SELECT COUNT(*) FROM document_tags").fetchone()[0] == 0
        assert Embeddings(store).generation() > generation  # a saved vector index is rebuilt without it


# -- 8: dashboard hosts and outbound calls ---------------------------------------------------------------
def _handshake(port: int, host: str, origin: str) -> str:
    """A websocket upgrade request to Streamlit's stream endpoint; the status line of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            (
                f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\nUpgrade: websocket\r\n"
                "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: streamlit\r\n\r\n"
            ).encode()
        )
        return sock.recv(4096).decode("latin-1").split("\r\n", 1)[0]


def _get(port: int, host: str, path: str = "/_stcore/health", whole: bool = False) -> str:
    """The status line of a GET (with ``whole``: the status line and headers)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        answer = sock.recv(65536).decode("latin-1")
    return answer.split("\r\n\r\n", 1)[0] if whole else answer.split("\r\n", 1)[0]


@pytest.mark.slow
def test_dashboard_refuses_forged_host_headers(workspace: Workspace, tmp_path: Path) -> None:
    import subprocess
    import sys

    port = free_port()
    log = tmp_path / "app.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "radar.app.cli", "--workspace", str(workspace.root), "app", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.time() + 180
        while True:
            try:
                if " 200 " in _get(port, f"127.0.0.1:{port}") + " ":
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                pytest.fail(log.read_text()[-2000:])
            time.sleep(0.5)
        assert " 200" in _get(port, f"localhost:{port}")
        assert " 400" in _get(port, f"rebind.evil.example:{port}")
        for host in (f"127.0.0.1:{port}", f"rebind.evil.example:{port}"):  # the real server's page and its 400
            head = _get(port, host, path="/", whole=True).lower()
            assert "content-security-policy: frame-ancestors 'none'" in head and "x-frame-options: deny" in head
        evil = f"rebind.evil.example:{port}"
        assert " 101" not in _handshake(port, evil, f"http://{evil}")  # forged Host with a matching Origin
        assert " 101" in _handshake(port, f"127.0.0.1:{port}", f"http://127.0.0.1:{port}")
        # another site's page (right Host, its own Origin) opens no session: no button press comes from it
        assert " 101" not in _handshake(port, f"127.0.0.1:{port}", "http://evil.example")
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=30)
    assert "checkip" not in log.read_text() and "External URL" not in log.read_text()


def test_dashboard_never_looks_up_its_external_ip(monkeypatch: pytest.MonkeyPatch) -> None:
    from streamlit import net_util
    from streamlit.web.server import server_util
    from streamlit.web.server.starlette import starlette_app

    from radar.app.dashboard.serve import install_guards

    calls: list[str] = []
    monkeypatch.setattr(net_util, "_make_blocking_http_get", lambda url, timeout: calls.append(url))
    monkeypatch.setattr(net_util, "_external_ip", None)
    monkeypatch.setattr(net_util, "get_external_ip", net_util.get_external_ip)  # restored after the test
    monkeypatch.setattr(starlette_app, "create_streamlit_middleware", starlette_app.create_streamlit_middleware)
    install_guards(["127.0.0.1"])
    assert not server_util.is_url_from_allowed_origins("http://rebind.evil.example")  # a rejected websocket
    assert calls == []
    names = [m.cls.__name__ for m in starlette_app.create_streamlit_middleware()]
    assert names[:2] == ["FrameGuard", "TrustedHostMiddleware"]


def test_app_passes_the_trusted_hosts_and_no_telemetry(workspace: Workspace) -> None:
    from radar.app.cmd_app import streamlit_command
    from radar.app.serving import AppConfig

    cfg = AppConfig.from_section({"allowed_hosts": ["radar.lab.example"]})
    cmd = streamlit_command(str(workspace.root), cfg)
    hosts = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--server.allowedHosts"]
    assert set(hosts) == {"127.0.0.1", "radar.lab.example", "localhost", "::1", "[::1]"}
    assert cmd[2] == "radar.app.dashboard.serve" and "--browser.serverAddress" in cmd


# -- 9 (the parts outside repro): DEBUG lines, NUL bytes, ONNX temp folders -----------------------------------
def test_keyword_index_logs_no_debug_lines(caplog: pytest.LogCaptureFixture) -> None:
    from radar.index.keyword import KeywordIndex

    with caplog.at_level(logging.DEBUG):
        KeywordIndex.build([("a", "GRPO for reasoning", "policy optimization"), ("b", "kernels", "GPU")], "f")
    assert not [r for r in caplog.records if r.name.startswith("bm25s")]


def test_nul_and_escape_codes_in_titles_never_reach_the_terminal(tmp_path: Path, workspace: Workspace) -> None:
    snap = _write(tmp_path / "n.jsonl.gz", [_paper(1, title="Evil\x00 title \x1b[31mred\x1b[0m", authors=["A\x00B"])])
    with workspace.store() as store:
        import_snapshot(store, snap)
        doc = Documents(store).get("2402.10001")
    assert doc is not None and doc.title == "Evil title [31mred [0m" and doc.authors == ("A B",)


def test_killed_onnx_export_leaves_no_temp_folder(tmp_path: Path) -> None:
    from radar.index import onnx_export

    out = tmp_path / "models"
    out.mkdir()
    (out / "model.onnx").write_bytes(b"done")
    dead = subprocess_dead_pid()
    stale = out / f".export-{dead}-abc123"
    stale.mkdir()
    (stale / "raw.onnx").write_bytes(b"half")
    live = out / f".export-{os.getpid()}-def456"  # an export running right now in this process
    live.mkdir()
    assert onnx_export.export(tmp_path, out, quantize=False) == out / "model.onnx"
    assert not stale.exists() and live.exists()


def subprocess_dead_pid() -> int:
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid
