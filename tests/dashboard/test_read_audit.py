"""Every dashboard read is in the audit, and only once (issue 30, step 4).

An outsider's 404 probe of a person page is recorded (the answer stays that of an unknown id);
the people list, an organisation's audit and its invitations pages write a read row; a
background poll (the alerts panel's, the people list's) writes nothing after the read of the page
that opened it, but a poll with no opening read in this login is audited like a read.
"""

import re
import uuid
from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from dashboard.models import AuditAction, AuditEvent, CareRole, CareTeamMembership
from memory.conversations import tenancy
from tests.dashboard.conftest import client_for, login, make_person

pytestmark = pytest.mark.django_db

POLL = {"HX-Request": "true", "X-Clara-Poll": "1"}
# What the person page's panel sends when the page opens it (hx-trigger="load").
OPENING = {"HX-Request": "true", "HX-Trigger": "alerts"}


def _page(response) -> bytes:
    """The answer without its CSRF tokens (64 characters, masked anew on every response)."""
    return re.sub(rb"[A-Za-z0-9]{64}", b"", response.content)


def _rows(**filters) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(**filters).order_by("at", "id"))


def _person_url(person_id) -> str:
    return reverse("dashboard:person", args=[person_id])


def _alerts_url(person) -> str:
    return reverse("dashboard:person_alerts", args=[person.id])


@pytest.fixture
def other_org(db):
    return tenancy.organisation_get_or_create("riverside-care", name="Riverside Care")


# --- 404 probes ----------------------------------------------------------------------------


def test_a_member_outside_the_care_team_probing_a_person_is_recorded(
    charlie_client, charlie, person
):
    unknown = charlie_client.get(_person_url(uuid.uuid4()))
    probe = charlie_client.get(_person_url(person.id))
    # The answer is exactly that of an id that is no one's.
    assert probe.status_code == unknown.status_code == 404
    assert _page(probe) == _page(unknown)
    (row,) = _rows(user=charlie, object_id=str(person.id))
    assert (row.action, row.allowed) == (AuditAction.PERSON_NOT_FOUND, False)
    # Charlie's own organisation's person: named, so its admin sees who tried whom.
    assert (row.organisation_id, row.person_id) == (person.organisation_id, person.id)


def test_another_organisations_person_and_an_unknown_id_are_recorded_alike(person, other_org):
    stranger = login("stranger", other_org)
    theirs = make_person("Rita", organisation=other_org)
    CareTeamMembership.objects.create(user=stranger, person=theirs, role=CareRole.ADMIN)
    client = client_for(stranger)
    unknown_id = uuid.uuid4()
    probe = client.get(reverse("dashboard:person_emotions", args=[person.id]))
    unknown = client.get(reverse("dashboard:person_emotions", args=[unknown_id]))
    assert probe.status_code == unknown.status_code == 404
    assert _page(probe) == _page(unknown)
    rows = _rows(user=stranger, action=AuditAction.PERSON_NOT_FOUND)
    assert [(r.object_id, r.organisation_id, r.person_id, r.allowed) for r in rows] == [
        (str(person.id), other_org.pk, None, False),
        (str(unknown_id), other_org.pk, None, False),
    ]
    # Nothing of it reaches the person's organisation (nor names the stranger there).
    assert not AuditEvent.objects.filter(organisation_id=person.organisation_id, user=stranger)


def test_the_organisations_audit_page_shows_a_probe_as_not_found(charlie_client, person):
    charlie_client.get(_person_url(person.id))
    boss = login("boss", person.organisation, admin=True)
    page = client_for(boss).get(
        reverse("dashboard:organisation_audit", args=[person.organisation.slug])
    )
    assert page.status_code == 200
    rows = [r for r in page.context["rows"] if r.who == "charlie"]
    assert [(r.what, r.outcome) for r in rows] == [
        ("asked for a person not theirs to see", "not found")
    ]


# --- Pages of the organisation and the people list -----------------------------------------


def test_the_people_list_writes_one_read_row_per_organisation_shown(alice_client, alice, person):
    assert alice_client.get(reverse("dashboard:people")).status_code == 200
    (row,) = _rows(user=alice, action=AuditAction.VIEW_PEOPLE)
    assert (row.organisation_id, row.person_id, row.allowed) == (
        person.organisation_id,
        None,
        True,
    )


def test_the_people_lists_poll_writes_nothing_after_the_page_opened(alice_client, alice, person):
    alice_client.get(reverse("dashboard:people"))
    for _ in range(3):
        assert alice_client.get(reverse("dashboard:people"), headers=POLL).status_code == 200
    assert len(_rows(user=alice, action=AuditAction.VIEW_PEOPLE)) == 1


def test_a_search_typed_into_the_people_list_writes_nothing_after_the_page_opened(
    alice_client, alice, person
):
    alice_client.get(reverse("dashboard:people"))
    typed = {"HX-Request": "true", "X-Clara-Part": "1"}
    for letters in ("P", "Pe", "Peg"):
        response = alice_client.get(reverse("dashboard:people"), {"q": letters}, headers=typed)
        assert response.status_code == 200
    assert len(_rows(user=alice, action=AuditAction.VIEW_PEOPLE)) == 1
    # Without the page's read on record, a search is audited like any read.
    AuditEvent.objects.all().delete()
    alice_client.get(reverse("dashboard:people"), {"q": "Peg"}, headers=typed)
    assert len(_rows(user=alice, action=AuditAction.VIEW_PEOPLE)) == 1


def test_the_audit_page_writes_a_read_row(person):
    boss = login("boss", person.organisation, admin=True)
    client = client_for(boss)
    assert (
        client.get(
            reverse("dashboard:organisation_audit", args=[person.organisation.slug])
        ).status_code
        == 200
    )
    (row,) = _rows(user=boss, action=AuditAction.VIEW_AUDIT)
    assert (row.organisation_id, row.person_id, row.allowed) == (
        person.organisation_id,
        None,
        True,
    )
    # The next look at the audit shows the previous one.
    page = client.get(reverse("dashboard:organisation_audit", args=[person.organisation.slug]))
    assert "read the organisation&#x27;s audit" in page.content.decode()


def test_the_invitations_page_writes_a_read_row(person):
    boss = login("boss", person.organisation, admin=True)
    response = client_for(boss).get(
        reverse("dashboard:invitations", args=[person.organisation.slug])
    )
    assert response.status_code == 200
    (row,) = _rows(user=boss, action=AuditAction.VIEW_INVITATIONS)
    assert (row.organisation_id, row.person_id, row.allowed) == (
        person.organisation_id,
        None,
        True,
    )


# --- The alerts panel's poll ---------------------------------------------------------------


def test_the_alerts_panel_is_recorded_when_the_page_opens_it_and_not_per_poll(
    alice_client, alice, person
):
    alice_client.get(_person_url(person.id))
    assert alice_client.get(_alerts_url(person), headers=OPENING).status_code == 200
    for _ in range(5):
        response = alice_client.get(_alerts_url(person), headers=POLL)
        assert response.status_code == 200
        assert b'id="alerts"' in response.content
    (row,) = _rows(user=alice, action=AuditAction.VIEW_ALERTS)
    assert (row.person_id, row.allowed) == (person.id, True)


def test_a_poll_without_an_opening_read_in_this_login_is_audited(alice, person):
    # The header is the browser's to send: a hand-made "poll" with no page opened is a read.
    client = client_for(alice)
    assert client.get(_alerts_url(person), headers=POLL).status_code == 200
    assert client.get(_alerts_url(person), headers=POLL).status_code == 200
    assert len(_rows(user=alice, action=AuditAction.VIEW_ALERTS)) == 1
    # A new login opens a new page: its first read is recorded again.
    with time_machine.travel(timezone.now() + timedelta(minutes=5)):
        client_for(alice).get(_alerts_url(person), headers=POLL)
    assert len(_rows(user=alice, action=AuditAction.VIEW_ALERTS)) == 2


def test_an_outsiders_polls_are_recorded_once_per_login(charlie_client, charlie, person):
    for _ in range(3):
        assert charlie_client.get(_alerts_url(person), headers=POLL).status_code == 404
    assert len(_rows(user=charlie, action=AuditAction.PERSON_NOT_FOUND)) == 1


# --- One row per page view (issue 32) -----------------------------------------------------------

PART = {"HX-Request": "true", "X-Clara-Part": "1"}
PANELS = (
    "person_alerts",
    "person_notes",
    "person_emotions",
    "person_repetition",
    "person_calming",
    "person_patterns",
    "person_sessions",
)


def test_a_person_page_and_the_panels_it_loads_are_one_row(alice, person):
    client = client_for(alice)
    before = AuditEvent.objects.count()
    assert client.get(_person_url(person.id)).status_code == 200
    for panel in PANELS:
        response = client.get(reverse(f"dashboard:{panel}", args=[person.id]), headers=PART)
        assert response.status_code == 200
    # The alerts panel's minute poll after it: nothing more either.
    assert client.get(_alerts_url(person), headers=POLL).status_code == 200
    (row,) = AuditEvent.objects.order_by("id")[before:]
    assert (row.action, row.person_id) == (AuditAction.VIEW_PERSON, person.id)


def test_a_panel_opened_on_its_own_is_its_own_row(alice, person):
    client = client_for(alice)
    client.get(_person_url(person.id))
    # Without the header (a bookmark, a link to the panel's page): a read of its own.
    client.get(reverse("dashboard:person_emotions", args=[person.id]))
    assert len(_rows(user=alice, action=AuditAction.VIEW_EMOTIONS)) == 1


def test_the_part_header_stands_only_for_a_page_read_in_the_last_minutes(alice, person):
    client = client_for(alice)
    url = reverse("dashboard:person_emotions", args=[person.id])
    # No page read in this login: the header alone is not trusted.
    client.get(url, headers=PART)
    assert len(_rows(user=alice, action=AuditAction.VIEW_EMOTIONS)) == 1
    client.get(_person_url(person.id))
    with time_machine.travel(timezone.now() + timedelta(minutes=6)):
        client.get(url, headers=PART)
    assert len(_rows(user=alice, action=AuditAction.VIEW_EMOTIONS)) == 2
