"""The long-term memory store: upsert rules, history, expiry, namespaces, controls and erasure."""

import threading
import uuid
from datetime import timedelta

import pytest
from django.apps import apps
from django.db import connection
from django.utils import timezone

from memory import privacy
from memory.conversations import services
from memory.core.errors import Conflict, Invalid, NotFound
from memory.facts import notes as person_notes
from memory.facts import search, store
from memory.models import Alert, Memory, MemorySnapshot, Person, PersonNotes, Session

pytestmark = pytest.mark.django_db


@pytest.fixture
def person(db):
    now = timezone.now()
    return Person.objects.create(display_name="Margaret", created_at=now, last_active_at=now)


def ns(person, *rest):
    return store.person_namespace(person.id, *(rest or ("people",)))


# --- Validation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "namespace",
    [["memories"], [], ["memories", ""], ["memories", "  "], "memories/x", ["a", " b"], ["a", 3]],
)
def test_bad_namespace_is_refused_and_nothing_is_stored(namespace):
    with pytest.raises(Invalid) as exc:
        store.memory_upsert(namespace=namespace, content="Likes tea")
    assert exc.value.field == "namespace"
    assert Memory.objects.count() == 0


def test_content_over_2048_tokens_is_refused(person):
    with pytest.raises(Invalid) as exc:
        store.memory_upsert(namespace=ns(person), content="x" * (2048 * 4 + 1))
    assert exc.value.field == "content"
    # Exactly at the limit is fine.
    store.memory_upsert(namespace=ns(person), content="y" * (2048 * 4))
    assert Memory.objects.count() == 1


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"type": "hobby"}, "type"),
        ({"importance": 4}, "importance"),
        ({"entity_refs": ["John Smith"]}, "entity_refs"),
        ({"entity_refs": ["person:John"]}, "entity_refs"),
        ({"confidence": 1.5}, "confidence"),
        ({"ttl_minutes": 0}, "ttl_minutes"),
        ({"key": ""}, "key"),
    ],
)
def test_bad_fields_name_the_field(person, fields, field):
    with pytest.raises(Invalid) as exc:
        store.memory_upsert(namespace=ns(person), content="Likes tea", **fields)
    assert exc.value.field == field
    assert Memory.objects.count() == 0


def test_slugs_follow_the_entity_rules():
    assert store.slugify("Mary-Ann O'Brien") == "mary_ann_obrien"
    assert store.slugify("  Zoë  Smith ") == "zoe_smith"
    assert store.entity_ref("place", "St. Ives") == "place:st_ives"


# --- Put, get, dedupe, supersede ----------------------------------------------------------------


def test_put_then_get_by_namespace_and_key(person):
    result = store.memory_upsert(
        namespace=ns(person), key="daughter", content="Her daughter is Sarah", type="people"
    )
    assert result.action == "created"
    got = store.memory_get(namespace=ns(person), key="daughter")
    assert got.content == "Her daughter is Sarah"
    assert got.person_id == person.id
    assert got.confirmed is False


def test_unknown_key_is_not_found(person):
    with pytest.raises(NotFound) as exc:
        store.memory_get(namespace=ns(person), key="nobody")
    assert exc.value.field == "key"


def test_same_fact_again_reinforces_instead_of_adding(person):
    first = store.memory_upsert(
        namespace=ns(person), content="Loves a cup of tea", memory_key="preference|tea"
    )
    again = store.memory_upsert(
        namespace=ns(person), content="loves a cup of tea!", memory_key="preference|tea"
    )
    assert again.action == "reinforced"
    assert again.memory.id == first.memory.id
    assert Memory.objects.count() == 1
    assert Memory.objects.get().use_count == 2


def test_importance_grows_with_use(person):
    for _ in range(3):
        result = store.memory_upsert(
            namespace=ns(person, "routine"), content="Walks the dog every morning", key="dog"
        )
    assert result.memory.importance == 2
    for _ in range(7):
        result = store.memory_upsert(
            namespace=ns(person, "routine"), content="Walks the dog every morning", key="dog"
        )
    assert result.memory.use_count == 10
    assert result.memory.importance == 3


def test_a_new_value_supersedes_and_history_keeps_both(person):
    old = store.memory_upsert(
        namespace=ns(person),
        content="Her son lives in Leeds",
        memory_key="people|person|tom|residence",
        type="people",
    ).memory
    new = store.memory_upsert(
        namespace=ns(person),
        content="Her son moved to Glasgow last spring",
        memory_key="people|person|tom|residence",
        type="people",
    )
    assert new.action == "superseded"
    old.refresh_from_db()
    assert old.status == Memory.Status.DEPRECATED
    assert new.memory.supersedes_id == old.id
    assert new.memory.key == old.key
    history = store.memory_history(namespace=ns(person), key=old.key)
    assert [m.content for m in history] == [
        "Her son lives in Leeds",
        "Her son moved to Glasgow last spring",
    ]
    assert store.memory_get(namespace=ns(person), key=old.key).id == new.memory.id


def test_pinning_forces_importance_three(person):
    memory = store.memory_upsert(namespace=ns(person), content="Her name is Margaret").memory
    pinned = store.memory_pin(memory.id, pinned=True)
    assert pinned.importance == 3
    created = store.memory_upsert(
        namespace=ns(person), content="Was a nurse", importance=0, pinned=True
    ).memory
    assert created.importance == 3


def test_sensitive_details_are_never_stored(person):
    store.memory_upsert(namespace=ns(person), content="Her card is 4111 1111 1111 1111")
    with connection.cursor() as cursor:
        cursor.execute("SELECT content FROM memories")
        (content,) = cursor.fetchone()
    assert "4111" not in content


@pytest.mark.django_db(transaction=True)
@pytest.mark.concurrency
def test_concurrent_upserts_of_one_fact_leave_one_active_row(person):
    barrier = threading.Barrier(6)
    errors = []

    def write(i: int) -> None:
        try:
            barrier.wait()
            store.memory_upsert(
                namespace=ns(person),
                content=f"Her favourite flower is the {['rose', 'tulip', 'daisy'][i % 3]}",
                memory_key="preference|flower",
            )
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=write, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    active = Memory.objects.filter(memory_key="preference|flower", status="active")
    assert active.count() == 1
    # Every write is accounted for: each either created, superseded or reinforced a version.
    rows = Memory.objects.filter(memory_key="preference|flower")
    assert sum(m.use_count for m in rows) == 6


# --- Expiry ---------------------------------------------------------------------------------


def test_types_get_their_default_lifetimes(person):
    now = timezone.now()
    feeling = store.memory_upsert(
        namespace=ns(person, "feeling"), content="Felt lonely", type="feeling", at=now
    ).memory
    event = store.memory_upsert(
        namespace=ns(person, "event"), content="Grandson visits Saturday", type="event", at=now
    ).memory
    other = store.memory_upsert(namespace=ns(person, "other"), content="Rainy day", at=now).memory
    fact = store.memory_upsert(
        namespace=ns(person), content="Daughter Sarah", type="people", at=now
    ).memory
    assert feeling.expires_at == now + timedelta(hours=6)
    assert event.expires_at == now + timedelta(days=7)
    assert other.expires_at == now + timedelta(days=1)
    assert fact.expires_at is None


def test_expired_memories_never_come_back(person):
    now = timezone.now()
    store.memory_upsert(
        namespace=ns(person, "feeling"),
        key="mood",
        content="Felt anxious about the doctor",
        type="feeling",
        at=now,
    )
    later = now + timedelta(hours=7)
    with pytest.raises(NotFound):
        store.memory_get(namespace=ns(person, "feeling"), key="mood", at=later)
    hits = search.memory_search(
        prefix=store.person_namespace(person.id), query="anxious doctor", at=later
    ).hits
    assert hits == []
    assert store.namespaces_list(prefix=("memories",), at=later) == []
    # Before it expired, it was there.
    assert search.memory_search(
        prefix=store.person_namespace(person.id), query="anxious doctor", at=now
    ).hits


# --- Namespaces -----------------------------------------------------------------------------


def test_namespaces_list_by_prefix_and_depth(person):
    store.memory_upsert(namespace=ns(person, "people"), content="Daughter Sarah", type="people")
    store.memory_upsert(namespace=ns(person, "routine"), content="Church on Sunday")
    store.memory_upsert(namespace=("agent", "notes", "x"), content="Something else")
    pid = str(person.id)
    assert store.namespaces_list(prefix=("memories",)) == [
        ("memories", pid, "people"),
        ("memories", pid, "routine"),
    ]
    assert store.namespaces_list(max_depth=2) == [("agent", "notes"), ("memories", pid)]
    assert store.namespaces_list(suffix=("routine",)) == [("memories", pid, "routine")]
    assert store.namespaces_list(prefix=("memories",), limit=1, offset=1) == [
        ("memories", pid, "routine")
    ]


# --- Controls -------------------------------------------------------------------------------


def test_forget_an_entity_removes_every_fact_and_version_about_it(person):
    for content in ("Her daughter is Sarah", "Sarah visits on Sundays"):
        store.memory_upsert(
            namespace=ns(person), content=content, entity_refs=["person:sarah"], type="people"
        )
    store.memory_upsert(
        namespace=ns(person), content="Her son is Tom", entity_refs=["person:tom"], type="people"
    )
    deleted = store.memories_forget(person_id=person.id, entity="person:sarah")
    assert deleted == 2
    assert [m.content for m in Memory.objects.all()] == ["Her son is Tom"]


def test_forget_a_category(person):
    store.memory_upsert(namespace=ns(person, "routine"), content="Church on Sunday", type="routine")
    store.memory_upsert(namespace=ns(person), content="Her son is Tom", type="people")
    assert store.memories_forget(person_id=person.id, type="routine") == 1
    assert list(Memory.objects.values_list("type", flat=True)) == ["people"]


def test_memory_switched_off_refuses_new_memories(person):
    store.person_memory_set_enabled(person_id=person.id, enabled=False)
    with pytest.raises(Conflict) as exc:
        store.memory_upsert(namespace=ns(person), content="Likes tea")
    assert exc.value.field == "namespace"
    assert Memory.objects.count() == 0


def test_notes_fields_carry_their_update_time(person):
    t1 = timezone.now()
    person_notes.notes_update(
        person_id=person.id, fields={"mood": "cheerful", "plan": "garden"}, at=t1
    )
    t2 = t1 + timedelta(hours=1)
    notes = person_notes.notes_update(
        person_id=person.id, fields={"mood": "tired", "plan": None}, at=t2
    )
    assert notes.fields == {"mood": {"value": "tired", "updated_at": t2.isoformat()}}


def test_export_holds_memories_and_conversations(person):
    store.memory_upsert(namespace=ns(person), content="Her son is Tom", type="people")
    session, _ = services.session_resolve(user_id=person.id)
    services.exchange_record(
        session_id=session.id, user_message="Where is Tom?", assistant_message="Tom is well."
    )
    data = privacy.person_export(person.id)
    assert data["person"]["display_name"] == "Margaret"
    assert [m["content"] for m in data["memories"]] == ["Her son is Tom"]
    assert [m["content"] for m in data["messages"]] == ["Where is Tom?", "Tom is well."]
    csv_text = privacy.person_export_csv(person.id)
    assert csv_text.splitlines()[0].startswith('"id","namespace","key","type","content"')
    assert "Her son is Tom" in csv_text


def test_export_holds_the_persons_own_stories_and_commitments_not_the_library(person):
    from memory.models import Commitment, Narrative

    Narrative.objects.create(
        title="The wedding at Llandudno",
        text="Margaret married Tom at the chapel by the sea in 1961.",
        category=Narrative.Category.REMINISCENCE,
        person=person,
    )
    Narrative.objects.create(
        title="A walk by the river",
        text="The river is calm today.",
        category=Narrative.Category.CALMING_STORY,
    )
    Commitment.objects.create(
        person=person,
        kind=Commitment.Kind.PLAN,
        text="Ring Tom on Sunday",
        created_at=timezone.now(),
    )
    data = privacy.person_export(person.id)
    assert [(s["title"], s["text"]) for s in data["stories"]] == [
        ("The wedding at Llandudno", "Margaret married Tom at the chapel by the sea in 1961.")
    ]
    assert [(c["kind"], c["text"], c["status"]) for c in data["commitments"]] == [
        ("plan", "Ring Tom on Sunday", "open")
    ]


def _rows_referring_to(person_id: uuid.UUID) -> dict[str, int]:
    """Every row of every table with a foreign key to people, plus any text holding the id."""
    found = {}
    for model in apps.get_models():
        for field in model._meta.concrete_fields:
            if field.is_relation and field.related_model is Person:
                count = model.objects.filter(**{field.attname: person_id}).count()
                if count:
                    found[f"{model._meta.db_table}.{field.column}"] = count
    # Ids written into text (namespaces, scopes, JSON) count as references too.
    with connection.cursor() as cursor:
        for model in apps.get_models():
            table = model._meta.db_table
            for field in model._meta.concrete_fields:
                if field.get_internal_type() in ("CharField", "TextField", "JSONField"):
                    cursor.execute(
                        f'SELECT COUNT(*) FROM "{table}" WHERE CAST("{field.column}" AS TEXT) LIKE %s',
                        [f"%{person_id}%"],
                    )
                    (count,) = cursor.fetchone()
                    if count:
                        found[f"{table}.{field.column}"] = count
    return found


def test_erasing_a_person_leaves_no_row_that_refers_to_them(person, settings):
    settings.CLARA_SEARCH_SNAPSHOT_MIN_ROWS = 1  # search copies' snapshots too
    other = Person.objects.create(
        display_name="Arthur", created_at=timezone.now(), last_active_at=timezone.now()
    )
    for who in (person, other):
        session, _ = services.session_resolve(user_id=who.id)
        for text in ("Where is my husband?", "I feel scared", "Where is my husband?"):
            services.exchange_record(
                session_id=session.id,
                user_message=text,
                assistant_message="You're safe here with me.",
                emotion=None,
            )
        services.session_close(session_id=session.id)
        store.memory_upsert(namespace=ns(who), content="Her son is Tom", type="people")
        person_notes.notes_update(person_id=who.id, fields={"mood": "calm"})
        search.clear_cache()
        search.memory_search(prefix=store.person_namespace(who.id), query="son")
    assert MemorySnapshot.objects.filter(person=person).exists()
    Alert.objects.create(
        person=person, kind="escalation", dedupe_key=f"x:{person.id}", created_at=timezone.now()
    )
    assert _rows_referring_to(person.id)

    counts = privacy.person_erase(person.id)

    assert counts["people"] == 1
    assert _rows_referring_to(person.id) == {}
    # Someone else's data is untouched.
    assert Session.objects.filter(person=other).count() == 1
    assert Memory.objects.filter(person=other).count() == 1
    assert PersonNotes.objects.filter(person=other).count() == 1
    assert MemorySnapshot.objects.filter(person=other).count() == 1


def test_erasing_an_unknown_person_is_not_found():
    with pytest.raises(NotFound) as exc:
        privacy.person_erase(uuid.uuid4())
    assert exc.value.field == "person_id"
