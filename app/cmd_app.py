"""`radar app`: the Streamlit dashboard on localhost (``streamlit run app/dashboard/main.py``)."""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys

from radar.app.cli_helpers import open_workspace
from radar.app.context import Radar
from radar.app.dashboard import MAIN_SCRIPT
from radar.app.dashboard.serve import HOSTS_VAR
from radar.app.output import console, err_console
from radar.app.serving import AppConfig
from radar.store.errors import ConfigError


def streamlit_command(root: str, cfg: AppConfig) -> list[str]:
    """``streamlit run`` headless on host:port, no telemetry, no file watcher; the workspace after ``--``."""

    return [
        sys.executable,
        "-m",
        "radar.app.dashboard.serve",  # streamlit's CLI behind a trusted-host check, with no outbound calls
        "run",
        str(MAIN_SCRIPT),
        "--server.address",
        cfg.host,
        "--server.port",
        str(cfg.port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--browser.serverAddress",
        cfg.host,
        *(arg for host in cfg.trusted_hosts() for arg in ("--server.allowedHosts", host)),
        "--server.fileWatcherType",
        "none",
        "--global.developmentMode",
        "false",
        "--client.toolbarMode",
        "viewer",
        "--",
        "--workspace",
        root,
    ]


def _check_port_free(cfg: AppConfig) -> None:
    """One clear line instead of Streamlit's own failure when the address is taken or not ours."""
    family = socket.AF_INET6 if ":" in cfg.host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers do: TIME_WAIT is no conflict
        try:
            sock.bind((cfg.host, cfg.port))
        except OSError as exc:
            raise ConfigError(
                f"cannot listen on {cfg.host}:{cfg.port} ({exc.strerror}); pass another --port N (or stop what uses it)"
            ) from None


def cmd_app(args: argparse.Namespace) -> int:
    radar = Radar(open_workspace(args))
    ws = radar.ws
    cfg = radar.settings.with_app(port=args.port, host=args.host).app
    _check_port_free(cfg)
    if not cfg.loopback:
        err_console.print(
            f"radar: warning: serving on {cfg.host}, beyond this machine, with no login; "
            "prefer 127.0.0.1 behind an SSH tunnel or an authenticating reverse proxy "
            "(README, Dashboard)"
        )
    console.print(f"dashboard for {ws.root}: {cfg.url}  (Ctrl-C stops it)")
    env = os.environ | {
        "RADAR_HOME": str(ws.root),
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
        HOSTS_VAR: ",".join(cfg.trusted_hosts()),
    }
    proc = subprocess.Popen(streamlit_command(str(ws.root), cfg), env=env)
    signal.signal(signal.SIGTERM, lambda *_: proc.terminate())  # a supervisor stopping radar stops the server
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        console.print("dashboard stopped")
        return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("app", help="the Streamlit dashboard on localhost")
    p.add_argument("--port", type=int, metavar="N", help="port to listen on (default 8501, or [app] port)")
    p.add_argument("--host", metavar="ADDR", help="address to bind (default 127.0.0.1: this machine only)")
    p.set_defaults(func=cmd_app)
