"""`python -m radar.app.dashboard.serve run main.py ...`: ``streamlit run`` with two guards in front.

1. Trusted hosts. Every HTTP request and websocket whose Host header is not one of the configured
   names is answered 400 before Streamlit sees it (Starlette's TrustedHostMiddleware, first in the
   stack), so a DNS-rebinding page (evil.example resolving to 127.0.0.1) cannot drive a login-free
   dashboard. Streamlit's own ``server.allowedHosts`` is set too (websocket only); `radar app` passes
   the names in RADAR_ALLOWED_HOSTS (comma-separated).
2. No framing. Every HTTP response carries ``Content-Security-Policy: frame-ancestors 'none'`` and
   ``X-Frame-Options: DENY`` (``FrameGuard``), so no other page can load the dashboard in a (hidden) frame
   and have a visitor click Start run, Generate or a tag fix for it (clickjacking).
3. No outbound calls. Usage statistics are off (``browser.gatherUsageStats``), and Streamlit's
   external-IP lookup (an HTTP request to checkip.amazonaws.com, made for the start-up banner and
   when it rejects a websocket's origin) answers "unknown" without touching the network.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # Streamlit's server is Starlette; only its ASGI types are named here
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

HOSTS_VAR = "RADAR_ALLOWED_HOSTS"


def allowed_hosts(environ: dict[str, str] | None = None) -> list[str]:
    env = os.environ if environ is None else environ
    return [h.strip() for h in env.get(HOSTS_VAR, "").split(",") if h.strip()]


FRAME_HEADERS = ((b"content-security-policy", b"frame-ancestors 'none'"), (b"x-frame-options", b"DENY"))


class FrameGuard:
    """ASGI middleware: the anti-framing headers on every HTTP response (replacing any the app set)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in FRAME_HEADERS}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message = {**message, "headers": [*kept, *FRAME_HEADERS]}
            await send(message)

        await self.app(scope, receive, with_headers)


def install_guards(hosts: list[str]) -> None:
    """Patch Streamlit (in this process only) before its server starts."""
    from streamlit import net_util
    from streamlit.web.server.starlette import starlette_app

    def no_lookup(*_: Any, **__: Any) -> None:
        return None

    net_util.get_external_ip = no_lookup
    net_util._make_blocking_http_get = no_lookup  # noqa: SLF001
    streamlit_middleware = starlette_app.create_streamlit_middleware

    def guarded() -> list[Any]:
        from starlette.middleware import Middleware
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        trusted = [Middleware(TrustedHostMiddleware, allowed_hosts=hosts)] if hosts else []
        return [Middleware(FrameGuard), *trusted, *streamlit_middleware()]  # outermost: the 400s carry it too

    starlette_app.create_streamlit_middleware = guarded


def main() -> None:
    hosts = allowed_hosts()
    if any("*" in h for h in hosts):  # radar.toml refuses it; the variable may have been set by hand
        sys.exit(f"radar: error: {HOSTS_VAR} must list host names, not a wildcard ({','.join(hosts)})")
    install_guards(hosts)
    from streamlit.web import cli

    sys.argv = ["streamlit", *sys.argv[1:]]
    cli.main(prog_name="streamlit")


if __name__ == "__main__":
    main()
