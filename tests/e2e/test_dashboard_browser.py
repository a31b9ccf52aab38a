"""A caregiver in a real browser: log in, open a person, charts render, act on an alert."""

import pytest
from django.contrib.auth import get_user_model

from dashboard.models import CareRole, CareTeamMembership
from memory.models import Alert
from tests.dashboard.conftest import PASSWORD, converse, make_person

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1200, "height": 900}


@pytest.fixture
def peggy():
    from datetime import timedelta

    from django.utils import timezone

    person = make_person(
        "Nana",
        {"preferredName": "Peggy", "pronouns": "she/her", "timezone": "Europe/London"},
    )
    now = timezone.now()
    for day in range(6, 0, -1):
        for hour, distress in ((10, 0.15), (19, 0.55)):
            at = (now - timedelta(days=day)).replace(hour=hour, minute=5)
            converse(
                person,
                at,
                [
                    ("Where am I?", distress + 0.1, "confused"),
                    ("Where am I?", distress, "anxious"),
                    ("When is Sarah coming?", distress - 0.05, "anxious"),
                    ("That's lovely, thank you", 0.1, "calm"),
                ],
                story_at=1,
            )
    converse(
        person,
        now - timedelta(hours=1),
        [("Hello dear", 0.2, "calm"), ("I fell and I can't get up, help me", 0.9, "fearful")],
    )
    return person


@pytest.fixture
def alice(peggy):
    user = get_user_model().objects.create_user("alice", password=PASSWORD, first_name="Alice")
    CareTeamMembership.objects.create(
        user=user, person=peggy, role=CareRole.ADMIN, can_see_transcripts=True
    )
    return user


def log_in(browser, live_server, *, viewport=DESKTOP, scheme="light"):
    page = browser.new_page(viewport=viewport, color_scheme=scheme)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", PASSWORD)
    page.click("button.primary")
    page.wait_for_url(f"{live_server.url}/")
    page.errors = errors
    return page


def test_log_in_open_a_person_and_the_charts_render(browser, live_server, alice, peggy, shoot):
    page = log_in(browser, live_server)
    assert page.locator(".card-name").inner_text() == "Peggy (Nana)"
    page.click("text=Peggy (Nana)")
    # Each panel arrives by htmx and charts.js draws its figures: Plotly's svg appears.
    for panel in ("emotions", "patterns", "repetition", "calming"):
        page.wait_for_selector(f"#{panel} .chart svg.main-svg", timeout=20_000)
    assert page.locator("#emotions .chart-title").inner_text().startswith("How upset Peggy was")
    assert "Asked where she is" in page.locator("#repetition").inner_text()
    assert page.errors == []
    shoot(page, "person-desktop", full_page=True)
    page.close()


def test_on_a_phone_at_night(browser, live_server, alice, peggy, shoot):
    page = log_in(browser, live_server, viewport=PHONE, scheme="dark")
    shoot(page, "people-phone-dark")
    page.click("text=Peggy (Nana)")
    page.wait_for_selector("#emotions .chart svg.main-svg", timeout=20_000)
    # Large type: the body text is at least 18px on a narrow phone.
    size = page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)")
    assert size >= 18
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(18, 18, 18)"
    shoot(page, "person-phone-dark")
    page.locator("#emotions").scroll_into_view_if_needed()
    shoot(page, "feelings-phone-dark")
    page.close()


def test_acknowledge_an_alert(browser, live_server, alice, peggy, shoot):
    page = log_in(browser, live_server)
    page.click("text=Peggy (Nana)")
    alerts = page.locator("#alerts")
    alerts.locator("text=I'm looking into it").click()
    page.wait_for_selector("#alerts >> text=Someone is looking into it")
    assert "(Alice," in alerts.inner_text()
    shoot(page, "alert-looking-into")
    alerts.locator("button:has-text('Dealt with')").click()
    page.wait_for_selector("#alerts >> text=No alerts to look at", state="detached")
    page.wait_for_selector("#alerts li.alert-acknowledged")
    alert = Alert.objects.get(person=peggy, kind=Alert.Kind.ESCALATION)
    assert (alert.status, alert.acted_by_id) == ("acknowledged", alice.id)
    assert page.errors == []
    page.close()


def test_read_a_conversation_with_its_escalation(browser, live_server, alice, peggy, shoot):
    page = log_in(browser, live_server)
    page.click("text=Peggy (Nana)")
    page.locator("#sessions .session-row a").first.click()
    page.wait_for_selector("#transcript .msg-escalation")
    assert "Needed a person: may have fallen" in page.locator("#transcript").inner_text()
    shoot(page, "conversation", full_page=True)
    page.close()


def test_edit_the_profile_through_htmx(browser, live_server, alice, peggy, shoot):
    page = log_in(browser, live_server, viewport=PHONE)
    page.goto(f"{live_server.url}/people/{peggy.id}/profile/")
    section = page.locator("#profile-answers")
    section.locator("text=Change").click()
    # The form replaces the section in place: same URL, no page load.
    field = page.locator("#id_answer_location")
    field.wait_for()
    assert page.url.endswith("/profile/")
    field.fill("You live at Rosewood House, Peggy, and you are safe here.")
    shoot(page, "profile-edit-phone")
    page.locator("#profile-answers button.primary").click()
    page.wait_for_selector("#profile-answers >> text=You live at Rosewood House")
    peggy.refresh_from_db()
    assert peggy.caregiver_context["agreedAnswers"] == {
        "location": "You live at Rosewood House, Peggy, and you are safe here."
    }
    page.locator("#profile-people summary").click()
    page.fill("#id_person_name", "Sarah")
    page.fill("#id_relation", "daughter")
    page.locator("#profile-people button.primary").click()
    page.wait_for_selector("#profile-people >> text=Sarah is Peggy's daughter.")
    assert page.errors == []
    page.close()


def test_review_what_clara_remembers(browser, live_server, alice, peggy, shoot):
    from memory import store

    store.memory_upsert(
        namespace=store.person_namespace(peggy.id, "preference"),
        content="Peggy loves roses, especially the red ones.",
        type="preference",
        source="conversation_extraction",
        embed=False,
    )
    page = log_in(browser, live_server)
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"{live_server.url}/people/{peggy.id}/memories/")
    item = page.locator("li.memory").first
    assert "Not confirmed" in item.inner_text()
    shoot(page, "memories")
    item.locator("text=That's right").click()
    page.wait_for_selector("li.memory >> text=Confirmed")
    page.locator("li.memory button.danger").click()
    page.wait_for_selector("li.memory", state="detached")
    assert page.errors == []
    page.close()
