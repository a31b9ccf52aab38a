"""The prompt reads as plain English whatever the profile lacks, uses the pronouns caregivers set,
and every confirmed pinned fact reaches it (issue 31, items 1 and 2)."""

import re

import pytest
from django.utils import timezone

from memory.companion import prompt
from memory.companion.context import context_build
from memory.conversations import services
from memory.conversations.models import ChatMessage
from memory.facts import store
from memory.models import Person

# Every optional section of the prompt, so each template is read with each way of naming.
EVERYTHING = dict(
    message="Where am I?",
    window=[prompt.Turn(ChatMessage.Role.USER.value, "Hello"), prompt.Turn("assistant", "Hi")],
    repeat_count=5,
    feelings=[prompt.Feeling("anxious", 0.6, "escalating")],
    narrative=prompt.NarrativeSeed("The garden in June was full of roses."),
    told_themes=["gardens"],
    anchors=["roses"],
    known_topics=["gardening"],
    avoid_topics=["hospitals"],
    escalate=True,
    agreed_answer="You are at home, safe and warm.",
    facts=["Sarah is her daughter"],
    pinned_facts=["Worked as a nurse for forty years"],
)


def _system(**fields) -> str:
    return prompt.render(prompt.ContextInputs(**(EVERYTHING | fields))).system_prompt


@pytest.mark.parametrize("pronoun", ["she", "he", "they"])
def test_without_a_name_every_line_reads_as_english(pronoun):
    text = _system(name="", pronoun=pronoun)
    assert "person you are talking with" not in text
    assert "person's life" not in text and "with's" not in text
    assert "{" not in text and "}" not in text
    assert "talking with someone living with dementia" in text
    # Every sentence starts with a capital letter.
    for sentence in re.split(r"(?<=[.!?])\s+|\n\n", text):
        assert not sentence or not sentence[0].islower(), sentence
    obj = {"she": "her", "he": "him", "they": "them"}[pronoun]
    assert f"let {obj} feel safe" in text
    assert f"keep {obj} company" in text


def test_singular_they_takes_the_plural_verb_and_she_the_singular():
    they = _system(name="", pronoun="they")
    assert "how they feel." in they
    assert "Topics they enjoy are marked" in they
    assert "If they bring them up" in they
    assert "Their family asks" in they
    she = _system(name="", pronoun="she")
    assert "how she feels." in she
    assert "Topics she enjoys are marked" in she
    assert "Her family asks" in she
    assert "as if you were holding her hand" in she


def test_with_a_name_the_name_and_the_chosen_pronoun():
    text = _system(name="Peggy", pronoun="she")
    assert "talking with Peggy, who is living with dementia" in text
    assert "how Peggy feels" in text
    assert "never ask her to recall" in text
    assert "keep her company" in text
    assert "never ask them" not in text and "keep them company" not in text


def test_pinned_facts_are_all_written_and_the_cap_is_for_the_others():
    pinned = [f"Pinned fact number {i}" for i in range(12)]
    others = [f"Other fact number {i}" for i in range(12)]
    text = _system(name="Peggy", pinned_facts=pinned, facts=others)
    assert all(fact in text for fact in pinned)
    written = [fact for fact in others if fact in text]
    assert written == others[: prompt.MAX_FACTS]


def _pin(person, content):
    memory = store.memory_upsert(
        namespace=store.person_namespace(person.id, "life_story"),
        content=content,
        type="life_story",
        pinned=True,
    ).memory
    store.memory_confirm(memory.id, user=None)
    return memory


@pytest.mark.django_db
class TestThroughTheTurn:
    @pytest.fixture
    def person(self):
        now = timezone.now()
        return Person.objects.create(
            display_name="",
            created_at=now,
            last_active_at=now,
            caregiver_context={
                "pronouns": "she/her",
                "familyContacts": [{"name": "Sarah", "relation": "daughter"}],
                "home": "Rose Cottage",
            },
        )

    def test_pinned_facts_reach_the_prompt_beside_profile_facts_and_preferences(self, person):
        session, _ = services.session_resolve(user_id=person.id)
        for i in range(4):
            memory = store.memory_upsert(
                namespace=store.person_namespace(person.id, "preference"),
                content=f"Likes thing {i} very much",
                type="preference",
            ).memory
            store.memory_confirm(memory.id, user=None)
        pinned = [_pin(person, f"Pinned story {word}").content for word in "abcdefg"]
        text = context_build(
            session_id=session.id, message="Is Sarah coming to my home today?"
        ).rendered.system_prompt
        assert all(fact in text for fact in pinned), text
        assert "Sarah is her daughter" in text
        assert "She lives at Rose Cottage" in text
        assert "person you are talking with" not in text


@pytest.mark.django_db
def test_a_continuous_companion_with_no_name_for_the_person_reads_as_english():
    from memory.companion import continuity
    from memory.facts import notes as person_notes

    now = timezone.now()
    person = Person.objects.create(
        display_name="", created_at=now, last_active_at=now, caregiver_context={"pronouns": "he"}
    )
    continuity.persona_policy_set(slug="buddy", policy="continuous", display_name="Buddy")
    continuity.person_persona_set(person_id=person.id, persona="buddy")
    _pin(person, "Played the trumpet in a brass band")
    person_notes.notes_update(person_id=person.id, persona="buddy", fields={"mood": "upbeat"})
    session, _ = services.session_resolve(user_id=person.id)
    text = context_build(session_id=session.id, message="Hello").rendered.system_prompt
    assert "continuing conversation with someone." in text
    assert "Who he is: the notes marked [confirmed by staff] below." in text
    assert '[confirmed by staff] "Played the trumpet in a brass band"' in text
    assert "Your notes about him are marked [your note] below." in text
    assert "the person" not in text
