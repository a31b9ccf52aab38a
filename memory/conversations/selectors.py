"""Reads shared by the bot API and the dashboard; the per-turn memory query lives here.

The per-turn path (`memory_query`) makes a fixed number of indexed reads, whatever the size of
the database: the session by primary key, then the session's repetition records (with their
stored meanings), emotions, window and narratives through the (session, ...) indexes, one
ranged count on (person, question_type, timestamp), and, in a session's first turns only, the
person's usual distress through (person, timestamp). Repeats are counted by words or by meaning
(memory/conversations/repeats.py): the current message is analysed once, earlier ones are read.
"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone

from memory.conversations import emotion as emotion_reader
from memory.conversations import escalation as escalation_detector
from memory.conversations import repeats, repetition, urgency
from memory.conversations import sql as storage
from memory.conversations.emotion import EmotionReading
from memory.conversations.models import ChatMessage, QuestionType, Session
from memory.core import sensitive
from memory.core.errors import NotFound

# Conversation window sizes: how much of this session the companion sees (first rule that applies
# in window_size_for).
WINDOW_SHORT_SESSION = 6  # a session this short is shown whole
WINDOW_REPETITIVE = 6  # repeat count >= REPETITIVE_AT: circular talk, more history is noise
WINDOW_DISTRESSED = 16  # distress above DISTRESS_WIDE: see what led up to it
WINDOW_NORMAL = 12
REPETITIVE_AT = 4
DISTRESS_WIDE = 0.7
# An escalation among the person's last this many messages keeps the window wide (16): one
# calmer turn after a fall must not hide the fall.
RECENT_ESCALATION_MESSAGES = 3
EMOTION_HISTORY = 10
CROSS_SESSION_DAYS = 7
# The person's usual distress: the mean of their latest readings in other sessions, this many,
# when there are at least BASELINE_MIN_READINGS. Used while a session has little history of its
# own, to calibrate the trajectory (never shown to the LLM).
BASELINE_READINGS = 50
BASELINE_MIN_READINGS = 5


@dataclass(frozen=True)
class WindowMessage:
    role: str
    content: str
    sequence_number: int
    # The stored meaning of a person's message (None: Clara's, or stored without one); lets the
    # prompt keep one telling of a question however it was worded. Never serialised.
    meaning: repeats.MessageMeaning | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class EmotionRecord:
    emotion: str
    confidence: float
    distress_score: float
    trajectory: str
    timestamp: datetime


@dataclass(frozen=True)
class SessionInfo:
    """The few columns of a session (and its person) the per-turn path needs."""

    id: uuid.UUID
    person_id: uuid.UUID | None
    message_count: int
    display_name: str
    caregiver_context: dict
    # The firewall approvals of the person (Person.approved_texts): keyed digests, no text.
    approved_texts: str = ""


@dataclass(frozen=True)
class MemoryQueryResult:
    session: SessionInfo
    is_repeat: bool
    repeat_count: int
    question_type: str
    cross_session_repeat_count: int
    window_size: int
    conversation_window: list[WindowMessage]
    emotion_history: list[EmotionRecord]
    used_narrative_ids: list[str]
    current_emotion: EmotionReading
    caregiver_context: dict = field(default_factory=dict)
    display_name: str = ""
    # At a repeat: what Clara answered the latest message of this session that this one repeats.
    last_answer: str | None = None
    # An escalation among the person's last few messages of this session (it widened the window).
    recent_escalation: bool = False
    # The meaning of this message, when analysed (the exchange write reuses it).
    meaning: repeats.MessageMeaning | None = field(default=None, compare=False, repr=False)
    # The rows of the caller's own reads (`memory_query(also=...)`), by the names it gave them.
    also: dict[str, list[tuple]] = field(default_factory=dict, compare=False, repr=False)
    # The session's latest messages as read (up to WINDOW_DISTRESSED, oldest first), whatever
    # the window: the turn's context looks for anchors in them without reading them again.
    # Never serialised.
    # (role, text, sequence_number) each.
    latest: tuple[tuple[str, str, int], ...] = field(default=(), compare=False, repr=False)


def session_get(*, session_id: uuid.UUID, organisation_id: uuid.UUID | None = None) -> Session:
    """The session with its person, or NotFound (also when it is another organisation's)."""
    rows = Session.objects.select_related("person").filter(id=session_id)
    if organisation_id is not None:
        rows = rows.filter(organisation_id=organisation_id)
    session = rows.first()
    if session is None:
        raise NotFound("No session with this id.", field="session_id")
    return session


def window_size_for(
    *, message_count: int, repeat_count: int, distress: float, recent_escalation: bool = False
) -> int:
    """How many recent messages the companion sees this turn (first rule that applies)."""
    if message_count <= WINDOW_SHORT_SESSION:
        return message_count
    if repeat_count >= REPETITIVE_AT:
        return WINDOW_REPETITIVE
    if distress > DISTRESS_WIDE or recent_escalation:
        return WINDOW_DISTRESSED
    return WINDOW_NORMAL


def escalation_in(messages: list[tuple[str, bool | None]]) -> bool:
    """Whether any of the person's `messages` needed a human: (text, the flag stored with it).

    The stored flag says it, the bot's own included (an exchange it flagged keeps the window
    wide even when the recogniser disagrees); a message stored before flags were kept (None) is
    read again for explicit phrases only (no model pass for history on every turn).
    """
    return any(
        flagged if flagged is not None else urgency.said_in_phrases(text)
        for text, flagged in messages
    )


def baseline_distress(*, cursor, db_person_id, db_session_id, before: datetime) -> float | None:
    """The person's usual distress (their latest readings in other sessions), or None."""
    if db_person_id is None:
        return None
    cursor.execute(
        storage.PERSON_BASELINE_DISTRESS,
        [db_person_id, storage.db_datetime(before), db_session_id, BASELINE_READINGS],
    )
    readings, average = cursor.fetchone()
    if readings < BASELINE_MIN_READINGS or average is None:
        return None
    return float(average)


def _session_info(
    cursor, session_id: uuid.UUID, db_session_id, organisation_id: uuid.UUID | None
) -> SessionInfo:
    cursor.execute(storage.SESSION_WITH_PERSON, [db_session_id])
    row = cursor.fetchone()
    # Another organisation's session answers like an unknown one.
    if row is None or (
        organisation_id is not None and storage.from_db_uuid(row[4]) != organisation_id
    ):
        raise NotFound("No session with this id.", field="session_id")
    person_id, message_count, display_name, caregiver_context, _, approved_texts = row
    return SessionInfo(
        id=session_id,
        person_id=storage.from_db_uuid(person_id),
        message_count=message_count,
        display_name=storage.from_db_encrypted(
            display_name, context=storage.PERSON_NAME, row=person_id
        )
        or "",
        caregiver_context=storage.from_db_encrypted_json(
            caregiver_context, context=storage.PERSON_CONTEXT, row=person_id
        ),
        approved_texts=approved_texts or "",
    )


def cross_session_repeats_read(
    *, session: SessionInfo, fingerprints: list[str], question_type: str, now: datetime
) -> tuple[str, list] | None:
    """The statement counting how often the person asked this in their *other* sessions of the
    last 7 days (analytics only); None when nothing can count (no person; a general message with
    no content words).

    Counted by question type for the specific types, and by exact fingerprint for general
    messages. `fingerprints` are the message's stored (keyed) fingerprint under each configured
    key.
    """
    if session.person_id is None:
        return None
    if question_type != QuestionType.GENERAL:
        sql, match = storage.PERSON_REPEATS_BY_TYPE, [question_type]
    elif fingerprints[0]:
        sql, match = storage.person_repeats_by_fingerprint_sql(len(fingerprints)), fingerprints
    else:
        return None
    since = storage.db_datetime(now - timedelta(days=CROSS_SESSION_DAYS))
    return sql, [storage.db_uuid(session.person_id), *match, since, storage.db_uuid(session.id)]


def memory_query(
    *,
    session_id: uuid.UUID,
    message: str,
    emotion: EmotionReading | None = None,
    now: datetime | None = None,
    organisation_id: uuid.UUID | None = None,
    also: Callable[[uuid.UUID | None], dict[str, tuple[str, list]]] | None = None,
) -> MemoryQueryResult:
    """The per-turn memory read (flow step 3). Stores nothing.

    Returns the repetition result for `message`, the conversation window (window_size_for), the
    last 10 emotion records, the narratives already used this session, and caregiver context.
    `also(person_id)` names reads of the caller's (statement, parameters) that depend only on
    the session's person: they travel with the session's own (one round trip on PostgreSQL),
    and their rows come back in `also` under the same names.
    """
    now = now or timezone.now()
    # Compared as stored: redacted first, so a secret neither changes the match nor travels on.
    message = sensitive.redact_text(message)
    words = repetition.fingerprint(message)
    question_type = repetition.question_type(message)
    db_session_id = storage.db_uuid(session_id)
    meaning = None
    with connection.cursor() as cursor:
        session = _session_info(cursor, session_id, db_session_id, organisation_id)
        # Stored fingerprints are keyed tokens under the person's key: this message's, under
        # every configured key.
        fingerprints = repetition.stored_variants(
            words, scope=repetition.scope_of(person_id=session.person_id, session_id=session_id)
        )

        # The session's own rows and the person's count from other sessions, read together (one
        # round trip on PostgreSQL).
        reads = {
            "earlier": (storage.SESSION_FINGERPRINTS, [db_session_id]),
            "feelings": (storage.SESSION_EMOTIONS, [db_session_id, EMOTION_HISTORY]),
            "told": (storage.SESSION_NARRATIVES, [db_session_id]),
        }
        if session.message_count:
            reads["latest"] = (storage.SESSION_WINDOW, [db_session_id, WINDOW_DISTRESSED])
        cross = cross_session_repeats_read(
            session=session, fingerprints=fingerprints, question_type=question_type, now=now
        )
        if cross is not None:
            reads["elsewhere"] = cross
        extra = also(session.person_id) if also is not None else {}
        reads.update({("also", name): read for name, read in extra.items()})
        rows = dict(zip(reads, storage.fetch_together(cursor, list(reads.values())), strict=True))
        earlier = rows["earlier"]
        # Only a message with something before it can repeat: the first one of a session is
        # analysed by the exchange write that stores it.
        meaning = repeats.meaning_of(message) if earlier else None
        flags = repeats.repeat_flags(
            variants=fingerprints,
            question_type=question_type,
            meaning=meaning,
            earlier=[(fp, qtype, stored, rid) for fp, qtype, stored, _m, _r, rid in earlier],
        )
        repeat_count = sum(flags)
        last_answer = None
        if repeat_count:
            latest = max(index for index, flag in enumerate(flags) if flag)
            last_answer = storage.from_db_encrypted(
                earlier[latest][4], context=storage.REPETITION_RESPONSE, row=earlier[latest][5]
            )

        history = [
            EmotionRecord(emotion, confidence, distress, trajectory, storage.from_db_datetime(at))
            for emotion, confidence, distress, trajectory, at in reversed(rows["feelings"])
        ]
        if emotion is None:
            baseline = None
            if len(history) < emotion_reader.TRAJECTORY_READINGS:
                baseline = baseline_distress(
                    cursor=cursor,
                    db_person_id=storage.db_uuid(session.person_id),
                    db_session_id=db_session_id,
                    before=now,
                )
            emotion = emotion_reader.analyse(
                message,
                recent_distress=[record.distress_score for record in history],
                baseline=baseline,
            )

        # The latest messages, as many as the widest window: what the person said lately decides
        # the width too (an escalation a turn or two ago keeps it wide).
        latest = [
            (
                role,
                storage.from_db_encrypted(content, context=storage.MESSAGE_CONTENT, row=message_id),
                sequence,
                message_id,
                flagged,
            )
            for role, content, sequence, message_id, flagged in reversed(rows.get("latest", []))
        ]
        said_lately = [
            (text, flagged)
            for role, text, _seq, _id, flagged in latest
            if role == ChatMessage.Role.USER
        ]
        recent_escalation = escalation_in(
            [
                *said_lately[-RECENT_ESCALATION_MESSAGES:],
                (message, escalation_detector.detect(message).escalate),
            ]
        )
        size = window_size_for(
            message_count=session.message_count,
            repeat_count=repeat_count,
            distress=emotion.distress_score,
            recent_escalation=recent_escalation,
        )
        stored_meanings = {}
        if meaning is not None:
            # Keyed by the ids as the database gives them (the same column type on both sides):
            # no UUID objects to build for every earlier row.
            stored_meanings = {row[3]: (row[2], row[5]) for row in earlier}
        window = [
            WindowMessage(
                role,
                text,
                sequence,
                repeats.from_db(*stored_meanings.get(message_id, (None, None))),
            )
            for role, text, sequence, message_id, _flagged in (latest[-size:] if size else [])
        ]

        used_narratives = list(dict.fromkeys(row[0] for row in rows["told"]))
        cross_count = rows["elsewhere"][0][0] if cross is not None else 0
    return MemoryQueryResult(
        session=session,
        is_repeat=repeat_count > 0,
        repeat_count=repeat_count,
        question_type=question_type,
        cross_session_repeat_count=cross_count,
        window_size=size,
        conversation_window=window,
        emotion_history=history,
        used_narrative_ids=used_narratives,
        current_emotion=emotion,
        caregiver_context=session.caregiver_context,
        display_name=session.display_name,
        last_answer=last_answer,
        recent_escalation=recent_escalation,
        meaning=meaning,
        latest=tuple((role, text, sequence) for role, text, sequence, _id, _flag in latest),
        also={name: rows[("also", name)] for name in extra},
    )


def texts_before(*, session_id: uuid.UUID, sequence_number: int, limit: int) -> list[str]:
    """The texts of the `limit` messages of a session before `sequence_number`, oldest first
    (the caller has already resolved the session for its organisation)."""
    if limit <= 0:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            storage.SESSION_TEXTS_BEFORE, [storage.db_uuid(session_id), sequence_number, limit]
        )
        return [
            storage.from_db_encrypted(content, context=storage.MESSAGE_CONTENT, row=message_id)
            for message_id, content in reversed(cursor.fetchall())
        ]


def messages_list(
    *, session_id: uuid.UUID, limit: int = 50, organisation_id: uuid.UUID | None = None
) -> list[ChatMessage]:
    """The last `limit` messages of a session, oldest first."""
    session = session_get(session_id=session_id, organisation_id=organisation_id)
    rows = list(
        ChatMessage.objects.filter(session_id=session.id).order_by("-sequence_number")[:limit]
    )
    rows.reverse()
    return rows
