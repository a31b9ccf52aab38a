"""The family's page of a person and people's names on a phone (issue 32 items 1 and 3), in
Debian's chromium at 1366×900 and 390×844: a daughter sees her mother's week in words, switches
the weekly summary on without a page reload, reads the handover note marked for family and not
the staff's, and axe finds nothing; a 60-character name (the person's, a caregiver's) wraps, so
no page touched here is wider than the phone. Screenshots: docs/screenshots/family-*.png
(SAVE_SCREENSHOTS=1).
"""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from dashboard.accounts import services as accounts
from dashboard.accounts.models import Invitation
from dashboard.alerting import delivery
from dashboard.models import CareRole, CareTeamMembership
from memory.models import Alert, OrganisationMembership
from tests.dashboard.conftest import PASSWORD, converse, make_person
from tests.e2e.test_accessibility import log_in, open_page, settled, violations

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
# 60 characters each, the surname one word with nowhere to break: the worst a phone gets.
LONG_PERSON = "Adelheid Wolfeschlegelsteinhausenbergerdorffvoralternwarenge"
LONG_CARER = "Hubert Wolfeschlegelsteinhausenbergerdorffwelchevoralternwar"
STAFF_NOTE = "Blood pressure high this morning, GP visiting at nine"
FAMILY_NOTE = "She is fine now and enjoyed her tea in the garden"


def _login(username: str, organisation, first: str, last: str = ""):
    user = get_user_model().objects.create_user(
        username, password=PASSWORD, first_name=first, last_name=last
    )
    OrganisationMembership.objects.create(user=user, organisation=organisation)
    return user


@pytest.fixture
def mother():
    """Peggy's week with Clara, an alert with two handover notes (one marked for family), her
    daughter Claire (family) and Sam (care staff), both in her care team."""
    person = make_person(
        "Nana",
        {
            "preferredName": "Peggy",
            "pronouns": "she/her",
            "timezone": "Europe/London",
            "home": "Rosewood House",
            "knownTopics": ["the rose garden", "baking scones"],
        },
    )
    now = timezone.now()
    converse(
        person,
        now - timedelta(days=3),
        [("Where am I?", 0.5, "confused"), ("Where am I?", 0.4, "confused")],
    )
    converse(
        person,
        now - timedelta(hours=3),
        [("Is Sarah coming today?", 0.3, "calm"), ("I fell over, help me", 0.9, "fearful")],
    )
    claire = _login("claire", person.organisation, "Claire", "Morgan")
    sam = _login("sam", person.organisation, "Sam", "Okafor")
    CareTeamMembership.objects.create(user=claire, person=person, role=CareRole.FAMILY)
    CareTeamMembership.objects.create(user=sam, person=person, role=CareRole.STAFF)
    alert = Alert.objects.filter(person=person).first()
    delivery.note_add(alert=alert, user=sam, text=STAFF_NOTE)
    delivery.note_add(alert=alert, user=sam, text=FAMILY_NOTE, for_family=True)
    return person


def _fits_the_phone(page) -> None:
    too_wide = page.evaluate(
        """w => [...document.querySelectorAll('body *')]
            .filter(e => e.getBoundingClientRect().right > w + 1)
            .slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + e.textContent.slice(0, 40))""",
        PHONE["width"],
    )
    assert too_wide == []
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


@pytest.mark.parametrize(
    ("viewport", "scheme", "shot"),
    [(DESKTOP, "light", "family-desktop"), (PHONE, "dark", "family-phone-dark")],
    ids=["desktop", "phone-dark"],
)
def test_a_daughter_reads_her_mother_s_week_and_asks_for_the_weekly_summary(
    browser, live_server, mother, viewport, scheme, shot, shoot
):
    page = open_page(browser, live_server, viewport=viewport, scheme=scheme)
    log_in(page, live_server, "claire")
    page.click(".card")
    page.wait_for_selector("#how")
    main = page.locator("main").inner_text()
    for heading in ("How Peggy has been", "What helps", "Coming up", "Notes for family"):
        assert heading in main
    assert FAMILY_NOTE in main and STAFF_NOTE not in main
    assert "of 100" not in main and "I'm dealing with it" not in main
    assert page.locator("input[name=note]").count() == 0  # no handover-note field
    assert violations(page) == []
    if viewport is PHONE:
        _fits_the_phone(page)
    shoot(page, shot)  # the first screen: the summary switch and how she has been
    # The weekly summary, first on the page: switched on in place (htmx), said aloud.
    page.evaluate("window.__kept = 1")
    page.click("#digest button")
    page.wait_for_selector("#digest >> text=Stop the weekly summary")
    page.wait_for_function(
        "document.getElementById('announce').textContent === 'You will get the weekly summary.'",
        timeout=10_000,
    )
    assert page.evaluate("window.__kept") == 1
    assert violations(page) == []
    assert page.errors == []
    page.context.close()


def test_sixty_character_names_wrap_on_a_phone(browser, live_server, mother, shoot):
    """The person's and a caregiver's long names, on every page this work touched."""
    mother.caregiver_context = {**mother.caregiver_context, "preferredName": LONG_PERSON}
    mother.save()
    for username in ("claire", "sam"):
        user = get_user_model().objects.get(username=username)
        user.first_name, user.last_name = LONG_CARER.split(" ")
        user.save()
    invitation = Invitation.objects.create(
        organisation=mother.organisation,
        email="new@family.example",
        role=CareRole.FAMILY,
    )
    invitation.people.add(mother)
    base = f"/people/{mother.id}/"
    checked = {}
    # The invitation's sign-up, with the longest name typed into it.
    page = open_page(browser, live_server, viewport=PHONE)
    page.goto(f"{live_server.url}/invitations/{accounts.invitation_token(invitation)}/")
    page.fill("#id_first_name", LONG_CARER)
    _fits_the_phone(page)
    page.context.close()
    for username, paths in (
        ("claire", ["/", base, f"{base}profile/"]),
        ("sam", [base, f"{base}notes/", f"{base}alerts/"]),
    ):
        page = open_page(browser, live_server, viewport=PHONE)
        log_in(page, live_server, username)
        for path in paths:
            page.goto(f"{live_server.url}{path}")
            settled(page, path)
            checked[(username, path)] = page.evaluate("document.documentElement.scrollWidth")
            _fits_the_phone(page)
        if username == "sam":
            # The writer of a handover note sees who will read it, as they choose.
            form = page.locator("form.alert-note").first
            hint = form.locator(".seen-by")
            assert hint.inner_text().endswith("care team")
            form.locator("input[name=for_family]").check()
            assert hint.inner_text().endswith("care team and family")
        assert page.errors == []
        page.context.close()
    assert all(width <= PHONE["width"] for width in checked.values()), checked
