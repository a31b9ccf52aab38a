"""The family's page of a person (issue 32 item 1): written for family, in words, the weekly
summary's switch first, no staff controls; and handover notes, which are for staff unless their
writer marks them for family, kept from family wherever notes are read."""

import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from dashboard.alerting import delivery
from dashboard.alerting.models import AlertRouting, AlertStep
from dashboard.models import AuditEvent, CareRole, CareTeamMembership
from dashboard.notes import services as notes
from tests.dashboard.conftest import client_for, converse, login

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}
STAFF_HANDOVER = "Her blood pressure was high, the GP is coming at nine"
FAMILY_HANDOVER = "She is fine now, she enjoyed her tea in the garden"
STAFF_NOTE = "New tablets from Monday; watch for dizziness"
TEAM_NOTE = "Loved the photos of the allotment, bring more on Sunday"


def _page(client, person) -> str:
    response = client.get(reverse("dashboard:person", args=[person.id]))
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def sam(person):
    """Care staff, without the transcript right."""
    user = login("sam")
    CareTeamMembership.objects.create(user=user, person=person, role=CareRole.STAFF)
    return user


def test_family_get_a_page_written_for_them(person, bob, alert):
    page = _page(client_for(bob), person)
    for section in ("How Peggy has been", "What helps", "Coming up", "Notes for family"):
        assert section in page
    assert "Moments that needed a person" in page and "may have fallen" in page
    # The weekly summary's switch comes first, before anything else about her.
    assert page.index("Send me the weekly summary") < page.index("How Peggy has been")


def test_family_see_no_staff_controls_and_no_scores(person, bob, alert):
    page = _page(client_for(bob), person)
    for staff_only in (
        "Deal with alerts",
        'name="note"',  # the handover-note field
        "I&#x27;m dealing with it",
        "Clinician report",
        reverse("dashboard:team", args=[person.id]),
        reverse("dashboard:person_patterns", args=[person.id]),
        "of 100",
        "out of 100",
    ):
        assert staff_only not in page, staff_only


def test_staff_still_get_the_staff_page(person, alice):
    page = _page(client_for(alice), person)
    assert reverse("dashboard:person_alerts", args=[person.id]) in page
    assert "Send me the weekly summary" not in page


def test_the_same_kind_of_question_is_one_line_not_five(person, bob, sam):
    # Five things said again, each in its own words, that are no question Clara names.
    said = ["The tea is lovely", "My feet are cold", "The birds are loud", "I like the red", "Hm"]
    converse(
        person,
        timezone.now() - timedelta(hours=5),
        [(line, 0.3, "calm") for line in said for _ in range(2)],
    )
    family = _page(client_for(bob), person)
    assert "Said something else" not in family
    assert family.count("Came back to other things") == 1


def test_the_weekly_summary_is_switched_on_and_off_and_audited(person, bob):
    client = client_for(bob)
    url = reverse("dashboard:family_digest", args=[person.id])
    response = client.post(url, {"weekly_digest": "on"}, headers=HX)
    assert response.status_code == 200
    assert "Stop the weekly summary" in response.content.decode()
    routing = AlertRouting.objects.get(membership__user=bob)
    # Only the summary changed: in a care home family still hear of no alert until they choose.
    assert (routing.weekly_digest, routing.receives) == (True, "none")
    assert "Stop the weekly summary" in _page(client, person)
    response = client.post(url, {"weekly_digest": "off"})
    assert response.status_code == 302
    assert AlertRouting.objects.get(membership__user=bob).weekly_digest is False
    assert AuditEvent.objects.filter(user=bob, action="edit_digest", allowed=True).count() == 2


def test_a_bad_weekly_summary_choice_is_a_400_naming_the_field(person, bob):
    url = reverse("dashboard:family_digest", args=[person.id])
    response = client_for(bob).post(url, {"weekly_digest": "maybe"})
    assert response.status_code == 400
    assert json.loads(response.content)["field"] == "weekly_digest"
    assert not AlertRouting.objects.filter(membership__user=bob, weekly_digest=True).exists()


def test_an_outsider_cannot_switch_anyone_s_summary(person, charlie):
    url = reverse("dashboard:family_digest", args=[person.id])
    assert client_for(charlie).post(url, {"weekly_digest": "on"}).status_code == 404


# --- Handover notes: staff only unless marked for family ------------------------------------


def _handovers(alert, writer):
    delivery.note_add(alert=alert, user=writer, text=STAFF_HANDOVER)
    delivery.note_add(alert=alert, user=writer, text=FAMILY_HANDOVER, for_family=True)


def test_a_handover_note_is_for_staff_by_default(alert, sam):
    client_for(sam).post(
        reverse("dashboard:alert_note", args=[alert.person_id, alert.id]),
        {"note": STAFF_HANDOVER},
        headers=HX,
    )
    assert AlertStep.objects.get(kind="note").for_family is False


def test_the_writer_marks_a_handover_note_for_family_and_sees_who_reads_it(alert, sam):
    url = reverse("dashboard:alert_note", args=[alert.person_id, alert.id])
    content = (
        client_for(sam)
        .post(url, {"note": FAMILY_HANDOVER, "for_family": "1"}, headers=HX)
        .content.decode()
    )
    assert AlertStep.objects.get(kind="note").for_family is True
    # What the form tells its writer before and after ticking "Family may read it too".
    assert 'data-seen-by-off="Seen by: staff of Peggy&#x27;s care team"' in content
    assert 'data-seen-by="Seen by: staff of Peggy&#x27;s care team and family"' in content


def test_family_read_no_staff_handover_note_anywhere(person, alert, sam, bob):
    _handovers(alert, sam)
    staff_membership = CareTeamMembership.objects.get(user=sam, person=person)
    notes.note_add(person=person, membership=staff_membership, text=STAFF_NOTE, visibility="staff")
    notes.note_add(person=person, membership=staff_membership, text=TEAM_NOTE, visibility="team")
    client = client_for(bob)
    places = {
        "page": _page(client, person),
        "notes panel": client.get(
            reverse("dashboard:person_notes", args=[person.id]), headers=HX
        ).content.decode(),
        "alerts panel": client.get(
            reverse("dashboard:person_alerts", args=[person.id]), headers=HX
        ).content.decode(),
        "alerts page": client.get(
            reverse("dashboard:person_alerts", args=[person.id])
        ).content.decode(),
    }
    for where, content in places.items():
        assert STAFF_HANDOVER not in content, where
        assert FAMILY_HANDOVER in content, where
        assert STAFF_NOTE not in content, where
    assert TEAM_NOTE in places["page"] and TEAM_NOTE in places["notes panel"]
    # The exports and the clinician report, which hold every note, are not family's at all.
    for name in ("export_json", "export_csv", "clinician_report", "export_readable"):
        assert client.get(reverse(f"dashboard:{name}", args=[person.id])).status_code == 403


def test_staff_read_every_handover_note_and_whom_it_is_for(person, alert, sam):
    _handovers(alert, sam)
    notes = (
        client_for(sam)
        .get(reverse("dashboard:person_notes", args=[person.id]), headers=HX)
        .content.decode()
    )
    assert STAFF_HANDOVER in notes and FAMILY_HANDOVER in notes
    seen = "Seen by: staff of Peggy&#x27;s care team"
    assert notes.count(f'badge seen-by">{seen}</span>') == 1
    assert notes.count(f'"seen-by">{seen} and family</span>') == 1
    alerts = (
        client_for(sam)
        .get(reverse("dashboard:person_alerts", args=[person.id]), headers=HX)
        .content.decode()
    )
    assert "(for staff)" in alerts and "(family read it too)" in alerts


def test_family_may_not_write_handover_notes_in_a_care_home(alert, bob):
    url = reverse("dashboard:alert_note", args=[alert.person_id, alert.id])
    response = client_for(bob).post(url, {"note": "I called the home"}, headers=HX)
    assert response.status_code == 403
    assert not AlertStep.objects.filter(kind="note").exists()
    assert AuditEvent.objects.filter(user=bob, action="alert_status", allowed=False).exists()


def test_the_full_export_says_whom_each_handover_note_is_for(person, alert, alice, sam):
    _handovers(alert, sam)
    data = json.loads(
        client_for(alice).get(reverse("dashboard:export_json", args=[person.id])).content
    )
    assert [(n["text"], n["for_family"]) for n in data["alert_handover_notes"]] == [
        (STAFF_HANDOVER, False),
        (FAMILY_HANDOVER, True),
    ]


def test_coming_up_and_what_helps_are_in_family_words(person, bob):
    from memory.models import Commitment

    now = timezone.now()
    person.caregiver_context = {
        **person.caregiver_context,
        "familyContacts": [{"name": "Sarah", "relation": "daughter", "usualVisitDay": "Sunday"}],
        "knownTopics": ["the rose garden"],
        "agreedAnswers": {"location": "You are at Rosewood House, where you live now."},
    }
    person.save()
    for text, due in (
        ("call Ann on Sunday", now + timedelta(days=2)),
        ("tell Sarah “I want to go home”", now + timedelta(days=1)),  # quotes her: left out
        ("see the dentist", now - timedelta(days=3)),  # past: not coming up
    ):
        Commitment.objects.create(person=person, kind="plan", text=text, due_at=due, created_at=now)
    page = _page(client_for(bob), person)
    assert "Peggy plans to call Ann on Sunday" in page
    assert "I want to go home" not in page and "dentist" not in page
    assert "Sarah (daughter) usually visits on Sunday." in page
    assert "When Peggy asks where she is: “You are at Rosewood House" in page
    assert "Peggy enjoys talking about the rose garden." in page


def test_how_she_has_been_compares_the_week_in_words(person, bob):
    # The week before: calm. This week (the fixture): unsettled.
    converse(person, timezone.now() - timedelta(days=10), [("Lovely morning", 0.1, "calm")])
    page = _page(client_for(bob), person)
    assert "In the last 7 days Peggy has mostly been unsettled, over 2 conversations" in page
    assert "more unsettled than the week before" in page
