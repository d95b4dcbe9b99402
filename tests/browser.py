"""Headless Chromium for tests: the system browser (Debian ``chromium``) driven by Playwright.

    errors = open_page(url, ARTIFACTS / "overview.png", wait_for_text="Overview")

returns the page's console errors (and uncaught page errors, and any alert/confirm/prompt dialog
that opened: feed text must never run script) and saves a full-page screenshot. Tests that need it
call ``require_chromium()`` first, which skips with the reason when no browser is installed. Tests that open
many pages share one browser (``shared_browser``; each page gets its own fresh context, a new profile):
starting Chromium and Playwright took 2-4 s of each page's 8-12 s.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def chromium_path() -> str | None:
    for candidate in ("/usr/bin/chromium", "chromium", "chromium-browser"):
        found = shutil.which(candidate)
        if found:
            return found
    return None


def require_chromium() -> str:
    path = chromium_path()
    if path is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium; `make setup` does it)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install -e '.[dev]')")
    return path


@contextlib.contextmanager
def shared_browser() -> Iterator[Any]:
    """One headless Chromium for several ``open_page`` calls (``browser=``)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=require_chromium(), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def open_page(
    url: str,
    screenshot: Path,
    wait_for_text: str | None = None,
    *,
    click_text: str | None = None,
    clicks: Sequence[tuple[str, str] | tuple[str, str, int]] = (),
    timeout_s: float = 60.0,
    settle_s: float = 1.0,
    viewport: tuple[int, int] = (1400, 1000),
    browser: Any = None,
) -> list[str]:
    """Open ``url`` (http:// or file://), click the link ``click_text`` if given (e.g. a page in a
    navigation bar), then each (ARIA role, name[, n]) of ``clicks`` in turn (the first match of each, or the
    n-th, e.g. ``("button", "Open", 1)``), wait for ``wait_for_text`` to be visible, screenshot it.

    Returns console errors, page errors and dialog messages, in the order they happened. ``browser``: one from
    ``shared_browser`` (the page opens in a new context of it), else a browser is started for this page.
    """
    if browser is None:
        with shared_browser() as own:
            return open_page(
                url,
                screenshot,
                wait_for_text,
                click_text=click_text,
                clicks=clicks,
                timeout_s=timeout_s,
                settle_s=settle_s,
                viewport=viewport,
                browser=own,
            )
    problems: list[str] = []
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    try:
        page = context.new_page()
        page.on(
            "console",
            lambda msg: (
                problems.append(f"console: {msg.text} ({msg.location.get('url', '')})") if msg.type == "error" else None
            ),
        )
        page.on("requestfailed", lambda req: problems.append(f"request failed: {req.url} ({req.failure})"))
        page.on(
            "response",
            lambda resp: problems.append(f"HTTP {resp.status}: {resp.url}") if resp.status >= 400 else None,
        )
        page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))

        def on_dialog(dialog) -> None:  # type: ignore[no-untyped-def]
            problems.append(f"dialog ({dialog.type}): {dialog.message}")
            dialog.dismiss()

        page.on("dialog", on_dialog)
        page.goto(url, wait_until="load", timeout=timeout_s * 1000)
        for role, name, *nth in ([("link", click_text)] if click_text else []) + list(clicks):
            # exact names; an optional third item picks the nth match (the week picker's arrow is a button
            # named "Open" too)
            target = page.get_by_role(role, name=name, exact=True).nth(nth[0] if nth else 0)  # type: ignore[arg-type]
            target.wait_for(state="visible", timeout=timeout_s * 1000)
            target.click()
        if wait_for_text:
            page.get_by_text(wait_for_text, exact=False).first.wait_for(state="visible", timeout=timeout_s * 1000)
        # a Streamlit app shows its status widget while the script runs: wait until it is done
        page.wait_for_function(
            "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout_s * 1000
        )
        page.wait_for_timeout(settle_s * 1000)
        page.screenshot(path=str(screenshot), full_page=True)
    finally:
        context.close()
    return problems
