"""Local receivers for report delivery tests: an SMTP server (aiosmtpd) and an HTTP webhook.

Nothing leaves the machine; both listen on 127.0.0.1 on a free port.
"""

from __future__ import annotations

import json
import socket
import threading
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.feedserver import QuietHTTPServer


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SmtpSink:
    """aiosmtpd on a free port; ``messages`` holds (envelope recipients, parsed message)."""

    def __init__(self, port: int | None = None, *, password: str | None = None) -> None:
        from aiosmtpd.controller import Controller
        from aiosmtpd.smtp import AuthResult, LoginPassword

        self.port = port or free_port()
        self.messages: list[tuple[list[str], EmailMessage]] = []
        self.logins: list[str] = []
        sink = self

        def authenticator(server, session, envelope, mechanism, auth_data):  # type: ignore[no-untyped-def]
            ok = isinstance(auth_data, LoginPassword) and auth_data.password.decode() == password
            if ok:
                sink.logins.append(auth_data.login.decode())
            return AuthResult(success=ok, handled=False)  # a refused login answers 535 at once, as servers do

        class Handler:
            async def handle_DATA(self, server, session, envelope):  # type: ignore[no-untyped-def]  # noqa: N802
                sink.messages.append(
                    (list(envelope.rcpt_tos), message_from_bytes(envelope.content, policy=policy.default))
                )
                return "250 OK"

        auth = {"authenticator": authenticator, "auth_require_tls": False} if password is not None else {}
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port, **auth)

    def __enter__(self) -> SmtpSink:
        self.controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.controller.stop()


class WebhookSink:
    """An HTTP server that records JSON POSTs; ``status`` is what it answers (500 to fail)."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.posts: list[dict[str, Any]] = []
        self.answer = b"ok"  # the response body (a test may put a chat-completions JSON here)
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if sink.status < 300:
                    sink.posts.append(json.loads(body))
                self.send_response(sink.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(sink.answer)))
                self.end_headers()
                self.wfile.write(sink.answer)

        self.server = QuietHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/T000/B000/secret-token"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> WebhookSink:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def delivery_toml(smtp_port: int, webhook_url: str, folder: str = "") -> str:
    lines = (
        ["[delivery]"]
        + ([f'folder = "{folder}"'] if folder else [])
        + [
            "[delivery.email]",
            'host = "127.0.0.1"',
            f"port = {smtp_port}",
            'tls = "none"',
            'from = "radar@lab.example"',
            'to = ["alice@lab.example", "bob@lab.example"]',
            "timeout_s = 5",
            "[delivery.webhook]",
            f'url = "{webhook_url}"',
            "timeout_s = 5",
        ]
    )
    return "\n".join(lines) + "\n"
