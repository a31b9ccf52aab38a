"""Long-term search's in-process copies: a write patches the copy (no rebuild) and the patched
copy ranks as a freshly built one does; the copies stay within the process's memory budget."""

import pytest
from django.utils import timezone

from memory.facts import search, store
from memory.models import Person

pytestmark = pytest.mark.django_db

FACTS = [
    ("garden", "Margaret grows roses and tomatoes in her garden"),
    ("daughter", "Her daughter Sarah visits on Sundays"),
    ("music", "She loves Vera Lynn and sings along to wartime songs"),
    ("tea", "She takes her tea with milk and one sugar"),
    ("dog", "She had a collie called Bess as a girl"),
]


def _person(name="Margaret") -> Person:
    now = timezone.now()
    return Person.objects.create(display_name=name, created_at=now, last_active_at=now)


def _put(person, key, content, **extra):
    return store.memory_upsert(
        namespace=store.person_namespace(person.id, "facts"), key=key, content=content, **extra
    )


def _ids(person, query):
    hits = search.memory_search(prefix=store.person_namespace(person.id), query=query).hits
    return [hit.memory.id for hit in hits]


@pytest.fixture
def person(db):
    search.clear_cache()
    person = _person()
    for key, content in FACTS:
        _put(person, key, content)
    yield person
    search.clear_cache()


def _copy(person):
    return search._copies[store.SEP.join(store.person_namespace(person.id))]


def test_a_write_patches_the_copy_instead_of_rebuilding_it(person):
    _ids(person, "garden")
    copy = _copy(person)
    keyword_index = copy.keyword.base

    added = _put(person, "choir", "She sang in the church choir for forty years")
    found = _ids(person, "church choir")

    assert found[0] == added.memory.id
    assert _copy(person) is copy
    assert copy.keyword.base is keyword_index  # patched: the index was not rebuilt
    assert copy.keyword.added == 1


def test_a_changed_fact_replaces_its_old_version_in_the_copy(person):
    _ids(person, "tea")
    _put(person, "tea", "She now drinks her tea black, no sugar")

    hits = search.memory_search(prefix=store.person_namespace(person.id), query="tea sugar").hits
    contents = [hit.memory.content for hit in hits]

    assert "She now drinks her tea black, no sugar" in contents
    assert "She takes her tea with milk and one sugar" not in contents
    assert _copy(person).retired == 1


def test_a_forgotten_fact_leaves_the_copy(person):
    _ids(person, "dog")
    dog = next(m for m in store.memory_list_for_person(person.id) if "Bess" in m.content)
    store.memory_forget(dog.id)

    assert dog.id not in _ids(person, "collie Bess dog")


@pytest.mark.parametrize("query", ["garden roses", "Sarah Sunday visit", "songs", "choir", "tea"])
def test_a_patched_copy_ranks_as_a_fresh_one(person, query):
    _ids(person, "warm up")
    _put(person, "choir", "She sang in the church choir for forty years")
    _put(person, "garden", "Margaret grows roses, sweet peas and tomatoes in her garden")
    _put(person, "walks", "She walks to the garden centre with Sarah")
    patched = _ids(person, query)
    assert _copy(person).keyword.added == 3

    search.clear_cache()
    fresh = _ids(person, query)

    assert patched == fresh


def test_copies_stay_within_the_memory_budget(person, settings):
    others = [_person(f"Person {i}") for i in range(3)]
    for other in others:
        _put(other, "garden", "Grows roses")
    settings.CLARA_SEARCH_MEMORY_MB = 0  # only the scope being searched is kept

    for other in others:
        _ids(other, "roses")
        assert search.cache_stats()["scopes"] == 1
    # A scope that was dropped loads again when searched.
    assert _ids(person, "roses garden")

    settings.CLARA_SEARCH_MEMORY_MB = 64
    for other in others:
        _ids(other, "roses")
    stats = search.cache_stats()
    assert stats["scopes"] == 4  # the three and the one searched before
    assert 0 < stats["bytes"] <= stats["budget_bytes"]


def test_the_count_of_bytes_held_follows_the_copies_as_they_come_and_go(person, settings):
    # Eviction keeps a running count (summing every copy on each search was a tenth of a web
    # process's CPU under load); it must stay the copies' own sum as they are added, searched
    # again, written to and evicted.
    others = [_person(f"Person {i}") for i in range(4)]
    for other in others:
        _put(other, "garden", "Grows roses")
        _ids(other, "roses")
    _put(others[0], "family", "Daughter is Ann")
    for other in others:
        _ids(other, "roses")
    held = search.cache_stats()["bytes"]
    assert search.metrics.SEARCH_MEMORY_BYTES._value.get() == held > 0

    size = [_copy(other).nbytes for other in others]
    budget = size[2] + size[3] + min(size[0], size[1]) // 2  # room for the last two searched
    settings.CLARA_SEARCH_MEMORY_MB = budget / (1024 * 1024)
    _ids(others[3], "roses")
    stats = search.cache_stats()
    assert stats["scopes"] == 2  # the two searched last; the two before were evicted
    assert search.metrics.SEARCH_MEMORY_BYTES._value.get() == stats["bytes"]
    assert _ids(others[0], "daughter")  # an evicted scope loads again


def test_a_search_that_read_an_older_generation_leaves_a_newer_copy_alone(person):
    # Two searches in one process: one reads the scope's generation, another reads a newer one
    # (after a write) and brings the copy up to it first. The late one must not move the copy
    # back, or the next search reads and patches in the same rows again.
    _ids(person, "garden")
    copy = _copy(person)
    older = copy.generation
    _put(person, "choir", "She sang in the church choir for forty years")
    _ids(person, "church choir")
    newer = copy.generation
    assert newer > older and copy.keyword.added == 1

    copy.refresh(older, copy.epoch)  # the late search, holding the generation it read
    _ids(person, "church choir")

    assert copy.generation == newer
    assert copy.keyword.added == 1  # the new fact patched in once, not twice


def test_a_cold_copy_reads_whole_rows_only_for_the_hits(person):
    for i in range(20):
        _put(person, f"extra{i}", f"An ordinary afternoon number {i} at home")
    search.clear_cache()

    hits = search.memory_search(
        prefix=store.person_namespace(person.id), query="garden roses", limit=2
    ).hits

    copy = _copy(person)
    assert copy.n == len(FACTS) + 20
    assert hits[0].memory.content == FACTS[0][1]
    assert set(copy.memories.loaded) == {copy.pos[hit.memory.id] for hit in hits}


def test_a_value_moved_from_another_row_fails_the_cold_load(person):
    from django.db.models import Subquery

    from memory.core.crypto import DecryptionError
    from memory.models import Memory

    rows = list(Memory.objects.filter(person=person).order_by("created_at"))
    Memory.objects.filter(id=rows[1].id).update(
        content=Subquery(Memory.objects.filter(id=rows[0].id).values("content")[:1])
    )
    search.clear_cache()

    with pytest.raises(DecryptionError):
        _ids(person, "garden")


def test_filtered_searches_see_rows_patched_in_after_the_build(person):
    _ids(person, "warm up")  # built: rows grouped by (confirmed, type)
    added = store.memory_upsert(
        namespace=store.person_namespace(person.id, "people"),
        key="grandson",
        content="Her grandson Tom plays the trumpet",
        type="people",
        confirmed=True,
    )

    # By meaning alone (no keywords) and above a threshold: only the rows the product
    # multiplies can pass.
    vector = search._query_vector("grandson trumpet")
    for filters in ({"types": ["people"]}, {"confirmed": True}, {"types": ["other"]}):
        hits = search.memory_search(
            prefix=store.person_namespace(person.id), query_vector=vector, threshold=0.5, **filters
        ).hits
        found = [hit.memory.id for hit in hits]
        if filters.get("types") == ["other"]:
            assert added.memory.id not in found
        else:
            assert found[0] == added.memory.id
    # And after a rebuild, from the blocks.
    search.clear_cache()
    hits = search.memory_search(
        prefix=store.person_namespace(person.id), query_vector=vector, threshold=0.5, confirmed=True
    ).hits
    assert [hit.memory.id for hit in hits] == [added.memory.id]
