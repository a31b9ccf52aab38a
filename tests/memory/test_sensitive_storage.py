"""Secrets sent in an exchange are redacted before anything is stored: tables, log file, answers."""

import json
import re
import uuid
from datetime import UTC, datetime

import pytest
import time_machine
from django.db import connection

from memory.conversations import recovery, repetition, services
from memory.core import crypto
from memory.models import ChatMessage, RepetitionRecord
from tests.support.refused_writes import RefusedWrite

pytestmark = pytest.mark.django_db(transaction=True)

CARD = "4111 1111 1111 1111"
PASSWORD = "Fluffy1938"
PIN = "4321"
SECRETS = ("4111", "1111", PASSWORD, PIN)

USER_MESSAGE = f"A nice man from the bank rang. I gave him my card {CARD} and my PIN is {PIN}."
ASSISTANT_MESSAGE = (
    f"Thank you for telling me. Let's not say {CARD} or the password {PASSWORD} out loud again, "
    "and we'll ring your daughter together."
)


def _exchange_url(session_id) -> str:
    return f"/api/v1/sessions/{session_id}/exchanges"


# Values machines make: ids (hex, with or without dashes), hashes and key prefixes, dates and
# times, the repetition fingerprint's keyed tokens. Their digits are random, so a secret's digits
# turn up in them by chance (a timestamp's microseconds once held 4111), and nobody said them.
_MACHINE_VALUE = re.compile(
    r"[0-9a-f]{8,}"
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|\d{4}-\d\d-\d\d(?:[ T]\d\d:\d\d:\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?"
    r"|[a-p]{20}(?: [a-p]{20})*"
)


def _texts(value, context: str = "") -> list[str]:
    """The texts a stored value holds, exactly: strings as they are, ciphertext decrypted (its
    characters are random too; what matters is what it opens to), JSON walked. Numbers, times,
    ids and binary columns (embeddings) are no text anyone wrote, and are left out."""
    if isinstance(value, dict):
        return [text for item in value.items() for part in item for text in _texts(part)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in _texts(item)]
    if not isinstance(value, str):
        return []
    if crypto.is_encrypted(value):
        # A column's values are bound to it ("table.column"): opened with that context.
        return _texts(crypto.decrypt(value, context=context))
    if value[:1] in ("{", "[", '"'):
        try:
            return _texts(json.loads(value), context)
        except ValueError:
            pass
    return [] if _MACHINE_VALUE.fullmatch(value) else [value]


def _text_in_table(table: str) -> str:
    """Every text in every row of a table: a raw SQL read, no ORM in between."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")  # noqa: S608 - fixed names
        columns = [column[0] for column in cursor.description]
        return "\n".join(
            text
            for row in cursor.fetchall()
            for column, value in zip(columns, row, strict=True)
            for text in _texts(value, f"{table}.{column}")
        )


def _text_in_json(raw: bytes | str) -> str:
    """Every text in a JSON document (an API answer, a recovery log line)."""
    return "\n".join(_texts(json.loads(raw)))


def _everything_in_the_database() -> str:
    return "\n".join(_text_in_table(t) for t in connection.introspection.table_names())


def _everything_decrypted() -> str:
    """The stored texts as the application reads them back (decrypted when encrypted at rest)."""
    texts = [m.content for m in ChatMessage.objects.all()]
    for record in RepetitionRecord.objects.all():
        texts += [record.original_message, record.response_given or ""]
    return "\n".join(texts)


def _assert_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, secret


def test_the_scan_reads_text_and_ciphertext_and_skips_ids_and_times():
    stored = [
        "PIN 4321",
        crypto.encrypt("card 4111"),
        json.dumps({"said": "1111", "at": "2026-01-02T03:04:05.004111+00:00", "n": 4321}),
        "2026-01-02 03:04:05.004111",
        "a1b2c3d44111ffff0000111122223333",
        "0193a4b5-4111-7abc-8def-432100001111",
        4111,
        datetime(2026, 1, 2, 3, 4, 5, 4321, tzinfo=UTC),
        b"\x00\x01",
    ]
    assert _texts(stored) == ["PIN 4321", "card 4111", "said", "1111", "at", "n"]


def test_an_exchange_with_a_card_and_a_pin_stores_neither(api):
    session_id = uuid.uuid4()

    # Stored at a moment whose microseconds hold a secret's digits: only what was said counts.
    with time_machine.travel(datetime(2026, 1, 2, 3, 4, 5, 4111, tzinfo=UTC), tick=False):
        response = api.post(
            _exchange_url(session_id),
            {
                "user_message": USER_MESSAGE,
                "assistant_message": ASSISTANT_MESSAGE,
                "idempotency_key": "turn-1",
            },
        )

    assert response.status_code == 201, response.content
    _assert_no_secret(_text_in_json(response.content))
    chat = _text_in_table("chat_messages")
    repetition_rows = _text_in_table("repetition_tracking")
    _assert_no_secret(chat)
    _assert_no_secret(repetition_rows)
    _assert_no_secret(_everything_in_the_database())
    _assert_no_secret(_everything_decrypted())
    # What is stored still reads as the conversation it was.
    stored = ChatMessage.objects.get(session_id=session_id, sequence_number=1).content
    assert stored == (
        "A nice man from the bank rang. I gave him my card [card number removed] "
        "and my PIN is [PIN removed]."
    )
    assert "[password removed]" in ChatMessage.objects.get(sequence_number=2).content
    record = RepetitionRecord.objects.get(session_id=session_id)
    assert record.original_message == stored
    assert "[password removed]" in record.response_given
    # The fingerprint is the redacted message's, not the raw one's.
    scope = repetition.scope_of(person_id=record.person_id, session_id=record.session_id)
    assert record.fingerprint == repetition.stored_fingerprint(stored, scope=scope)
    raw = repetition.stored_fingerprint(USER_MESSAGE, scope=scope)
    assert record.fingerprint != raw


def test_the_message_history_shows_only_the_redacted_text(api):
    session_id = uuid.uuid4()
    api.post(
        _exchange_url(session_id),
        {"user_message": USER_MESSAGE, "assistant_message": ASSISTANT_MESSAGE},
    )

    response = api.get(f"/api/v1/sessions/{session_id}/messages")

    assert response.status_code == 200
    _assert_no_secret(_text_in_json(response.content))
    assert "[card number removed]" in response.content.decode()


def test_a_retry_of_the_same_raw_message_is_the_same_exchange(api):
    session_id = uuid.uuid4()
    body = {
        "user_message": USER_MESSAGE,
        "assistant_message": ASSISTANT_MESSAGE,
        "idempotency_key": "turn-7",
    }
    first = api.post(_exchange_url(session_id), body)

    retry = api.post(_exchange_url(session_id), body)

    assert (first.status_code, retry.status_code) == (201, 200)
    assert retry.json() == first.json()
    assert ChatMessage.objects.filter(session_id=session_id).count() == 2


def test_the_same_key_for_another_message_is_still_a_conflict(api):
    session_id = uuid.uuid4()
    body = {"user_message": USER_MESSAGE, "assistant_message": "Oh dear.", "idempotency_key": "k"}
    assert api.post(_exchange_url(session_id), body).status_code == 201

    other = api.post(_exchange_url(session_id), {**body, "user_message": "I love tea."})

    assert other.status_code == 409
    assert other.json()["field"] == "idempotency_key"
    _assert_no_secret(_text_in_json(other.content))


def test_a_row_stored_before_redaction_still_matches_its_retry(api):
    session_id = uuid.uuid4()
    body = {"user_message": USER_MESSAGE, "assistant_message": "Oh dear.", "idempotency_key": "k"}
    first = api.post(_exchange_url(session_id), body)
    # As it would have been stored before the filter existed.
    stored = ChatMessage.objects.get(session_id=session_id, sequence_number=1)
    stored.content = USER_MESSAGE
    stored.save(update_fields=["content"])

    retry = api.post(_exchange_url(session_id), body)

    assert retry.status_code == 200
    assert retry.json() == first.json()


@pytest.fixture
def refused_writes():
    # The database refuses the exchange part-way (after the messages were inserted).
    failure = RefusedWrite("INSERT INTO repetition_tracking")
    connection.execute_wrappers.append(failure)
    yield failure
    connection.execute_wrappers.remove(failure)


def test_an_exchange_kept_in_the_recovery_log_is_redacted_on_disk(api, refused_writes):
    session_id = uuid.uuid4()

    response = api.post(
        _exchange_url(session_id),
        {
            "user_message": USER_MESSAGE,
            "assistant_message": ASSISTANT_MESSAGE,
            "idempotency_key": "turn-9",
        },
    )

    assert response.status_code == 202, response.content
    _assert_no_secret(_text_in_json(response.content))
    assert recovery.pending_count() == 1
    on_disk = recovery.log_path().read_bytes().decode()
    _assert_no_secret(_text_in_json(on_disk))
    # Encrypted on disk; what the keys read back is the redacted text.
    entry = json.loads(on_disk)
    assert "[card number removed]" not in on_disk
    _assert_no_secret(crypto.decrypt(entry["user_message"]))
    assert "[card number removed]" in crypto.decrypt(entry["user_message"]) + crypto.decrypt(
        entry["assistant_message"]
    )
    assert ChatMessage.objects.count() == 0


def test_a_replayed_exchange_is_stored_redacted_and_its_retry_recognised(api, refused_writes):
    session_id = uuid.uuid4()
    body = {
        "user_message": USER_MESSAGE,
        "assistant_message": ASSISTANT_MESSAGE,
        "idempotency_key": "turn-11",
    }
    assert api.post(_exchange_url(session_id), body).status_code == 202
    refused_writes.active = False

    report = services.recovery_replay()

    assert (report.stored, report.remaining, report.rejected) == (1, 0, 0)
    _assert_no_secret(_everything_in_the_database())
    _assert_no_secret(_everything_decrypted())
    retry = api.post(_exchange_url(session_id), body)
    assert retry.status_code == 200
    assert ChatMessage.objects.filter(session_id=session_id).count() == 2


def test_the_batch_write_redacts_too(db):
    session_id = uuid.uuid4()

    results = services.exchanges_record_many(
        [
            {
                "session_id": session_id,
                "user_message": f"my password is {PASSWORD}",
                "assistant_message": "Let's keep that to ourselves.",
            },
            {
                "session_id": session_id,
                "user_message": f"the card is {CARD}",
                "assistant_message": "Thank you, dear.",
            },
        ]
    )

    assert [r.created for r in results] == [True, True]
    _assert_no_secret(_text_in_table("chat_messages"))
    _assert_no_secret(_text_in_table("repetition_tracking"))
    _assert_no_secret(_everything_decrypted())
    assert "[password removed]" in _everything_decrypted()


def test_repeating_a_secret_is_still_seen_as_a_repeat(api):
    # The fingerprint comes from the redacted text, so two different PINs said the same way
    # still count as the same thing said twice (and neither PIN is in the fingerprint).
    session_id = uuid.uuid4()
    for pin, key in (("4321", "a"), ("9876", "b")):
        api.post(
            _exchange_url(session_id),
            {
                "user_message": f"Is my PIN {pin}?",
                "assistant_message": "Let's not worry about numbers now.",
                "idempotency_key": key,
            },
        )

    records = list(RepetitionRecord.objects.filter(session_id=session_id).order_by("timestamp"))

    assert records[0].fingerprint == records[1].fingerprint
    assert records[1].repeat_count == 1
