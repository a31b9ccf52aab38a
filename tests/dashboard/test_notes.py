"""Notes between caregivers on a person (issue 18 item 4): who and when, encrypted at rest,
read by whom the note says, beside the alerts' handover notes, in the export, gone on erasure."""

import json

import pytest
from django.db import connection
from django.urls import reverse

from dashboard.alerting import delivery
from dashboard.models import AuditEvent, CareRole, CareTeamMembership
from dashboard.notes.models import NOTE_MAX_CHARS, CaregiverNote
from memory import privacy
from tests.dashboard.conftest import client_for, login

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}
STAFF_NOTE = "Slept badly, the night nurse thinks the new tablets upset her"
TEAM_NOTE = "Loved the photos of the allotment, bring more on Sunday"


def _url(person) -> str:
    return reverse("dashboard:person_notes", args=[person.id])


@pytest.fixture
def sam(person):
    """Care staff, without the transcript right."""
    user = login("sam")
    CareTeamMembership.objects.create(user=user, person=person, role=CareRole.STAFF)
    return user


def _add(client, person, text, visibility="team", **headers):
    return client.post(_url(person), {"text": text, "visibility": visibility}, headers=headers)


def test_a_note_is_added_without_reloading_the_page_and_says_who_and_when(person, sam):
    response = _add(client_for(sam), person, STAFF_NOTE, "staff", **HX)
    assert response.status_code == 200
    content = response.content.decode()
    assert content.lstrip().startswith('<section class="panel" id="notes"')  # the panel only
    assert STAFF_NOTE in content
    assert "<strong>sam</strong>, today at" in content
    assert 'badge seen-by">Seen by: staff of Peggy&#x27;s care team</span>' in content
    assert 'data-announce-now="Note added."' in content
    note = CaregiverNote.objects.get()
    assert (note.author_name, note.visibility, note.person_id) == ("sam", "staff", person.id)


def test_a_plain_post_goes_back_to_the_person_page_at_the_notes(person, sam):
    response = _add(client_for(sam), person, TEAM_NOTE)
    assert response.status_code == 302
    assert response["Location"] == reverse("dashboard:person", args=[person.id]) + "#notes"
    assert "notes/" in client_for(sam).get(response["Location"]).content.decode()


def test_the_text_is_encrypted_at_rest_and_bound_to_its_row(person, sam):
    _add(client_for(sam), person, STAFF_NOTE, "staff")
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, text, author_name FROM caregiver_notes")
        (row_id, stored, author), *_ = cursor.fetchall()
    assert STAFF_NOTE not in stored and "tablets" not in stored
    assert stored.startswith("enc:")
    assert author == "sam"
    # Moved onto another note's row, the ciphertext refuses to decrypt.
    other = CaregiverNote.objects.create(person=person, author_name="x", text="another note")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE caregiver_notes SET text = %s WHERE author_name = 'x'", [stored])
    with pytest.raises(Exception, match="row"):
        CaregiverNote.objects.get(id=other.id)


def test_family_read_notes_for_the_whole_team_but_not_staff_only_ones(person, sam, bob):
    _add(client_for(sam), person, STAFF_NOTE, "staff")
    _add(client_for(sam), person, TEAM_NOTE, "team")
    family = client_for(bob).get(_url(person), headers=HX).content.decode()
    assert TEAM_NOTE in family and STAFF_NOTE not in family
    assert 'name="visibility"' not in family  # family have no choice to make
    staff = client_for(sam).get(_url(person), headers=HX).content.decode()
    assert TEAM_NOTE in staff and STAFF_NOTE in staff


def test_a_family_note_is_for_the_whole_team_whatever_is_sent(person, sam, bob):
    _add(client_for(bob), person, TEAM_NOTE, "staff")
    assert CaregiverNote.objects.get().visibility == "team"
    assert TEAM_NOTE in client_for(bob).get(_url(person)).content.decode()


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"text": ""}, "Write a note"),
        ({"text": "   "}, "Write a note"),
        ({"text": "x" * (NOTE_MAX_CHARS + 1)}, "Write a note"),
        ({"text": "fine", "visibility": "everyone-in-town"}, "Choose who may read"),
    ],
    ids=["empty", "blank", "too long", "unknown visibility"],
)
def test_bad_input_is_a_400_naming_what_to_fix_and_stores_nothing(person, sam, data, words):
    response = client_for(sam).post(_url(person), data, headers=HX)
    assert response.status_code == 400
    content = response.content.decode()
    assert 'role="alert"' in content and words in content
    assert not CaregiverNote.objects.exists()


def test_handover_notes_of_the_alerts_are_in_the_timeline_with_a_link(person, alert, sam, alice):
    delivery.note_add(alert=alert, user=alice, text="Called her daughter, she is fine")
    _add(client_for(sam), person, TEAM_NOTE)
    content = client_for(sam).get(_url(person), headers=HX).content.decode()
    assert "Called her daughter, she is fine" in content
    assert f"#alert-{alert.id}" in content and "handover note on the alert" in content
    # Newest first: sam's note was written after the handover.
    assert content.index(TEAM_NOTE) < content.index("Called her daughter")


def test_reading_and_writing_are_audited(person, sam):
    client = client_for(sam)
    client.get(_url(person), headers=HX)
    _add(client, person, TEAM_NOTE, **HX)
    actions = list(
        AuditEvent.objects.filter(person_id=person.id)
        .order_by("id")
        .values_list("action", flat=True)
    )
    assert actions[-2:] == ["view_notes", "add_note"]


def test_the_person_page_loads_the_notes_panel(person, sam):
    content = client_for(sam).get(reverse("dashboard:person", args=[person.id])).content.decode()
    assert f'hx-get="{_url(person)}"' in content and 'id="notes"' in content


def test_the_full_export_holds_every_note(person, alert, sam, alice):
    _add(client_for(sam), person, STAFF_NOTE, "staff")
    delivery.note_add(alert=alert, user=alice, text="Called her daughter, she is fine")
    response = client_for(alice).get(reverse("dashboard:export_json", args=[person.id]))
    data = json.loads(response.content)
    assert [(n["author"], n["visibility"], n["text"]) for n in data["caregiver_notes"]] == [
        ("sam", "staff", STAFF_NOTE)
    ]
    assert [n["text"] for n in data["alert_handover_notes"]] == ["Called her daughter, she is fine"]


def test_erasing_the_person_erases_their_notes(person, sam):
    _add(client_for(sam), person, STAFF_NOTE, "staff")
    privacy.person_erase(person.id)
    assert not CaregiverNote.objects.exists()


def test_an_outsider_cannot_add_a_note(person, charlie):
    response = _add(client_for(charlie), person, TEAM_NOTE, **HX)
    assert response.status_code == 404
    assert not CaregiverNote.objects.exists()


def test_notes_and_timelines_name_their_writer_as_named_now(person, alert, sam):
    """Written while the login had no name (it said "sam"), read once it has one: the name."""
    sam.first_name = ""
    sam.save()
    _add(client_for(sam), person, TEAM_NOTE)
    delivery.note_add(alert=alert, user=sam, text="Called her daughter, she is fine")
    assert CaregiverNote.objects.get().author_name == "sam"
    sam.first_name, sam.last_name = "Sam", "Okafor"
    sam.save()
    notes = client_for(sam).get(_url(person), headers=HX).content.decode()
    assert notes.count("<strong>Sam Okafor</strong>") == 2 and "<strong>sam</strong>" not in notes
    alerts = (
        client_for(sam)
        .get(reverse("dashboard:person_alerts", args=[person.id]), headers=HX)
        .content.decode()
    )
    assert "Sam Okafor wrote" in alerts and "sam wrote" not in alerts
