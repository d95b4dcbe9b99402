"""End to end: `radar app` as a user starts it, every page opened in headless Chromium, no console
errors, no script from feed text, a screenshot of each page in test-artifacts/."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from radar.app.cli import main
from radar.crawler.documents import Document, Documents
from radar.store import Workspace
from radar.store.models import utc_now
from tests.browser import ARTIFACTS, open_page, require_chromium, shared_browser

EVIL_TITLE = "<script>alert(1)</script> <img src=x onerror=alert(1)> hostile title"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, small_snapshot: Path) -> Iterator[tuple[str, Workspace]]:
    require_chromium()
    root = tmp_path_factory.mktemp("dash-e2e") / "ws"
    assert main(["--workspace", str(root), "init"]) == 0
    assert main(["--workspace", str(root), "import", str(small_snapshot)]) == 0
    ws = Workspace.open(root)
    from radar.reports.period import latest_data_week

    with ws.store() as store:
        # the hostile post inside the week the dashboard opens on (the report's week): the Explore list shows it
        last = latest_data_week(store).end.isoformat() + "T12:00:00Z"
        Documents(store).upsert(
            [
                Document(  # a hostile paper introducing a method in that week: the Methods page shows its card
                    id="2403.99999",
                    kind="paper",
                    source="arxiv",
                    title="EVILPO: " + EVIL_TITLE,
                    abstract="We propose EVILPO, a reinforcement learning method for LLMs that improves GRPO "
                    "<iframe src=javascript:alert(4)></iframe>.",
                    published=last,
                    url="https://arxiv.org/abs/2403.99999",
                ),
                Document(
                    id="post:feedfacefeedface",
                    kind="post",
                    source="evil-feed",
                    title=EVIL_TITLE,
                    abstract="<iframe src=javascript:alert(2)></iframe>",
                    published=last,
                    url="javascript:alert(3)",
                ),
            ]
        )
        ids = [d.id for d in Documents(store).latest(kinds=["paper"], limit=40)]
        with store.transaction() as conn:
            conn.executemany(
                "INSERT INTO document_tags (doc_id, tag, score, origin, created_at) VALUES (?, ?, ?, ?, ?)",
                [
                    (d, "llm-reasoning" if i % 2 else "inference-serving", 0.8, "model", utc_now())
                    for i, d in enumerate(ids)
                ],
            )
    from radar.app.dashboard.page_reports import generate
    from radar.reports.period import latest_data_week

    with ws.store() as store:
        week = latest_data_week(store).label
    generate(ws, week)  # a real report for the Reports page to show
    port = _free_port()
    log = open(root.parent / "app.log", "wb")  # noqa: SIM115 (open for the server's lifetime)
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("radar")), "--workspace", str(root), "app", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.time() + 180  # a loaded 2-core CI machine starts Streamlit slowly
        while True:
            try:
                with urllib.request.urlopen(url + "_stcore/health", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                pytest.fail(f"`radar app` did not come up: {(root.parent / 'app.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield url, ws
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        log.close()


@pytest.fixture(scope="module")
def browser(served: tuple[str, Workspace]) -> Iterator[object]:
    """One Chromium for the module's pages, each opened in a fresh context (its own profile and session)."""
    with shared_browser() as shared:
        yield shared


# (navigation link to click, text that shows the page rendered); pages are reached as a user does,
# from the start page through the navigation bar
PAGES = [
    ("", "In the workspace"),
    ("Methods", "Later papers naming it"),
    ("Explore", EVIL_TITLE),
    ("Reports", "Download HTML"),
    ("Repro", "Start a run"),
    ("Settings", "Taxonomy"),
]


@pytest.mark.parametrize(("link", "text"), PAGES, ids=[p[0].lower() or "overview" for p in PAGES])
def test_page_renders_without_errors(served: tuple[str, Workspace], browser: object, link: str, text: str) -> None:
    url, _ = served
    shot = ARTIFACTS / f"dashboard-{link.lower() or 'overview'}.png"
    problems = open_page(
        url, shot, wait_for_text=text, click_text=link or None, timeout_s=90, settle_s=1.0, browser=browser
    )
    assert problems == [], problems
    assert shot.stat().st_size > 10_000


def test_hostile_document_opens_as_text(served: tuple[str, Workspace], browser: object) -> None:
    """The newest document is the hostile post: open it; its markup shows as text and nothing runs."""
    url, _ = served
    shot = ARTIFACTS / "dashboard-explore-detail.png"
    problems = open_page(
        url,
        shot,
        wait_for_text="<iframe src=javascript:alert(2)></iframe>",
        clicks=[("link", "Explore"), ("button", "Open", 1)],  # 0: the week picker's arrow, 1: the first result
        timeout_s=90,
        settle_s=1.0,
        browser=browser,
    )
    assert problems == [], problems


def test_app_prints_its_url_and_binds_loopback(served: tuple[str, Workspace]) -> None:
    url, ws = served
    log = (ws.root.parent / "app.log").read_text()
    assert f"dashboard for {ws.root}: {url}" in log
    assert url.startswith("http://127.0.0.1:")
