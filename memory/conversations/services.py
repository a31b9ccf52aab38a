"""Writes to the conversation memory: sessions, exchanges, closing, API keys.

Every write that spans tables lives here and owns its transaction. Reads shared with the API
and (later) the dashboard live in `selectors.py`.
"""

import hashlib
import logging
import secrets
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, DataError, IntegrityError, connection, transaction
from django.utils import timezone

from memory.conversations import emotion as emotion_reader
from memory.conversations import escalation as escalation_detector
from memory.conversations import recovery, repeats, repetition, selectors, signals
from memory.conversations import sql as storage
from memory.conversations.emotion import EmotionReading
from memory.conversations.models import (
    DEFAULT_PERSONA,
    ApiKey,
    ChatMessage,
    DetectedEmotion,
    NarrativeUsage,
    Person,
    RepetitionRecord,
    Scope,
    Session,
    default_organisation_id,
)
from memory.core import sensitive
from memory.core.errors import (
    Conflict,
    DomainError,
    ExpiredApiKey,
    Invalid,
    MalformedApiKey,
    MissingApiKey,
    NotFound,
    RevokedApiKey,
    Unauthenticated,
    UnknownApiKey,
)
from memory.core.ids import uuid7

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class NarrativeRef:
    id: str
    mode: str
    category: str


@dataclass(frozen=True)
class StoredExchange:
    """Where an exchange landed. `created` is False when a retry found the original."""

    user_message_id: uuid.UUID
    user_sequence_number: int
    assistant_message_id: uuid.UUID
    assistant_sequence_number: int
    created: bool


@dataclass(frozen=True)
class PendingExchange:
    """An exchange the database refused; it is safe in the recovery log under this key."""

    idempotency_key: str
    session_id: uuid.UUID


# --- Sessions ------------------------------------------------------------------------------


def _person_get_or_create(
    *, person_id: uuid.UUID, display_name: str | None, at: datetime, organisation_id: uuid.UUID
) -> Person:
    person = Person.objects.filter(id=person_id).first()
    if person is None:
        try:
            with transaction.atomic():
                return Person.objects.create(
                    id=person_id,
                    organisation_id=organisation_id,
                    display_name=display_name or "",
                    created_at=at,
                    last_active_at=at,
                )
        except IntegrityError:
            # Another request created this person between our read and our insert.
            person = Person.objects.get(id=person_id)
    if person.organisation_id != organisation_id:
        # Ids are global: this one is taken elsewhere. Nothing is linked or changed.
        raise Conflict("This user_id cannot be used.", field="user_id")
    if display_name and display_name != person.display_name:
        person.display_name = display_name
        person.save(update_fields=["display_name", "display_name_index"])
    return person


def session_resolve(
    *,
    session_id: uuid.UUID | None = None,
    user_id: uuid.UUID | None = None,
    display_name: str | None = None,
    at: datetime | None = None,
    organisation_id: uuid.UUID | None = None,
) -> tuple[Session, bool]:
    """Resume a session or create it (flow step 1). Returns (session, created).

    A `user_id` links the session to that person, creating the person if needed; a display name
    without a user id creates a new person whose id is returned with the session. Resuming a
    closed or expired session makes it active again: the bot asked to carry on with it.
    Everything is in `organisation_id`'s (the default organisation without one); a session or
    user id taken by another organisation is a Conflict, and nothing is linked or changed.
    """
    at = at or timezone.now()
    organisation_id = organisation_id or default_organisation_id()
    with transaction.atomic():
        session = None
        if session_id is not None:
            session = Session.objects.select_for_update().filter(id=session_id).first()
            if session is not None and session.organisation_id != organisation_id:
                raise Conflict("This session_id cannot be used.", field="session_id")
        person = None
        if user_id is None and display_name and session is not None and session.person_id:
            # A new name for the person this session already belongs to.
            user_id = session.person_id
        if user_id is not None or display_name:
            person = _person_get_or_create(
                person_id=user_id or uuid.uuid4(),
                display_name=display_name,
                at=at,
                organisation_id=organisation_id,
            )
        if session is None:
            try:
                with transaction.atomic():
                    session = Session.objects.create(
                        id=session_id or uuid.uuid4(),
                        organisation_id=organisation_id,
                        person=person,
                        persona=person.persona if person is not None else DEFAULT_PERSONA,
                        created_at=at,
                        last_activity_at=at,
                    )
                    return session, True
            except IntegrityError:
                # Created concurrently by another request: resume that one.
                session = Session.objects.select_for_update().get(id=session_id)
                if session.organisation_id != organisation_id:
                    raise Conflict("This session_id cannot be used.", field="session_id") from None

        if person is not None and session.person_id not in (None, person.id):
            raise Conflict("This session belongs to another person.", field="user_id")
        if session.person_id is None and person is not None:
            session.person = person
            session.persona = person.persona
            # The anonymous part of the session becomes part of this person's history.
            for model in (ChatMessage, DetectedEmotion, RepetitionRecord, NarrativeUsage):
                model.objects.filter(session_id=session.id, person__isnull=True).update(
                    person=person
                )
            _fingerprints_rekey(session_id=session.id)
            signals.session_linked.send(
                sender=signals.SessionLinked,
                event=signals.SessionLinked(session_id=session.id, person_id=person.id),
            )
        session.last_activity_at = max(session.last_activity_at, at)
        session.status = Session.Status.ACTIVE
        session.ended_at = None
        session.save(update_fields=["person", "persona", "last_activity_at", "status", "ended_at"])
        return session, False


def _fingerprints_rekey(*, session_id: uuid.UUID) -> None:
    """Make a session's fingerprints again under its person's key: an anonymous session's were
    made under the session's own (`repetition.scope_of`), which the person's other sessions
    never match. Made from each record's original message, the text they were made from."""
    for record in RepetitionRecord.objects.filter(session_id=session_id).only(
        "id", "session_id", "person_id", "original_message", "fingerprint"
    ):
        record.fingerprint = repetition.fingerprint(record.original_message or "")
        record.save(update_fields=["fingerprint"])


def _session_close_locked(*, session: Session, at: datetime, status: str) -> Session:
    dominant = _dominant_emotion(session_id=session.id)
    session.status = status
    session.ended_at = at
    session.dominant_emotion = dominant
    session.session_summary = {
        "duration_seconds": round(max((at - session.created_at).total_seconds(), 0.0)),
        "message_count": session.message_count,
        "dominant_emotion": dominant,
        "escalation_triggered": session.escalation_triggered,
    }
    session.save(update_fields=["status", "ended_at", "dominant_emotion", "session_summary"])
    signals.session_closed.send(
        sender=signals.SessionClosed,
        event=signals.SessionClosed(session_id=session.id, person_id=session.person_id, at=at),
    )
    return session


def _dominant_emotion(*, session_id: uuid.UUID) -> str | None:
    """The most frequent emotion of the session; a tie goes to the one felt most recently."""
    rows = list(
        DetectedEmotion.objects.filter(session_id=session_id)
        .order_by("timestamp")
        .values_list("emotion", flat=True)
    )
    if not rows:
        return None
    counts = Counter(rows)
    last_seen = {emotion: index for index, emotion in enumerate(rows)}
    return max(counts, key=lambda emotion: (counts[emotion], last_seen[emotion]))


def session_close(
    *,
    session_id: uuid.UUID,
    at: datetime | None = None,
    organisation_id: uuid.UUID | None = None,
) -> Session:
    """Close a session: status, end time, dominant emotion and a first summary. Closing twice is harmless."""
    at = at or timezone.now()
    with transaction.atomic():
        rows = Session.objects.select_for_update().filter(id=session_id)
        if organisation_id is not None:
            rows = rows.filter(organisation_id=organisation_id)
        session = rows.first()
        if session is None:
            raise NotFound("No session with this id.", field="session_id")
        if session.status != Session.Status.ACTIVE:
            return session
        return _session_close_locked(session=session, at=at, status=Session.Status.CLOSED)


def sessions_expire_idle(*, now: datetime | None = None) -> int:
    """Expire active sessions idle for CLARA_SESSION_IDLE_MINUTES; returns how many were expired."""
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=settings.CLARA_SESSION_IDLE_MINUTES)
    idle_ids = list(
        Session.objects.filter(
            status=Session.Status.ACTIVE, last_activity_at__lt=cutoff
        ).values_list("id", flat=True)
    )
    expired = 0
    for session_id in idle_ids:
        with transaction.atomic():
            # Re-check under the lock: an exchange may have arrived since the scan.
            session = (
                Session.objects.select_for_update()
                .filter(id=session_id, status=Session.Status.ACTIVE, last_activity_at__lt=cutoff)
                .first()
            )
            if session is None:
                continue
            _session_close_locked(
                session=session, at=session.last_activity_at, status=Session.Status.EXPIRED
            )
            expired += 1
    return expired


# --- Exchanges -----------------------------------------------------------------------------

# `_exchange_write` called without a meaning: it analyses the message itself.
_NOT_ANALYSED = object()


def _stored_exchange_for_key(
    cursor, *, session_id: uuid.UUID, db_session_id, idempotency_key: str, user_message: str
) -> StoredExchange | None:
    digests = storage.idempotency_digests(idempotency_key, session_id=session_id)
    cursor.execute(storage.message_by_key_sql(len(digests)), [db_session_id, *digests])
    row = cursor.fetchone()
    if row is None:
        return None
    user_id, user_seq, content = row
    content = storage.from_db_encrypted(content, context=storage.MESSAGE_CONTENT, row=user_id)
    # Both sides are redacted text; a row stored before redaction existed is redacted to compare.
    if content != user_message and sensitive.redact_text(content) != user_message:
        raise Conflict(
            "This idempotency_key was already used for a different exchange.",
            field="idempotency_key",
        )
    cursor.execute(storage.MESSAGE_ID_AT, [db_session_id, user_seq + 1])
    (assistant_id,) = cursor.fetchone()
    return StoredExchange(
        storage.from_db_uuid(user_id),
        user_seq,
        storage.from_db_uuid(assistant_id),
        user_seq + 1,
        created=False,
    )


def _session_for_write(
    cursor,
    *,
    session_id: uuid.UUID,
    db_session_id,
    at: datetime,
    organisation_id: uuid.UUID | None,
    then: Sequence[tuple[str, list]] = (),
) -> tuple[tuple, list[list[tuple]]]:
    """The session's row, locked for this transaction; created on the fly if unknown (flow step 1),
    and the rows of `then`, reads of the session's own rows made once the lock is held (with
    the lock, one round trip on PostgreSQL).

    A session of another organisation than `organisation_id` is a Conflict: its id is taken.
    """
    lock = (storage.session_for_write_sql(), [db_session_id])
    locked, *rows = storage.fetch_together(cursor, [lock, *then])
    if not locked:
        try:
            with transaction.atomic():
                Session.objects.create(
                    id=session_id,
                    organisation_id=organisation_id or default_organisation_id(),
                    created_at=at,
                    last_activity_at=at,
                )
        except IntegrityError:
            pass  # created by a concurrent writer: lock theirs, and read what it wrote since
        locked, *rows = storage.fetch_together(cursor, [lock, *then])
    row = locked[0]
    if organisation_id is not None and storage.from_db_uuid(row[6]) != organisation_id:
        raise Conflict("This session_id cannot be used.", field="session_id")
    return row[:6], rows


def exchange_record(**fields) -> StoredExchange:
    """Store one exchange (flow step 9) in a single transaction, exactly once.

    Both messages (sequence N and N+1), the emotion of the person's message, its repetition
    record, the narrative usage, and the session and person updates commit together or not at
    all. The session row is locked first, so concurrent writers to one session queue up and the
    sequence numbers stay unique and gapless. A retried `idempotency_key` returns the original.
    An escalation is recorded when the bot flags one or the built-in detector finds one.
    Takes the keyword arguments of `_exchange_write`.
    """
    meaning = _meaning_for(fields)
    with transaction.atomic():
        return _exchange_write(**fields, meaning=meaning)


def _meaning_for(fields: dict) -> repeats.MessageMeaning | None:
    """The meaning of the exchange's message, found before its transaction opens, so a model
    pass never holds the session's lock (usually from the cache /context filled)."""
    text = sensitive.redact_text(fields["user_message"])
    if not text.strip():
        return None
    # The urgent-moment verdict too (kept per process): its model pass must not hold the lock.
    escalation_detector.detect(text)
    return repeats.meaning_of(text)


def exchanges_record_many(items: Sequence[dict]) -> list[StoredExchange | DomainError]:
    """Store many exchanges in one transaction: one commit, one fsync, for all of them.

    For replaying the recovery log and for exchanges a bot buffered while offline. Each
    exchange gets its own savepoint, so one refused exchange (its error is returned in its
    place) does not sink the others. Sessions are written in id order, and each session's
    exchanges in the order given, so concurrent batches lock rows in the same order.
    """
    results: list[StoredExchange | DomainError | None] = [None] * len(items)
    order = sorted(range(len(items)), key=lambda index: str(items[index]["session_id"]))
    meanings = [_meaning_for(item) for item in items]
    with transaction.atomic():
        for index in order:
            try:
                with transaction.atomic():
                    results[index] = _exchange_write(**items[index], meaning=meanings[index])
            except DomainError as exc:
                results[index] = exc
    return results  # type: ignore[return-value]


def _exchange_write(
    *,
    session_id: uuid.UUID,
    user_message: str,
    assistant_message: str,
    idempotency_key: str | None = None,
    emotion: EmotionReading | None = None,
    intent: str | None = None,
    narrative: NarrativeRef | None = None,
    processing_time_ms: int | None = None,
    escalation: bool = False,
    channel: str | None = None,
    at: datetime | None = None,
    organisation_id: uuid.UUID | None = None,
    meaning: repeats.MessageMeaning | None | object = _NOT_ANALYSED,
) -> StoredExchange:
    """The exchange write itself, inside the caller's transaction.

    Both messages are redacted first (`memory.core.sensitive`): secrets never reach a row, and the
    repetition fingerprint and the idempotency check see the same text that is stored.
    `meaning` is the user message's (`repeats.meaning_of`), found by the caller before the
    transaction; it is stored encrypted, and the session's earlier messages are compared by
    their stored meanings (never embedded again).
    """
    at = at or timezone.now()
    user_message = sensitive.redact_text(user_message)
    assistant_message = sensitive.redact_text(assistant_message)
    if not user_message.strip():
        raise Invalid("user_message must not be empty.", field="user_message")
    if not assistant_message.strip():
        raise Invalid("assistant_message must not be empty.", field="assistant_message")
    if meaning is _NOT_ANALYSED:
        meaning = repeats.meaning_of(user_message)
    words = repetition.fingerprint(user_message)
    question_type = repetition.question_type(user_message)
    db_session_id = storage.db_uuid(session_id)
    db_at = storage.db_datetime(at)

    # The session's earlier fingerprints, and without the bot's emotion reading its latest
    # distress: read with the session's lock.
    reads = [(storage.SESSION_FINGERPRINTS, [db_session_id])]
    if emotion is None:
        reads.append(
            (storage.SESSION_RECENT_DISTRESS, [db_session_id, emotion_reader.TRAJECTORY_READINGS])
        )
    with connection.cursor() as cursor:
        session_row, read = _session_for_write(
            cursor,
            session_id=session_id,
            db_session_id=db_session_id,
            at=at,
            organisation_id=organisation_id,
            then=reads,
        )
        person_id, message_count, _status, last_activity, escalated, chronic = session_row
        if idempotency_key is not None:
            stored = _stored_exchange_for_key(
                cursor,
                session_id=session_id,
                db_session_id=db_session_id,
                idempotency_key=idempotency_key,
                user_message=user_message,
            )
            if stored is not None:
                return stored
        # The fingerprint as keyed tokens under the person's key (an anonymous session's own
        # until it is linked), under every configured key (the primary's is stored).
        fingerprints = repetition.stored_variants(
            words, scope=repetition.scope_of(person_id=person_id, session_id=session_id)
        )

        repeat_count = sum(
            repeats.repeat_flags(
                variants=fingerprints,
                question_type=question_type,
                meaning=meaning,
                earlier=[(fp, qtype, stored, rid) for fp, qtype, stored, _m, _r, rid in read[0]],
            )
        )
        # The bot's own reading, if it sent one: only that may raise the flag by itself
        # (escalation.detect); the built-in reader's level depends on the session's history.
        bot_emotion = emotion
        if emotion is None:
            recent = [row[0] for row in read[1]][::-1]
            baseline = None
            if len(recent) < emotion_reader.TRAJECTORY_READINGS:
                baseline = selectors.baseline_distress(
                    cursor=cursor, db_person_id=person_id, db_session_id=db_session_id, before=at
                )
            emotion = emotion_reader.analyse(
                user_message, recent_distress=recent, baseline=baseline
            )
        detected = escalation_detector.detect(
            user_message,
            emotion=bot_emotion.emotion if bot_emotion else None,
            distress=bot_emotion.distress_score if bot_emotion else 0.0,
            flagged=escalation,
        )
        escalation_reason, escalation_detail = detected.reason, detected.explanation()
        escalation = detected.escalate

        db_person_id = person_id  # already in the database's own form
        sequence = message_count + 1
        user_id, assistant_id = uuid7(), uuid7()
        db_user_id, db_assistant_id = storage.db_uuid(user_id), storage.db_uuid(assistant_id)
        # Encrypted at rest: each column gets its own ciphertext (own nonce).
        db_user_message = storage.db_encrypted(
            user_message, context=storage.MESSAGE_CONTENT, row=user_id
        )
        db_assistant_message = storage.db_encrypted(
            assistant_message, context=storage.MESSAGE_CONTENT, row=assistant_id
        )
        repetition_id = uuid7()
        writes = [
            (
                storage.INSERT_MESSAGES,
                [
                    db_user_id, db_session_id, db_person_id, db_user_message, db_at, sequence,
                    storage.db_idempotency_key(idempotency_key, session_id=session_id), channel,
                    escalation,
                    db_assistant_id, db_session_id, db_person_id, db_assistant_message, db_at,
                    sequence + 1, intent, narrative.id if narrative else None, processing_time_ms,
                    channel,
                ],
            ),
            (
                storage.INSERT_EMOTION,
                [
                    storage.db_uuid(uuid7()), db_user_id, db_session_id, db_person_id,
                    emotion.emotion, emotion.confidence, emotion.distress_score,
                    emotion.trajectory, db_at,
                ],
            ),
            (
                storage.INSERT_REPETITION,
                [
                    storage.db_uuid(repetition_id), db_session_id, db_person_id, db_user_id,
                    fingerprints[0],
                    storage.db_encrypted(
                        user_message, context=storage.REPETITION_ORIGINAL, row=repetition_id
                    ),
                    question_type, repeat_count, db_at,
                    storage.db_encrypted(
                        assistant_message, context=storage.REPETITION_RESPONSE, row=repetition_id
                    ),
                    repeats.to_db(meaning, row=repetition_id),
                ],
            ),
        ]  # fmt: skip
        if narrative is not None:
            writes.append(
                (
                    storage.INSERT_NARRATIVE_USAGE,
                    [
                        storage.db_uuid(uuid7()), narrative.id, db_session_id, db_person_id,
                        db_assistant_id, narrative.mode, narrative.category, emotion.emotion,
                        db_at,
                    ],
                )
            )  # fmt: skip
        # A session talked in again is active again: the person is back.
        writes.append(
            (
                storage.UPDATE_SESSION,
                [
                    sequence + 1,
                    storage.db_datetime(max(storage.from_db_datetime(last_activity), at)),
                    bool(escalated) or escalation,
                    bool(chronic) or repeat_count >= repetition.CHRONIC_AT,
                    db_session_id,
                ],
            )
        )
        if person_id is not None:
            writes.append((storage.TOUCH_PERSON, [db_at, db_person_id, db_at]))
        # The messages first: the rows after them refer to them.
        storage.execute_writes(cursor, writes)
        # In this transaction: what subscribers write (an escalation alert) exists exactly when
        # the exchange does.
        signals.exchange_stored.send(
            sender=signals.ExchangeStored,
            event=signals.ExchangeStored(
                session_id=session_id,
                person_id=storage.from_db_uuid(person_id) if person_id is not None else None,
                user_message_id=user_id,
                assistant_message_id=assistant_id,
                message_count=sequence + 1,
                user_message=user_message,
                assistant_message=assistant_message,
                escalated_now=escalation and not escalated,
                escalation_reason=escalation_reason,
                escalation_detail=escalation_detail,
                at=at,
            ),
        )

    return StoredExchange(user_id, sequence, assistant_id, sequence + 1, created=True)


def exchange_submit(**fields) -> StoredExchange | PendingExchange:
    """Store an exchange, or, when the database refuses the write, keep it in the recovery log.

    Takes the arguments of `exchange_record`. The log entry carries an idempotency key (the
    client's, or a new one), so replaying it can never store the exchange twice.
    """
    # Fixed now, so the exchange keeps its real time if it is stored later from the log.
    fields["at"] = fields.get("at") or timezone.now()
    try:
        return exchange_record(**fields)
    except (IntegrityError, DataError):
        # The data itself was refused: replaying it later would fail the same way.
        raise
    except DatabaseError as exc:
        # Locked, disk full, server gone, schema not migrated yet: the database, not the data.
        key = fields.get("idempotency_key") or f"recovery-{uuid.uuid4()}"
        fields["idempotency_key"] = key
        recovery.append(fields)
        # This process replays its log itself once the database is back (no timer needed).
        recovery.start_replayer(recovery_replay)
        logger.warning(
            "exchange for session %s went to the recovery log: %s",
            fields["session_id"],
            type(exc).__name__,
        )
        return PendingExchange(idempotency_key=key, session_id=fields["session_id"])


def recovery_replay() -> recovery.ReplayReport:
    """Store every exchange waiting in the recovery log; what still fails stays there."""
    return recovery.replay(exchanges_record_many)


# --- API keys ------------------------------------------------------------------------------

# `last_used_at` is kept to this resolution, so operators can spot unused keys cheaply.
API_KEY_USE_RESOLUTION = timedelta(hours=1)


# api_keys.prefix is unique (its index serves this read). Every column, so no attribute of the
# key is ever loaded lazily; the row is turned into an ApiKey by hand (`_key_from_row`), as
# `ApiKey.objects.raw()` cost several times more than the read on every bot request.
_KEY_COLUMNS = (
    "id",
    "organisation_id",
    "name",
    "prefix",
    "key_hash",
    "created_at",
    "last_used_at",
    "revoked_at",
    "expires_at",
    "scopes",
)
# Revoked keys too: a caller holding a whole revoked key is told so (never without the secret).
_KEY_SQL = f"SELECT {', '.join(_KEY_COLUMNS)} FROM api_keys WHERE prefix = %s"


def _key_from_row(row: tuple) -> ApiKey:
    id_, organisation_id, name, prefix, key_hash, created, used, revoked, expires, scopes = row
    values = [
        id_,
        storage.from_db_uuid(organisation_id),
        name,
        prefix,
        key_hash,
        *(
            None if value is None else storage.from_db_datetime(value)
            for value in (created, used, revoked, expires)
        ),
        storage.from_db_json_value(scopes),
    ]
    return ApiKey.from_db(connection.alias, list(_KEY_COLUMNS), values)


def _hash_key(raw_key: str) -> str:
    # Keys are 32 random bytes, so a fast hash is enough: there is nothing to brute-force.
    return hashlib.sha256(raw_key.encode()).hexdigest()


def api_key_create(
    *,
    name: str,
    organisation_id: uuid.UUID | None = None,
    scopes: Sequence[str] | None = None,
    expires_at: datetime | None = None,
) -> tuple[ApiKey, str]:
    """Make a bot key. Returns the row and the raw key, which is shown once and never stored.

    The key acts for `organisation_id` (the default organisation without one) with `scopes`
    (every scope without them) until `expires_at` (never without it).
    """
    if not name.strip():
        raise Invalid("A key needs a name.", field="name")
    scopes = list(Scope.values) if scopes is None else list(dict.fromkeys(scopes))
    unknown = [scope for scope in scopes if scope not in Scope.values]
    if unknown or not scopes:
        raise Invalid(
            f"Scopes must be some of: {', '.join(Scope.values)}.",
            field="scopes",
        )
    prefix = secrets.token_hex(4)
    raw_key = f"clara_{prefix}_{secrets.token_urlsafe(32)}"
    key = ApiKey.objects.create(
        name=name.strip(),
        organisation_id=organisation_id or default_organisation_id(),
        prefix=prefix,
        key_hash=_hash_key(raw_key),
        scopes=scopes,
        expires_at=expires_at,
    )
    return key, raw_key


def api_key_check(*, raw_key: str) -> ApiKey:
    """The live key matching `raw_key`; else an Unauthenticated error saying why (401).

    Hashes are compared in constant time, and a key is called revoked or expired only to a
    caller who holds all of it: a guessed prefix is answered exactly like an unknown key.
    Records the key's use (at most hourly).
    """
    if not raw_key:
        raise MissingApiKey("The Bearer token is empty: send 'Authorization: Bearer <key>'.")
    parts = raw_key.split("_", 2)
    if len(parts) != 3 or parts[0] != "clara" or not parts[1] or not parts[2]:
        raise MalformedApiKey("This is not a Clara API key (they look like clara_<id>_<secret>).")
    # Hand-written (one indexed read on the unique prefix): on every bot request, building the
    # ORM query cost several times more than running it (docs/benchmarks.md).
    with connection.cursor() as cursor:
        cursor.execute(_KEY_SQL, [parts[1]])
        row = cursor.fetchone()
    key = None if row is None else _key_from_row(row)
    if key is None or not secrets.compare_digest(key.key_hash, _hash_key(raw_key)):
        raise UnknownApiKey("No API key matches this one.")
    if key.revoked_at is not None:
        raise RevokedApiKey("This API key has been revoked; ask for a new one.")
    now = timezone.now()
    if key.expires_at is not None and key.expires_at <= now:
        raise ExpiredApiKey("This API key has expired; ask for a new one.")
    if key.last_used_at is None or now - key.last_used_at > API_KEY_USE_RESOLUTION:
        # At most one write per key per interval, and best effort: a busy database must not
        # turn a valid key away (the exchange itself may still go to the recovery log).
        try:
            ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
            key.last_used_at = now
        except DatabaseError:
            logger.info("could not record the use of API key %s", key.prefix)
    return key


def api_key_authenticate(*, raw_key: str) -> ApiKey | None:
    """The live key matching `raw_key`, or None (`api_key_check` says why)."""
    try:
        return api_key_check(raw_key=raw_key)
    except Unauthenticated:
        return None


def api_key_revoke(*, key: ApiKey, at: datetime | None = None) -> ApiKey:
    """Revoke a key; requests with it get 401 from now on."""
    if key.revoked_at is None:
        key.revoked_at = at or timezone.now()
        key.save(update_fields=["revoked_at"])
    return key
