"""The summary endpoint as untrusted input, and `radar doctor`, each against the plain way in the same run.

    .venv/bin/python benchmarks/bench_endpoint.py [--reply-mb 400] [--drip-bytes 60] [--corpus PATH]

Endpoint: one summary call against a local server that answers ``--reply-mb`` MB (streamed), and one that drips
``--drip-bytes`` bytes of a valid reply at 0.25 s a byte, through ``EndpointSummarizer`` (summary_timeout_s = 5,
summary_max_bytes = 1 MB) against the plain call it replaced (requests.post(timeout=5).json(): a socket timeout,
the body read whole). Each in a fresh process: wall seconds of the call (imports done first), CPU seconds of the
process and its peak memory (ru_maxrss).

Doctor: `radar doctor` (check) and `radar doctor --recover` on a copy of a ``--corpus`` database (default: the
bundled 20,000-paper snapshot, imported) with 2,000 flipped bytes past its first page, against a plain
``PRAGMA integrity_check``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import socket
import socketserver
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from radar.crawler.snapshot import import_snapshot
from radar.store import Workspace

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "data" / "snapshot.jsonl.gz"
CALL = {
    "bounded": (
        "from radar.reports.summarize import EndpointSummarizer; "
        "s = EndpointSummarizer(URL, 'm', timeout_s=5, max_bytes=1_000_000); "
        "s.summarize('T', 'One sentence. Two sentences. Three.'); print('NOTE', s.last_error[:60])"
    ),
    "plain": (
        "import requests\n"
        "try:\n"
        "    r = requests.post(URL + '/chat/completions', json={}, timeout=5)\n"
        "    print('NOTE', str(r.json()['choices'][0]['message']['content'])[:20])\n"
        "except Exception as exc:\n"
        "    print('NOTE', type(exc).__name__)"
    ),
}


def serve(mode: str, reply_mb: int, drip_bytes: int) -> tuple[socketserver.TCPServer, str]:
    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            sock: socket.socket = self.request
            head = b""
            while b"\r\n\r\n" not in head:
                got = sock.recv(65536)
                if not got:
                    return
                head += got
            length = next(
                (int(x.split(b":")[1]) for x in head.split(b"\r\n") if x.lower().startswith(b"content-length")), 0
            )
            body = head.partition(b"\r\n\r\n")[2]
            while len(body) < length:
                body += sock.recv(65536)
            try:
                if mode == "huge":
                    sock.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
                    sock.sendall(b'{"choices": [{"message": {"content": "')
                    piece = b"a" * 65536
                    for _ in range(reply_mb * 1_000_000 // len(piece)):
                        sock.sendall(piece)
                    sock.sendall(b'"}}]}')
                else:
                    answer = json.dumps({"choices": [{"message": {"content": "x" * drip_bytes}}]}).encode()
                    sock.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {len(answer)}\r\n\r\n".encode())
                    for byte in answer:
                        sock.sendall(bytes([byte]))
                        time.sleep(0.25)
            except OSError:
                pass  # the client hung up

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def measure(code: str, url: str) -> tuple[float, float, float, str]:
    """(wall s of the call, CPU s of the process, peak MB, what it said) of ``code`` in a fresh process."""
    warm = "import requests, radar.reports.summarize\n"  # imported before the clock starts
    wrapper = (
        f"URL = {url!r}\n{warm}import resource, time\nstarted = time.perf_counter()\n{code}\n"
        "wall = time.perf_counter() - started\n"
        "u = resource.getrusage(resource.RUSAGE_SELF)\n"
        "print('RUSAGE', wall, u.ru_utime + u.ru_stime, u.ru_maxrss)\n"
    )
    out = subprocess.run([sys.executable, "-c", wrapper], capture_output=True, text=True, timeout=900).stdout
    wall_s, cpu, peak_kb = out.split("RUSAGE", 1)[1].split()
    wall = float(wall_s)
    note = out.split("NOTE", 1)[1].splitlines()[0].strip() if "NOTE" in out else ""
    return wall, float(cpu), int(peak_kb) / 1024, note


def endpoint_rows(reply_mb: int, drip_bytes: int) -> list[list[str]]:
    rows = []
    for mode, what in (("huge", f"{reply_mb} MB reply"), ("drip", f"{drip_bytes + 60} B at 0.25 s/B")):
        server, url = serve(mode, reply_mb, drip_bytes)
        try:
            got = {way: measure(CALL[way], url) for way in ("plain", "bounded")}
        finally:
            server.shutdown()
            server.server_close()
        for way, (wall, cpu, peak, note) in got.items():
            ratio = f"{got['plain'][0] / wall:.1f}x faster, {got['plain'][2] / peak:.1f}x less memory"
            rows.append(
                [what, way, f"{wall:.1f}", f"{cpu:.1f}", f"{peak:,.0f}", note[:40], ratio if way != "plain" else ""]
            )
    return rows


def doctor_rows(corpus: Path) -> list[list[str]]:
    with tempfile.TemporaryDirectory() as tmp:
        ws, _ = Workspace.init(Path(tmp) / "ws")
        with ws.store() as store:
            import_snapshot(store, corpus)
        data = bytearray(ws.db_path.read_bytes())
        rng = random.Random(7)
        for _ in range(2000):
            data[rng.randrange(4096, len(data))] ^= 0xFF
        ws.db_path.write_bytes(bytes(data))
        for extra in ("radar.db-wal", "radar.db-shm"):
            (ws.root / extra).unlink(missing_ok=True)
        size = ws.db_path.stat().st_size / 1e6
        rows = []
        started = time.perf_counter()
        conn = sqlite3.connect(f"file:{ws.db_path}?mode=ro&immutable=1", uri=True)
        with contextlib.suppress(sqlite3.DatabaseError, UnicodeDecodeError):
            conn.execute("PRAGMA integrity_check").fetchall()
        conn.close()
        plain = time.perf_counter() - started
        rows.append([f"doctor, {size:.0f} MB db", "integrity_check only", f"{plain:.1f}", "", "", "", ""])
        for argv in (["doctor", "--json"], ["doctor", "--recover", "--json"]):
            started = time.perf_counter()
            out = subprocess.run(
                [sys.executable, "-m", "radar.app.cli", "-w", str(ws.root), *argv],
                capture_output=True,
                text=True,
                timeout=900,
            ).stdout
            took = time.perf_counter() - started
            docs = json.loads(out)["tables"]["documents"]
            note = f"{docs['rows']:,} documents recoverable"
            rows.append(["", " ".join(argv[:2]), f"{took:.1f}", "", "", note, f"{took / plain:.0f}x integrity_check"])
        shutil.rmtree(ws.root, ignore_errors=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reply-mb", type=int, default=400)
    parser.add_argument("--drip-bytes", type=int, default=60)
    parser.add_argument("--corpus", type=Path, default=BUNDLED)
    args = parser.parse_args()
    table = Table(title=f"untrusted endpoint and doctor (load average {os.getloadavg()[0]:.1f} at start)")
    for col in ("case", "way", "wall s", "CPU s", "peak MB", "result", "vs plain"):
        table.add_column(col)
    for row in [*endpoint_rows(args.reply_mb, args.drip_bytes), *doctor_rows(args.corpus)]:
        table.add_row(*row)
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
