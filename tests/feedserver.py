"""A local HTTP server that replays recorded responses and injects faults. No test reaches the internet.

Routes map a path to a handler ``(request) -> Reply``; a fault queue per path lets a test say
"the next two requests get 503, then serve normally". ETag / If-None-Match and Last-Modified /
If-Modified-Since are honoured for static replies.
"""

from __future__ import annotations

import hashlib
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

FIXTURES = Path(__file__).parent / "fixtures"


class QuietHTTPServer(ThreadingHTTPServer):
    """A test server whose handler errors (a client that hung up mid-reply, as the fault-injection tests make
    them do) are kept in ``errors``, not printed: socketserver prints them to whatever sys.stderr is at that
    moment, which can be another test's captured stderr (the CLI fuzz test saw a "Traceback" that way)."""

    daemon_threads = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.errors: list[BaseException | None] = []

    def handle_error(self, request: Any, client_address: Any) -> None:
        self.errors.append(sys.exc_info()[1])


@dataclass
class Request:
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    at: float


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    reset: bool = False  # send headers and half the body, then drop the connection
    delay: float = 0.0
    conditional: bool = True  # answer 304 when the client's validators match


Handler = Callable[[Request], Reply]


class FeedServer:
    def __init__(self) -> None:
        self.routes: dict[str, Handler] = {}
        self.faults: dict[str, list[Reply]] = {}
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        server = self

        class _H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                parts = urlparse(self.path)
                req = Request(
                    parts.path,
                    {k: v[0] for k, v in parse_qs(parts.query).items()},
                    {k.lower(): v for k, v in self.headers.items()},
                    time.monotonic(),
                )
                with server.lock:
                    server.requests.append(req)
                    queue = server.faults.get(req.path)
                    reply = queue.pop(0) if queue else None
                if reply is None:
                    handler = server.routes.get(req.path)
                    reply = handler(req) if handler else Reply(404, b"not found")
                if reply.delay:
                    time.sleep(reply.delay)
                headers = dict(reply.headers)
                if reply.status == 200 and reply.conditional:
                    etag = '"' + hashlib.md5(reply.body).hexdigest() + '"'
                    headers.setdefault("ETag", etag)
                    headers.setdefault("Last-Modified", "Wed, 20 Aug 2025 04:00:00 GMT")
                    if req.headers.get("if-none-match") == headers["ETag"]:
                        reply = Reply(304, b"")
                self.send_response(reply.status)
                for k, v in headers.items():
                    self.send_header(k, v)
                body = reply.body
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if reply.reset:
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.close()
                    return
                self.wfile.write(body)

        self.httpd = QuietHTTPServer(("127.0.0.1", 0), _H)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> FeedServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def static(self, path: str, body: bytes, content_type: str = "application/rss+xml; charset=utf-8") -> None:
        self.routes[path] = lambda req: Reply(200, body, {"Content-Type": content_type})

    def fail_next(self, path: str, *replies: Reply) -> None:
        self.faults.setdefault(path, []).extend(replies)

    def hits(self, path: str) -> list[Request]:
        return [r for r in self.requests if r.path == path]


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / "feeds" / name).read_bytes()


def arxiv_pages(total: int = 20) -> Handler:
    """Serve the two recorded 'testing' pages by `start`, claiming ``total`` results."""
    pages = {
        0: fixture_bytes("arxiv_api_search_testing_s0_m10.xml"),
        10: fixture_bytes("arxiv_api_search_testing_s10_m10.xml"),
    }
    empty = fixture_bytes("arxiv_api_empty_id_0000.0000.xml")

    def handler(req: Request) -> Reply:
        start = int(req.query.get("start", "0"))
        body = pages.get(start, empty)
        body = body.replace(b"<opensearch:totalResults>214881<", f"<opensearch:totalResults>{total}<".encode())
        if start not in pages:
            body = body.replace(b"<opensearch:totalResults>0<", f"<opensearch:totalResults>{total}<".encode())
        return Reply(200, body, {"Content-Type": "application/atom+xml; charset=utf-8"}, conditional=False)

    return handler
