"""The readable record in a real browser, at 1440×900 and 390×844: reached from "What Clara
remembers", older memories on request, the PDF downloads, axe-core finds nothing."""

import pytest

from tests.e2e.test_accessibility import log_in, open_page, violations
from tests.e2e.test_dashboard_browser import alice, peggy  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SIZES = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.mark.parametrize("size", list(SIZES))
def test_the_readable_record_page_and_its_pdf(
    browser,
    live_server,
    alice,  # noqa: F811
    peggy,  # noqa: F811
    shoot,
    size,
):
    page = open_page(browser, live_server, viewport=SIZES[size])
    log_in(page, live_server)
    page.goto(f"{live_server.url}/people/{peggy.id}/memories/")
    page.click("text=A record to read or print")
    page.wait_for_selector("h1:has-text('what Clara knows')")
    assert "No longer current" not in page.inner_text("main")
    page.check("#id_archived")
    page.click("button:has-text('Show')")
    page.wait_for_selector("h2:has-text('No longer current')")
    assert "archived=1" in page.url
    assert page.locator(".record-conversation").count() > 0
    assert violations(page) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"]
    shoot(page, f"export-readable-{size}")
    with page.expect_download() as download:
        page.click("text=Download as PDF")
    path = download.value.path()
    with open(path, "rb") as pdf:
        assert pdf.read(5) == b"%PDF-"
    assert download.value.suggested_filename == f"clara-record-{peggy.id}.pdf"
    assert page.errors == []
    page.context.close()
