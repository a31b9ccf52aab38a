"""The profile's remembering controls (issue 32 item 5): switch remembering off and on, and
forget everything about one person or of one kind, after a confirmation; each audited."""

import pytest
from django.urls import reverse

from dashboard.models import AuditAction, AuditEvent
from memory.facts import store
from memory.models import Memory

pytestmark = pytest.mark.django_db


def remember(person, content: str, *, ref: str | None = None, type: str = "people") -> Memory:
    return store.memory_upsert(
        namespace=store.person_namespace(person.id, type),
        content=content,
        type=type,
        entity_refs=[ref] if ref else (),
        entity_labels={ref: ref.split(":")[1].title()} if ref else None,
        source=Memory.Source.CONVERSATION_EXTRACTION,
        embed=False,
    ).memory


@pytest.fixture
def sarah(person):
    return [
        remember(person, "Sarah is Peggy's daughter.", ref="person:sarah"),
        remember(person, "Sarah visits on Sundays.", ref="person:sarah"),
        remember(person, "Peggy loves roses.", type="preference"),
    ]


def rows(action):
    return list(AuditEvent.objects.filter(action=action).values_list("object_id", "allowed"))


def test_staff_switch_remembering_off_and_on(alice_client, person):
    url = reverse("dashboard:remembering", args=[person.id])
    response = alice_client.post(url, {"enabled": "off"}, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert "Remembering is off." in response.content.decode()
    person.refresh_from_db()
    assert person.memory_enabled is False
    alice_client.post(url, {"enabled": "on"})
    person.refresh_from_db()
    assert person.memory_enabled is True
    assert rows(AuditAction.EDIT_REMEMBERING) == [("off", True), ("on", True)]


def test_forgetting_asks_first_then_forgets_and_audits_the_kind_only(alice_client, person, sarah):
    url = reverse("dashboard:forget_about", args=[person.id])
    profile = alice_client.get(reverse("dashboard:profile", args=[person.id])).content.decode()
    assert '<option value="entity:person:sarah">Sarah (2)</option>' in profile
    asked = alice_client.get(url, {"thing": "entity:person:sarah"}).content.decode()
    assert "Forget everything Clara remembers about Sarah?" in asked
    assert "That is 2 things" in asked
    assert Memory.objects.filter(person=person).count() == 3  # asking forgets nothing
    unconfirmed = alice_client.post(url, {"thing": "entity:person:sarah"})
    assert unconfirmed.status_code == 400
    assert Memory.objects.filter(person=person).count() == 3
    done = alice_client.post(
        url, {"thing": "entity:person:sarah", "confirm": "yes"}, headers={"HX-Request": "true"}
    )
    assert "Clara has forgotten everything about Sarah (2 things)." in done.content.decode()
    assert list(Memory.objects.filter(person=person).values_list("type", flat=True)) == [
        "preference"
    ]
    # The audit says a person was forgotten, never who.
    assert rows(AuditAction.FORGET_ABOUT) == [("person", True)]


def test_forget_one_kind_of_thing(alice_client, person, sarah):
    url = reverse("dashboard:forget_about", args=[person.id])
    alice_client.post(url, {"thing": "type:preference", "confirm": "yes"})
    assert not Memory.objects.filter(person=person, type="preference").exists()
    assert Memory.objects.filter(person=person, type="people").count() == 2


def test_a_thing_not_on_the_list_is_a_400_naming_it(alice_client, person, sarah):
    url = reverse("dashboard:forget_about", args=[person.id])
    response = alice_client.post(url, {"thing": "entity:person:nobody", "confirm": "yes"})
    assert response.status_code == 400
    assert "thing: choose someone or something from the list." in response.content.decode()
    # Asking to confirm something not on the list is refused the same way.
    asked = alice_client.get(url, {"thing": "type:nonsense"})
    assert asked.status_code == 400
    assert "thing: choose someone or something from the list." in asked.content.decode()
    bad = alice_client.post(reverse("dashboard:remembering", args=[person.id]), {"enabled": "x"})
    assert bad.status_code == 400
    assert Memory.objects.filter(person=person).count() == 3


def test_family_read_the_switch_but_may_not_use_it(bob_client, person, sarah):
    profile = bob_client.get(reverse("dashboard:profile", args=[person.id])).content.decode()
    assert "Clara remembers what Peggy tells her" in profile
    assert "Switch remembering off" not in profile
    switch = bob_client.post(reverse("dashboard:remembering", args=[person.id]), {"enabled": "off"})
    forget = bob_client.post(
        reverse("dashboard:forget_about", args=[person.id]),
        {"thing": "entity:person:sarah", "confirm": "yes"},
    )
    assert (switch.status_code, forget.status_code) == (403, 403)
    person.refresh_from_db()
    assert person.memory_enabled is True
    assert Memory.objects.filter(person=person).count() == 3
    assert rows(AuditAction.EDIT_REMEMBERING) == [("", False)]


def test_an_outsider_gets_404(charlie_client, person, sarah):
    url = reverse("dashboard:forget_about", args=[person.id])
    response = charlie_client.post(url, {"thing": "entity:person:sarah", "confirm": "yes"})
    assert response.status_code == 404
    assert Memory.objects.filter(person=person).count() == 3
