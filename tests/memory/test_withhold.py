""" "Don't remember this", said in conversation, is honoured (issue 31, item 5)."""

import uuid

import pytest

from clara.celery import app as celery_app
from memory.conversations import services
from memory.conversations.models import AccessAction, AccessEvent
from memory.facts import remember, store, withhold
from memory.models import ChatMessage, Memory, Person

pytestmark = pytest.mark.django_db

ASKS = [
    "Don't remember this, but my son owes money to a bad man.",
    "please don't remember that",
    "Oh, forget I said that.",
    "Forget what I just told you, love.",
    "Clara, don't write that down.",
    "Do not keep this.",
    "This is off the record: my sister and I never speak.",
    "Just between you and me, I don't like the new carer.",
    "Keep it to yourself, won't you?",
    "Scratch that, I was being silly.",
    "You don’t need to remember that.",
    "Never remember what I say about Tom.",
]
# Dementia talk about the person's own memory, and ordinary sentences with the same words.
NOT_ASKS = [
    "I don't remember this place.",
    "I just don't remember that at all.",
    "I always forget that.",
    "I forget what I said.",
    "Don't forget that Sarah is coming on Sunday.",
    "Do you remember this song?",
    "I can't remember it, can you?",
    "We kept a record of every bird we saw.",
    "My husband used to say I'd forget my head.",
    "Please remember to call my daughter.",
    "I wish I could remember what I said to him.",
]


@pytest.mark.parametrize("text", ASKS)
def test_the_common_wordings_ask_not_to_be_remembered(text):
    assert withhold.asks_not_to_remember(text)


@pytest.mark.parametrize("text", NOT_ASKS)
def test_the_persons_own_forgetting_is_not_a_request(text):
    assert not withhold.asks_not_to_remember(text)


@pytest.fixture
def person():
    person_id = uuid.uuid4()
    services.session_resolve(user_id=person_id, display_name="Peggy")
    return Person.objects.get(id=person_id)


def _say(session, text):
    services.exchange_record(session_id=session.id, user_message=text, assistant_message="I see.")
    return ChatMessage.objects.filter(session=session, role="user").order_by("-sequence_number")[0]


@pytest.fixture
def eager():
    """Queued jobs run in this process, on the test's database."""
    before = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = before


def _facts(person):
    return list(Memory.objects.filter(person=person).values_list("content", flat=True))


def test_what_was_said_just_before_is_forgotten_and_audited(
    person, eager, django_capture_on_commit_callbacks
):
    session, _ = services.session_resolve(user_id=person.id)
    said = _say(session, "My daughter is called Sarah and she lives in Leeds.")
    remember.remember_from_message(said.id)
    assert any("Sarah" in fact for fact in _facts(person)), _facts(person)
    kept = store.memory_upsert(
        namespace=store.person_namespace(person.id, "people"),
        content="Her daughter Sarah is a teacher",
        type="people",
        confirmed=True,
    ).memory

    with django_capture_on_commit_callbacks(execute=True) as queued:
        _say(session, "Please don't remember that.")
    assert queued  # the job was queued on commit (and ran here)
    assert _facts(person) == [kept.content]  # the caregivers' confirmed fact stays
    row = AccessEvent.objects.get(action=AccessAction.WITHHOLD)
    assert row.person_id == person.id
    assert "Sarah" not in row.actor + row.object_id


def test_a_reader_that_runs_late_reads_nothing_from_a_withheld_message(person):
    session, _ = services.session_resolve(user_id=person.id)
    said = _say(session, "My brother Alan was in prison for ten years.")
    _say(session, "Forget I said that.")
    # The first message's reader runs only now (a queue behind): it must still read nothing.
    assert remember.remember_from_message(said.id).stored == 0
    assert _facts(person) == []


def test_the_asking_message_itself_is_not_read(person):
    session, _ = services.session_resolve(user_id=person.id)
    said = _say(session, "Don't remember this, but my son Tom owes money to a bad man.")
    assert remember.remember_from_message(said.id).stored == 0
    assert _facts(person) == []


def test_an_ordinary_next_message_changes_nothing(person):
    session, _ = services.session_resolve(user_id=person.id)
    said = _say(session, "My daughter is called Sarah and she lives in Leeds.")
    _say(session, "I don't remember this place.")
    assert remember.remember_from_message(said.id).stored >= 1
