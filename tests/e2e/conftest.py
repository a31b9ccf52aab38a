"""Browser tests: Debian's chromium driven by Playwright against pytest-django's live server.

Marked `e2e`; skipped (with the reason) only when /usr/bin/chromium is not installed. Screenshots
go to the test's tmp dir, and to docs/screenshots/ when SAVE_SCREENSHOTS=1 (so a normal run never
leaves the checkout modified).
"""

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]
DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def pytest_configure(config):
    config.addinivalue_line("markers", "e2e: drives a real browser against a live server")


@pytest.fixture(scope="module")
def browser():
    """One browser per module, gone (with Playwright's event loop) before other tests run.

    Playwright's sync API keeps an event loop in the test thread while it runs; the ORM calls
    the tests make between browser steps are plain synchronous ones, so Django's async guard is
    lifted for exactly that long, and restored after, so later tests see the usual settings.
    """
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            yield browser
            browser.close()
    finally:
        if before is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before


@pytest.fixture
def shoot(tmp_path):
    """shoot(page, "name"): a PNG in tmp_path, copied to docs/screenshots/ on request."""

    def save(page, name: str, *, full_page: bool = False) -> Path:
        path = tmp_path / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        if os.environ.get("SAVE_SCREENSHOTS") == "1":
            DOCS.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, DOCS / path.name)
        return path

    return save
