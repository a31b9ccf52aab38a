"""Only team admins and care staff say what is true (confirm, pin, agreed answers, people and
routines as facts); family suggest a correction, which care staff accept or decline."""

import pytest
from django.urls import reverse

from dashboard.models import AuditEvent, CareRole, CareTeamMembership, FactSuggestion
from memory.models import Memory
from tests.dashboard.conftest import client_for, login

pytestmark = pytest.mark.django_db


def _act(client, person, memory, action, data=None):
    url = reverse("dashboard:memory_action", args=[person.id, memory.id, action])
    return client.post(url, data or {}, headers={"HX-Request": "true"})


@pytest.fixture
def sam(person):
    """Care staff in the person's team."""
    user = login("sam")
    CareTeamMembership.objects.create(user=user, person=person, role=CareRole.STAFF)
    return client_for(user)


@pytest.mark.parametrize("action", ["confirm", "pin", "unpin", "accept", "decline"])
def test_family_may_not_say_what_is_true(action, bob_client, person, memory):
    assert _act(bob_client, person, memory, action).status_code == 403
    memory.refresh_from_db()
    assert (memory.confirmed, memory.pinned) == (False, False)
    assert AuditEvent.objects.filter(allowed=False, object_id=str(memory.id)).count() == 1


@pytest.mark.parametrize("action", ["confirm", "pin"])
def test_care_staff_and_admins_may(action, sam, alice_client, person, memory):
    for client in (sam, alice_client):
        assert _act(client, person, memory, action).status_code == 200
    memory.refresh_from_db()
    assert memory.confirmed if action == "confirm" else memory.pinned


def test_a_family_correction_waits_for_care_staff(bob_client, sam, person, memory):
    response = _act(bob_client, person, memory, "edit", {"content": "Sarah is Peggy's niece."})
    assert response.status_code == 200
    # Nothing Clara uses has changed: the memory is as it was, still unconfirmed.
    live = Memory.objects.get(id=memory.id)
    assert (live.content, live.confirmed, live.status) == (memory.content, False, "active")
    assert b"Suggested change" in response.content
    assert b"Use the suggested change" not in response.content  # family cannot accept it
    # Care staff see it and accept it: a new confirmed version.
    page = sam.get(reverse("dashboard:memories", args=[person.id])).content.decode()
    assert "Sarah is Peggy&#x27;s niece." in page and "Use the suggested change" in page
    assert _act(sam, person, memory, "accept").status_code == 200
    current = Memory.objects.get(person_id=person.id, status="active", memory_key=memory.memory_key)
    assert (current.content, current.confirmed) == ("Sarah is Peggy's niece.", True)
    assert not FactSuggestion.objects.exists()


def test_care_staff_may_decline_a_suggestion(bob_client, sam, person, memory):
    _act(bob_client, person, memory, "edit", {"content": "Sarah is a neighbour."})
    assert _act(sam, person, memory, "decline").status_code == 200
    assert not FactSuggestion.objects.exists()
    assert Memory.objects.get(id=memory.id).content == memory.content


def test_a_suggestion_is_encrypted_at_rest(bob_client, person, memory):
    from django.db import connection

    _act(bob_client, person, memory, "edit", {"content": "Sarah is a neighbour."})
    with connection.cursor() as cursor:
        cursor.execute("SELECT content FROM dashboard_fact_suggestions")
        (stored,) = cursor.fetchone()
    assert "neighbour" not in str(stored)


def test_family_additions_to_the_profile_are_not_confirmed(bob_client, alice_client, person):
    url = reverse("dashboard:profile_section", args=[person.id, "routines"])
    bob_client.post(url, {"routine": "Tea at four"})
    alice_client.post(url, {"routine": "A walk after lunch"})
    routines = {
        m.content: m.confirmed for m in Memory.objects.filter(person_id=person.id, type="routine")
    }
    assert routines == {"Tea at four": False, "A walk after lunch": True}


def test_family_may_not_set_the_agreed_answers(bob_client, person):
    url = reverse("dashboard:profile_section", args=[person.id, "answers"])
    assert bob_client.post(url, {"answer_where_am_i": "At Oak House"}).status_code == 403


# --- Forgetting: one rule on "What Clara remembers" and on the profile (issue 30) --------------


def _profile_forget(client, person, memory):
    url = reverse("dashboard:profile_memory", args=[person.id, "people", memory.id, "forget"])
    return client.post(url, headers={"HX-Request": "true"})


@pytest.mark.parametrize("path", ["memories", "profile"])
def test_family_may_not_forget_a_memory_on_either_page(path, bob_client, person, memory):
    if path == "memories":
        response = _act(bob_client, person, memory, "forget")
    else:
        response = _profile_forget(bob_client, person, memory)
    assert response.status_code == 403
    assert Memory.objects.filter(id=memory.id, status=Memory.Status.ACTIVE).exists()
    refused = AuditEvent.objects.get(allowed=False, object_id=str(memory.id))
    assert refused.action == "forget_memory"


@pytest.mark.parametrize("path", ["memories", "profile"])
def test_care_staff_and_admins_may_forget_on_either_page(path, sam, alice_client, person):
    from memory.facts import store

    for client in (sam, alice_client):
        memory = store.memory_upsert(
            namespace=store.person_namespace(person.id, "people"),
            content="Sarah is Peggy's daughter.",
            type="people",
            memory_key="people|person:sarah|relationship",
            embed=False,
        ).memory
        if path == "memories":
            response = _act(client, person, memory, "forget")
        else:
            response = _profile_forget(client, person, memory)
        assert response.status_code in (200, 302)
        assert not Memory.objects.filter(id=memory.id).exists()


def test_family_see_no_forget_button_but_how_to_ask(bob_client, alice_client, person, memory):
    page = reverse("dashboard:memories", args=[person.id])
    forget = reverse("dashboard:memory_action", args=[person.id, memory.id, "forget"]).encode()
    theirs = bob_client.get(page).content
    assert forget not in theirs and b"ask the care staff" in theirs
    assert forget in alice_client.get(page).content
