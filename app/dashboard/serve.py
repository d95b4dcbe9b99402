"""`python -m radar.app.dashboard.serve run main.py ...`: ``streamlit run`` with two guards in front.

1. Trusted hosts. Every HTTP request and websocket whose Host header is not one of the configured
   names is answered 400 before Streamlit sees it (Starlette's TrustedHostMiddleware, first in the
   stack), so a DNS-rebinding page (evil.example resolving to 127.0.0.1) cannot drive a login-free
   dashboard. Streamlit's own ``server.allowedHosts`` is set too (websocket only); `radar app` passes
   the names in RADAR_ALLOWED_HOSTS (comma-separated).
2. No outbound calls. Usage statistics are off (``browser.gatherUsageStats``), and Streamlit's
   external-IP lookup (an HTTP request to checkip.amazonaws.com, made for the start-up banner and
   when it rejects a websocket's origin) answers "unknown" without touching the network.
"""

from __future__ import annotations

import os
import sys
from typing import Any

HOSTS_VAR = "RADAR_ALLOWED_HOSTS"


def allowed_hosts(environ: dict[str, str] | None = None) -> list[str]:
    env = os.environ if environ is None else environ
    return [h.strip() for h in env.get(HOSTS_VAR, "").split(",") if h.strip()]


def install_guards(hosts: list[str]) -> None:
    """Patch Streamlit (in this process only) before its server starts."""
    from streamlit import net_util
    from streamlit.web.server.starlette import starlette_app

    def no_lookup(*_: Any, **__: Any) -> None:
        return None

    net_util.get_external_ip = no_lookup
    net_util._make_blocking_http_get = no_lookup  # noqa: SLF001
    if not hosts:
        return
    streamlit_middleware = starlette_app.create_streamlit_middleware

    def with_trusted_hosts() -> list[Any]:
        from starlette.middleware import Middleware
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        return [Middleware(TrustedHostMiddleware, allowed_hosts=hosts), *streamlit_middleware()]

    starlette_app.create_streamlit_middleware = with_trusted_hosts


def main() -> None:
    install_guards(allowed_hosts())
    from streamlit.web import cli

    sys.argv = ["streamlit", *sys.argv[1:]]
    cli.main(prog_name="streamlit")


if __name__ == "__main__":
    main()
