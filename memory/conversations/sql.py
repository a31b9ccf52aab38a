"""The per-turn SQL: the exchange write and the memory read, one statement per step.

Everything else in the project uses the ORM. These two paths run on every turn, and building
ORM queries cost several times more than running them (docs/benchmarks.md), so here the
statements are written out once, run through Django's own connection (same transactions, same
database settings), and each names the index it relies on. Values are adapted with Django's
own field and backend helpers, so the same SQL runs on SQLite and PostgreSQL.

The encrypted columns (memory/core/fields.py) are not seen by the fields here: the callers encrypt
what they insert and decrypt what they select with the helpers below (memory/core/crypto.py), and
store fingerprints as keyed tokens. Columns marked [encrypted] in the statements.
"""

import json
import uuid
from datetime import UTC, datetime

from django.db import connection
from django.db.models import UUIDField

from memory.core import crypto

_UUID = UUIDField()


def db_uuid(value: uuid.UUID | None):
    return None if value is None else _UUID.get_db_prep_value(value, connection)


def db_datetime(value: datetime):
    return connection.ops.adapt_datetimefield_value(value)


def from_db_uuid(value) -> uuid.UUID | None:
    if value is None or isinstance(value, uuid.UUID):
        return value
    return uuid.UUID(value)


def from_db_datetime(value) -> datetime:
    # SQLite keeps UTC datetimes as naive text (Django's converter may already have parsed it).
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value


def from_db_json(value) -> dict:
    if value is None:
        return {}
    return json.loads(value) if isinstance(value, str | bytes) else value


def from_db_json_value(value):
    """A JSON column's value (list, dict, scalar or None) as a raw cursor returns it: its text
    on SQLite and with Django's psycopg loaders, already parsed elsewhere."""
    return json.loads(value) if isinstance(value, str | bytes) else value


# What each encrypted column's values are bound to (memory/core/fields.py `context_of`): the
# same "<table>.<column>" the fields use, so the ORM and this SQL read each other's values.
MESSAGE_CONTENT = "chat_messages.content"
REPETITION_ORIGINAL = "repetition_tracking.original_message"
REPETITION_RESPONSE = "repetition_tracking.response_given"
REPETITION_MEANING = "repetition_tracking.meaning"
PERSON_CONTEXT = "people.caregiver_context"
PERSON_NAME = "people.display_name"
IDEMPOTENCY_KEY = "chat_messages.idempotency_key"


def _idempotency_value(key: str, session_id) -> str:
    # The session inside the hashed value: the same key sent in two sessions gives two digests,
    # so stored digests link no rows across sessions.
    return f"{from_db_uuid(session_id)}\x00{key}"


def db_idempotency_key(key: str | None, *, session_id) -> str | None:
    """The bot's idempotency key as chat_messages stores it: a keyed digest
    (`<key id>:<HMAC-SHA256>`, memory/core/crypto.py) of the key and its session, never the key
    itself (a bot may put what it likes in it)."""
    if key is None:
        return None
    return crypto.keyed_digest(_idempotency_value(key, session_id), purpose=IDEMPOTENCY_KEY)


def idempotency_digests(key: str, *, session_id) -> list[str]:
    """`db_idempotency_key` under every configured key, the primary's first: a retry finds an
    exchange stored before a key rotation (digests cannot be made again without the key)."""
    return crypto.keyring().keyed_digest_variants(
        _idempotency_value(key, session_id), purpose=IDEMPOTENCY_KEY
    )


def from_db_encrypted_json(value, *, context: str, row=None) -> dict:
    """An EncryptedJSONField column as selected (a JSON string holding ciphertext), decrypted
    and checked against `row` as `from_db_encrypted` does."""
    value = from_db_json(value)
    if crypto.is_encrypted(value):
        return json.loads(from_db_encrypted(value, context=context, row=row))
    return value  # a row from before encryption


def db_encrypted(text: str | None, *, context: str, row: uuid.UUID | None = None) -> str | None:
    """An EncryptedTextField value as the column stores it, bound to its row (the primary key
    the statement inserts)."""
    return crypto.encrypt_optional(text, context=context, row=None if row is None else str(row))


def from_db_encrypted(value: str | None, *, context: str, row=None) -> str | None:
    """An EncryptedTextField column as selected, decrypted; `row` (the row's primary key as
    selected) is compared with the row the value is bound to. DecryptionError on a wrong key,
    or on a value moved from another row."""
    if value is None:
        return None
    plain, bound = crypto.keyring().decrypt_bound(value, context=context)
    if bound is not None and row is not None and bound != _row_text(row):
        # Not the usual spelling of the same id: the exact check decides (and raises if moved).
        crypto.check_row(bound, str(from_db_uuid(row)), context=context)
    return plain


def _row_text(row) -> str:
    """A primary key as selected, spelled as values are bound to it (`str(uuid)`): SQLite's
    32 hex digits dashed without parsing a UUID (a turn checks ~18 values)."""
    if isinstance(row, str) and len(row) == 32:
        return f"{row[:8]}-{row[8:12]}-{row[12:16]}-{row[16:20]}-{row[20:]}"
    return str(row)


# --- Reads -----------------------------------------------------------------------------------

# Primary keys of sessions and people. [encrypted] display_name, caregiver_context
SESSION_WITH_PERSON = """
    SELECT s.person_id, s.message_count, p.display_name, p.caregiver_context, s.organisation_id,
        p.approved_texts
    FROM sessions s LEFT JOIN people p ON p.id = s.person_id
    WHERE s.id = %s"""
# idx_repetition_session. Fingerprints are keyed tokens (compared as they are, never decrypted);
# the meaning comes with them, so a turn compares by meaning without embedding history again.
# [encrypted] meaning, response_given (decrypted only when needed: the meanings, and Clara's
# answer to the message this one repeats).
SESSION_FINGERPRINTS = """
    SELECT fingerprint, question_type, meaning, message_id, response_given, id
    FROM repetition_tracking
    WHERE session_id = %s ORDER BY timestamp"""
# idx_emotions_session_time
SESSION_EMOTIONS = """
    SELECT emotion, confidence, distress_score, trajectory, timestamp FROM detected_emotions
    WHERE session_id = %s ORDER BY timestamp DESC LIMIT %s"""
# idx_emotions_session_time
SESSION_RECENT_DISTRESS = """
    SELECT distress_score FROM detected_emotions
    WHERE session_id = %s ORDER BY timestamp DESC LIMIT %s"""
# idx_messages_session_seq. [encrypted] content
SESSION_WINDOW = """
    SELECT role, content, sequence_number, id, escalated FROM chat_messages
    WHERE session_id = %s ORDER BY sequence_number DESC LIMIT %s"""
# idx_messages_session_seq: older messages than the window read above. [encrypted] content
SESSION_TEXTS_BEFORE = """
    SELECT id, content FROM chat_messages
    WHERE session_id = %s AND sequence_number < %s ORDER BY sequence_number DESC LIMIT %s"""
# idx_emotions_user_time: the person's usual distress, from their latest readings in other
# sessions up to this turn (the first turns of a session have too little history of their own).
PERSON_BASELINE_DISTRESS = """
    SELECT COUNT(*), AVG(distress_score) FROM (
        SELECT distress_score FROM detected_emotions
        WHERE person_id = %s AND timestamp < %s AND session_id <> %s
        ORDER BY timestamp DESC LIMIT %s) latest"""
# idx_narrative_session
SESSION_NARRATIVES = """
    SELECT narrative_id FROM narrative_usage WHERE session_id = %s ORDER BY timestamp"""
# idx_repetition_user_type (person, question_type, timestamp, session): the index alone answers.
PERSON_REPEATS_BY_TYPE = """
    SELECT COUNT(*) FROM repetition_tracking
    WHERE person_id = %s AND question_type = %s AND timestamp >= %s AND session_id <> %s"""
# idx_repetition_user (person, fingerprint, timestamp, session): the index alone answers. The
# fingerprint under each configured key (one while no rotation is under way): rows keep their old
# key's tokens until `rotate_keys` rewrites them.
PERSON_REPEATS_BY_FINGERPRINT = """
    SELECT COUNT(*) FROM repetition_tracking
    WHERE person_id = %s AND fingerprint IN ({fingerprints}) AND timestamp >= %s
        AND session_id <> %s"""


def person_repeats_by_fingerprint_sql(variants: int) -> str:
    return PERSON_REPEATS_BY_FINGERPRINT.format(fingerprints=", ".join(["%s"] * variants))


# --- The exchange write ----------------------------------------------------------------------

# Primary key; FOR UPDATE holds other writers of this session until we commit (PostgreSQL).
# SQLite has no row locks: its IMMEDIATE transactions already hold the database's write lock.
SESSION_FOR_WRITE = """
    SELECT person_id, message_count, status, last_activity_at, escalation_triggered,
           chronic_repetition_pattern, organisation_id
    FROM sessions WHERE id = %s"""
# uniq_messages_session_idempotency. [encrypted] content. The key as a keyed digest under each
# configured key (`idempotency_digests`: one while no rotation is under way).
MESSAGE_BY_KEY = """
    SELECT id, sequence_number, content FROM chat_messages
    WHERE session_id = %s AND idempotency_key IN ({keys})"""


def message_by_key_sql(variants: int) -> str:
    return MESSAGE_BY_KEY.format(keys=", ".join(["%s"] * variants))


# idx_messages_session_seq
MESSAGE_ID_AT = """
    SELECT id FROM chat_messages WHERE session_id = %s AND sequence_number = %s"""
# [encrypted] content
INSERT_MESSAGES = """
    INSERT INTO chat_messages (id, session_id, person_id, role, content, timestamp,
        sequence_number, intent, narrative_id, processing_time_ms, idempotency_key, channel,
        escalated)
    VALUES (%s, %s, %s, 'user', %s, %s, %s, NULL, NULL, NULL, %s, %s, %s),
           (%s, %s, %s, 'assistant', %s, %s, %s, %s, %s, %s, NULL, %s, NULL)"""
INSERT_EMOTION = """
    INSERT INTO detected_emotions (id, message_id, session_id, person_id, emotion, confidence,
        distress_score, trajectory, timestamp)
    VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"""
# [encrypted] original_message, response_given, meaning; fingerprint as keyed tokens
INSERT_REPETITION = """
    INSERT INTO repetition_tracking (id, session_id, person_id, message_id, fingerprint,
        original_message, question_type, repeat_count, timestamp, response_given, meaning)
    VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"""
INSERT_NARRATIVE_USAGE = """
    INSERT INTO narrative_usage (id, narrative_id, session_id, person_id, message_id, mode,
        category, emotion_at_usage, timestamp)
    VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"""
UPDATE_SESSION = """
    UPDATE sessions SET message_count = %s, last_activity_at = %s, escalation_triggered = %s,
        chronic_repetition_pattern = %s, status = 'active', ended_at = NULL
    WHERE id = %s"""
TOUCH_PERSON = """
    UPDATE people SET last_active_at = %s WHERE id = %s AND last_active_at < %s"""


def _one_round_trip(db) -> bool:
    """Whether statements can travel to the database together, as one query string: PostgreSQL
    with client-side binding (the default; psycopg merges the parameters into the text, and the
    server runs the statements in turn, stopping at the first error, raised as it would be
    alone). A round trip costs about 0.2 ms of CPU on each side whatever the statement
    (`bench/request_cpu.py`). SQLite runs in this process: no round trip to save."""
    return db.vendor == "postgresql" and not db.settings_dict["OPTIONS"].get("server_side_binding")


def _as_one(statements: list[tuple[str, list]]) -> tuple[str, list]:
    """`statements` as one query string and its parameters, in order."""
    return ";".join(sql for sql, _ in statements), [v for _, params in statements for v in params]


def execute_writes(cursor, statements: list[tuple[str, list]]) -> None:
    """Run write statements whose results nothing reads, in order (together where
    `_one_round_trip`: an exchange writes five or six)."""
    if _one_round_trip(cursor.db):
        cursor.execute(*_as_one(statements))
        return
    for sql, params in statements:
        cursor.execute(sql, params)


def fetch(statement: tuple[str, list]) -> list[tuple]:
    """The rows of one read, as (statement, parameters): the form `fetch_together` takes, so a
    read can be sent alone or with others."""
    with connection.cursor() as cursor:
        cursor.execute(*statement)
        return cursor.fetchall()


def fetch_together(cursor, statements: list[tuple[str, list]]) -> list[list[tuple]]:
    """The rows of each of `statements` (reads that do not depend on one another), in order;
    together where `_one_round_trip`."""
    if _one_round_trip(cursor.db):
        cursor.execute(*_as_one(statements))
        results = [cursor.fetchall()]
        while cursor.nextset():
            results.append(cursor.fetchall())
        return results
    results = []
    for sql, params in statements:
        cursor.execute(sql, params)
        results.append(cursor.fetchall())
    return results


def session_for_write_sql() -> str:
    if connection.features.has_select_for_update:
        return SESSION_FOR_WRITE + " FOR UPDATE"
    return SESSION_FOR_WRITE
