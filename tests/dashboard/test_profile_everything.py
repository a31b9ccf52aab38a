"""The profile shows and edits everything Clara uses: home and time zone, people in the person's
life merged from the settings and from conversation, routines, agreed answers to any repeated
question, and the current name and pronouns wherever the person is named."""

import html

import pytest
from django.db import connection
from django.urls import reverse

from dashboard.models import CareRole, CareTeamMembership
from dashboard.services import agreed_question_set
from memory.facts import store
from memory.models import Memory, Person, RepetitionRecord, Session
from tests.dashboard.conftest import client_for, login

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


def section_url(person, section: str) -> str:
    return reverse("dashboard:profile_section", args=[person.id, section])


def profile_page(client, person) -> str:
    response = client.get(reverse("dashboard:profile", args=[person.id]))
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def _set(person, **blob) -> None:
    person.caregiver_context = {**person.caregiver_context, **blob}
    person.save(update_fields=["caregiver_context"])


@pytest.fixture
def staff_client(person):
    user = login("sam")
    CareTeamMembership.objects.create(
        user=user, person=person, role=CareRole.STAFF, can_see_transcripts=False
    )
    return client_for(user)


def _learned(person, *, name: str, relation: str, content: str) -> Memory:
    """What the fact reader keeps when the person names someone: not confirmed."""
    ref = store.entity_ref("person", name)
    return store.memory_upsert(
        namespace=store.person_namespace(person.id, "people"),
        content=content,
        type="people",
        memory_key=f"people|{ref}|relationship",
        entity_refs=[ref],
        entity_labels={ref: name},
        metadata={"value": relation},
        source=Memory.Source.CONVERSATION_EXTRACTION,
        embed=False,
    ).memory


def _record(person, text: str) -> RepetitionRecord:
    return next(
        r for r in RepetitionRecord.objects.filter(person=person) if r.original_message == text
    )


# --- Home and time zone ---------------------------------------------------------------------


def test_home_and_time_zone_are_shown_and_saved(bob_client, person):
    response = bob_client.post(
        section_url(person, "home"),
        {"home": "Beech House", "time_zone": "Europe/Dublin"},
        headers=HX,
    )
    assert response.status_code == 200
    assert "Lives at <strong>Beech House</strong>" in response.content.decode()
    person.refresh_from_db()
    assert person.caregiver_context["home"] == "Beech House"
    assert person.caregiver_context["timezone"] == "Europe/Dublin"
    assert person.caregiver_context["preferredName"] == "Peggy"  # the rest is kept


def test_an_unknown_time_zone_is_refused_naming_the_field(alice_client, person):
    before = dict(person.caregiver_context)
    response = alice_client.post(
        section_url(person, "home"), {"home": "", "time_zone": "Mars/Olympus_Mons"}, headers=HX
    )
    assert response.status_code == 400
    assert "Time zone: “Mars/Olympus_Mons” is not a time zone we know" in response.content.decode()
    person.refresh_from_db()
    assert person.caregiver_context == before


def test_without_a_time_zone_pages_say_utc_and_ask_for_it(alice_client, person):
    _set(person, timezone="")
    page = alice_client.get(reverse("dashboard:person_patterns", args=[person.id])).content
    assert b"times in UTC" in page and b"times where Peggy lives" not in page
    assert b"time zone is not set" in page and b"?edit=home#profile-home" in page
    _set(person, timezone="Europe/London")
    page = alice_client.get(reverse("dashboard:person_patterns", args=[person.id])).content
    assert b"times where Peggy lives" in page and b"time zone is not set" not in page


def test_the_time_zone_list_comes_with_the_form(alice_client, person):
    form = alice_client.get(section_url(person, "home") + "?edit=1", headers=HX).content
    assert b'<option value="Europe/London">' in form and b'list="time-zones"' in form


# --- People in the person's life --------------------------------------------------------------


def test_people_entered_at_set_up_and_heard_in_conversation_are_merged(alice_client, person):
    _set(person, familyContacts=[{"name": "Claire", "relation": "daughter"}])
    _learned(person, name="Claire", relation="daughter", content="Daughter's name is Claire")
    _learned(person, name="Tom", relation="grandson", content="Grandson's name is Tom")
    page = profile_page(alice_client, person)
    assert "No one yet" not in page
    assert page.count("<strong>Claire</strong>") == 1  # one person, two sources
    assert "entered when Peggy was set up" in page and "heard in conversation" in page
    assert "<strong>Tom</strong>, Peggy's grandson" in page
    assert "Needs checking" not in page


def test_a_relation_the_sources_disagree_on_is_flagged_for_a_human(alice_client, person):
    _set(person, familyContacts=[{"name": "Claire", "relation": "daughter"}])
    _learned(person, name="Claire", relation="niece", content="Niece's name is Claire")
    page = profile_page(alice_client, person)
    assert "Needs checking" in page
    assert "These disagree: Claire is Peggy's daughter" in page and "Peggy's niece" in page


def test_staff_confirm_what_clara_heard_and_family_cannot(staff_client, bob_client, person):
    heard = _learned(person, name="Tom", relation="grandson", content="Grandson's name is Tom")
    url = reverse("dashboard:profile_memory", args=[person.id, "people", heard.id, "confirm"])
    assert bob_client.post(url, headers=HX).status_code == 403
    assert not Memory.objects.get(id=heard.id).confirmed
    response = staff_client.post(url, headers=HX)
    assert response.status_code == 200 and 'id="profile-people"' in response.content.decode()
    assert Memory.objects.get(id=heard.id).confirmed


def test_family_see_a_suggestion_link_not_confirm(bob_client, person):
    heard = _learned(person, name="Tom", relation="grandson", content="Grandson's name is Tom")
    page = profile_page(bob_client, person)
    assert reverse("dashboard:memory_action", args=[person.id, heard.id, "edit"]) in page
    assert "profile/people/" + str(heard.id) not in page


def test_staff_settle_a_disagreement_by_forgetting_the_wrong_one(alice_client, person):
    _set(person, familyContacts=[{"name": "Claire", "relation": "daughter"}])
    wrong = _learned(person, name="Claire", relation="niece", content="Niece's name is Claire")
    url = reverse("dashboard:profile_memory", args=[person.id, "people", wrong.id, "forget"])
    assert alice_client.post(url).status_code == 302
    assert "Needs checking" not in profile_page(alice_client, person)


def test_staff_remove_someone_entered_at_set_up_and_family_cannot(alice_client, bob_client, person):
    _set(person, familyContacts=[{"name": "Claire", "relation": "daughter"}])
    url = reverse("dashboard:family_contact_remove", args=[person.id])
    assert bob_client.post(url, {"name": "Claire"}).status_code == 403
    assert alice_client.post(url, {"name": "Nobody"}).status_code == 404
    assert alice_client.post(url, {"name": "claire"}).status_code == 302
    person.refresh_from_db()
    assert "familyContacts" not in person.caregiver_context


def test_another_organisations_person_is_not_found(charlie_client, person, memory):
    urls = [
        reverse("dashboard:profile_memory", args=[person.id, "people", memory.id, "confirm"]),
        reverse("dashboard:family_contact_remove", args=[person.id]),
    ]
    for url in urls:
        assert charlie_client.post(url).status_code == 404
    record = RepetitionRecord.objects.filter(person=person).first()
    url = reverse("dashboard:agreed_answer", args=[person.id, record.id])
    assert charlie_client.get(url).status_code == 404
    assert not Memory.objects.get(id=memory.id).confirmed


def test_a_memory_of_another_person_is_not_confirmed_from_this_profile(
    alice_client, person, other_person
):
    theirs = _learned(other_person, name="Ann", relation="wife", content="Wife's name is Ann")
    url = reverse("dashboard:profile_memory", args=[person.id, "people", theirs.id, "confirm"])
    assert alice_client.post(url).status_code == 404
    assert not Memory.objects.get(id=theirs.id).confirmed


# --- Routines -----------------------------------------------------------------------------------


def test_a_routine_family_add_waits_for_staff_and_then_reaches_clara(
    bob_client, staff_client, person
):
    from memory.companion.context import confirmed_facts_for

    bob_client.post(section_url(person, "routines"), {"routine": "Lunch at half past twelve"})
    routine = Memory.objects.get(person=person, type="routine")
    assert not routine.confirmed
    assert "Not confirmed" in profile_page(bob_client, person)
    message = "Is it time for lunch?"
    assert (
        "Lunch at half past twelve"
        not in confirmed_facts_for(person_id=person.id, message=message).all
    )
    url = reverse("dashboard:profile_memory", args=[person.id, "routines", routine.id, "confirm"])
    assert staff_client.post(url).status_code == 302
    assert (
        "Lunch at half past twelve" in confirmed_facts_for(person_id=person.id, message=message).all
    )


# --- Agreed answers for any repeated question -----------------------------------------------------


def test_the_repeated_questions_panel_offers_an_agreed_answer_to_staff_only(
    alice_client, bob_client, person
):
    url = reverse("dashboard:person_repetition", args=[person.id])
    record_urls = [
        reverse("dashboard:agreed_answer", args=[person.id, r.id])
        for r in RepetitionRecord.objects.filter(person=person)
    ]
    staff_page = alice_client.get(url).content.decode()
    assert "Set an agreed answer" in staff_page
    assert any(u in staff_page for u in record_urls)
    assert "Set an agreed answer" not in bob_client.get(url).content.decode()


def test_an_agreed_answer_is_set_for_a_picked_question_and_stored_encrypted(alice_client, person):
    record = _record(person, "When is Sarah coming?")
    url = reverse("dashboard:agreed_answer", args=[person.id, record.id])
    form = alice_client.get(url)
    assert form.status_code == 200 and "“When is Sarah coming?”" in form.content.decode()
    response = alice_client.post(url, {"answer": "Sarah comes on Sunday with the children."})
    assert response.status_code == 302
    person.refresh_from_db()
    assert person.caregiver_context["agreedQuestions"] == [
        {
            "question": "When is Sarah coming?",
            "answer": "Sarah comes on Sunday with the children.",
            "questionType": record.question_type,
            "fingerprint": record.fingerprint,
        }
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT caregiver_context FROM {Person._meta.db_table} WHERE id = %s",
            [person.id.hex if connection.vendor == "sqlite" else person.id],
        )
        raw = str(cursor.fetchone()[0])
    assert "Sunday with the children" not in raw and "Sarah" not in raw
    page = profile_page(alice_client, person)
    assert "Sarah comes on Sunday with the children." in page
    panel = alice_client.get(reverse("dashboard:person_repetition", args=[person.id]))
    assert "Agreed answer: Sarah comes on Sunday with the children." in panel.content.decode()


def test_setting_it_again_replaces_the_answer_and_emptying_it_removes_it(alice_client, person):
    record = _record(person, "When is Sarah coming?")
    agreed_question_set(person=person, record=record, answer="On Sunday.")
    agreed_question_set(person=person, record=record, answer="On Saturday.")
    person.refresh_from_db()
    assert [q["answer"] for q in person.caregiver_context["agreedQuestions"]] == ["On Saturday."]
    response = alice_client.post(section_url(person, "answers"), {"agreed_0": ""}, headers=HX)
    assert response.status_code == 200
    person.refresh_from_db()
    assert "agreedQuestions" not in person.caregiver_context


def test_family_cannot_agree_answers(bob_client, person):
    record = _record(person, "When is Sarah coming?")
    url = reverse("dashboard:agreed_answer", args=[person.id, record.id])
    assert bob_client.get(url).status_code == 403
    assert bob_client.post(url, {"answer": "Soon."}).status_code == 403
    person.refresh_from_db()
    assert "agreedQuestions" not in person.caregiver_context


def test_an_empty_agreed_answer_is_refused_naming_the_field(alice_client, person):
    record = _record(person, "When is Sarah coming?")
    url = reverse("dashboard:agreed_answer", args=[person.id, record.id])
    response = alice_client.post(url, {"answer": "  "})
    assert response.status_code == 400 and "Answer: " in response.content.decode()


def test_without_the_transcript_right_the_picked_question_is_in_claras_words(staff_client, person):
    agreed_question_set(
        person=person, record=_record(person, "When is Sarah coming?"), answer="On Sunday."
    )
    page = profile_page(staff_client, person)
    assert "On Sunday." in page and "When is Sarah coming" not in page


# --- The name and pronouns everywhere --------------------------------------------------------------


def test_what_clara_heard_is_shown_with_the_chosen_pronouns(alice_client, person):
    store.memory_upsert(
        namespace=store.person_namespace(person.id, "feeling"),
        content="Misses their mum",
        type="feeling",
        memory_key="feeling|self|misses:person:mum",
        source=Memory.Source.CONVERSATION_EXTRACTION,
        embed=False,
    )
    page = alice_client.get(reverse("dashboard:memories", args=[person.id])).content.decode()
    assert "Misses her mum" in page and "Misses their mum" not in page


def test_a_summary_shows_the_current_name_and_pronouns(alice_client, person):
    session = (
        Session.objects.filter(person=person, message_count__gt=0).order_by("created_at").first()
    )
    session.session_summary = {
        **(session.session_summary or {}),
        "one_liner": "Peggy talked with Clara for 4 minutes, mostly calm.",
        "open_loops": ["misses their mum"],
        "written_as": {"name": "Peggy", "subject": "they"},
    }
    session.save(update_fields=["session_summary"])
    alice_client.post(section_url(person, "name"), {"preferred_name": "Peg", "pronouns": "she/her"})
    page = alice_client.get(reverse("dashboard:session", args=[person.id, session.id]))
    text = page.content.decode()
    assert "Peg talked with Clara for 4 minutes" in text and "Peggy talked" not in text
    assert "misses her mum" in text and "their mum" not in text
    listing = alice_client.get(reverse("dashboard:person_sessions", args=[person.id]))
    assert "Peg talked with Clara for 4 minutes" in listing.content.decode()


def test_an_older_summary_without_its_name_is_renamed_too(alice_client, person):
    session = (
        Session.objects.filter(person=person, message_count__gt=0).order_by("created_at").first()
    )
    session.session_summary = {"one_liner": "Peggy talked with Clara for 4 minutes."}
    session.save(update_fields=["session_summary"])
    alice_client.post(section_url(person, "name"), {"preferred_name": "Peg", "pronouns": "she/her"})
    page = alice_client.get(reverse("dashboard:session", args=[person.id, session.id]))
    assert "Peg talked with Clara for 4 minutes." in page.content.decode()


def test_a_new_summary_says_who_it_was_written_about(person):
    from memory.insights.summaries import session_summary_build

    session = (
        Session.objects.filter(person=person, message_count__gt=0).order_by("created_at").first()
    )
    summary = session_summary_build(session)
    assert summary["written_as"] == {"name": "Peggy", "subject": "she"}


def test_asked_about_is_said_once(alice_client, person):
    session = (
        Session.objects.filter(person=person, message_count__gt=0).order_by("created_at").first()
    )
    session.session_summary = {
        **(session.session_summary or {}),
        "key_topics": [{"question_type": "person", "count": 2}],
    }
    session.save(update_fields=["session_summary"])
    text = alice_client.get(reverse("dashboard:session", args=[person.id, session.id])).content
    assert b"Asked about family and friends (twice)" in text
    assert b"about about" not in text and b"Asked about:" not in text


def test_the_stored_profile_keeps_home_people_and_picked_questions():
    """The profile blob's new keys round-trip through CaregiverContext; other keys are kept."""
    from memory.core.person import AgreedQuestion, CaregiverContext, FamilyContact

    about = CaregiverContext.from_blob(
        {
            "home": " Beech House ",
            "timezone": "Nowhere/Special",
            "familyContacts": [{"name": "Claire", "relation": "daughter"}, {"relation": "x"}],
            "agreedQuestions": [{"question": "Where's Ted?", "answer": ""}],
            "unknownKey": 1,
        }
    )
    assert about.home == "Beech House" and not about.zone_set
    assert about.family == (FamilyContact(name="Claire", relation="daughter"),)
    assert about.agreed_questions == ()
    blob = about.updated(agreed_questions=[AgreedQuestion(question="Where's Ted?", answer="Out.")])
    assert blob["agreedQuestions"] == [{"question": "Where's Ted?", "answer": "Out."}]
    assert blob["unknownKey"] == 1
    assert CaregiverContext.from_blob({"timezone": "Europe/London"}).zone_set
