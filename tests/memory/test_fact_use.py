"""Facts that reach a prompt or a search hit are counted as used, by a job, off the turn's path
(issue 31, item 7)."""

import time
import uuid

import pytest
from django.utils import timezone

from clara.celery import app as celery_app
from memory.companion.context import context_build
from memory.conversations import services
from memory.facts import search, store, usage
from memory.models import Memory, Person

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _nothing_pending():
    usage.flush()
    yield
    usage.flush()


@pytest.fixture
def eager():
    """The job runs in this process, on the test's database (the queue is tested on its own)."""
    before = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    usage.flush()
    celery_app.conf.task_always_eager = before


@pytest.fixture
def person():
    person_id = uuid.uuid4()
    services.session_resolve(user_id=person_id, display_name="Peggy")
    return Person.objects.get(id=person_id)


def _fact(person, content, *, type="preference", pinned=False, confirmed=True):
    memory = store.memory_upsert(
        namespace=store.person_namespace(person.id, type),
        content=content,
        type=type,
        pinned=pinned,
    ).memory
    if confirmed:
        store.memory_confirm(memory.id, user=None)
    return memory


def _uses(memory) -> tuple[int, object]:
    memory.refresh_from_db()
    return memory.use_count, memory.last_used_at


def test_a_conversation_uses_its_prompts_facts_once_and_unconfirmed_ones_never(person, eager):
    tea = _fact(person, "Loves strong tea")
    nurse = _fact(person, "Worked as a nurse", type="life_story", pinned=True)
    rumour = _fact(person, "Likes whisky at night", confirmed=False)
    start = {memory.id: _uses(memory) for memory in (tea, nurse, rumour)}
    session, _ = services.session_resolve(user_id=person.id)
    for message in ("Hello", "Is it time for tea?", "Hello again"):
        context_build(session_id=session.id, message=message)
    assert {use[0] for use in usage.pending()} == {str(tea.id), str(nurse.id)}
    assert _uses(tea) == start[tea.id]  # nothing written on the turn's path
    assert usage.flush() == 2  # one job for all of them
    assert _uses(tea)[0] == start[tea.id][0] + 1
    assert _uses(nurse)[0] == start[nurse.id][0] + 1
    assert _uses(tea)[1] > start[tea.id][1]
    assert _uses(rumour) == start[rumour.id]

    services.session_close(session_id=session.id)
    later, _ = services.session_resolve(user_id=person.id)
    context_build(session_id=later.id, message="Hello")
    usage.flush()
    assert _uses(nurse)[0] == start[nurse.id][0] + 2


def test_every_search_hit_counts(person, eager, api):
    garden = _fact(person, "Grew roses in the back garden", type="life_story")
    start = _uses(garden)[0]
    for _ in range(3):
        response = api.post(
            "/api/v1/memories/search",
            {"prefix": list(store.person_namespace(person.id)), "query": "roses garden"},
        )
        assert response.status_code == 200, response.content
        assert [item["memory"]["id"] for item in response.json()["items"]] == [str(garden.id)]
    usage.flush()
    assert _uses(garden)[0] == start + 3


def test_the_preference_ranking_reads_the_recorded_use(person, eager):
    first = _fact(person, "Likes the radio")
    second = _fact(person, "Likes crosswords")
    for memory in (first, second):
        Memory.objects.filter(id=memory.id).update(importance=1)
    store.memory_confirm(first.id, user=None)  # bumps the scope so copies reload
    before = [m.id for m in search.turn_facts(person_id=person.id, message="")]
    underdog = second if before.index(first.id) < before.index(second.id) else first
    now = timezone.now()
    store.memories_used([(underdog.id, None, 3, now)])
    after = [m.id for m in search.turn_facts(person_id=person.id, message="")]
    assert after.index(underdog.id) < after.index((first if underdog is second else second).id)


def test_the_timer_hands_the_uses_to_the_queue(settings, person):
    settings.CLARA_FACT_USE_FLUSH_SECONDS = 0.1
    usage.note([uuid.uuid4()])
    assert len(usage.pending()) == 1
    deadline = time.monotonic() + 5
    while usage.pending() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert usage.pending() == []


def test_a_forgotten_memory_is_passed_over(person, eager):
    gone = _fact(person, "Likes the sea")
    store.memory_forget(gone.id)
    assert store.memories_used([(gone.id, None, 1, timezone.now())]) == 0


def test_a_continuous_companion_records_no_story_told_and_no_fact_used_from_a_prompt_it_never_sends(
    person,
):
    """The dementia-safe prompt's story and facts are not chosen for a companion outside
    dementia care (its prompt is the stream's): nothing reaches its LLM from them, so nothing
    may count as told or used. The urgent-moment flag stands."""
    from memory.companion import continuity

    _fact(person, "Worked as a nurse", type="life_story", pinned=True)
    session, _ = services.session_resolve(user_id=person.id)
    # The same turns with Clara's rules: the fact counts, and a story is offered.
    offered = [
        context_build(session_id=session.id, message=message)
        for message in ("What day is it?", "What day is it?", "What day is it today?")
    ]
    assert usage.pending()
    assert any(result.narrative is not None for result in offered)
    usage.flush()

    continuity.persona_policy_set(slug="buddy", policy="continuous", display_name="Buddy")
    continuity.person_persona_set(person_id=person.id, persona="buddy")
    for message in ("What day is it?", "What day is it today?"):
        result = context_build(session_id=session.id, message=message)
        assert result.narrative is None
        assert "Buddy" in result.rendered.system_prompt
    assert usage.pending() == []
    urgent = context_build(session_id=session.id, message="I've fallen and I can't get up")
    assert urgent.escalation.escalate
