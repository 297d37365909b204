"""Headless Chromium for tests: Playwright for Python driving Debian's ``chromium`` (never a browser Playwright
downloads). ``make test`` installs the package; where it is absent the browser tests skip with that reason.

Use the ``browser_page`` fixture (re-exported by conftest): a fresh page whose console errors and page errors are
collected in ``page.viewcert_errors`` so a test can assert there were none.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

CHROMIUM = os.environ.get("VIEWCERT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# without the background-networking flags Chromium keeps trying hosts this closed network refuses
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _skip_reason() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (the test extra installs it)"
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"no Chromium at {CHROMIUM} (Debian package chromium; `make test` installs it)"
    return None


@pytest.fixture(scope="module")
def chromium_browser() -> Iterator[object]:
    """One headless Chromium per test module. Not per session: Playwright's sync API keeps an asyncio loop
    running in the main thread while it is open, and Inspect's ``asyncio.run`` in later modules refuses to run
    inside a running loop."""
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture()
def browser_page(chromium_browser) -> Iterator[object]:
    """A fresh page; ``page.viewcert_errors`` lists console errors and uncaught page errors."""
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.viewcert_errors = errors
    try:
        yield page
    finally:
        context.close()
