"""The expiry sweep and the curator: what they remove, what they never touch, and idempotence."""

from datetime import timedelta

import pytest
from django.utils import timezone

from memory.facts import curation, search, store
from memory.models import Memory, Person

pytestmark = pytest.mark.django_db


@pytest.fixture
def person(db):
    now = timezone.now()
    return Person.objects.create(display_name="Margaret", created_at=now, last_active_at=now)


def put(person, content, *, type="people", at=None, **fields):
    return store.memory_upsert(
        namespace=store.person_namespace(person.id, type),
        content=content,
        type=type,
        at=at,
        **fields,
    ).memory


def test_sweep_deletes_what_has_expired_and_only_that(person):
    now = timezone.now()
    put(person, "Felt lonely this afternoon", type="feeling", at=now - timedelta(hours=7))
    put(person, "Feels cheerful", type="feeling", at=now - timedelta(hours=1))
    put(person, "Her son is Tom", at=now - timedelta(days=400))
    assert curation.memories_expire(now=now) == 1
    assert sorted(Memory.objects.values_list("content", flat=True)) == [
        "Feels cheerful",
        "Her son is Tom",
    ]
    assert curation.memories_expire(now=now) == 0


def test_curator_archives_stale_trivia_but_never_pinned_or_confirmed(person):
    long_ago = timezone.now() - timedelta(days=200)
    trivia = put(person, "Mentioned the bus was late", type="life_story", at=long_ago, importance=0)
    pinned = put(
        person,
        "Was a nurse for forty years",
        type="life_story",
        at=long_ago,
        importance=0,
        pinned=True,
    )
    confirmed = put(person, "Grew up in Leeds", type="life_story", at=long_ago, importance=1)
    store.memory_confirm(confirmed.id, user=None)
    important = put(person, "Her husband John died in 2015", at=long_ago, importance=3)

    report = curation.memories_curate()

    assert report.archived == 1
    statuses = {m.id: m.status for m in Memory.objects.all()}
    assert statuses[trivia.id] == "archived"
    assert statuses[pinned.id] == statuses[confirmed.id] == statuses[important.id] == "active"
    assert curation.memories_curate() == curation.CurationReport(archived=0, folded=0)


def test_curator_folds_near_duplicates_into_one_curated_memory(person):
    a = put(person, "Her daughter Sarah visits every Sunday", entity_refs=["person:sarah"])
    b = put(
        person,
        "Her daughter Sarah visits each Sunday",
        entity_refs=["person:sarah"],
        key="other-key",
    )
    keep = put(person, "Her son Tom lives in Glasgow", entity_refs=["person:tom"])
    pinned = put(person, "Sarah visits every Sunday afternoon", pinned=True)

    report = curation.memories_curate()

    assert report.folded == 2
    active = Memory.objects.filter(status="active")
    folded = active.get(source="curated_fold")
    assert folded.content in (a.content, b.content)
    assert folded.use_count == 2
    assert sorted(folded.metadata["folded_from"]) == sorted([str(a.id), str(b.id)])
    assert set(active.values_list("id", flat=True)) == {folded.id, keep.id, pinned.id}
    # Search sees one fact where there were two.
    hits = search.memory_search(prefix=store.person_namespace(person.id), query="Sarah Sunday")
    assert sum(1 for h in hits.hits if "daughter" in h.memory.content) == 1
    # Running again changes nothing.
    assert curation.memories_curate().folded == 0


def test_the_scheduled_jobs_are_in_the_beat_schedule_and_idempotent(person):
    from clara.celery import app
    from memory import tasks

    scheduled = {entry["task"] for entry in app.conf.beat_schedule.values()}
    assert {"memory.tasks.expire_memories", "memory.tasks.curate_memories"} <= scheduled
    put(person, "Felt lonely", type="feeling", at=timezone.now() - timedelta(hours=7))
    put(person, "Her daughter Sarah visits every Sunday")
    put(person, "Her daughter Sarah visits each Sunday", key="again")
    assert tasks.expire_memories() == 1
    assert tasks.expire_memories() == 0
    assert tasks.curate_memories() == {"archived": 0, "folded": 2}
    assert tasks.curate_memories() == {"archived": 0, "folded": 0}
