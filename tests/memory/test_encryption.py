"""Encryption at rest: raw SQL sees ciphertext, the ORM and the per-turn paths see plaintext;
keys rotate; a wrong key fails loudly; repetition fingerprints still match."""

import io
import json
import os
import subprocess
import sys
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.exceptions import FieldError, ImproperlyConfigured
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from memory import reencrypt
from memory.companion.context import context_build
from memory.conversations import repeats, repetition, selectors, services
from memory.core import crypto
from memory.core.errors import Conflict
from memory.core.fields import for_row
from memory.models import (
    ChatMessage,
    Commitment,
    Memory,
    PendingMessage,
    Person,
    PersonNotes,
    RepetitionRecord,
    RollingSummary,
    Session,
    StreamSummary,
    SummarySpine,
)

ROOT = Path(__file__).resolve().parents[2]
# A word that appears nowhere else: if it is in a raw column, that column holds plaintext.
WORD = "Zanzibarflute"
KEY_A, KEY_B, KEY_C = (crypto.generate_key() for _ in range(3))


def raw_column(table: str, column: str, pk_column: str = "id") -> list:
    """Every value of one column, read with plain SQL (no field in between)."""
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {quote(column)} FROM {quote(table)} ORDER BY {quote(pk_column)}")  # noqa: S608
        return [row[0] for row in cursor.fetchall()]


def everything_raw() -> str:
    """Every row of every table as text, read with plain SQL."""
    chunks = []
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {quote(table)}")  # noqa: S608 - names from the database
            chunks.extend(repr(row) for row in cursor.fetchall())
    return "\n".join(chunks)


def talk(session_id, message, *, reply="You are safe at home, dear.", at=None, key=None):
    return services.exchange_record(
        session_id=session_id,
        user_message=message,
        assistant_message=reply,
        idempotency_key=key,
        at=at,
    )


@pytest.fixture
def key_a(settings):
    """Everything the test writes first is under KEY_A (list it before the data fixtures)."""
    settings.CLARA_ENCRYPTION_KEYS = [KEY_A]
    return settings


@pytest.fixture
def person(db):
    now = timezone.now()
    return Person.objects.create(
        display_name="Nana",
        created_at=now,
        last_active_at=now,
        caregiver_context={"preferredName": "Nana", "knownTopics": [WORD]},
    )


@pytest.fixture
def session(person):
    session, _ = services.session_resolve(session_id=uuid.uuid4(), user_id=person.id)
    return session


def _every_encrypted_row(person, session) -> None:
    """One row in every table with an encrypted column, each mentioning WORD."""
    now = timezone.now()
    talk(session.id, f"Where is my {WORD}?", reply=f"Your {WORD} is safe in the hall.")
    services.session_close(session_id=session.id)
    Session.objects.filter(id=session.id).update(
        session_summary=for_row({"one_liner": f"Spoke of {WORD}"}, session.id)
    )
    Memory.objects.create(
        namespace=f"memories\x1f{person.id}\x1fpeople",
        scope=f"memories\x1f{person.id}",
        key="k1",
        person=person,
        content=f"Plays the {WORD}",
        created_at=now,
        updated_at=now,
    )
    RollingSummary.objects.create(person=person, text=f"Talked about the {WORD}", updated_at=now)
    SummarySpine.objects.create(
        person=person, version=1, content={"profile": WORD}, message_count=2, created_at=now
    )
    StreamSummary.objects.create(
        person=person,
        persona="clara",
        text=f"{WORD} again",
        covers_through=uuid.uuid4(),
        updated_at=now,
    )
    PersonNotes.objects.create(person=person, fields={"mood": {"value": WORD}}, updated_at=now)
    Commitment.objects.create(person=person, kind="plan", text=f"Find the {WORD}", created_at=now)
    PendingMessage.objects.create(
        person=person,
        session=session,
        content=f"{WORD}?",
        client_key="c1",
        arrival=1,
        arrived_at=now,
    )


ENCRYPTED = [
    (ChatMessage, "content"),
    (RepetitionRecord, "original_message"),
    (RepetitionRecord, "response_given"),
    (Person, "caregiver_context"),
    (Session, "session_summary"),
    (Memory, "content"),
    (RollingSummary, "text"),
    (SummarySpine, "content"),
    (StreamSummary, "text"),
    (PersonNotes, "fields"),
    (Commitment, "text"),
    (PendingMessage, "content"),
]


@pytest.mark.parametrize(("model", "field"), ENCRYPTED, ids=lambda v: getattr(v, "__name__", v))
def test_a_raw_read_shows_ciphertext_and_the_orm_shows_the_text(person, session, model, field):
    _every_encrypted_row(person, session)
    column = model._meta.get_field(field).column
    raw = [value for value in raw_column(model._meta.db_table, column) if value is not None]
    assert raw
    for value in raw:
        assert WORD not in str(value)
        assert crypto.is_encrypted(str(value).lstrip('"'))
    through_orm = [str(v) for v in model.objects.values_list(field, flat=True) if v is not None]
    assert any(WORD in value for value in through_orm)


def test_no_table_holds_the_word_in_plaintext(person, session):
    _every_encrypted_row(person, session)
    assert WORD not in everything_raw()
    # ...and the fingerprint does not carry the word either, though it came from it.
    (fingerprint,) = raw_column("repetition_tracking", "fingerprint")
    assert WORD.lower() not in fingerprint
    assert fingerprint == repetition.stored_fingerprint(
        f"Where is my {WORD}?",
        scope=repetition.scope_of(person_id=session.person_id, session_id=session.id),
    )


def test_the_per_turn_query_reads_the_window_and_the_caregiver_context(session):
    talk(session.id, f"I miss my {WORD}")
    result = selectors.memory_query(session_id=session.id, message="Hello")
    assert [m.content for m in result.conversation_window] == [
        f"I miss my {WORD}",
        "You are safe at home, dear.",
    ]
    assert result.caregiver_context["knownTopics"] == [WORD]
    context = context_build(session_id=session.id, message="Hello")
    assert any(WORD in m["content"] for m in context.rendered.messages)


def test_a_retried_exchange_is_recognised_through_the_ciphertext(session):
    first = talk(session.id, f"Where is my {WORD}?", key="turn-1")
    again = talk(session.id, f"Where is my {WORD}?", key="turn-1")
    assert (again.created, again.user_message_id) == (False, first.user_message_id)
    with pytest.raises(Conflict):
        talk(session.id, "Something else entirely", key="turn-1")
    assert ChatMessage.objects.filter(session_id=session.id).count() == 2


def test_null_json_stays_sql_null(session):
    assert Session.objects.filter(id=session.id, session_summary__isnull=True).exists()
    assert raw_column("sessions", "session_summary") == [None]


# --- Fingerprints ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("I want my blue cardigan", "I want my blue cardigan please"),
        ("Where is Tom?", "Tom, where are you?"),
        ("The garden looks lovely", "I like tea"),
        ("tea, tea and more tea", "more tea"),
    ],
)
def test_jaccard_on_tokens_equals_jaccard_on_words(db, left, right):
    words = repetition.jaccard(repetition.fingerprint(left), repetition.fingerprint(right))
    scope = repetition.scope_of(person_id=uuid.uuid4(), session_id=None)
    tokens = repetition.jaccard(
        repetition.stored_fingerprint(left, scope=scope),
        repetition.stored_fingerprint(right, scope=scope),
    )
    assert tokens == words


def test_tokens_are_word_shaped_and_keyed(settings):
    settings.CLARA_ENCRYPTION_KEYS = [KEY_A]
    under_a = crypto.fingerprint_tokens("blue cardigan", scope="person:1")
    settings.CLARA_ENCRYPTION_KEYS = [KEY_B]
    under_b = crypto.fingerprint_tokens("blue cardigan", scope="person:1")
    assert under_a != under_b
    assert all(token.isalpha() and token.islower() for token in under_a.split())
    assert crypto.fingerprint_tokens("", scope="person:1") == ""


def test_a_general_message_matches_across_sessions_by_its_keyed_fingerprint(person):
    now = timezone.now()
    earlier, _ = services.session_resolve(session_id=uuid.uuid4(), user_id=person.id)
    talk(earlier.id, "I want my blue cardigan", at=now - timedelta(days=1))
    current, _ = services.session_resolve(session_id=uuid.uuid4(), user_id=person.id)
    result = selectors.memory_query(
        session_id=current.id, message="I want my blue cardigan", now=now
    )
    assert (result.question_type, result.cross_session_repeat_count) == ("general", 1)
    # The ORM finds it by the person's tokens of the same words.
    scope = repetition.scope_of(person_id=person.id, session_id=None)
    assert RepetitionRecord.objects.filter(
        fingerprint=repetition.stored_fingerprint("my blue cardigan, I want", scope=scope)
    ).exists()


def test_repeats_within_a_session_are_counted_as_before(session):
    talk(session.id, "I want my blue cardigan")
    talk(session.id, "Where am I?")
    result = selectors.memory_query(session_id=session.id, message="I want my blue cardigan please")
    assert (result.is_repeat, result.repeat_count) == (True, 1)


# --- Keys and rotation ----------------------------------------------------------------------


def _all_plaintext_through_every_path(session_id) -> dict:
    return {
        "orm": sorted(
            ChatMessage.objects.filter(session_id=session_id).values_list("content", flat=True)
        ),
        "window": sorted(
            m.content
            for m in selectors.memory_query(session_id=session_id, message="Hi").conversation_window
        ),
        "context": Person.objects.get().caregiver_context,
        "originals": sorted(RepetitionRecord.objects.values_list("original_message", flat=True)),
    }


def test_rotation_old_rows_read_new_key_encrypts_rotate_then_drop_the_old_key(key_a, session):
    settings = key_a
    Person.objects.filter(id=session.person_id).update(
        caregiver_context=for_row({"likes": WORD}, session.person_id)
    )
    talk(session.id, "I want my blue cardigan")
    before = _all_plaintext_through_every_path(session.id)
    kid_a = crypto.keyring().primary.kid

    # The new key first: old rows still read, new rows use the new key, repeats still count.
    settings.CLARA_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    kid_b = crypto.keyring().primary.kid
    assert _all_plaintext_through_every_path(session.id) == before
    talk(session.id, "My blue cardigan, I want it")
    record = RepetitionRecord.objects.order_by("timestamp").last()
    assert record.repeat_count == 1
    kids = {value.split(":")[2] for value in raw_column("chat_messages", "content")}
    assert kids == {kid_a, kid_b}

    out = io.StringIO()
    call_command("rotate_keys", stdout=out)
    assert "total: 0" not in out.getvalue()
    again = io.StringIO()
    call_command("rotate_keys", stdout=again)
    assert again.getvalue().rstrip().endswith("total: 0 value(s) rewritten")  # idempotent

    settings.CLARA_ENCRYPTION_KEYS = [KEY_B]
    after = _all_plaintext_through_every_path(session.id)
    assert after["context"] == before["context"]
    assert set(before["orm"]) <= set(after["orm"])
    assert {value.split(":")[2] for value in raw_column("chat_messages", "content")} == {kid_b}
    # Fingerprints were rewritten under B: the same words still match, in SQL and in Python.
    assert (
        RepetitionRecord.objects.filter(
            fingerprint=repetition.stored_fingerprint(
                "blue cardigan want",
                scope=repetition.scope_of(person_id=session.person_id, session_id=session.id),
            )
        ).count()
        == 2
    )
    result = selectors.memory_query(session_id=session.id, message="I want my blue cardigan")
    assert result.repeat_count == 2


def test_rotation_re_encrypts_the_stored_meanings(key_a, session):
    settings = key_a
    talk(session.id, f"Where is my {WORD} coat?")
    (before,) = raw_column("repetition_tracking", "meaning")
    (record,) = RepetitionRecord.objects.all()
    kid_a = crypto.keyring().primary.kid
    assert bytes(before).startswith(f"{crypto.ROW_PREFIX}{kid_a}:{record.id}:".encode())

    settings.CLARA_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    counts = {(c.table, c.column): c.rewritten for c in reencrypt.reencrypt_all(dry_run=True)}
    assert counts[("repetition_tracking", "meaning")] == 1
    call_command("rotate_keys", stdout=io.StringIO())

    settings.CLARA_ENCRYPTION_KEYS = [KEY_B]
    (after,) = raw_column("repetition_tracking", "meaning")
    kid_b = crypto.keyring().primary.kid
    # Made again under B, still bound to its row.
    assert bytes(after).startswith(f"{crypto.ROW_PREFIX}{kid_b}:{record.id}:".encode())
    assert bytes(after) != bytes(before)
    assert repeats.from_db(after, record.id) is not None  # reads under the new key alone
    result = selectors.memory_query(session_id=session.id, message=f"Where is my {WORD} coat?")
    assert result.repeat_count == 1


def test_rotation_makes_the_meanings_again_so_other_words_still_match(key_a, session):
    settings = key_a
    for line in ["Where's my coat? I need to go out", "When is my daughter coming?"]:
        talk(session.id, line)

    settings.CLARA_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    call_command("rotate_keys", stdout=io.StringIO())
    settings.CLARA_ENCRYPTION_KEYS = [KEY_B]
    repeats.clear_caches()

    # The words of a stored meaning are keyed hashes: re-encrypting alone would leave key A's,
    # and "jacket" / "daughter" would no longer meet "coat" / "daughter" under key B.
    for line in ["Have you seen my jacket?", "Is my daughter on her way?"]:
        assert selectors.memory_query(session_id=session.id, message=line).repeat_count == 1


def test_rotate_keys_check_counts_without_writing(key_a, session):
    settings = key_a
    talk(session.id, "Hello there")
    settings.CLARA_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    before = raw_column("chat_messages", "content")
    counts = reencrypt.reencrypt_all(dry_run=True)
    assert {(c.table, c.column): c.rewritten for c in counts}[("chat_messages", "content")] == 2
    assert raw_column("chat_messages", "content") == before


def test_a_wrong_key_fails_loudly_everywhere(key_a, session):
    settings = key_a
    talk(session.id, f"Where is my {WORD}?")
    settings.CLARA_ENCRYPTION_KEYS = [KEY_C]
    with pytest.raises(crypto.DecryptionError):
        list(ChatMessage.objects.values_list("content", flat=True))
    with pytest.raises(crypto.DecryptionError):
        Person.objects.get(id=session.person_id)
    with pytest.raises(crypto.DecryptionError):
        selectors.memory_query(session_id=session.id, message="Hi")


def test_a_tampered_value_fails_loudly(db):
    token = crypto.encrypt("Where am I?")
    flipped = token[:-2] + ("A" if token[-2] != "A" else "B") + token[-1]
    with pytest.raises(crypto.DecryptionError):
        crypto.decrypt(flipped)
    # Lower-casing (as SQL's LOWER would) is tampering too, never silent garbage.
    with pytest.raises(crypto.DecryptionError):
        crypto.decrypt(token.lower())


@pytest.mark.parametrize("bad", ["", "short", "!!!not-base64!!!", crypto.generate_key() + "AAAA"])
def test_a_malformed_key_is_refused(bad):
    with pytest.raises(ImproperlyConfigured):
        crypto.Keyring([bad])


def test_the_same_key_twice_is_refused():
    with pytest.raises(ImproperlyConfigured):
        crypto.Keyring([KEY_A, KEY_A])


# --- Rows from before encryption, and the data migration --------------------------------------


def _make_plaintext(session_id) -> None:
    """Put rows back the way they were stored before encryption (plain text and words)."""
    with connection.cursor() as cursor:
        for message in ChatMessage.objects.filter(session_id=session_id):
            cursor.execute(
                "UPDATE chat_messages SET content = %s WHERE id = %s",
                [message.content, message._meta.pk.get_db_prep_value(message.pk, connection)],
            )
        for record in RepetitionRecord.objects.all():
            cursor.execute(
                "UPDATE repetition_tracking SET original_message = %s, response_given = %s, "
                "fingerprint = %s WHERE id = %s",
                [
                    record.original_message,
                    record.response_given,
                    repetition.fingerprint(record.original_message),
                    record._meta.pk.get_db_prep_value(record.pk, connection),
                ],
            )
        person = Person.objects.get()
        cursor.execute(
            "UPDATE people SET caregiver_context = %s WHERE id = %s",
            [
                connection.ops.adapt_json_value(person.caregiver_context, None),
                person._meta.pk.get_db_prep_value(person.pk, connection),
            ],
        )


def test_plaintext_rows_still_read_and_the_migration_pass_encrypts_them(session):
    talk(session.id, f"I want my {WORD} cardigan")
    _make_plaintext(session.id)
    assert WORD in everything_raw()
    # Rows from before encryption read as they are...
    assert f"I want my {WORD} cardigan" in ChatMessage.objects.values_list("content", flat=True)
    assert Person.objects.get().caregiver_context["knownTopics"] == [WORD]

    counts = {(c.table, c.column): c.rewritten for c in reencrypt.reencrypt_all()}
    assert counts[("chat_messages", "content")] == 2
    assert counts[("repetition_tracking", "fingerprint")] == 1
    assert WORD not in everything_raw()
    assert _all_plaintext_through_every_path(session.id)["originals"] == [
        f"I want my {WORD} cardigan"
    ]
    (fingerprint,) = raw_column("repetition_tracking", "fingerprint")
    assert fingerprint == repetition.stored_fingerprint(
        f"I want my {WORD} cardigan",
        scope=repetition.scope_of(person_id=session.person_id, session_id=session.id),
    )


def test_the_reverse_pass_writes_plaintext_back(session):
    talk(session.id, f"I want my {WORD} cardigan")
    reencrypt.decrypt_all()
    assert f"I want my {WORD} cardigan" in raw_column("chat_messages", "content")
    assert raw_column("repetition_tracking", "fingerprint") == [
        repetition.fingerprint(f"I want my {WORD} cardigan")
    ]
    (context,) = raw_column("people", "caregiver_context")
    assert json.loads(context)["knownTopics"] == [WORD]
    # ...and reading it is unchanged.
    assert Person.objects.get().caregiver_context["knownTopics"] == [WORD]


# --- Fields ---------------------------------------------------------------------------------


def test_comparing_ciphertext_in_sql_is_refused(session):
    talk(session.id, "Hello")
    with pytest.raises(FieldError, match="encrypted"):
        ChatMessage.objects.filter(content="Hello").exists()
    with pytest.raises(FieldError):
        Person.objects.filter(caregiver_context__timezone="UTC").exists()
    # icontains (admin search boxes) runs, and matches nothing.
    assert not ChatMessage.objects.filter(content__icontains="enc").exists()


# --- Settings -------------------------------------------------------------------------------


def _import_settings(**env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("CLARA_ENCRYPTION_KEYS", "DEBUG")}
    return subprocess.run(
        [sys.executable, "-c", "import clara.settings as s; print(len(s.CLARA_ENCRYPTION_KEYS))"],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "clara.settings", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": "k3y-" + "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ",
    "ALLOWED_HOSTS": "clara.example",
    "DATABASE_URL": "postgres://clara@db.internal:5432/clara",
    "REDIS_URL": "redis://redis.internal:6379/0",
}


def test_production_refuses_to_start_without_encryption_keys(tmp_path):
    done = _import_settings(CLARA_DATA_DIR=str(tmp_path), **PRODUCTION)
    assert done.returncode != 0
    assert "CLARA_ENCRYPTION_KEYS must be set when DEBUG is off" in done.stderr


def test_production_refuses_a_malformed_key_and_starts_with_two_good_ones(tmp_path):
    bad = _import_settings(CLARA_DATA_DIR=str(tmp_path), CLARA_ENCRYPTION_KEYS="nope", **PRODUCTION)
    assert bad.returncode != 0 and "ImproperlyConfigured" in bad.stderr
    assert "nope" not in bad.stderr  # a key is never echoed
    good = _import_settings(
        CLARA_DATA_DIR=str(tmp_path), CLARA_ENCRYPTION_KEYS=f"{KEY_A},{KEY_B}", **PRODUCTION
    )
    assert good.returncode == 0, good.stderr
    assert good.stdout.strip() == "2"


def test_development_derives_a_key_from_secret_key(settings):
    # The test run has DEBUG on and no CLARA_ENCRYPTION_KEYS: the key comes from SECRET_KEY.
    if "CLARA_ENCRYPTION_KEYS" not in os.environ:
        assert settings.CLARA_ENCRYPTION_KEYS == [crypto.development_key(settings.SECRET_KEY)]
    assert crypto.development_key("one") == crypto.development_key("one")
    assert crypto.development_key("one") != crypto.development_key("two")
    assert len(crypto.parse_key(crypto.development_key("one"))) == crypto.KEY_BYTES
