"""Ciphertexts are bound to their table, column and row; keys and names still match in SQL.

Someone who can write the database but holds no key must not be able to move a value to where
it would be read as something else: another column, another table, another row (another
person's). Keys and names are sealed deterministically so lookups and unique constraints keep
working, under key rotation too.
"""

import io
import json
import uuid

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.exceptions import FieldError
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.test import RequestFactory
from django.utils import timezone

from memory import reencrypt
from memory.conversations import repeats, selectors, services
from memory.core import crypto
from memory.core.fields import for_row
from memory.facts import store
from memory.models import ChatMessage, Memory, Person, RepetitionRecord, RollingSummary

KEY_A, KEY_B = crypto.generate_key(), crypto.generate_key()


def _uuid(pk):
    return Person._meta.pk.get_db_prep_value(pk, connection)


def raw(table: str, column: str, pk) -> object:
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {quote(column)} FROM {quote(table)} WHERE id = %s",  # noqa: S608
            [_uuid(pk) if isinstance(pk, uuid.UUID) else pk],
        )
        return cursor.fetchone()[0]


def write_raw(table: str, column: str, pk, value) -> None:
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {quote(table)} SET {quote(column)} = %s WHERE id = %s",  # noqa: S608
            [value, _uuid(pk) if isinstance(pk, uuid.UUID) else pk],
        )


def make_person(name: str) -> Person:
    now = timezone.now()
    return Person.objects.create(display_name=name, created_at=now, last_active_at=now)


def talk(session_id, message: str):
    return services.exchange_record(
        session_id=session_id, user_message=message, assistant_message="I'm here with you."
    )


@pytest.fixture
def two_sessions(db):
    sessions = []
    for name in ("Ada", "Bea"):
        person = make_person(name)
        session, _ = services.session_resolve(session_id=uuid.uuid4(), user_id=person.id)
        sessions.append(session)
    talk(sessions[0].id, "Where is my husband Frank?")
    talk(sessions[1].id, "When is lunch?")
    return sessions


def _user_message(session) -> ChatMessage:
    return ChatMessage.objects.get(session_id=session.id, role=ChatMessage.Role.USER)


# --- Rows -------------------------------------------------------------------------------------


def test_a_value_names_its_row_in_its_authenticated_header(two_sessions):
    message = _user_message(two_sessions[0])
    value = raw("chat_messages", "content", message.id)
    assert value.startswith(f"{crypto.ROW_PREFIX}{crypto.keyring().primary.kid}:{message.id}:")
    # Editing the row in the header breaks the authentication.
    other = _user_message(two_sessions[1]).id
    forged = value.replace(str(message.id), str(other))
    write_raw("chat_messages", "content", other, forged)
    with pytest.raises(crypto.DecryptionError):
        ChatMessage.objects.get(id=other)


def test_a_message_moved_to_another_persons_row_is_refused_by_every_reader(two_sessions):
    ada, bea = (_user_message(s) for s in two_sessions)
    write_raw("chat_messages", "content", bea.id, raw("chat_messages", "content", ada.id))

    with pytest.raises(crypto.DecryptionError, match="another row"):
        ChatMessage.objects.get(id=bea.id)
    with pytest.raises(crypto.DecryptionError, match="another row"):
        list(ChatMessage.objects.select_related("session").filter(session_id=bea.session_id))
    with pytest.raises(crypto.DecryptionError, match="another row"):
        selectors.memory_query(session_id=bea.session_id, message="Is it lunch yet?")
    # The untouched row still reads.
    assert ChatMessage.objects.get(id=ada.id).content == "Where is my husband Frank?"


def test_a_caregiver_context_moved_to_another_person_is_refused(two_sessions):
    ada, bea = (Person.objects.get(id=s.person_id) for s in two_sessions)
    ada.caregiver_context = {"preferredName": "Ada", "avoidTopics": ["Frank"]}
    ada.save()
    moved = raw("people", "caregiver_context", ada.id)
    write_raw("people", "caregiver_context", bea.id, moved)
    with pytest.raises(crypto.DecryptionError):
        Person.objects.get(id=bea.id)
    with pytest.raises(crypto.DecryptionError):
        selectors.memory_query(session_id=two_sessions[1].id, message="Hello")


def test_rows_numbered_by_the_database_are_bound_to_their_person(db):
    # A rolling summary's id is assigned at the insert: its text is bound to the person.
    ada, bea = make_person("Ada"), make_person("Bea")
    now = timezone.now()
    a = RollingSummary.objects.create(person=ada, text="Ada misses Frank", updated_at=now)
    b = RollingSummary.objects.create(person=bea, text="Bea likes lunch", updated_at=now)
    assert raw("rolling_summaries", "text", a.id).startswith(f"{crypto.ROW_PREFIX}")
    assert f":{ada.id}:" in raw("rolling_summaries", "text", a.id)
    write_raw("rolling_summaries", "text", b.id, raw("rolling_summaries", "text", a.id))
    with pytest.raises(crypto.DecryptionError):
        RollingSummary.objects.get(id=b.id)


def test_a_value_moved_to_another_column_or_table_does_not_decrypt(two_sessions):
    message = _user_message(two_sessions[0])
    record = RepetitionRecord.objects.get(message_id=message.id)
    # Same row id, other column: the context differs.
    write_raw(
        "repetition_tracking",
        "response_given",
        record.id,
        raw("repetition_tracking", "original_message", record.id),
    )
    with pytest.raises(crypto.DecryptionError, match="does not decrypt"):
        RepetitionRecord.objects.get(id=record.id)
    # Another table.
    other = _user_message(two_sessions[1])
    moved = raw("repetition_tracking", "original_message", record.id)
    write_raw("chat_messages", "content", other.id, moved)
    with pytest.raises(crypto.DecryptionError):
        ChatMessage.objects.get(id=other.id)


def test_copying_a_read_value_into_a_new_row_binds_it_to_the_new_row(two_sessions):
    # Code may copy what it read (curation folds memories): the copy is sealed for its row.
    message = _user_message(two_sessions[0])
    copy = Memory.objects.create(
        namespace=f"memories\x1f{message.person_id}\x1fevent",
        scope=f"memories\x1f{message.person_id}",
        key="copied",
        person_id=message.person_id,
        content=message.content,
        created_at=timezone.now(),
        updated_at=timezone.now(),
    )
    assert Memory.objects.get(id=copy.id).content == "Where is my husband Frank?"
    assert f":{copy.id}:" in raw("memories", "content", copy.id)


def test_update_without_a_row_is_refused_and_for_row_binds_it(two_sessions):
    person = Person.objects.get(id=two_sessions[0].person_id)
    other = Person.objects.get(id=two_sessions[1].person_id)
    # QuerySet.update and bulk_update know no row: a value they wrote would be bound to its
    # column only, and could be swapped between people unnoticed.
    with pytest.raises(FieldError, match="for_row"), transaction.atomic():
        Person.objects.filter(id=person.id).update(caregiver_context={"preferredName": "Ada"})
    with pytest.raises(FieldError, match="for_row"), transaction.atomic():
        Memory.objects.filter(person_id=person.id).update(content="Plays the cello")
    person.caregiver_context = {"preferredName": "Ada"}
    with pytest.raises(FieldError, match="for_row"), transaction.atomic():
        Person.objects.bulk_update([person], ["caregiver_context"])
    # Told its row, the same update binds the value to it...
    Person.objects.filter(id=person.id).update(
        caregiver_context=for_row({"preferredName": "Ada"}, person.id)
    )
    assert f":{person.id}:" in raw("people", "caregiver_context", person.id)
    assert Person.objects.get(id=person.id).caregiver_context == {"preferredName": "Ada"}
    # ...so moved to another person it is refused. None needs no row.
    write_raw(
        "people", "caregiver_context", other.id, raw("people", "caregiver_context", person.id)
    )
    with pytest.raises(crypto.DecryptionError):
        Person.objects.get(id=other.id)
    RepetitionRecord.objects.filter(person_id=person.id).update(meaning=None)


def _raw_meaning(record_id) -> bytes:
    with connection.cursor() as cursor:
        cursor.execute("SELECT meaning FROM repetition_tracking WHERE id = %s", [_uuid(record_id)])
        return bytes(cursor.fetchone()[0])


def test_a_meaning_moved_to_another_row_is_refused(two_sessions):
    ada, bea = (RepetitionRecord.objects.get(session_id=s.id) for s in two_sessions)
    value = _raw_meaning(ada.id)
    assert value.startswith(f"{crypto.ROW_PREFIX}{crypto.keyring().primary.kid}:{ada.id}:".encode())
    assert repeats.from_db(value, _uuid(ada.id)) is not None
    # Copied onto another person's record: refused by the raw reader, the ORM and the turn.
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE repetition_tracking SET meaning = %s WHERE id = %s", [value, _uuid(bea.id)]
        )
    with pytest.raises(crypto.DecryptionError, match="another row"):
        repeats.from_db(value, _uuid(bea.id))
    with pytest.raises(crypto.DecryptionError, match="another row"):
        repeats.from_db(value, bea.id)  # a UUID, as PostgreSQL gives it
    with pytest.raises(crypto.DecryptionError, match="another row"):
        RepetitionRecord.objects.get(id=bea.id)
    with pytest.raises(crypto.DecryptionError, match="another row"):
        selectors.memory_query(session_id=bea.session_id, message="When do we eat?")
    # And by the caregivers' repeated-questions panel, which groups wordings by their meaning.
    from dashboard.selectors import most_repeated_questions

    with pytest.raises(crypto.DecryptionError, match="another row"):
        most_repeated_questions(person=two_sessions[1].person, now=timezone.now())
    # Editing the row in the header breaks the authentication.
    forged = value.replace(str(ada.id).encode(), str(bea.id).encode())
    with pytest.raises(crypto.DecryptionError, match="does not decrypt"):
        repeats.from_db(forged, _uuid(bea.id))
    # The untouched row still reads, by every reader.
    repeats.clear_caches()
    assert repeats.from_db(_raw_meaning(ada.id), _uuid(ada.id)) is not None
    assert selectors.memory_query(session_id=ada.session_id, message="Where's Frank?") is not None


def test_a_meaning_bound_to_its_column_only_is_bound_by_rotate_keys(two_sessions):
    record = RepetitionRecord.objects.get(session_id=two_sessions[0].id)
    plain = crypto.decrypt_bytes(_raw_meaning(record.id), context=repeats.MEANING_CONTEXT)
    column_only = crypto.encrypt_bytes(plain, context=repeats.MEANING_CONTEXT)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE repetition_tracking SET meaning = %s WHERE id = %s",
            [column_only, _uuid(record.id)],
        )
    assert repeats.from_db(column_only, _uuid(record.id)) is not None  # still reads
    counts = {(c.table, c.column): c.rewritten for c in reencrypt.reencrypt_all(dry_run=True)}
    assert counts[("repetition_tracking", "meaning")] == 1  # `rotate_keys --check` sees it

    call_command("rotate_keys", stdout=io.StringIO())
    bound = _raw_meaning(record.id)
    assert bound.startswith(
        f"{crypto.ROW_PREFIX}{crypto.keyring().primary.kid}:{record.id}:".encode()
    )
    assert crypto.decrypt_bytes(bound, context=repeats.MEANING_CONTEXT) == plain
    assert repeats.from_db(bound, _uuid(record.id)) is not None
    again = io.StringIO()
    call_command("rotate_keys", stdout=again)
    assert again.getvalue().rstrip().endswith("total: 0 value(s) rewritten")


def test_values_from_before_the_rule_are_bound_by_rotate_keys(two_sessions):
    person = Person.objects.get(id=two_sessions[0].person_id)
    # A value bound to its column only (as QuerySet.update wrote them before it was refused).
    column_only = crypto.encrypt('{"preferredName": "Ada"}', context="people.caregiver_context")
    write_raw("people", "caregiver_context", person.id, json.dumps(column_only))
    assert raw("people", "caregiver_context", person.id).lstrip('"').startswith(crypto.BOUND_PREFIX)
    assert Person.objects.get(id=person.id).caregiver_context == {"preferredName": "Ada"}
    # The rotation pass binds every value to its row (and is idempotent).
    call_command("rotate_keys", stdout=io.StringIO())
    assert f":{person.id}:" in raw("people", "caregiver_context", person.id)
    again = io.StringIO()
    call_command("rotate_keys", stdout=again)
    assert again.getvalue().rstrip().endswith("total: 0 value(s) rewritten")
    assert Person.objects.get(id=person.id).caregiver_context == {"preferredName": "Ada"}


# --- Keys and names: sealed deterministically -------------------------------------------------


def _remember(person, key="likes:tea", memory_key="preference|self|drink:tea"):
    return store.memory_upsert(
        namespace=store.person_namespace(person.id, "preference"),
        content="Likes tea with Frank",
        key=key,
        memory_key=memory_key,
        entity_refs=["person:frank"],
        entity_labels={"person:frank": "Frank"},
        metadata={"source_text": "I always have tea with Frank."},
        embed=False,
    ).memory


def test_keys_are_sealed_and_still_found_by_equality(db):
    person = make_person("Ada")
    memory = _remember(person)
    for column in ("key", "memory_key"):
        value = raw("memories", column, memory.id)
        assert value.startswith(crypto.LOOKUP_PREFIX) and "tea" not in value
    namespace = store.person_namespace(person.id, "preference")
    assert store.memory_get(namespace=namespace, key="likes:tea").id == memory.id
    assert Memory.objects.filter(memory_key__in=["x", "preference|self|drink:tea"]).count() == 1
    # Said again: the same sealed identity, so reinforced, not duplicated.
    assert _remember(person).id == memory.id
    assert Memory.objects.count() == 1
    with pytest.raises(FieldError, match="encrypted"):
        Memory.objects.filter(memory_key__startswith="preference").exists()


def test_the_unique_constraint_holds_on_sealed_keys(db):
    person = make_person("Ada")
    memory = _remember(person)
    duplicate = Memory(
        namespace=memory.namespace,
        scope=memory.scope,
        key="another",
        memory_key=memory.memory_key,
        person=person,
        content="Likes tea",
        created_at=memory.created_at,
        updated_at=memory.updated_at,
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        duplicate.save()


def test_keys_are_found_during_a_rotation_and_rewritten_by_rotate_keys(db, settings):
    settings.CLARA_ENCRYPTION_KEYS = [KEY_A]
    person = make_person("Ada")
    memory = _remember(person)
    settings.CLARA_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    namespace = store.person_namespace(person.id, "preference")
    # Rows under the old key are still found by their key, and not duplicated.
    assert store.memory_get(namespace=namespace, key="likes:tea").id == memory.id
    assert _remember(person).id == memory.id
    assert Person.objects.filter(display_name="Ada").count() == 1

    call_command("rotate_keys", stdout=io.StringIO())
    settings.CLARA_ENCRYPTION_KEYS = [KEY_B]
    assert store.memory_get(namespace=namespace, key="likes:tea").id == memory.id
    assert Person.objects.get(display_name="Ada").id == person.id
    assert raw("memories", "key", memory.id).startswith(
        f"{crypto.LOOKUP_PREFIX}{crypto.keyring().primary.kid}:"
    )


def test_plaintext_memory_rows_are_encrypted_by_the_migration_pass(db):
    person = make_person("Ada")
    memory = _remember(person)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memories SET key = %s, memory_key = %s, metadata = %s, entity_labels = %s "
            "WHERE id = %s",
            [
                "likes:tea",
                "preference|self|drink:tea",
                connection.ops.adapt_json_value({"source_text": "tea with Frank"}, None),
                connection.ops.adapt_json_value({"person:frank": "Frank"}, None),
                _uuid(memory.id),
            ],
        )
        cursor.execute(
            "UPDATE people SET display_name = %s WHERE id = %s", ["Ada", _uuid(person.id)]
        )
    # Plaintext reads as it is (a row from before this release)...
    assert Memory.objects.get(id=memory.id).entity_labels == {"person:frank": "Frank"}
    reencrypt.reencrypt_all()
    # ...and after the pass, nothing of it is in the clear, and lookups find it.
    for column in ("key", "memory_key", "metadata", "entity_labels"):
        assert "Frank" not in str(raw("memories", column, memory.id))
        assert "tea" not in str(raw("memories", column, memory.id))
    assert raw("people", "display_name", person.id) != "Ada"
    assert Memory.objects.get(memory_key="preference|self|drink:tea").metadata == {
        "source_text": "tea with Frank"
    }
    assert Person.objects.get(display_name="Ada").id == person.id


def test_embeddings_are_encrypted_and_read_back_as_the_vector(db):
    person = make_person("Ada")
    vector = bytes(range(16)) * 96  # 384 float32s
    memory = store.memory_upsert(
        namespace=store.person_namespace(person.id, "event"),
        content="Went to the seaside with Frank",
        embedding=vector,
    ).memory
    stored = bytes(raw("memories", "embedding", memory.id))
    assert vector[:32] not in stored
    assert bytes(Memory.objects.get(id=memory.id).embedding) == vector


def test_the_admin_finds_a_person_by_the_exact_name(db):
    ada, _bea = make_person("Ada Lovelace"), make_person("Bea")
    superuser = get_user_model().objects.create_superuser("root", password="x" * 20)
    request = RequestFactory().get("/admin/memory/person/", {"q": "Ada Lovelace"})
    request.user = superuser
    person_admin = admin.site._registry[Person]
    found, _ = person_admin.get_search_results(
        request, person_admin.get_queryset(request), "Ada Lovelace"
    )
    assert list(found) == [ada]
    partial, _ = person_admin.get_search_results(request, person_admin.get_queryset(request), "Ada")
    assert list(partial) == []  # no substring of a name is stored to match
    # Pages that search by the person's name (person__display_name) reach it the same way.
    session, _ = services.session_resolve(session_id=uuid.uuid4(), user_id=ada.id)
    talk(session.id, "Hello")
    message_admin = admin.site._registry[ChatMessage]
    messages, _ = message_admin.get_search_results(
        request, message_admin.get_queryset(request), "Ada Lovelace"
    )
    assert {m.person_id for m in messages} == {ada.id}


# --- Names: bound to their row, found by a keyed hash -------------------------------------------


def test_a_renamed_person_is_found_by_the_new_name_however_the_rename_was_written(db):
    ada, bea, cy = make_person("Ada"), make_person("Bea"), make_person("Cy")
    # update() with the name bound to its row writes the lookup hash too...
    Person.objects.filter(id=ada.id).update(display_name=for_row("Ada King", ada.id))
    # ...as does save() naming only the name among its update_fields.
    bea.display_name = "Beatrice"
    bea.save(update_fields=["display_name"])
    assert Person.objects.get(display_name="Ada King").id == ada.id
    assert Person.objects.get(display_name="Beatrice").id == bea.id
    assert not Person.objects.filter(display_name__in=["Ada", "Bea"]).exists()
    assert Person.objects.get(id=ada.id).display_name == "Ada King"
    # An SQL expression has no plaintext to hash: refused, nothing written.
    from django.db.models import F

    with pytest.raises(FieldError, match="keyed hash"), transaction.atomic():
        Person.objects.filter(id=cy.id).update(display_name=F("persona"))
    assert Person.objects.get(display_name="Cy").id == cy.id


def test_a_name_is_bound_to_its_person_and_refused_on_another(two_sessions):
    ada, bea = (Person.objects.get(id=s.person_id) for s in two_sessions)
    value = raw("people", "display_name", ada.id)
    assert value.startswith(f"{crypto.ROW_PREFIX}{crypto.keyring().primary.kid}:{ada.id}:")
    assert "Ada" not in raw("people", "display_name_index", ada.id)
    # Ada's name copied onto Bea's row (a database writer wanting Bea shown as Ada).
    write_raw("people", "display_name", bea.id, value)
    with pytest.raises(crypto.DecryptionError, match="another row"):
        Person.objects.get(id=bea.id)
    with pytest.raises(crypto.DecryptionError, match="another row"):
        selectors.memory_query(session_id=two_sessions[1].id, message="Hello")
    assert Person.objects.get(id=ada.id).display_name == "Ada"


def test_a_name_is_found_by_its_exact_text_and_follows_a_rename(two_sessions):
    ada, bea = (Person.objects.get(id=s.person_id) for s in two_sessions)
    assert list(Person.objects.filter(display_name="Ada")) == [ada]
    assert list(Person.objects.filter(display_name__in=["Zed", "Bea"])) == [bea]
    assert not Person.objects.filter(display_name="ada").exists()
    assert ChatMessage.objects.filter(person__display_name="Ada").count() == 2
    # Renamed by the bot: the hash follows the name.
    services.session_resolve(session_id=two_sessions[0].id, display_name="Ada Lovelace")
    assert Person.objects.get(display_name="Ada Lovelace").id == ada.id
    assert not Person.objects.filter(display_name="Ada").exists()
    with pytest.raises(FieldError, match="encrypted"):
        Person.objects.filter(display_name__startswith="Ada").exists()


def test_names_sealed_the_old_way_are_rewritten_and_indexed_by_the_pass(two_sessions):
    ada = Person.objects.get(id=two_sessions[0].person_id)
    # As the previous release stored it: deterministic, bound to the column only, no hash.
    old = crypto.seal_lookup("Ada", context="people.display_name")
    write_raw("people", "display_name", ada.id, old)
    write_raw("people", "display_name_index", ada.id, "")
    assert Person.objects.get(id=ada.id).display_name == "Ada"  # still reads
    assert not Person.objects.filter(display_name="Ada").exists()  # not yet findable
    call_command("rotate_keys", stdout=io.StringIO())
    assert raw("people", "display_name", ada.id).startswith(f"{crypto.ROW_PREFIX}")
    assert f":{ada.id}:" in raw("people", "display_name", ada.id)
    assert Person.objects.get(display_name="Ada").id == ada.id


def test_a_message_of_a_session_without_a_person_is_bound_to_its_own_row(db):
    # Its row (the message's id, made before the insert) is known whether or not the session
    # has a person yet; linking the person later changes nothing the value is bound to.
    session, _ = services.session_resolve(session_id=uuid.uuid4())
    talk(session.id, "Where is my husband Frank?")
    message = ChatMessage.objects.get(session_id=session.id, role=ChatMessage.Role.USER)
    assert message.person_id is None
    assert f"{crypto.ROW_PREFIX}{crypto.keyring().primary.kid}:{message.id}:" in raw(
        "chat_messages", "content", message.id
    )
    person = make_person("Ada")
    services.session_resolve(session_id=session.id, user_id=person.id)
    assert ChatMessage.objects.get(id=message.id).person_id == person.id
    assert ChatMessage.objects.get(id=message.id).content == "Where is my husband Frank?"


# --- What other apps store: bound too, and rotated with the rest -------------------------------


def _alert_step(person, note: str):
    from dashboard.alerting.models import AlertStep
    from memory.models import Alert

    alert = Alert.objects.create(
        person=person,
        kind=Alert.Kind.ESCALATION,
        dedupe_key=f"test:{uuid.uuid4()}",
        created_at=timezone.now(),
    )
    return AlertStep.objects.create(alert=alert, kind=AlertStep.Kind.NOTE, note=note)


def test_a_handover_note_is_bound_to_its_alert(db):
    from dashboard.alerting.models import AlertStep

    ada, bea = make_person("Ada"), make_person("Bea")
    a, b = _alert_step(ada, "Called her daughter"), _alert_step(bea, "Settled with tea")
    assert f":{a.alert_id}:" in raw("alert_steps", "note", a.id)
    write_raw("alert_steps", "note", b.id, raw("alert_steps", "note", a.id))
    with pytest.raises(crypto.DecryptionError, match="another row"):
        AlertStep.objects.get(id=b.id)
    assert AlertStep.objects.get(id=a.id).note == "Called her daughter"


def test_rotate_keys_reaches_every_apps_encrypted_columns(db, settings):
    from dashboard.alerting.models import AlertStep

    settings.CLARA_ENCRYPTION_KEYS = [KEY_A]
    step = _alert_step(make_person("Ada"), "Called her daughter")
    settings.CLARA_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    out = io.StringIO()
    call_command("rotate_keys", stdout=out)
    assert "alert_steps.note: 1 rows, 1 rewritten" in out.getvalue()
    settings.CLARA_ENCRYPTION_KEYS = [KEY_B]  # the old key dropped: still reads
    assert AlertStep.objects.get(id=step.id).note == "Called her daughter"
