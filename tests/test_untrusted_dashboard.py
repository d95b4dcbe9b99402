"""The dashboard under a hostile page (issue 26): it cannot be framed (no clickjacking of Start run, Generate or a
tag fix), a link's GET changes nothing (tests/test_people.py: the digest link asks, the click records), and
``[app] allowed_hosts`` takes host names only ("*" would turn the DNS-rebinding guard off). Each test failed on
the code before the fix."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from radar.store import Workspace
from radar.store.errors import ConfigError
from tests.report_servers import free_port


def _asgi_get(app: Any, path: str, host: str) -> tuple[int, dict[str, str]]:
    """One GET through an ASGI app, as uvicorn would hand it over: (status, headers)."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", host.encode())],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8501),
    }
    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], {k.decode().lower(): v.decode() for k, v in start.get("headers", [])}


def test_every_dashboard_response_forbids_framing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Probe: the dashboard sent no frame-ancestors and no X-Frame-Options, so any page could frame it. Streamlit's
    own middleware stack, with the guards installed as `radar app` installs them; a page, a 404 and the 400 of a
    forged Host all carry both headers."""
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route
    from streamlit.web.server.starlette import starlette_app

    from radar.app.dashboard.serve import install_guards

    monkeypatch.setattr(starlette_app, "create_streamlit_middleware", starlette_app.create_streamlit_middleware)
    install_guards(["127.0.0.1", "localhost"])
    app = Starlette(
        routes=[Route("/", lambda request: PlainTextResponse("page"))],
        middleware=starlette_app.create_streamlit_middleware(),
    )
    for path, host, status in (("/", "127.0.0.1:8501", 200), ("/nope", "localhost", 404), ("/", "evil.example", 400)):
        got, headers = _asgi_get(app, path, host)
        assert got == status, (path, host, got)
        assert headers.get("content-security-policy") == "frame-ancestors 'none'", headers
        assert headers.get("x-frame-options") == "DENY", headers


@pytest.mark.parametrize("hosts", [["*"], ["*.lab.example"], ["http://radar.lab.example"], ["radar:8501"], [""]])
def test_allowed_hosts_takes_host_names_only(hosts: list[str]) -> None:
    """Probe: `[app] allowed_hosts = ["*"]` was accepted silently and turned the DNS-rebinding guard off."""
    from radar.app.serving import AppConfig

    with pytest.raises(ConfigError) as err:
        AppConfig.from_section({"allowed_hosts": hosts})
    assert "is not a host name" in str(err.value) and "\n" not in str(err.value)
    ok = AppConfig.from_section({"allowed_hosts": ["radar.lab.example", "10.1.2.3", "radar_proxy", "[::1]"]})
    assert "radar.lab.example" in ok.trusted_hosts()


def test_radar_app_refuses_a_wildcard_host_before_starting(workspace: Workspace) -> None:
    """`radar app` with `allowed_hosts = ["*"]`: one line and exit 1 (the old code started the server: the
    timeout fails the test then)."""
    workspace.config_path.write_text('[app]\nallowed_hosts = ["*"]\n')
    argv = ["--workspace", str(workspace.root), "app", "--port", str(free_port())]
    proc = subprocess.Popen(
        [sys.executable, "-m", "radar.app.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:  # a server started: stop it and what it started
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 1 and "allowed_hosts: '*' is not a host name" in err
    assert len([line for line in err.splitlines() if line.strip()]) == 1


def test_the_server_wrapper_refuses_a_wildcard_from_the_environment(tmp_path: Path) -> None:
    """RADAR_ALLOWED_HOSTS set by hand (not through radar.toml) with a wildcard: one line, no server."""
    proc = subprocess.run(
        [sys.executable, "-m", "radar.app.dashboard.serve", "run", "x.py"],
        env=os.environ | {"RADAR_ALLOWED_HOSTS": "127.0.0.1,*"},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 1 and "not a wildcard" in proc.stderr and "Traceback" not in proc.stderr
