"""The shift's home view and the notes between caregivers, in Debian's chromium, at 1440×900
and 390×844, light and dark: the flows work without a page reload, focus stays where the
caregiver acted and the aria-live region says what happened, axe-core finds nothing, nothing is
wider than a phone. Screenshots: docs/screenshots/home-*.png and notes-*.png (SAVE_SCREENSHOTS=1).
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from dashboard.models import CareRole, CareTeamMembership
from dashboard.notes.models import CaregiverNote
from memory.models import Alert
from tests.dashboard.conftest import converse, make_person
from tests.e2e.test_accessibility import log_in, open_page, settled, violations
from tests.e2e.test_dashboard_browser import PHONE, alice, peggy  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1440, "height": 900}
NOTE = "Slept badly; the night nurse thinks the new tablets upset her. Ask about the garden."


@pytest.fixture
def ward(alice, peggy):  # noqa: F811
    """A few more residents for the shift: one upset now, one calm, one silent since yesterday."""
    now = timezone.now()
    people = {}
    for name, zone, talk, distress in (
        ("Walter", "Europe/London", timedelta(minutes=40), 0.85),
        ("Iris", "Europe/Dublin", timedelta(hours=1), 0.15),
        ("Harold", "Europe/London", timedelta(days=1, hours=2), 0.3),
    ):
        someone = make_person(
            name, {"preferredName": name, "timezone": zone}, organisation=peggy.organisation
        )
        converse(someone, now - talk, [("Good morning to you", distress, "anxious")])
        CareTeamMembership.objects.create(user=alice, person=someone, role=CareRole.ADMIN)
        people[name] = someone
    Alert.objects.create(
        person=people["Harold"],
        kind=Alert.Kind.DISTRESS_ABOVE_BASELINE,
        detail={},
        dedupe_key="e2e-harold",
        created_at=now - timedelta(hours=3),
    )
    return people


def _fits_the_phone(page) -> None:
    too_wide = page.evaluate(
        """w => [...document.querySelectorAll('main *')]
            .filter(e => e.getBoundingClientRect().right > w + 1)
            .slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + e.textContent.slice(0, 40))""",
        PHONE["width"],
    )
    assert too_wide == []
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def _announced(page, words: str) -> None:
    page.wait_for_function(
        "w => document.getElementById('announce').textContent === w", arg=words, timeout=10_000
    )


@pytest.mark.parametrize(
    ("viewport", "scheme", "shot"),
    [(DESKTOP, "light", "home-desktop"), (PHONE, "dark", "home-phone-dark")],
    ids=["desktop", "phone-dark"],
)
def test_the_shift_view_sorts_in_place_and_passes_axe(
    browser,
    live_server,
    alice,  # noqa: F811
    ward,
    viewport,
    scheme,
    shot,
    shoot,
):
    page = open_page(browser, live_server, viewport=viewport, scheme=scheme)
    log_in(page, live_server)
    # Linked from the people list.
    page.click("a.home-link")
    page.wait_for_url(f"{live_server.url}/home/")
    names = page.locator(".shift-name").all_inner_texts()
    assert names[0] == "Walter"  # the most upset now comes first
    assert page.locator(".shift-row.shift-upset").count() >= 1
    assert (
        "Not talked with Clara today" in page.locator(".shift-row", has_text="Harold").inner_text()
    )
    assert violations(page) == []
    if viewport is PHONE:
        _fits_the_phone(page)
    shoot(page, shot, full_page=True)
    # Sorting is an htmx swap: no reload (the marker survives), the URL follows, focus stays.
    page.evaluate("window.__kept = 1")
    page.click("#sort-alerts")
    page.wait_for_selector("#sort-alerts[aria-current]")
    _announced(page, "Sorted by open alerts.")
    assert page.evaluate("window.__kept") == 1
    assert page.url.endswith("/home/?sort=alerts")
    assert page.evaluate("document.activeElement.id") == "sort-alerts"
    first_alerts = page.locator(".shift-row").first.inner_text()
    assert "to look at" in first_alerts
    page.click("#sort-name")
    page.wait_for_selector("#sort-name[aria-current]")
    names = page.locator(".shift-name").all_inner_texts()
    assert names == sorted(names, key=str.casefold)
    assert violations(page) == []
    assert page.errors == []
    page.context.close()


@pytest.mark.parametrize(
    ("viewport", "scheme", "shot"),
    [(DESKTOP, "light", "notes-desktop"), (PHONE, "dark", "notes-phone-dark")],
    ids=["desktop", "phone-dark"],
)
def test_a_note_is_added_in_place_and_read_back(
    browser,
    live_server,
    alice,  # noqa: F811
    peggy,  # noqa: F811
    viewport,
    scheme,
    shot,
    shoot,
):
    page = open_page(browser, live_server, viewport=viewport, scheme=scheme)
    log_in(page, live_server)
    page.goto(f"{live_server.url}/people/{peggy.id}/")
    settled(page)
    page.evaluate("window.__kept = 1")
    page.locator("#notes").scroll_into_view_if_needed()
    page.fill("#note-text", NOTE)
    page.check("input[name=visibility][value=team]")
    page.click("#notes button[type=submit]")
    page.wait_for_selector(f"#notes .note-text >> text={NOTE[:30]}")
    _announced(page, "Note added.")
    assert page.evaluate("window.__kept") == 1  # no page reload
    assert page.evaluate("document.activeElement.id") == "notes"
    assert "Alice" in page.locator("#notes .note-head").first.inner_text()
    note = CaregiverNote.objects.get()
    assert (note.text, note.visibility, note.author_name) == (NOTE, "team", "Alice")
    # An empty note is refused: the 400's panel is swapped in (base.html's htmx config), so the
    # reason shows beside the field and is announced.
    page.fill("#note-text", " ")
    page.evaluate("document.getElementById('note-text').removeAttribute('required')")
    page.click("#notes button[type=submit]")
    page.wait_for_selector("#note-error", timeout=10_000)
    page.wait_for_function(
        "document.getElementById('announce').textContent.startsWith('Not saved:')",
        timeout=10_000,
    )
    assert CaregiverNote.objects.count() == 1
    assert violations(page) == []
    if viewport is PHONE:
        _fits_the_phone(page)
    page.locator("#notes").scroll_into_view_if_needed()
    shoot(page, shot)
    assert page.errors == []
    page.context.close()
