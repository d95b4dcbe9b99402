"""One HTTP call with a total deadline and a size cap (the summary endpoint's calls).

requests' ``timeout`` bounds each socket operation, not the call: a server that sends a byte a second, in its
headers or its body, never trips it. ``DeadlineSession`` (a requests Session) remembers the socket of the
connection it opened last (one connection: calls are sequential), and ``call`` arms a timer that shuts that
socket down at the deadline, wherever the call is (connecting, sending, waiting for headers, reading the
body). The body is read in pieces as they arrive and refused past ``max_bytes``: a declared Content-Length
over the cap is refused before any of it is read, and the bytes are counted both on the wire and decoded (a
gzip reply cannot expand past the cap). Redirects go through ``request_checked``'s checks.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import Any

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from radar.crawler.http import request_checked

CHUNK = 64 * 1024


class BoundExceeded(Exception):
    """A call broke one of its bounds: the reply was larger than the cap, or not done by the deadline."""


class _LastSocket:
    def __init__(self) -> None:
        self.sock: socket.socket | None = None


def _pool_classes(last: _LastSocket) -> dict[str, type[HTTPConnectionPool]]:
    """urllib3 pool classes whose connections record their socket in ``last`` when they connect."""

    class Conn(HTTPConnection):
        def connect(self) -> None:
            super().connect()
            last.sock = self.sock

    class TlsConn(HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            last.sock = self.sock

    class Pool(HTTPConnectionPool):
        ConnectionCls = Conn

    class TlsPool(HTTPSConnectionPool):
        ConnectionCls = TlsConn

    return {"http": Pool, "https": TlsPool}


class _Adapter(HTTPAdapter):
    def __init__(self, last: _LastSocket) -> None:
        self.last = last
        super().__init__(pool_connections=1, pool_maxsize=1)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _pool_classes(self.last)


class DeadlineSession(requests.Session):
    """A Session whose calls ``call`` can cut at their deadline (it knows the socket in use)."""

    def __init__(self) -> None:
        super().__init__()
        self.last = _LastSocket()
        adapter = _Adapter(self.last)
        self.mount("http://", adapter)
        self.mount("https://", adapter)

    def cut(self) -> None:
        """Shut the current connection down: a blocked read or write returns at once."""
        sock = self.last.sock
        if sock is not None:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def _late(deadline_s: float) -> BoundExceeded:
    return BoundExceeded(f"no complete reply within the deadline of {deadline_s:g} s")


def _read(
    raw: urllib3.BaseHTTPResponse, max_bytes: int, ends: float, deadline_s: float, clock: Callable[[], float]
) -> bytes:
    declared = str(raw.headers.get("Content-Length", ""))
    if declared.isdigit() and int(declared) > max_bytes:
        raise BoundExceeded(f"the reply declares {int(declared):,} bytes, more than the cap of {max_bytes:,}")
    chunks: list[bytes] = []
    total = 0
    while True:
        if clock() >= ends:
            raise _late(deadline_s)
        chunk = raw.read1(CHUNK, decode_content=True)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > max_bytes or raw.tell() > max_bytes:
            raise BoundExceeded(f"the reply is larger than the cap of {max_bytes:,} bytes")
        chunks.append(chunk)


def call(
    session: DeadlineSession,
    method: str,
    url: str,
    *,
    deadline_s: float,
    max_bytes: int,
    data: bytes | str | None = None,
    headers: Mapping[str, str] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[int, bytes]:
    """(status, body) of one call that ends by ``deadline_s`` seconds from now and reads at most ``max_bytes``
    of body; BoundExceeded when it would not, requests' and urllib3's errors (and UrlRefused) as they are."""
    ends = clock() + deadline_s
    fired = threading.Event()
    log = logging.getLogger("urllib3.connection")  # a cut in the headers is our doing: no warning with a traceback
    level = log.level
    log.setLevel(logging.ERROR)

    def fire() -> None:
        fired.set()
        session.cut()

    timer = threading.Timer(deadline_s, fire)
    timer.daemon = True
    timer.start()
    try:
        resp = request_checked(session, method, url, data=data, headers=headers, timeout=deadline_s, stream=True)
        try:
            return resp.status_code, _read(resp.raw, max_bytes, ends, deadline_s, clock)
        finally:
            resp.close()
    except (requests.RequestException, urllib3.exceptions.HTTPError, OSError):
        if fired.is_set() or clock() >= ends:
            raise _late(deadline_s) from None
        raise
    finally:
        timer.cancel()
        log.setLevel(level)
