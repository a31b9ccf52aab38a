"""The whole URL matrix: every page, partial, export and POST, for every kind of visitor.

alice (team admin, may read conversations) may do everything; bob (family, no transcript
right) gets 403 where his role falls short; charlie (outsider) gets 404 everywhere and learns
nothing; an anonymous visitor is sent to the login page. Every allowed read leaves an audit row.

Two organisations: olga, a login of another organisation, gets 404 on every page of this one's
person even with a care-team row pointing at them; bea, a login of both, sees both people.
"""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, reverse
from django.utils import timezone

from dashboard import urls as dashboard_urls
from dashboard.models import AuditEvent, CareRole, CareTeamMembership
from memory.companion import firewall
from memory.conversations import tenancy
from memory.facts import store
from memory.insights.alerts import escalation_alert_raise
from memory.models import Alert, Memory, OrganisationMembership, RepetitionRecord, Session
from tests.dashboard.conftest import client_for, converse, login, make_person
from tests.support.otp import verified_client

pytestmark = pytest.mark.django_db

VIEW, TRANSCRIPTS, ADMIN, CONFIRM = "view", "transcripts", "admin", "confirm"

# route: (method, what the role needs); "name:post" is the POST of a page that also has a GET.
ROUTES = {
    "person": ("get", VIEW),
    "person_emotions": ("get", VIEW),
    "person_patterns": ("get", VIEW),
    "person_repetition": ("get", VIEW),
    "person_calming": ("get", VIEW),
    "person_sessions": ("get", VIEW),
    "person_alerts": ("get", VIEW),
    "session": ("get", VIEW),
    "session_transcript": ("get", TRANSCRIPTS),
    "alert_status": ("post", CONFIRM),  # claiming and resolving: who may act (rights.py)
    # Handover notes: those who answer alerts (family in a care home write on the notes panel).
    "alert_note": ("post", CONFIRM),
    "family_digest": ("post", VIEW),  # one's own weekly summary, from the family page
    "person_notes": ("get", VIEW),
    "person_notes:post": ("post", VIEW),  # family write notes too (for the whole team)
    "alert_routing": ("get", VIEW),
    "clinician_report": ("get", ADMIN),
    "alert_routing:post": ("post", VIEW),
    "team": ("get", ADMIN),
    "team_add": ("post", ADMIN),
    "team_member": ("post", ADMIN),
    "profile": ("get", VIEW),
    "profile_section": ("get", VIEW),
    "profile_section:post": ("post", VIEW),
    # Agreed answers, confirming what Clara heard, removing someone entered at set-up: what
    # Clara may say as true, so admins and care staff.
    "agreed_answer": ("get", CONFIRM),
    "agreed_answer:post": ("post", CONFIRM),
    "profile_memory": ("post", CONFIRM),
    "family_contact_remove": ("post", CONFIRM),
    # Remembering on the profile: every member reads the switch; switching it and forgetting
    # everything about someone (asking first) are for admins and care staff.
    "remembering": ("get", VIEW),
    "remembering:post": ("post", CONFIRM),
    "forget_about": ("get", CONFIRM),
    "forget_about:post": ("post", CONFIRM),
    "memories": ("get", VIEW),
    # Letting held-back text reach Clara: what Clara may hear as true, so admins and care staff.
    "held_back_approve": ("post", CONFIRM),
    "memory_action": ("get", VIEW),
    "memory_action:post": ("post", CONFIRM),  # confirming: admins and care staff
    "export_json": ("get", ADMIN),  # and the transcript right (alice has both)
    "export_csv": ("get", ADMIN),
    "export_readable": ("get", ADMIN),  # the readable record, like the CSV
    "export_readable_pdf": ("get", ADMIN),
    "erase": ("get", ADMIN),
    "erase:post": ("post", ADMIN),
}
# Pages about no one in particular (the organisation's audit has its own tests below).
# The e-mail's acknowledgement link names its alert by a signed token, not the person's id: its
# own tests (tests/dashboard/test_alert_delivery.py) cover login, outsiders and forgeries.
PUBLIC_OR_OWN = {
    "login",
    "logout",
    "two_factor",
    "two_factor_setup",
    "people",
    "home",  # everyone the login may see; tests/dashboard/test_home.py
    "false_alarms",  # the login's own people it is team admin of; test_false_alarms.py
    "organisation_audit",
    # An organisation's alert pages: tests/dashboard/test_alert_rights.py (outsiders, members).
    "organisation_alert_settings",
    "organisation_on_call",
    # tests/dashboard/test_alerts_without_a_person.py
    "organisation_alerts",
    "organisation_alert_act",
    # The organisation's homes and units (its admins only): tests/dashboard/test_units.py.
    "organisation_homes",
    "alert_ack",
    # Accounts: the organisation's invitations (its admins only) and a login's own password;
    # tests/dashboard/test_accounts.py covers outsiders, expiry and single use.
    "invitations",
    "invitation_revoke",
    "invitation_accept",
    "password_change",  # a login's own: tests/dashboard/test_accounts.py
    "password_reset",
    "password_reset_done",
    "password_reset_confirm",
    "password_reset_complete",
    "fhir_code_system",  # codes about no one: tests/dashboard/test_fhir.py
    # A login's own second factor (test_own_second_factor_pages_need_the_second_factor below;
    # tests/dashboard/test_two_factor.py for what they do).
    "two_factor_manage",
    "two_factor_recovery",
    "two_factor_replace",
}
OWN_SECOND_FACTOR = {
    "two_factor_manage": "get",
    "two_factor_recovery": "post",
    "two_factor_replace": "get",
    "two_factor_replace:post": "post",
}


def route(key: str, *, person, session, alert, memory) -> tuple[str, str, dict]:
    """(method, url, POST data) of a route, for this person's objects."""
    method, _ = ROUTES[key]
    name = key.split(":")[0]
    args: list = [person.id]
    data: dict = {}
    if name in ("session", "session_transcript"):
        args.append(session.id)
    elif name == "alert_status":
        args.append(alert.id)
        data = {"action": "claim"}
    elif name == "alert_routing":
        data = {"receives": "all", "by_email": "on"}
    elif name == "alert_note":
        args.append(alert.id)
        data = {"note": "Called her daughter, she is fine"}
    elif name == "family_digest":
        data = {"weekly_digest": "on"}
    elif name == "person_notes" and method == "post":
        data = {"text": "Slept badly, ask about the garden", "visibility": "team"}
    elif name == "team_add":
        dave = get_user_model().objects.filter(username="dave").first() or login("dave")
        OrganisationMembership.objects.get_or_create(user=dave, organisation=person.organisation)
        data = {"username": "dave", "role": "staff"}
    elif name == "team_member":
        member = CareTeamMembership.objects.filter(person=person, role="family").first()
        args.append(member.id)
        data = {"role": "staff"}
    elif name == "profile_section":
        args.append("topics")
        data = {"known_topics": "gardening\nthe sea", "avoid_topics": "hospitals"}
    elif name == "agreed_answer":
        args.append(RepetitionRecord.objects.filter(person=person).first().id)
        data = {"answer": "Sarah comes on Sunday."}
    elif name == "profile_memory":
        args += ["people", memory.id, "confirm"]
    elif name == "family_contact_remove":
        person.caregiver_context = {
            **person.caregiver_context,
            "familyContacts": [{"name": "Sarah", "relation": "daughter"}],
        }
        person.save(update_fields=["caregiver_context"])
        data = {"name": "Sarah"}
    elif name == "remembering":
        data = {"enabled": "off"}
    elif name == "forget_about":
        data = {"thing": "type:people", "confirm": "yes"}
    elif name == "memory_action":
        args += [memory.id, "confirm" if method == "post" else "edit"]
    elif name == "held_back_approve":
        held = store.memory_upsert(
            namespace=store.person_namespace(person.id, "people"),
            content="Tell her that lunch is at noon in the blue room",
            type="people",
        ).memory
        store.memory_confirm(held.id, user=None)
        person.refresh_from_db()
        data = {"item": next(i.digest for i in firewall.held_back_for(person))}
    elif name == "erase":
        data = {"confirm_name": person.display_name}
    return method, reverse(f"dashboard:{name}", args=args), data


def call(client: Client, name: str, objects: dict, **headers):
    method, url, data = route(name, **objects)
    if method == "get":
        return client.get(url, headers=headers)
    return client.post(url, data, headers=headers)


@pytest.fixture
def objects(person, session, alert, memory, alice, bob):
    # alice and bob are in the team (bob's membership is what team_member edits).
    return {"person": person, "session": session, "alert": alert, "memory": memory}


def test_every_person_route_is_in_the_matrix():
    names = {p.name for p in dashboard_urls.urlpatterns if isinstance(p, URLPattern)}
    assert names - PUBLIC_OR_OWN == {key.split(":")[0] for key in ROUTES}


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_team_admin_may_do_everything(name, objects, alice):
    response = call(client_for(alice), name, objects)
    method, _ = ROUTES[name]
    assert response.status_code == (200 if method == "get" else 302)


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_member_gets_403_where_the_role_falls_short(name, objects, bob):
    response = call(client_for(bob), name, objects)
    method, need = ROUTES[name]
    if need == VIEW:
        assert response.status_code == (200 if method == "get" else 302)
    else:
        assert response.status_code == 403
        if name != "alert_status":
            assert b"Peggy" not in response.content
        # A family member refused an alert's claim is told why on the alerts they may read.


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_outsider_gets_404_and_learns_nothing(name, objects, charlie):
    response = call(client_for(charlie), name, objects)
    assert response.status_code == 404
    assert b"Peggy" not in response.content
    assert b"Nana" not in response.content


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_outsider_htmx_request_gets_404_too(name, objects, charlie):
    response = call(client_for(charlie), name, objects, **{"HX-Request": "true"})
    assert response.status_code == 404


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_anonymous_is_sent_to_log_in(name, objects):
    method, url, _ = route(name, **objects)
    response = call(Client(), name, objects)
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('dashboard:login')}?next={url}"


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_outsider_changes_nothing_and_leaves_only_a_not_found_row(name, objects, charlie):
    before = set(AuditEvent.objects.values_list("id", flat=True))
    memberships = list(CareTeamMembership.objects.values_list("id", "role").order_by("id"))
    call(client_for(charlie), name, objects)
    # The probe is recorded (issue 30): the person is of charlie's own organisation.
    (row,) = AuditEvent.objects.exclude(id__in=before)
    assert (row.action, row.allowed, row.object_id, row.person_id) == (
        "person_not_found",
        False,
        str(objects["person"].id),
        objects["person"].id,
    )
    assert list(CareTeamMembership.objects.values_list("id", "role").order_by("id")) == memberships
    objects["alert"].refresh_from_db()
    assert objects["alert"].status == "open"
    objects["memory"].refresh_from_db()
    assert objects["memory"].confirmed is False
    objects["person"].refresh_from_db()  # still there, topics unchanged
    assert "knownTopics" not in objects["person"].caregiver_context


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_every_allowed_request_is_audited(name, objects, alice):
    call(client_for(alice), name, objects)
    row = AuditEvent.objects.order_by("-id").first()
    assert row.user == alice
    assert row.username == "alice"
    assert row.allowed is True
    if name == "erase:post":
        # The person is erased; the audit row stays, pointing at no one.
        assert row.action == "erase" and row.person_id is None
    else:
        assert row.person_id == objects["person"].id


@pytest.mark.parametrize("name", [n for n, (_, need) in ROUTES.items() if need != VIEW])
def test_a_refused_member_is_audited_as_refused(name, objects, bob):
    call(client_for(bob), name, objects)
    row = AuditEvent.objects.order_by("-id").first()
    assert (row.username, row.person_id, row.allowed) == ("bob", objects["person"].id, False)


def test_a_session_of_another_person_is_not_found_under_this_person(objects, alice, other_person):
    theirs = converse(other_person, timezone.now(), [("Hello", 0.1, "calm")])
    client = client_for(alice)
    for name in ("session", "session_transcript"):
        url = reverse(f"dashboard:{name}", args=[objects["person"].id, theirs.id])
        assert client.get(url).status_code == 404


def test_an_alert_of_another_person_cannot_be_changed_through_this_person(
    objects, alice, other_person
):
    theirs = converse(other_person, timezone.now(), [("Hello", 0.1, "calm")])
    their_alert, _ = escalation_alert_raise(person_id=other_person.id, session_id=theirs.id)
    url = reverse("dashboard:alert_status", args=[objects["person"].id, their_alert.id])
    response = client_for(alice).post(url, {"action": "claim"})
    assert response.status_code == 404
    their_alert.refresh_from_db()
    assert their_alert.status == "open"


# --- CSRF ---------------------------------------------------------------------------------

POSTS = sorted(name for name, (method, _) in ROUTES.items() if method == "post")


def _csrf_client(user) -> Client:
    # A team admin has passed the second factor (dashboard/two_factor.py).
    return verified_client(user, Client(enforce_csrf_checks=True))


@pytest.mark.parametrize("name", POSTS)
def test_every_post_refuses_a_missing_csrf_token(name, objects, alice):
    client = _csrf_client(alice)
    before = AuditEvent.objects.count()
    response = call(client, name, objects)
    assert response.status_code == 403
    assert AuditEvent.objects.count() == before  # refused before the view ran
    objects["alert"].refresh_from_db()
    assert objects["alert"].status == "open"


@pytest.mark.parametrize("name", POSTS)
def test_every_post_accepts_the_token_htmx_sends_in_its_header(name, objects, alice):
    client = _csrf_client(alice)
    page = client.get(reverse("dashboard:person", args=[objects["person"].id]))
    token = page.cookies["csrftoken"].value
    # base.html puts the token in hx-headers; htmx sends it as X-CSRFToken.
    assert b'"x-csrftoken": "' in page.content
    response = call(client, name, objects, **{"X-CSRFToken": token, "HX-Request": "true"})
    assert response.status_code in (200, 302)


def test_logout_is_a_post_with_csrf(alice):
    client = _csrf_client(alice)
    assert client.post(reverse("dashboard:logout")).status_code == 403
    assert client.get(reverse("dashboard:people")).status_code == 200


# --- Two organisations ----------------------------------------------------------------------------


@pytest.fixture
def other_org(db):
    return tenancy.organisation_get_or_create("riverside-care", name="Riverside Care")


@pytest.fixture
def person_b(other_org):
    """A person of the other organisation, with the same kinds of records as `person`."""
    person = make_person("Ivy", {"preferredName": "Ivy"}, organisation=other_org)
    converse(
        person,
        timezone.now() - timedelta(hours=3),
        [("I fell and I can't get up, help me", 0.9, "fearful"), ("Thank you", 0.3, "calm")],
    )
    return person


def _objects_of(person) -> dict:
    memory = store.memory_upsert(
        namespace=store.person_namespace(person.id, "people"),
        content="Ivy's son is Tom.",
        type="people",
        memory_key="people|person:tom|relationship",
        source=Memory.Source.CONVERSATION_EXTRACTION,
        embed=False,
    ).memory
    return {
        "person": person,
        "session": Session.objects.filter(person=person).order_by("-created_at").first(),
        "alert": Alert.objects.get(person=person, kind=Alert.Kind.ESCALATION),
        "memory": memory,
    }


@pytest.fixture
def olga(objects, other_org):
    """A login of the other organisation only, left in this person's care team as admin (as if
    moved between organisations): the care-team row alone must not let her in."""
    user = login("olga", other_org)
    CareTeamMembership.objects.create(
        user=user, person=objects["person"], role=CareRole.ADMIN, can_see_transcripts=True
    )
    return user


@pytest.fixture
def bea(objects, person_b, other_org):
    """A login of both organisations, team admin of a person in each."""
    user = login("bea", objects["person"].organisation, other_org)
    for someone in (objects["person"], person_b):
        CareTeamMembership.objects.create(
            user=user, person=someone, role=CareRole.ADMIN, can_see_transcripts=True
        )
    # team_member edits a family member of the team: one in the other person's team too.
    CareTeamMembership.objects.create(
        user=login("finn", other_org), person=person_b, role=CareRole.FAMILY
    )
    return user


@pytest.mark.parametrize("name", sorted(ROUTES))
@pytest.mark.parametrize("htmx", [False, True], ids=["page", "htmx"])
def test_a_login_of_another_organisation_gets_404_and_changes_nothing(name, htmx, objects, olga):
    before = set(AuditEvent.objects.values_list("id", flat=True))
    headers = {"HX-Request": "true"} if htmx else {}
    response = call(client_for(olga), name, objects, **headers)
    assert response.status_code == 404
    assert b"Peggy" not in response.content and b"Nana" not in response.content
    # Recorded in olga's own organisation's audit only, naming no one (issue 30).
    (row,) = AuditEvent.objects.exclude(id__in=before)
    assert (row.action, row.allowed, row.person_id) == ("person_not_found", False, None)
    assert row.organisation_id != objects["person"].organisation_id
    objects["alert"].refresh_from_db()
    assert objects["alert"].status == "open"
    objects["memory"].refresh_from_db()
    assert objects["memory"].confirmed is False
    objects["person"].refresh_from_db()
    assert "knownTopics" not in objects["person"].caregiver_context


def test_a_login_of_another_organisation_sees_no_one_of_this_one(objects, olga, person_b):
    CareTeamMembership.objects.create(user=olga, person=person_b, role=CareRole.FAMILY)
    content = client_for(olga).get(reverse("dashboard:people")).content
    assert b"Ivy" in content
    assert b"Peggy" not in content and b"Nana" not in content


def test_the_shift_view_of_another_organisation_shows_no_one_of_this_one(objects, olga, person_b):
    CareTeamMembership.objects.create(user=olga, person=person_b, role=CareRole.FAMILY)
    for headers in ({}, {"HX-Request": "true"}):
        response = client_for(olga).get(reverse("dashboard:home"), headers=headers)
        assert response.status_code == 200
        assert b"Ivy" in response.content
        assert b"Peggy" not in response.content and b"Nana" not in response.content
        assert str(objects["person"].id).encode() not in response.content


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_a_login_of_both_organisations_may_act_in_each(name, objects, person_b, bea):
    method, _ = ROUTES[name]
    expected = 200 if method == "get" else 302
    for objects_of_one in (objects, _objects_of(person_b)):
        response = call(client_for(bea), name, objects_of_one)
        assert response.status_code == expected, objects_of_one["person"]
        row = AuditEvent.objects.order_by("-id").first()
        assert (row.username, row.organisation_id) == (
            "bea",
            objects_of_one["person"].organisation_id,
        )


def test_a_login_of_both_organisations_sees_each_ones_people_under_its_name(
    objects, person_b, bea, other_person
):
    content = client_for(bea).get(reverse("dashboard:people")).content.decode()
    assert "Peggy (Nana)" in content and "Ivy" in content
    assert "Arthur" not in content  # in the same organisation, but not in her care team
    # Under each organisation's name, in order of name (after what needs a person, which
    # leads the page and names whoever has an alert).
    position = 0
    for text in ("<h2>Default organisation", "Peggy (Nana)", "<h2>Riverside Care", "Ivy"):
        position = content.index(text, position)


def test_leaving_an_organisation_takes_its_people_away_at_once(objects, person_b, bea):
    OrganisationMembership.objects.filter(user=bea, organisation=person_b.organisation).delete()
    client = client_for(bea)
    assert client.get(reverse("dashboard:person", args=[person_b.id])).status_code == 404
    assert client.get(reverse("dashboard:person", args=[objects["person"].id])).status_code == 200
    assert b"Ivy" not in client.get(reverse("dashboard:people")).content


@pytest.mark.parametrize("key", sorted(OWN_SECOND_FACTOR))
def test_own_second_factor_pages_need_the_second_factor(key, person):
    """Anonymous: to log in. A password alone (a device set up): to the code. No device: to
    set one up. Past the second factor: the page, about this login only."""
    from tests.support.otp import totp_device, verified_client

    method, url = OWN_SECOND_FACTOR[key], reverse(f"dashboard:{key.split(':')[0]}")
    data = {"token": "000000"} if method == "post" else {}

    def ask(client):
        return getattr(client, method)(url, data)

    anonymous = ask(Client())
    assert anonymous.status_code == 302
    assert anonymous["Location"].startswith(reverse("dashboard:login"))

    no_device = login("nodevice", person.organisation)
    response = ask(client_for(no_device))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("dashboard:two_factor_setup"))

    enrolled = login("enrolled", person.organisation)
    totp_device(enrolled)
    password_only = Client()
    password_only.force_login(enrolled)
    response = ask(password_only)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("dashboard:two_factor"))

    response = ask(verified_client(enrolled))
    assert response.status_code == (400 if key == "two_factor_replace:post" else 200)
