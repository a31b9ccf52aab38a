"""A name misheard by speech recognition is linked to the person already known (issue 31, item 4)."""

import uuid

import pytest

from memory.conversations import services
from memory.facts import names, remember, store
from memory.models import ChatMessage, Memory, Person


@pytest.mark.parametrize(
    ("heard", "known"),
    [("Makesh", "Mukesh"), ("Kath", "Cath"), ("Geeta", "Gita"), ("Dipak", "Deepak Shah")],
)
def test_the_same_name_misheard_or_spelt_otherwise_is_the_same_person(heard, known):
    assert names.likeness(heard, known) is True


@pytest.mark.parametrize(
    ("heard", "known"), [("Tim", "Tom"), ("Joan", "Jane"), ("Kathryn", "Catherine")]
)
def test_two_ordinary_names_that_sound_alike_may_be_the_same_and_staff_decide(heard, known):
    assert names.likeness(heard, known) is None


@pytest.mark.parametrize(("heard", "known"), [("Mark", "Mike"), ("Bill", "Phil"), ("Sarah", "Tom")])
def test_different_names_are_different_people(heard, known):
    assert names.likeness(heard, known) is False


@pytest.fixture
def person(db):
    person_id = uuid.uuid4()
    services.session_resolve(user_id=person_id, display_name="Peggy")
    person = Person.objects.get(id=person_id)
    person.caregiver_context = {
        "familyContacts": [
            {"name": "Mukesh", "relation": "son"},
            {"name": "Tom", "relation": "brother"},
        ]
    }
    person.save()
    return person


def _remember(person, text):
    session, _ = services.session_resolve(user_id=person.id)
    services.exchange_record(session_id=session.id, user_message=text, assistant_message="Oh yes.")
    said = ChatMessage.objects.filter(session=session, role="user").order_by("-sequence_number")[0]
    remember.remember_from_message(said.id)
    return Memory.objects.filter(source_message_id=said.id)


@pytest.mark.django_db
def test_a_misheard_name_of_the_profiles_person_is_stored_as_them(person):
    [fact] = _remember(person, "My son Makesh is a doctor.")
    assert fact.entity_refs == ["person:mukesh"]
    assert "Mukesh" in fact.content and "Makesh" not in fact.content
    assert fact.metadata["heard_as"] == "Makesh"
    # Said again with the right name: the same fact, reinforced, not a second person.
    _remember(person, "My son Mukesh is a doctor.")
    refs = [m.entity_refs for m in Memory.objects.filter(person=person, status="active")]
    assert all(r == ["person:mukesh"] for r in refs)
    assert len(refs) == 1


@pytest.mark.django_db
def test_a_name_that_may_be_a_known_person_is_kept_apart_and_noted_for_staff(person):
    [fact] = _remember(person, "My brother Tim lives in Hull.")
    assert fact.entity_refs == ["person:tim"]
    assert fact.metadata["may_be"] == {"heard": "Tim", "ref": "person:tom", "label": "Tom"}


@pytest.mark.django_db
def test_a_misheard_name_of_someone_named_in_earlier_facts_is_them(person):
    person.caregiver_context = {}
    person.save()
    store.memory_upsert(
        namespace=store.person_namespace(person.id, "people"),
        content="Her friend Deepak visits on Fridays",
        type="people",
        entity_refs=["person:deepak"],
        entity_labels={"person:deepak": "Deepak"},
        confirmed=True,
    )
    [fact] = _remember(person, "My friend Dipak is lovely.")
    assert fact.entity_refs == ["person:deepak"], fact.metadata


@pytest.mark.django_db
def test_staff_decide_whether_a_name_is_a_known_person():
    from django.urls import reverse

    from tests.dashboard.conftest import client_for, login, make_person

    person = make_person("Peggy", {"familyContacts": [{"name": "Tom", "relation": "brother"}]})
    from dashboard.models import CareRole, CareTeamMembership

    staff, family = login("nurse"), login("daughter")
    CareTeamMembership.objects.create(user=staff, person=person, role=CareRole.STAFF)
    CareTeamMembership.objects.create(user=family, person=person, role=CareRole.FAMILY)
    [tim] = _remember(person, "My brother Tim lives in Hull.")
    jim = store.memory_upsert(
        namespace=store.person_namespace(person.id, "people"),
        content="Her friend Tim is a fisherman",
        type="people",
        entity_refs=["person:tim"],
        entity_labels={"person:tim": "Tim"},
        metadata={"may_be": {"heard": "Tim", "ref": "person:tom", "label": "Tom"}},
    ).memory
    page = reverse("dashboard:memories", args=[person.id])
    assert "Is this Tom?" in client_for(staff).get(page).content.decode()
    assert "Is this Tom?" not in client_for(family).get(page).content.decode()

    def act(who, memory, action):
        url = reverse("dashboard:memory_action", args=[person.id, memory.id, action])
        return client_for(who).post(url, HTTP_HX_REQUEST="true")

    assert act(family, tim, "same_person").status_code == 403
    assert act(staff, tim, "same_person").status_code == 200
    tim.refresh_from_db()
    assert tim.entity_refs == ["person:tom"] and "Tom" in tim.content
    assert "may_be" not in tim.metadata and tim.metadata["heard_as"] == "Tim"

    assert act(staff, jim, "other_person").status_code == 200
    jim.refresh_from_db()
    assert jim.entity_refs == ["person:tim"] and "may_be" not in jim.metadata
