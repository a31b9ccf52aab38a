"""Urgent alerts in Debian's chromium, at 1440×900 and 390×844 (issue 29): family in a care
home cannot stop an escalation; a staff claim stops it and a claim resolved too late climbs
again; the outcome shows on the timeline. Real parts: the live server, a real SMTP server, the
ladder's own sweep (called with the time it would run at)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from dashboard.alerting import ladder
from dashboard.alerting.models import AlertRouting
from dashboard.models import CareRole, CareTeamMembership
from memory.models import Alert
from tests.dashboard.conftest import converse, login, make_person
from tests.e2e.test_accessibility import log_in, open_page, violations
from tests.e2e.test_dashboard_browser import PHONE

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1440, "height": 900}
VIEWPORTS = pytest.mark.parametrize(
    ("viewport", "scheme"), [(DESKTOP, "light"), (PHONE, "dark")], ids=["desktop", "phone-dark"]
)


@pytest.fixture
def care_home(smtp_server):
    """Peggy, who has just fallen, in a care home; Alice (team admin), Carol (care staff) and
    Bob (family, who chose to hear of urgent alerts)."""
    peggy = make_person("Nana", {"preferredName": "Peggy", "timezone": "Europe/London"})
    converse(
        peggy, timezone.now() - timedelta(minutes=2), [("Help, I've fallen over", 0.9, "fearful")]
    )
    peggy.organisation.contact_email = "office@care.example"
    peggy.organisation.save()
    people = {}
    for username, first, role in (
        ("alice", "Alice", CareRole.ADMIN),
        ("carol", "Carol", CareRole.STAFF),
        ("bob", "Bob", CareRole.FAMILY),
    ):
        user = login(username)
        user.first_name, user.last_name, user.email = first, "Lee", f"{username}@care.example"
        user.save()
        CareTeamMembership.objects.create(user=user, person=peggy, role=role)
        people[username] = user
    AlertRouting.objects.create(membership=people["bob"].care_memberships.get(), receives="urgent")
    alert = Alert.objects.get(person=peggy, kind=Alert.Kind.ESCALATION)
    return peggy, alert, people


def _fits_the_phone(page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def _open_alerts(page, live_server, peggy):
    page.goto(f"{live_server.url}/people/{peggy.id}/alerts/")
    page.wait_for_selector("#alerts")


@VIEWPORTS
def test_family_in_a_care_home_cannot_stop_an_escalation(
    browser, live_server, care_home, smtp_server, viewport, scheme
):
    peggy, alert, people = care_home
    start = timezone.now()
    ladder.alert_deliver(alert_id=alert.id, now=start)
    assert ["bob@care.example"] in smtp_server.recipients  # he chose to hear

    page = open_page(browser, live_server, viewport=viewport, scheme=scheme)
    log_in(page, live_server, "bob")
    _open_alerts(page, live_server, peggy)
    item = page.locator(f"#alert-{alert.id}")
    assert "Nobody has said they are dealing with it yet" in item.inner_text()
    assert "In a care home the staff on shift answer alerts" in item.inner_text()
    assert item.locator("button.claim").count() == 0
    # Pressing it anyway (an old page, a crafted form): refused, kindly, and nothing changes.
    status = page.evaluate(
        """async ([url, token]) => (await fetch(url, {method: 'POST',
              headers: {'X-CSRFToken': token, 'Content-Type': 'application/x-www-form-urlencoded'},
              body: 'action=claim'})).status""",
        [
            f"/people/{peggy.id}/alerts/{alert.id}/",
            page.evaluate("document.querySelector('[name=csrfmiddlewaretoken]').value"),
        ],
    )
    assert status == 403
    alert.refresh_from_db()
    assert (alert.status, alert.claimed_by_id) == ("open", None)
    # The escalation goes on: ten minutes on, the team's admins are told.
    assert ladder.alerts_sweep(now=start + timedelta(minutes=10))["escalated"] == 1
    page.reload()
    page.wait_for_selector(f"#alert-{alert.id}")
    page.locator(f"#alert-{alert.id} details.alert-timeline summary").click()
    assert (
        "Escalated to the team's admins: Alice Lee"
        in page.locator(f"#alert-{alert.id}").inner_text()
    )
    assert violations(page) == []
    if viewport is PHONE:
        _fits_the_phone(page)
    assert page.errors == []
    page.context.close()


@VIEWPORTS
def test_a_staff_claim_stops_it_a_late_resolution_climbs_again_and_the_outcome_shows(
    browser, live_server, care_home, smtp_server, viewport, scheme, shoot
):
    peggy, alert, people = care_home
    ladder.alert_deliver(alert_id=alert.id)
    page = open_page(browser, live_server, viewport=viewport, scheme=scheme)
    log_in(page, live_server, "carol")
    _open_alerts(page, live_server, peggy)
    page.locator(f"#alert-{alert.id} button.claim").click()
    page.wait_for_selector(f"#alert-{alert.id} >> text=You are dealing with it")
    page.wait_for_function(
        "document.getElementById('announce').textContent === 'You are dealing with it.'",
        timeout=10_000,
    )
    alert.refresh_from_db()
    claimed = alert.claimed_at
    assert alert.claimed_by_id == people["carol"].id
    # The claim stops the climb...
    assert ladder.alerts_sweep(now=claimed + timedelta(minutes=20))["escalated"] == 0
    # ...until it is not resolved in time: Carol is reminded, then it climbs again.
    assert ladder.alerts_sweep(now=claimed + timedelta(minutes=30))["reminded"] == 1
    assert smtp_server.recipients[-1] == ["carol@care.example"]
    assert ladder.alerts_sweep(now=claimed + timedelta(minutes=40))["escalated"] == 1
    assert smtp_server.recipients[-1] == ["alice@care.example"]
    # Carol resolves it, with what happened; the outcome is on the timeline.
    page.reload()
    item = page.locator(f"#alert-{alert.id}")
    item.locator("input[name=outcome][value=hurt_cared_for]").check()
    item.locator("button:has-text('Resolve')").click()
    page.wait_for_selector(f"#alert-{alert.id}.alert-resolved")
    page.locator(f"#alert-{alert.id} details.alert-timeline summary").click()
    text = page.locator(f"#alert-{alert.id}").inner_text()
    assert "Resolved by Carol Lee" in text and "hurt, care given" in text
    assert "Reminded Carol Lee" in text and "Escalated to the team's admins: Alice Lee" in text
    assert "Carol Lee resolved it: hurt, care given (from the dashboard)" in text
    assert violations(page) == []
    if viewport is PHONE:
        _fits_the_phone(page)
    shoot(page, f"alert-resolved-{'phone-dark' if viewport is PHONE else 'desktop'}")
    alert.refresh_from_db()
    assert (alert.status, alert.outcome) == ("resolved", "hurt_cared_for")
    assert ladder.alerts_sweep(now=claimed + timedelta(hours=3))["escalated"] == 0
    assert page.errors == []
    page.context.close()


@pytest.fixture
def night_shift(smtp_server):
    """An organisation whose bot talks with someone it has not named; Nina on call now."""
    import uuid

    from dashboard.alerting.models import OnCall
    from memory.conversations import services, tenancy

    organisation = tenancy.organisation_get_or_create("sunrise", name="Sunrise Care")
    organisation.contact_email = "office@sunrise.example"
    organisation.save()
    nina = login("nina", organisation)
    nina.first_name, nina.last_name, nina.email = "Nina", "Obi", "nina@sunrise.example"
    nina.save()
    OnCall.objects.create(organisation=organisation, user=nina)  # at any hour
    session, _ = services.session_resolve(session_id=uuid.uuid4(), organisation_id=organisation.pk)
    services.exchange_record(
        session_id=session.id,
        user_message="I've fallen down and I can't get up",
        assistant_message="I'm getting someone for you right now.",
        organisation_id=organisation.pk,
    )
    alert = Alert.objects.get(session_id=session.id)
    return organisation, nina, alert


@VIEWPORTS
def test_an_anonymous_sessions_fall_reaches_the_on_call_list_and_the_organisations_page(
    browser, live_server, night_shift, smtp_server, viewport, scheme, shoot
):
    from tests.support.smtp_server import SmtpServer

    organisation, nina, alert = night_shift
    assert alert.person_id is None
    ladder.alert_deliver(alert_id=alert.id)
    assert smtp_server.recipients == [["nina@sunrise.example"]]
    text = SmtpServer.text(smtp_server.messages[0])
    link = next(line for line in text.splitlines() if "/alerts/ack/" in line).strip()
    page = open_page(browser, live_server, viewport=viewport, scheme=scheme)
    log_in(page, live_server, "nina")
    # The people list leads with it, and links to the organisation's page.
    assert "Someone not yet known" in page.locator("#needs-a-person").inner_text()
    page.goto(live_server.url + link.split("127.0.0.1:8000", 1)[1])
    page.click('button:has-text("I\'m dealing with it")')
    page.wait_for_selector("text=You are dealing with it")
    page.goto(f"{live_server.url}/organisations/{organisation.slug}/alerts/")
    item = page.locator(f"#alert-{alert.id}")
    assert "You are dealing with it" in item.inner_text()
    assert violations(page) == []
    if viewport is PHONE:
        _fits_the_phone(page)
    shoot(page, f"org-alerts-{'phone-dark' if viewport is PHONE else 'desktop'}")
    item.locator("input[name=outcome][value=false_alarm]").check()
    item.locator("button:has-text('Resolve')").click()
    page.wait_for_selector(f"#alert-{alert.id}.alert-resolved")
    assert "false alarm" in page.locator(f"#alert-{alert.id}").inner_text()
    alert.refresh_from_db()
    assert (alert.status, alert.outcome, alert.resolved_by_id) == (
        "resolved",
        "false_alarm",
        nina.id,
    )
    assert page.errors == []
    page.context.close()


@VIEWPORTS
def test_a_new_person_is_visible_to_the_organisations_admin(browser, live_server, viewport, scheme):
    import uuid

    from memory.conversations import services, tenancy
    from tests.support.otp import totp_device

    organisation = tenancy.organisation_get_or_create("sunrise", name="Sunrise Care")
    olga = login("olga", organisation, admin=True)
    device = totp_device(olga)
    newcomer = uuid.uuid4()
    services.session_resolve(
        user_id=newcomer, display_name="Walter", organisation_id=organisation.pk
    )
    page = open_page(browser, live_server, viewport=viewport, scheme=scheme)
    log_in(page, live_server, "olga", device=device)
    panel = page.locator(f"#new-people-{organisation.slug}")
    assert "New, no care team yet" in panel.inner_text() and "Walter" in panel.inner_text()
    assert violations(page) == []
    if viewport is PHONE:
        _fits_the_phone(page)
    panel.locator("a:has-text('Invite someone to look after them')").click()
    page.wait_for_url(f"**/organisations/{organisation.slug}/invitations/?person={newcomer}")
    assert page.locator(f"input[name=people][value='{newcomer}']").is_checked()
    assert page.errors == []
    page.context.close()
