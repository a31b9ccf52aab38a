"""Snapshots of search copies (memory/facts/snapshots.py): a cold copy read from one encrypted
value ranks exactly as one built from every row; a stale snapshot is caught up, an unusable one
is rebuilt from rows; forgetting, erasure and key rotation leave nothing behind that should go."""

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from memory import privacy
from memory.core import crypto
from memory.facts import search, snapshots, store
from memory.models import Memory, MemoryScope, MemorySnapshot, Person

pytestmark = pytest.mark.django_db

NEW_KEY = crypto.generate_key()

FACTS = [
    ("garden", "Margaret grows roses and tomatoes in her garden", "preference", True),
    ("daughter", "Her daughter Sarah visits on Sundays", "people", True),
    ("music", "She loves Vera Lynn and sings along to wartime songs", "preference", False),
    ("tea", "She takes her tea with milk and one sugar", "routine", True),
    ("dog", "She had a collie called Bess as a girl", "life_story", False),
    ("son", "Her son Tom lives in Leeds and rings on Fridays", "people", False),
    ("dance", "She met her husband Bill at a dance in 1952", "life_story", True),
    ("church", "She sang in the church choir for forty years", "event", False),
]
# Every search at the same moment (recency is part of the score).
AT = timezone.now() + timedelta(days=3)
QUERIES = ["garden roses", "Sarah Sunday visit", "songs", "Tom Leeds", "tea sugar", "husband Bill"]


def _person(name="Margaret") -> Person:
    now = timezone.now()
    return Person.objects.create(display_name=name, created_at=now, last_active_at=now)


def _put(person, key, content, type="other", confirmed=False, **extra):
    return store.memory_upsert(
        namespace=store.person_namespace(person.id, type),
        key=key,
        content=content,
        type=type,
        confirmed=confirmed,
        **extra,
    )


def _fact(person, word) -> Memory:
    return next(m for m in store.memory_list_for_person(person.id) if word in m.content)


def _scope(person) -> str:
    return store.SEP.join(store.person_namespace(person.id))


@pytest.fixture
def person(db, settings):
    settings.CLARA_SEARCH_SNAPSHOT_MIN_ROWS = 1
    search.clear_cache()
    person = _person()
    for key, content, type_, confirmed in FACTS:
        ref = store.entity_ref("person", content.split()[2])
        _put(
            person,
            key,
            content,
            type=type_,
            confirmed=confirmed,
            entity_refs=[ref],
            pinned=key == "daughter",
            importance=3 if key == "daughter" else 2,
            persona="clara" if key == "music" else None,
            metadata={"about": key},
        )
    yield person
    search.clear_cache()


def _results(person) -> list:
    """Every kind of search the copy serves, as (ids, scores, relevances, cards)."""
    prefix = store.person_namespace(person.id)
    out = []
    for query in QUERIES:
        vector = search._query_vector(query)
        for filters in (
            {},
            {"types": ["people", "life_story"]},
            {"confirmed": True, "persona": "clara"},
            {"metadata": {"about": "tea"}},
            {"offset": 2, "limit": 3},
            {"threshold": 0.1},
        ):
            result = search.memory_search(
                prefix=prefix,
                query=query,
                query_vector=vector,
                entity_cards=True,
                at=AT,
                **filters,
            )
            out.append(
                (
                    query,
                    filters,
                    [h.memory.id for h in result.hits],
                    [h.score for h in result.hits],
                    [h.relevance for h in result.hits],
                    result.entity_cards,
                )
            )
    browse = search.memory_search(prefix=prefix, limit=20, at=AT)
    out.append([h.memory.id for h in browse.hits])
    facts = search.turn_facts(person_id=person.id, message="Is Sarah coming on Sunday?", at=AT)
    out.append([m.id for m in facts])
    return out


def _from_rows_only(monkeypatch):
    """From here on a copy must not be built from rows (it comes from the snapshot)."""

    def refuse(scope):
        raise AssertionError("built from rows, not from the snapshot")

    monkeypatch.setattr(search, "_load_records", refuse)


def _full_build(person) -> list:
    """What a copy built from every row gives (no snapshot to read)."""
    search.clear_cache()
    MemorySnapshot.objects.all().delete()
    settings_min = snapshots.settings.CLARA_SEARCH_SNAPSHOT_MIN_ROWS
    try:
        snapshots.settings.CLARA_SEARCH_SNAPSHOT_MIN_ROWS = 10**9  # and none written
        return _results(person)
    finally:
        snapshots.settings.CLARA_SEARCH_SNAPSHOT_MIN_ROWS = settings_min
        search.clear_cache()


def test_a_cold_copy_from_the_snapshot_ranks_exactly_as_one_built_from_rows(person, monkeypatch):
    built = _results(person)  # the first search builds from rows and writes the snapshot
    snapshot = MemorySnapshot.objects.get(scope_id=_scope(person))
    assert snapshot.person_id == person.id
    assert snapshot.generation == MemoryScope.objects.get(scope=_scope(person)).generation

    search.clear_cache()
    with monkeypatch.context() as mp:
        _from_rows_only(mp)
        restored = _results(person)

    assert restored == built
    assert restored == _full_build(person)


def test_the_snapshot_is_encrypted_and_bound_to_its_row(person):
    _results(person)
    with connection.cursor() as cursor:
        cursor.execute("SELECT data FROM memory_snapshots")
        (data,) = cursor.fetchone()
    data = bytes(data)
    assert data.startswith(f"{crypto.ROW_PREFIX}{crypto.keyring().primary.kid}:".encode())
    for word in (b"tomato", b"Sarah", b"collie", b"person:sarah"):
        assert word not in data


def test_a_stale_snapshot_is_caught_up_by_revision(person, monkeypatch):
    _results(person)
    taken = MemorySnapshot.objects.get().generation
    # Written after the snapshot: a new fact, a changed one, one confirmed.
    _put(person, "choir", "She sang in the church choir for forty years", type="event")
    _put(person, "tea", "She now drinks her tea black, no sugar", type="routine", confirmed=True)
    store.memory_pin(_fact(person, "Bess").id, pinned=True)
    # This process's copy patches them in (and writes no snapshot): what catching up must give.
    warm = _results(person)
    assert search._copies[_scope(person)].keyword.added == 3
    assert MemorySnapshot.objects.get().generation == taken

    search.clear_cache()
    with monkeypatch.context() as mp:
        _from_rows_only(mp)
        caught_up = _results(person)
        tea = search.memory_search(prefix=store.person_namespace(person.id), query="tea").hits
    assert "She now drinks her tea black, no sugar" in [h.memory.content for h in tea]
    assert "She takes her tea with milk and one sugar" not in [h.memory.content for h in tea]
    assert caught_up == warm


def test_a_snapshot_behind_by_many_writes_is_rebuilt_and_written_again(person, monkeypatch):
    _results(person)
    taken = MemorySnapshot.objects.get().generation
    search.clear_cache()
    for i in range(300):  # past the share a copy patches before rebuilding
        Memory.objects.create(
            namespace=store.SEP.join(store.person_namespace(person.id, "event")),
            scope=_scope(person),
            key=f"extra{i}",
            person=person,
            content=f"An ordinary afternoon number {i} at home",
            type="event",
            revision=store._bump_scope(_scope(person)),
            created_at=timezone.now(),
            updated_at=timezone.now(),
        )
    with monkeypatch.context() as mp:
        _from_rows_only(mp)
        caught_up = _results(person)

    assert MemorySnapshot.objects.get().generation > taken
    assert caught_up == _full_build(person)


def test_forgetting_a_fact_deletes_the_snapshot(person):
    _results(person)
    dog = _fact(person, "Bess")
    store.memory_forget(dog.id)

    assert not MemorySnapshot.objects.exists()
    ids = [
        h.memory.id
        for h in search.memory_search(
            prefix=store.person_namespace(person.id), query="collie Bess"
        ).hits
    ]
    assert dog.id not in ids


def test_an_erased_person_leaves_no_snapshot(person):
    other = _person("Arthur")
    _put(other, "garden", "Arthur grows leeks")
    _results(person)
    search.memory_search(prefix=store.person_namespace(other.id), query="leeks")
    assert MemorySnapshot.objects.count() == 2

    privacy.person_erase(person.id)

    assert list(MemorySnapshot.objects.values_list("scope_id", flat=True)) == [_scope(other)]


def test_a_snapshot_is_not_written_once_the_scope_has_moved_on(person):
    _results(person)
    copy = search._copies[_scope(person)]
    MemorySnapshot.objects.all().delete()
    _put(person, "choir", "She sang in the church choir for forty years", type="event")

    assert snapshots.write(copy) is False  # the copy is at an older generation
    assert not MemorySnapshot.objects.exists()

    privacy.person_erase(person.id)
    copy.generation += 1
    assert snapshots.write(copy) is False  # and never for a scope that is gone
    assert not MemorySnapshot.objects.exists()


def test_an_unreadable_or_moved_snapshot_is_rebuilt_from_rows(person):
    built = _results(person)
    other = _person("Arthur")
    _put(other, "garden", "Arthur grows leeks")
    search.memory_search(prefix=store.person_namespace(other.id), query="leeks")
    mine = MemorySnapshot.objects.get(scope_id=_scope(person))
    theirs = MemorySnapshot.objects.get(scope_id=_scope(other))

    # Arthur's snapshot moved into Margaret's row: bound to another row, refused.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT data FROM memory_snapshots WHERE id = %s",
            [MemorySnapshot._meta.pk.get_db_prep_value(theirs.id, connection)],
        )
        (data,) = cursor.fetchone()
        cursor.execute(
            "UPDATE memory_snapshots SET data = %s WHERE id = %s",
            [data, MemorySnapshot._meta.pk.get_db_prep_value(mine.id, connection)],
        )
    search.clear_cache()
    assert _results(person) == built

    # Tampered with: does not decrypt, rebuilt (and written again).
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT data FROM memory_snapshots WHERE id = %s",
            [MemorySnapshot._meta.pk.get_db_prep_value(mine.id, connection)],
        )
        (data,) = cursor.fetchone()
        data = bytearray(data)
        data[-1] ^= 1
        cursor.execute(
            "UPDATE memory_snapshots SET data = %s WHERE id = %s",
            [bytes(data), MemorySnapshot._meta.pk.get_db_prep_value(mine.id, connection)],
        )
    search.clear_cache()
    assert _results(person) == built
    assert snapshots.read(_scope(person), generation=10**9, epoch=mine.epoch) is not None


def test_small_scopes_keep_no_snapshot(person, settings):
    settings.CLARA_SEARCH_SNAPSHOT_MIN_ROWS = len(FACTS) + 1
    _results(person)
    assert not MemorySnapshot.objects.exists()


def test_rotate_keys_keeps_the_snapshot_working(person, settings, monkeypatch):
    built = _results(person)
    old_kid = crypto.keyring().primary.kid

    settings.CLARA_ENCRYPTION_KEYS = [NEW_KEY, *settings.CLARA_ENCRYPTION_KEYS]
    out = io.StringIO()
    call_command("rotate_keys", stdout=out)
    assert "memory_snapshots.data: 1 rows, 1 rewritten" in out.getvalue()

    settings.CLARA_ENCRYPTION_KEYS = [NEW_KEY]  # the old key dropped
    with connection.cursor() as cursor:
        cursor.execute("SELECT data FROM memory_snapshots")
        (data,) = cursor.fetchone()
    new_kid = crypto.keyring().primary.kid
    assert new_kid != old_kid
    assert bytes(data).startswith(f"{crypto.ROW_PREFIX}{new_kid}:".encode())
    search.clear_cache()
    with monkeypatch.context() as mp:
        _from_rows_only(mp)
        assert _results(person) == built
