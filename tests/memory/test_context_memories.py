"""What the long-term memory adds to the per-turn context: confirmed facts and agreed answers only."""

import pytest
from django.utils import timezone

from memory.companion.context import context_build
from memory.conversations import services
from memory.facts import store
from memory.models import Person

pytestmark = pytest.mark.django_db


@pytest.fixture
def person(db):
    now = timezone.now()
    return Person.objects.create(
        display_name="Margaret",
        created_at=now,
        last_active_at=now,
        caregiver_context={
            "preferredName": "Peggy",
            "agreedAnswers": {"person": "John is at the shops and will be back for tea."},
        },
    )


@pytest.fixture
def session(person):
    session, _ = services.session_resolve(user_id=person.id)
    return session


def _prompt(session, message: str) -> str:
    return context_build(session_id=session.id, message=message).rendered.system_prompt


def test_confirmed_facts_reach_the_prompt_and_unconfirmed_never_do(person, session):
    confirmed = store.memory_upsert(
        namespace=store.person_namespace(person.id, "people"),
        content="Her daughter Sarah is a teacher in York",
        type="people",
    ).memory
    store.memory_confirm(confirmed.id, user=None)
    store.memory_upsert(
        namespace=store.person_namespace(person.id, "people"),
        content="Her husband John is coming home tonight",
        type="people",
    )
    prompt = _prompt(session, "Is Sarah still teaching in York?")
    assert "Her daughter Sarah is a teacher in York" in prompt
    assert "never quiz" in prompt
    assert "coming home tonight" not in prompt


def test_pinned_and_preferences_are_always_at_hand(person, session):
    tea = store.memory_upsert(
        namespace=store.person_namespace(person.id, "preference"),
        content="Loves strong tea with two sugars",
        type="preference",
    ).memory
    store.memory_confirm(tea.id, user=None)
    nurse = store.memory_upsert(
        namespace=store.person_namespace(person.id, "life_story"),
        content="Worked as a nurse for forty years",
        type="life_story",
        pinned=True,
    ).memory
    store.memory_confirm(nurse.id, user=None)
    prompt = _prompt(session, "Hello dear")
    assert "Loves strong tea with two sugars" in prompt
    assert "Worked as a nurse for forty years" in prompt


def test_the_agreed_answer_is_given_for_its_kind_of_question(session):
    prompt = _prompt(session, "Where is my husband?")
    assert "John is at the shops and will be back for tea." in prompt
    assert "always answered the same way" in prompt
    other = _prompt(session, "What a lovely day")
    assert "John is at the shops" not in other


def test_no_facts_section_without_confirmed_facts(session):
    prompt = _prompt(session, "Hello")
    assert "[confirmed by staff]" not in prompt and "[family profile]" not in prompt


def _with_context(person, **blob):
    person.caregiver_context = {**person.caregiver_context, **blob}
    person.save(update_fields=["caregiver_context"])


def test_an_answer_agreed_for_a_picked_question_is_given_when_it_is_asked_in_other_words(
    person, session
):
    _with_context(
        person,
        agreedAnswers={},
        agreedQuestions=[
            {
                "question": "Where's my husband?",
                "answer": "Ted is resting; he loves you very much.",
                "questionType": "person",
            }
        ],
    )
    assert "Ted is resting" in _prompt(session, "Where has my husband gone?")
    assert "Ted is resting" in _prompt(session, "wheres my husband")


def test_an_answer_agreed_for_one_question_is_not_given_to_another_of_its_kind(person, session):
    _with_context(
        person,
        agreedAnswers={},
        agreedQuestions=[
            {
                "question": "Where's my husband?",
                "answer": "Ted is resting; he loves you very much.",
                "questionType": "person",
            }
        ],
    )
    assert "Ted is resting" not in _prompt(session, "Where's my daughter?")
    assert "Ted is resting" not in _prompt(session, "What a lovely garden")


def test_people_and_home_entered_in_the_settings_reach_the_prompt_when_talked_about(
    person, session
):
    _with_context(
        person,
        familyContacts=[{"name": "Claire", "relation": "daughter", "usualVisitDay": "Thursday"}],
        home="Beech House",
    )
    prompt = _prompt(session, "Is Claire coming today?")
    assert "Claire is Peggy's daughter, who usually visits on Thursday" in prompt
    assert "Beech House" not in prompt
    assert "Peggy lives at Beech House" in _prompt(session, "I want to go home")
    assert "Claire" not in _prompt(session, "What a lovely garden")
