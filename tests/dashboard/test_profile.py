"""The profile caregivers curate (caregiver_context and memories), the review, export, erasure."""

import json

import pytest
from django.urls import reverse

from dashboard.models import AuditEvent, CareTeamMembership
from memory.models import Memory, Person, Session

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


def section_url(person, section: str) -> str:
    return reverse("dashboard:profile_section", args=[person.id, section])


def memory_url(person, memory, action: str) -> str:
    return reverse("dashboard:memory_action", args=[person.id, memory.id, action])


# --- caregiver_context ---------------------------------------------------------------------


def test_edit_form_comes_as_a_fragment_for_htmx_and_in_the_page_without(alice_client, person):
    fragment = alice_client.get(section_url(person, "name") + "?edit=1", headers=HX)
    assert fragment.content.lstrip().startswith(b'<section class="panel" id="profile-name">')
    assert b'name="preferred_name"' in fragment.content and b"<html" not in fragment.content
    page = alice_client.get(reverse("dashboard:profile", args=[person.id]) + "?edit=name")
    assert b'name="preferred_name"' in page.content and b"<html" in page.content


def test_saving_the_name_keeps_the_other_settings(bob_client, person):
    response = bob_client.post(
        section_url(person, "name"), {"preferred_name": "Peg", "pronouns": "she/her"}, headers=HX
    )
    assert response.status_code == 200
    assert b"Likes to be called <strong>Peg</strong> (she/her)." in response.content
    assert b'name="preferred_name"' not in response.content  # back to showing it
    person.refresh_from_db()
    assert person.caregiver_context["preferredName"] == "Peg"
    assert person.caregiver_context["timezone"] == "Europe/London"


def test_topics_are_one_per_line_without_blanks_or_repeats(alice_client, person):
    alice_client.post(
        section_url(person, "topics"),
        {
            "known_topics": "the rose garden\n\n  baking scones \nthe rose garden",
            "avoid_topics": "",
        },
        headers=HX,
    )
    person.refresh_from_db()
    assert person.caregiver_context["knownTopics"] == ["the rose garden", "baking scones"]
    assert "avoidTopics" not in person.caregiver_context


def test_too_many_topics_are_refused_and_nothing_changes(alice_client, person):
    before = dict(person.caregiver_context)
    response = alice_client.post(
        section_url(person, "topics"),
        {"known_topics": "\n".join(f"topic {n}" for n in range(31)), "avoid_topics": "x"},
        headers=HX,
    )
    assert response.status_code == 400
    assert b"At most 30" in response.content
    person.refresh_from_db()
    assert person.caregiver_context == before


def test_agreed_answers_are_kept_per_question_type(alice_client, person):
    alice_client.post(
        section_url(person, "answers"),
        {
            "answer_location": "You are at home in Rosewood House, and you are safe.",
            "answer_time": "",
            "answer_general": "not a question type caregivers answer",
        },
        headers=HX,
    )
    person.refresh_from_db()
    assert person.caregiver_context["agreedAnswers"] == {
        "location": "You are at home in Rosewood House, and you are safe."
    }


def test_an_unknown_profile_section_is_not_found(alice_client, person):
    assert alice_client.get(section_url(person, "secrets")).status_code == 404


def test_a_saved_profile_without_htmx_redirects_to_the_section(alice_client, person):
    response = alice_client.post(section_url(person, "name"), {"preferred_name": "Peg"})
    assert response.status_code == 302
    assert response["Location"].endswith("/profile/#profile-name")


# --- People in their life and routines: memories entered by caregivers -------------------------


def test_a_person_in_their_life_is_a_confirmed_caregiver_memory(alice, alice_client, person):
    response = alice_client.post(
        section_url(person, "people"),
        {"name": "Sarah", "relation": "daughter", "note": "Visits on Sundays"},
        headers=HX,
    )
    assert b"Sarah is Peggy&#x27;s daughter. Visits on Sundays." in response.content
    memory = Memory.objects.get(person=person, type="people", status="active")
    assert (memory.source, memory.confirmed, memory.confirmed_by) == ("caregiver", True, alice)
    assert memory.memory_key == "people|person:sarah|relationship"
    assert memory.entity_refs == ["person:sarah"]


def test_a_routine_is_a_confirmed_caregiver_memory(alice_client, person):
    alice_client.post(section_url(person, "routines"), {"routine": "Lunch at half past twelve"})
    memory = Memory.objects.get(person=person, type="routine")
    assert (memory.content, memory.confirmed) == ("Lunch at half past twelve", True)


def test_an_empty_routine_is_refused(alice_client, person):
    response = alice_client.post(section_url(person, "routines"), {"routine": "  "}, headers=HX)
    assert response.status_code == 400
    assert not Memory.objects.filter(person=person).exists()


# --- The memory review ----------------------------------------------------------------------


def test_review_marks_what_is_not_confirmed(alice_client, person, memory):
    content = alice_client.get(reverse("dashboard:memories", args=[person.id])).content.decode()
    assert "Sarah is Peggy&#x27;s daughter." in content
    assert "Not confirmed</span>" in content
    assert "People in Peggy&#x27;s life" in content
    assert "Heard in a conversation" in content


def test_confirm_records_who(alice, alice_client, person, memory):
    # (Family may not confirm: tests/dashboard/test_fact_roles.py.)
    response = alice_client.post(memory_url(person, memory, "confirm"), headers=HX)
    assert b"Confirmed</span>" in response.content
    memory.refresh_from_db()
    assert (memory.confirmed, memory.confirmed_by) == (True, alice)


def test_pin_and_unpin(alice_client, person, memory):
    alice_client.post(memory_url(person, memory, "pin"), headers=HX)
    memory.refresh_from_db()
    assert memory.pinned is True
    alice_client.post(memory_url(person, memory, "unpin"), headers=HX)
    memory.refresh_from_db()
    assert memory.pinned is False


def test_edit_keeps_the_old_version_as_history_and_confirms_the_new(alice_client, person, memory):
    form = alice_client.get(memory_url(person, memory, "edit"), headers=HX)
    assert b"Sarah is Peggy&#x27;s daughter." in form.content and b"<textarea" in form.content
    response = alice_client.post(
        memory_url(person, memory, "edit"),
        {"content": "Sarah is Peggy's youngest daughter."},
        headers=HX,
    )
    assert b"youngest daughter" in response.content
    live = Memory.objects.get(person=person, status="active")
    assert (live.content, live.confirmed, live.supersedes_id) == (
        "Sarah is Peggy's youngest daughter.",
        True,
        memory.id,
    )


def test_forget_removes_it_and_htmx_gets_nothing_back(alice_client, person, memory):
    response = alice_client.post(memory_url(person, memory, "forget"), headers=HX)
    assert response.status_code == 200 and response.content == b""
    assert not Memory.objects.filter(person=person).exists()


def test_a_memory_of_another_person_cannot_be_touched(alice_client, person, other_person):
    from memory.facts import store

    theirs = store.memory_upsert(
        namespace=store.person_namespace(other_person.id, "people"),
        content="Paul is Arthur's son.",
        type="people",
        embed=False,
    ).memory
    response = alice_client.post(memory_url(person, theirs, "forget"), headers=HX)
    assert response.status_code == 404
    assert Memory.objects.filter(id=theirs.id).exists()


def test_unknown_memory_action_is_not_found(alice_client, person, memory):
    assert alice_client.post(memory_url(person, memory, "delete-all")).status_code == 404
    assert alice_client.get(memory_url(person, memory, "forget")).status_code == 404


# --- Export ---------------------------------------------------------------------------------


def test_json_export_is_a_download_of_everything_and_is_audited(alice_client, person, memory):
    response = alice_client.get(reverse("dashboard:export_json", args=[person.id]))
    assert response["Content-Disposition"] == f'attachment; filename="clara-{person.id}.json"'
    data = json.loads(response.content)
    assert data["person"]["display_name"] == "Nana"
    assert [m["content"] for m in data["memories"]] == ["Sarah is Peggy's daughter."]
    assert len(data["messages"]) == 14
    assert AuditEvent.objects.filter(action="export_json", person=person, username="alice").exists()


def test_csv_export_has_a_row_per_memory(alice_client, person, memory):
    response = alice_client.get(reverse("dashboard:export_csv", args=[person.id]))
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    lines = response.content.decode().strip().splitlines()
    assert lines[0].startswith('"id","namespace","key","type","content"')
    assert len(lines) == 2 and "Sarah is Peggy's daughter." in lines[1]


# --- Erasure --------------------------------------------------------------------------------


def test_erase_needs_the_name_typed(alice_client, person):
    response = alice_client.post(
        reverse("dashboard:erase", args=[person.id]), {"confirm_name": "Grandad"}
    )
    assert response.status_code == 400
    assert b"Type Nana exactly to erase." in response.content
    assert Person.objects.filter(id=person.id).exists()


def test_erase_removes_the_person_and_their_team_and_keeps_an_anonymous_audit(
    alice_client, person, memory, bob
):
    alice_client.get(reverse("dashboard:person", args=[person.id]))
    response = alice_client.post(
        reverse("dashboard:erase", args=[person.id]), {"confirm_name": " nana "}, follow=True
    )
    assert response.redirect_chain[-1][0] == reverse("dashboard:people")
    assert b"Nana and everything Clara knew about them are erased." in response.content
    assert not Person.objects.filter(id=person.id).exists()
    assert not Session.objects.filter(person_id=person.id).exists()
    assert not CareTeamMembership.objects.filter(person_id=person.id).exists()
    rows = list(AuditEvent.objects.values("person_id", "action", "username", "object_id"))
    assert {"view_person", "erase"} <= {row["action"] for row in rows}
    assert all(row["person_id"] is None for row in rows)
    assert not any("Nana" in " ".join(map(str, row.values())) for row in rows)


def test_full_name_and_identifier_on_record_are_encrypted_and_the_identifier_is_staff_s(
    person, alice_client, bob_client
):
    from django.db import connection

    alice_client.post(
        section_url(person, "name"),
        {"preferred_name": "Peggy", "full_name": "Margaret Collins", "identifier": "RH-0142"},
        headers=HX,
    )
    person.refresh_from_db()
    assert (person.full_name, person.identifier) == ("Margaret Collins", "RH-0142")
    with connection.cursor() as cursor:
        cursor.execute("SELECT full_name, identifier FROM people WHERE full_name IS NOT NULL")
        (stored,) = cursor.fetchall()
    assert all(value.startswith("enc:") for value in stored) and "Collins" not in stored[0]
    # Family see and correct the full name; the identifier is neither shown to nor set by them.
    page = bob_client.get(section_url(person, "name") + "?edit=1", headers=HX).content.decode()
    assert "Margaret Collins" in page and "RH-0142" not in page and 'name="identifier"' not in page
    bob_client.post(
        section_url(person, "name"),
        {"preferred_name": "Peggy", "full_name": "Margaret Ann Collins", "identifier": "X"},
        headers=HX,
    )
    person.refresh_from_db()
    assert (person.full_name, person.identifier) == ("Margaret Ann Collins", "RH-0142")


@pytest.mark.parametrize(("field", "value"), [("full_name", "M" * 201), ("identifier", "R" * 61)])
def test_a_full_name_or_identifier_too_long_is_refused_and_changes_nothing(
    person, alice_client, field, value
):
    data = {"preferred_name": "Peggy", "full_name": "Margaret Collins", "identifier": "RH-0142"}
    response = alice_client.post(section_url(person, "name"), {**data, field: value}, headers=HX)
    assert response.status_code == 400
    assert field in response.content.decode()
    person.refresh_from_db()
    assert not person.full_name and not person.identifier


def test_a_section_refused_without_htmx_is_the_whole_page_with_every_section(person, alice_client):
    response = alice_client.post(
        section_url(person, "topics"),
        {"known_topics": "\n".join(f"topic {n}" for n in range(31))},
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert 'id="profile-topics"' in page
    # The remembering section with what it reads (not an empty shell saying it is off).
    assert "Switch remembering off" in page and "Remembering is off" not in page
