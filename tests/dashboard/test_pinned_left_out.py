"""Staff are told when more facts are pinned than one conversation holds (issue 31, item 2)."""

import pytest
from django.urls import reverse

from memory.facts import search, store
from memory.models import Memory
from tests.dashboard.conftest import client_for

pytestmark = pytest.mark.django_db


def _pin(person, content):
    memory = store.memory_upsert(
        namespace=store.person_namespace(person.id, "life_story"),
        content=content,
        type="life_story",
        pinned=True,
    ).memory
    store.memory_confirm(memory.id, user=None)
    return memory


def test_staff_see_how_many_pinned_facts_do_not_reach_clara_and_family_do_not(person, alice, bob):
    url = reverse("dashboard:memories", args=[person.id])
    for year in range(1950, 1950 + search.FOUNDATION_LIMIT):
        _pin(person, f"Moved house in {year}")
    assert "data-pinned-left-out" not in client_for(alice).get(url).content.decode()

    for year in range(1990, 1993):
        _pin(person, f"Went to Spain in {year}")
    page = client_for(alice).get(url).content.decode()
    assert 'data-pinned-left-out="3"' in page
    assert "3 more facts are marked" in page
    assert "data-pinned-left-out" not in client_for(bob).get(url).content.decode()

    unpinned = Memory.objects.filter(person=person, pinned=True).first()
    store.memory_pin(unpinned.id, pinned=False)
    assert 'data-pinned-left-out="2"' in client_for(alice).get(url).content.decode()
