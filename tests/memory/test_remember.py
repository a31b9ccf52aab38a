"""Extraction into the fact store: unconfirmed candidates, idempotent, never over a confirmed fact."""

import pytest
from django.utils import timezone

from memory.conversations import services
from memory.core.errors import Conflict
from memory.facts import remember, store
from memory.models import ChatMessage, Memory, Person

pytestmark = pytest.mark.django_db


@pytest.fixture
def person(db):
    now = timezone.now()
    return Person.objects.create(display_name="Margaret", created_at=now, last_active_at=now)


def _say(person, text):
    session, _ = services.session_resolve(user_id=person.id)
    stored = services.exchange_record(
        session_id=session.id, user_message=text, assistant_message="That's lovely."
    )
    return stored.user_message_id


def test_facts_from_the_persons_words_are_stored_unconfirmed(person):
    message_id = _say(person, "My daughter Sarah lives in York. I love a cup of tea.")
    report = remember.remember_from_message(message_id)
    assert report.stored >= 2
    memories = Memory.objects.filter(person=person)
    assert all(not m.confirmed for m in memories)
    assert all(m.source == "conversation_extraction" for m in memories)
    assert {m.source_message_id for m in memories} == {message_id}
    assert any("person:sarah" in m.entity_refs for m in memories)


def test_reading_a_message_twice_changes_nothing(person):
    message_id = _say(person, "I love a cup of tea.")
    remember.remember_from_message(message_id)
    before = list(Memory.objects.values_list("id", "use_count", "importance"))
    assert remember.remember_from_message(message_id).skipped == "already read"
    assert list(Memory.objects.values_list("id", "use_count", "importance")) == before


def test_the_assistants_words_are_never_read(person):
    _say(person, "Hello")
    reply = ChatMessage.objects.get(role="assistant")
    assert remember.remember_from_message(reply.id).stored == 0
    assert Memory.objects.count() == 0


def test_nothing_is_remembered_when_memory_is_off(person):
    store.person_memory_set_enabled(person_id=person.id, enabled=False)
    message_id = _say(person, "My daughter Sarah lives in York.")
    assert remember.remember_from_message(message_id).skipped == "memory is switched off"
    assert Memory.objects.count() == 0


def test_a_confirmed_fact_is_never_superseded_by_what_is_said(person):
    confirmed = store.memory_upsert(
        namespace=store.person_namespace(person.id, "people"),
        content="Her husband John died in 2015",
        memory_key="people|person:john|status",
        type="people",
        confirmed=True,
    ).memory
    with pytest.raises(Conflict) as exc:
        store.memory_upsert(
            namespace=store.person_namespace(person.id, "people"),
            content="Her husband John is coming home tonight",
            memory_key="people|person:john|status",
            type="people",
        )
    assert exc.value.field == "content"
    confirmed.refresh_from_db()
    assert confirmed.status == "active"


def test_statements_are_read_after_commit_and_questions_are_not(
    person, django_capture_on_commit_callbacks
):
    from memory import tasks

    sent = []
    original = tasks.remember_message.delay
    tasks.remember_message.delay = lambda *args: sent.append(args)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            first = _say(person, "My grandson Leo plays football")
        with django_capture_on_commit_callbacks(execute=True):
            _say(person, "Where is my grandson?")
        # Said in the first person, but nothing in it to remember: no job for the worker.
        with django_capture_on_commit_callbacks(execute=True):
            quiet = _say(person, "I don't know what I was doing.")
    finally:
        tasks.remember_message.delay = original
    assert sent == [(str(first),)]
    assert remember.remember_from_message(quiet).stored == 0


def test_a_fault_in_the_fact_reader_never_costs_the_exchange(
    person, monkeypatch, django_capture_on_commit_callbacks
):
    from memory import tasks
    from memory.facts import extraction

    def broken(text, **kwargs):
        raise RuntimeError("a bug in a rule")

    monkeypatch.setattr(extraction, "extract_facts", broken)
    sent = []
    monkeypatch.setattr(tasks.remember_message, "delay", lambda *args: sent.append(args))
    with django_capture_on_commit_callbacks(execute=True):
        message_id = _say(person, "My grandson Leo plays football")

    # Stored, and the job queued to read it again (where its failure is its own).
    assert ChatMessage.objects.filter(id=message_id).exists()
    assert sent == [(str(message_id),)]
