"""The summary endpoint as untrusted input: a local server that answers 400 MB (streamed: neither it nor the test
ever holds it), drips its headers or body a byte at a time, answers a JSON object as ``content``, or writes bidi
overrides and terminal escapes. Each ends within the configured size and deadline, the extractive line stays,
and nothing the endpoint sent is stored or rendered raw.

Probes (each failed before the fix): a 400 MB reply was read whole (1.3 GB) and accepted, 70 times for one
`radar methods --week`; a reply dripping a byte a second took 30 s a call against summary_timeout_s = 5; a JSON
object as content became ``changes: {'a': [1, 2]}`` on every card and was stored; an RLO and an escape code in a
reply reached report.md and report.html raw."""

from __future__ import annotations

import json
import socket
import socketserver
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from radar.analysis.contributions.table import Contributions
from radar.reports.summarize import EndpointSummarizer
from tests.cli_helpers import run_cli
from tests.test_report_cli import make_ws
from tests.test_report_content import WEEK

TEXT = "GRPO normalises advantages per group. Variance grows with length. A third sentence closes it."
EXTRACTIVE = "GRPO normalises advantages per group. Variance grows with length."
HUGE = 400_000_000


def _reply(content: object) -> bytes:
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()


class HostileLLM:
    """A raw HTTP server standing in for /v1/chat/completions; ``mode`` says how it misbehaves. ``sent`` counts
    the body bytes it got out before the client hung up; ``calls`` the requests it received."""

    def __init__(self, mode: str, *, delay_s: float = 0.0) -> None:
        self.mode, self.delay_s = mode, delay_s
        self.calls = 0
        self.sent = 0
        llm = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                sock: socket.socket = self.request
                while True:  # keep-alive: one request after another on this connection
                    if not llm._serve_one(sock):
                        return

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

            def handle_error(self, request: object, client_address: object) -> None:
                pass  # the client hung up mid-reply: what the tests make it do

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def _serve_one(self, sock: socket.socket) -> bool:
        head = b""
        while b"\r\n\r\n" not in head:
            got = sock.recv(65536)
            if not got:
                return False
            head += got
        header, _, body = head.partition(b"\r\n\r\n")
        length = next(
            (int(line.split(b":")[1]) for line in header.split(b"\r\n") if line.lower().startswith(b"content-length")),
            0,
        )
        while len(body) < length:
            body += sock.recv(65536)
        self.calls += 1
        time.sleep(self.delay_s)
        mode = self.mode
        if mode in ("huge", "huge-declared"):
            declared = f"Content-Length: {HUGE}\r\n" if mode == "huge-declared" else "Connection: close\r\n"
            sock.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{declared}\r\n".encode())
            prefix = b'{"choices": [{"message": {"content": "'
            piece = b"a" * 65536
            sock.sendall(prefix)
            self.sent = len(prefix)
            while self.sent < HUGE:  # streamed: never more than one piece in memory
                sock.sendall(piece)
                self.sent += len(piece)
            return False
        if mode == "drip-body":
            answer = _reply("never finished")
            sock.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {len(answer)}\r\n\r\n".encode())
            for byte in answer:
                sock.sendall(bytes([byte]))
                self.sent += 1
                time.sleep(0.25)
            return False
        if mode == "drip-headers":
            sock.sendall(b"HTTP/1.1 200 OK\r\n")
            for byte in b"X-Slow: " + b"z" * 10_000:
                sock.sendall(bytes([byte]))
                time.sleep(0.25)
            return False
        content: object = {
            "object": {"a": [1, 2]},
            "escapes": "Cuts \u202eseveR\u202c variance \x1b[2J\x1b[31mby half\x1b[0m with zero\u200bwidth "
            "tricks.\r\nX",
            "ok": "An abstractive line from the server.",
        }[mode]
        answer = _reply(content)
        sock.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {len(answer)}\r\n\r\n".encode() + answer)
        return True

    def __enter__(self) -> HostileLLM:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def llm(request: pytest.FixtureRequest) -> Iterator[HostileLLM]:
    with HostileLLM(request.param) as server:
        yield server


@pytest.mark.parametrize("llm", ["huge", "huge-declared"], indirect=True)
def test_a_400_mb_reply_costs_at_most_the_cap(llm: HostileLLM) -> None:
    """The reply is refused as it streams in: memory stays near the cap, far below the 400 MB sent at it."""
    s = EndpointSummarizer(llm.url, "tiny", timeout_s=20, max_bytes=1_000_000)
    tracemalloc.start()
    try:
        started = time.perf_counter()
        out = s.summarize("T", TEXT)
        took = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out == EXTRACTIVE and s.failures == 1 and s.broken, s.last_error
    assert "cap of 1,000,000" in s.last_error
    assert peak < 8_000_000, peak  # the cap and a few buffers; the old code held the whole 400 MB (1.3 GB)
    assert llm.sent < 50_000_000 and took < 10, (llm.sent, took)
    s.summarize("T", TEXT)
    assert llm.calls == 1  # not asked again in this command


@pytest.mark.parametrize("llm", ["drip-body", "drip-headers"], indirect=True)
def test_a_dripping_reply_stops_at_the_deadline(llm: HostileLLM) -> None:
    """A byte every 0.25 s never trips a socket timeout; the call's total deadline cuts it (headers or body)."""
    s = EndpointSummarizer(llm.url, "tiny", timeout_s=1.5)
    started = time.perf_counter()
    out = s.summarize("T", TEXT)
    took = time.perf_counter() - started
    assert out == EXTRACTIVE and s.failures == 1, s.last_error
    assert 1.4 <= took < 2.5, took
    assert "deadline of 1.5 s" in s.last_error


@pytest.mark.parametrize("llm", ["object"], indirect=True)
def test_content_that_is_not_a_string_is_refused(llm: HostileLLM) -> None:
    s = EndpointSummarizer(llm.url, "tiny", timeout_s=5)
    assert s.summarize("T", TEXT) == EXTRACTIVE
    assert s.failures == 1 and "JSON dict, not a string" in s.last_error


@pytest.mark.parametrize("llm", ["escapes"], indirect=True)
def test_bidi_controls_and_escape_codes_are_cleaned_like_feed_text(llm: HostileLLM) -> None:
    s = EndpointSummarizer(llm.url, "tiny", timeout_s=5)
    out = s.summarize("T", TEXT)
    assert s.failures == 0 and "variance" in out and "by half" in out
    assert not any(c in out for c in "\u202e\u202c\u200b\x1b\r\n"), ascii(out)


@pytest.mark.parametrize("llm", ["ok"], indirect=True)
def test_one_command_has_a_call_budget_and_a_deadline(llm: HostileLLM) -> None:
    """Every call answers, slowly: the command stops calling at summary_max_calls, or at summary_budget_s."""
    s = EndpointSummarizer(llm.url, "tiny", timeout_s=5, max_calls=3)
    outs = [s.summarize("T", TEXT) for _ in range(6)]
    assert outs[:3] == ["An abstractive line from the server."] * 3 and outs[3:] == [EXTRACTIVE] * 3
    assert llm.calls == 3 and s.failures == 0 and s.spent and "summary_max_calls = 3" in s.note()
    llm.delay_s = 0.4
    timed = EndpointSummarizer(llm.url, "tiny", timeout_s=5, budget_s=1.0)
    started = time.perf_counter()
    outs = [timed.summarize("T", TEXT) for _ in range(20)]
    took = time.perf_counter() - started
    assert 2 <= outs.count("An abstractive line from the server.") <= 3 and took < 2.0, (outs, took)
    assert "summary_budget_s = 1 s" in timed.note()


def _endpoint_toml(url: str, timeout_s: float = 3) -> str:
    return f'[report]\nsummary_endpoint = "{url}"\nsummary_model = "tiny"\nsummary_timeout_s = {timeout_s}\n'


@pytest.mark.parametrize("llm", ["huge", "object"], indirect=True)
def test_methods_week_asks_once_and_keeps_the_extractive_lines(
    llm: HostileLLM, small_snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`radar methods --week` over a hostile endpoint: one call, not one per card; every card keeps its own
    extractive line, and nothing the endpoint sent is stored."""
    plain = make_ws(tmp_path / "plain", small_snapshot)
    ws = make_ws(tmp_path / "ws", small_snapshot, _endpoint_toml(llm.url))
    before = run_cli(capsys, "-w", str(plain.root), "methods", "--week", WEEK, "--json")
    started = time.perf_counter()
    got = run_cli(capsys, "-w", str(ws.root), "methods", "--week", WEEK, "--json")
    took = time.perf_counter() - started
    assert got.code == 0 and before.code == 0, got.err
    cards = got.json()
    assert len(cards) >= 2 and llm.calls == 1 and took < 30, (len(cards), llm.calls, took)
    assert [c["changes"] for c in cards] == [c["changes"] for c in before.json()]
    with ws.store() as store:
        stored = Contributions(store).contributions([c["introduced_by"] for c in cards])
    assert stored and not any(row.changes_rewritten for row in stored.values())


@pytest.mark.parametrize("llm", ["escapes"], indirect=True)
def test_a_report_never_carries_the_endpoints_controls(
    llm: HostileLLM, small_snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = make_ws(tmp_path / "ws", small_snapshot, _endpoint_toml(llm.url))
    res = run_cli(capsys, "-w", str(ws.root), "report", "--week", WEEK, "--json")
    assert res.code == 0, res.err
    for fmt in ("md", "html", "json"):
        text = Path(res.json()["paths"][fmt]).read_text()
        assert "by half" in text and not any(c in text for c in "\u202e\u202c\u200b\x1b"), fmt
    with ws.store() as store:
        rows = Contributions(store).contributions(
            [d for (d,) in store.conn.execute("SELECT doc_id FROM contributions")]
        )
    assert not any(c in row.changes_rewritten for row in rows.values() for c in "\u202e\x1b\u200b")
