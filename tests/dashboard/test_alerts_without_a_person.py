"""No alert without an owner (issue 29): an urgent moment in a session with no person goes to
the organisation's on-call list (people and hours; its contact last), shows on the
organisation's alerts page for its staff and admins, climbs like any other and can be said to
be about someone later; a person the bot makes shows at once to the organisation's admins."""

import re
import uuid
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.urls import reverse
from django.utils import timezone

from dashboard.alerting import ladder, rights, shift
from dashboard.alerting.models import AlertStep, OnCall, OrganisationAlerting
from dashboard.models import AuditEvent, CareRole, CareTeamMembership
from memory.conversations import services, tenancy
from memory.models import Alert, Person
from tests.dashboard.conftest import client_for, login
from tests.support.smtp_server import SmtpServer

pytestmark = pytest.mark.django_db

NIGHT = datetime(2026, 3, 3, 2, 30, tzinfo=ZoneInfo("Europe/London"))  # 02:30, a Tuesday


def _named(user, first, last):
    user.first_name, user.last_name, user.email = first, last, f"{user.username}@care.example"
    user.save()
    return user


@pytest.fixture
def home(person, alice):
    """Peggy's organisation (a care home) with Nina on call at night, Dan by day, Olga its
    admin, Sam care staff of Peggy, Fay family of Peggy; its contact's address."""
    organisation = person.organisation
    organisation.contact_email = "office@care.example"
    organisation.save()
    OrganisationAlerting.objects.create(organisation=organisation, time_zone="Europe/London")
    nina = _named(login("nina"), "Nina", "Obi")
    dan = _named(login("dan"), "Dan", "Ray")
    olga = _named(login("olga", organisation, admin=True), "Olga", "Park")
    sam = _named(login("sam"), "Sam", "Lee")
    fay = _named(login("fay"), "Fay", "Hill")
    CareTeamMembership.objects.create(user=sam, person=person, role=CareRole.STAFF)
    CareTeamMembership.objects.create(user=fay, person=person, role=CareRole.FAMILY)
    OnCall.objects.create(
        organisation=organisation, user=nina, hours_start=time(20), hours_end=time(8)
    )
    OnCall.objects.create(
        organisation=organisation, user=dan, hours_start=time(8), hours_end=time(20)
    )
    return {"nina": nina, "dan": dan, "olga": olga, "sam": sam, "fay": fay}


def _anonymous_fall(organisation, at):
    """A session the bot opened without a person, and a fall in it."""
    session, _ = services.session_resolve(
        session_id=uuid.uuid4(), at=at, organisation_id=organisation.pk
    )
    services.exchange_record(
        session_id=session.id,
        user_message="I've fallen down and I can't get up",
        assistant_message="I'm getting someone for you right now.",
        at=at,
        organisation_id=organisation.pk,
    )
    return Alert.objects.get(session_id=session.id)


def _steps(alert):
    return [
        (s.kind, s.who, s.level) for s in AlertStep.objects.filter(alert=alert).order_by("at", "id")
    ]


def test_an_anonymous_fall_goes_to_whoever_is_on_call_then_the_contact(home, person, smtp_server):
    alert = _anonymous_fall(person.organisation, NIGHT)
    assert alert.person_id is None
    ladder.alert_deliver(alert_id=alert.id, now=NIGHT)
    assert smtp_server.recipients == [["nina@care.example"]]  # Dan is on by day
    assert ladder.alerts_sweep(now=NIGHT + timedelta(minutes=10))["escalated"] == 1
    assert smtp_server.recipients[-1] == ["office@care.example"]  # the contact, last
    # ...and it goes on: everyone who may act (the organisation's admin too) and the contact.
    assert ladder.alerts_sweep(now=NIGHT + timedelta(minutes=40))["escalated"] == 1
    assert sorted(r[0] for r in smtp_server.recipients[-3:]) == [
        "nina@care.example",
        "office@care.example",
        "olga@care.example",
    ]
    assert _steps(alert)[:3] == [
        ("sent", "Nina Obi", 0),
        ("escalated", "the organisation's contact", 1),
        ("sent", "the organisation's contact", 1),
    ]


def test_with_nobody_on_call_it_goes_to_the_contact_at_once(home, person, smtp_server):
    OnCall.objects.all().delete()
    alert = _anonymous_fall(person.organisation, NIGHT)
    ladder.alert_deliver(alert_id=alert.id, now=NIGHT)
    assert smtp_server.recipients == [["office@care.example"]]
    assert ("escalated", "nobody on call now", 0) not in _steps(alert)


def _link(smtp_server, address):
    index = smtp_server.recipients.index([address])
    text = SmtpServer.text(smtp_server.messages[index])
    url = next(line for line in text.splitlines() if "/alerts/ack/" in line).strip()
    return url.split("127.0.0.1:8000", 1)[1]


def test_the_on_call_nurse_claims_and_resolves_from_the_email_and_nobody_else_can_use_it(
    home, person, smtp_server
):
    alert = _anonymous_fall(person.organisation, NIGHT)
    ladder.alert_deliver(alert_id=alert.id, now=NIGHT)
    path = _link(smtp_server, "nina@care.example")
    assert client_for(home["sam"]).post(path, {"action": "claim"}).status_code == 403
    nina = client_for(home["nina"])
    assert nina.get(path).status_code == 200
    assert nina.post(path, {"action": "claim"}).status_code == 200
    done = nina.post(path, {"action": "resolve", "outcome": "other", "note": "Room 12, helped up"})
    assert done.status_code == 200
    alert.refresh_from_db()
    assert (alert.status, alert.resolved_by_id, alert.outcome_note) == (
        "resolved",
        home["nina"].id,
        "Room 12, helped up",
    )


def _page(slug):
    return reverse("dashboard:organisation_alerts", args=[slug])


def test_the_organisations_alerts_page_for_its_staff_and_admins_audited(home, person):
    alert = _anonymous_fall(person.organisation, timezone.now())
    slug = person.organisation.slug
    for who in ("sam", "olga", "nina"):
        response = client_for(home[who]).get(_page(slug))
        assert response.status_code == 200
        assert f'id="alert-{alert.id}"' in response.content.decode()
    assert client_for(home["fay"]).get(_page(slug)).status_code == 403  # family only
    elsewhere = tenancy.organisation_get_or_create("elsewhere")
    outsider = login("mallory", elsewhere, admin=True)
    assert client_for(outsider).get(_page(slug)).status_code == 404
    assert AuditEvent.objects.filter(
        user=home["sam"], action="view_org_alerts", organisation=person.organisation
    ).exists()


def test_staff_claim_resolve_and_say_whom_it_was_about_on_the_page(home, person, alice):
    alert = _anonymous_fall(person.organisation, timezone.now())
    slug = person.organisation.slug
    act = reverse("dashboard:organisation_alert_act", args=[slug, alert.id])
    sam = client_for(home["sam"])
    assert sam.post(act, {"action": "claim"}).status_code == 302
    assert sam.post(act, {"action": "attach", "person": str(person.id)}).status_code == 302
    alert.refresh_from_db()
    assert (alert.person_id, alert.status, alert.claimed_by_id) == (
        person.id,
        "claimed",
        home["sam"].id,
    )
    assert ("attached", "Sam Lee", 0) in _steps(alert)
    assert AlertStep.objects.get(alert=alert, kind="attached").note == "Peggy (Nana)"
    # Now on Peggy's page, for her team; no longer on the organisation's page.
    panel = client_for(alice).get(f"/people/{person.id}/alerts/", headers={"HX-Request": "true"})
    assert f'id="alert-{alert.id}"' in panel.content.decode()
    assert "said it was about Peggy (Nana)" in panel.content.decode()
    assert f'id="alert-{alert.id}"' not in sam.get(_page(slug)).content.decode()
    assert sam.post(act, {"action": "claim"}).status_code == 404  # not one with no person now


def test_saying_it_was_about_someone_of_another_organisation_is_as_for_an_unknown_one(
    home, person, other_person
):
    alert = _anonymous_fall(person.organisation, timezone.now())
    act = reverse("dashboard:organisation_alert_act", args=[person.organisation.slug, alert.id])
    elsewhere = tenancy.organisation_get_or_create("elsewhere")
    theirs = Person.objects.create(
        display_name="Zoe",
        organisation=elsewhere,
        created_at=timezone.now(),
        last_active_at=timezone.now(),
    )
    sam = client_for(home["sam"])
    for person_id in (theirs.id, uuid.uuid4(), other_person.id, "not-an-id"):
        # other_person: of the organisation, but not someone Sam cares for.
        response = sam.post(act, {"action": "attach", "person": str(person_id)})
        assert (
            response.status_code == 400 and "Choose whom it was about." in response.content.decode()
        )
    alert.refresh_from_db()
    assert alert.person_id is None


def test_family_cannot_act_on_it_and_another_organisation_cannot_reach_it(home, person):
    alert = _anonymous_fall(person.organisation, timezone.now())
    act = reverse("dashboard:organisation_alert_act", args=[person.organisation.slug, alert.id])
    assert client_for(home["fay"]).post(act, {"action": "claim"}).status_code == 403
    elsewhere = tenancy.organisation_get_or_create("elsewhere")
    boss = login("boss", elsewhere, admin=True)
    theirs = reverse("dashboard:organisation_alert_act", args=["elsewhere", alert.id])
    assert client_for(boss).post(theirs, {"action": "claim"}).status_code == 404
    alert.refresh_from_db()
    assert alert.status == "open"


def test_it_leads_the_shift_view_of_the_organisations_staff_not_of_family(home, person):
    alert = _anonymous_fall(person.organisation, timezone.now())
    for who, shown in (("sam", True), ("olga", True), ("nina", True), ("fay", False)):
        needs = shift.needs_a_person(user=home[who], now=timezone.now())
        assert (alert.id in [a.id for a in needs.waiting]) is shown, who
    content = client_for(home["sam"]).get(reverse("dashboard:home")).content.decode()
    assert "Someone not yet known" in content


def test_a_person_the_bot_makes_shows_at_once_to_the_organisations_admin(home, person):
    newcomer = uuid.uuid4()
    services.session_resolve(
        user_id=newcomer, display_name="Walter", organisation_id=person.organisation_id
    )
    content = client_for(home["olga"]).get(reverse("dashboard:people")).content.decode()
    assert "New, no care team yet" in content and "Walter" in content
    invite = (
        f"{reverse('dashboard:invitations', args=[person.organisation.slug])}?person={newcomer}"
    )
    assert invite in content
    form = client_for(home["olga"]).get(invite).content.decode()
    assert re.search(rf'value="{newcomer}"[^>]*checked', form)
    for who in ("sam", "fay", "nina"):  # not the organisation's admins
        assert (
            "Walter" not in client_for(home[who]).get(reverse("dashboard:people")).content.decode()
        )


def test_a_fall_of_someone_with_no_care_team_has_an_owner_all_the_same(home, person, smtp_server):
    newcomer = uuid.uuid4()
    session, _ = services.session_resolve(
        user_id=newcomer, display_name="Walter", at=NIGHT, organisation_id=person.organisation_id
    )
    services.exchange_record(
        session_id=session.id,
        user_message="I've fallen and I can't get up",
        assistant_message="I'm getting someone.",
        at=NIGHT,
        organisation_id=person.organisation_id,
    )
    alert = Alert.objects.get(person_id=newcomer)
    ladder.alert_deliver(alert_id=alert.id, now=NIGHT)
    # No team, no team admin: the on-call list at once.
    assert smtp_server.recipients == [["nina@care.example"]]
    assert rights.may_act_on(alert, home["nina"]) and rights.may_act_on(alert, home["olga"])
    assert not rights.may_act_on(alert, home["sam"])  # staff of another resident only
    path = _link(smtp_server, "nina@care.example")
    assert client_for(home["nina"]).post(path, {"action": "claim"}).status_code == 200


def test_the_admin_keeps_the_on_call_list(home, person):
    url = reverse("dashboard:organisation_on_call", args=[person.organisation.slug])
    olga = client_for(home["olga"])
    assert olga.post(url, {"login": "sam", "hours_start": "08:00"}).status_code == 400
    assert olga.post(url, {"login": "mallory"}).status_code == 400
    assert olga.post(url, {"login": "sam"}).status_code == 302  # at any hour
    assert OnCall.objects.filter(user=home["sam"], hours_start=None).exists()
    entry = OnCall.objects.get(user=home["dan"])
    assert olga.post(url, {"remove": str(entry.id)}).status_code == 302
    assert not OnCall.objects.filter(user=home["dan"]).exists()
    assert olga.post(url, {"remove": "x"}).status_code == 400
    assert client_for(home["sam"]).post(url, {"login": "fay"}).status_code == 403
    assert AuditEvent.objects.filter(action="edit_alerting", user=home["olga"]).count() == 2
    page = olga.get(
        reverse("dashboard:organisation_alert_settings", args=[person.organisation.slug])
    )
    assert "Sam Lee" in page.content.decode() and "at any hour" in page.content.decode()


def test_the_alerts_page_reads_the_peoples_names_only_when_an_alert_waits(home, person):
    # Every name of the organisation is decrypted and sorted for the "whom was it about"
    # choice: at a care group's size that was most of the page, with no alert to attach.
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    slug = person.organisation.slug
    olga = client_for(home["olga"])
    with CaptureQueriesContext(connection) as queries:
        response = olga.get(_page(slug))
    assert response.status_code == 200
    assert "No alert is waiting" in response.content.decode()
    assert not [q for q in queries.captured_queries if 'FROM "people"' in q["sql"]]
    alert = _anonymous_fall(person.organisation, timezone.now())
    page = olga.get(_page(slug)).content.decode()
    assert f'id="alert-{alert.id}"' in page
    assert f'<option value="{person.id}">' in page
