"""Reads shared by the bot API and the dashboard; the per-turn memory query lives here.

The per-turn path (`memory_query`) makes a fixed number of indexed reads, whatever the size of
the database: the session by primary key, then the session's repetition records, emotions,
window and narratives through the (session, ...) indexes, and one ranged count on
(person, question_type, timestamp).
"""

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone

from memory import context, narratives, repetition, sensitive, storage
from memory import emotion as emotion_reader
from memory import escalation as escalation_detector
from memory.emotion import EmotionReading
from memory.errors import NotFound
from memory.models import (
    ChatMessage,
    MemoryPolicy,
    Narrative,
    QuestionType,
    Session,
)

# Conversation window sizes (seed §5.1).
WINDOW_SHORT_SESSION = 6  # a session this short is shown whole
WINDOW_REPETITIVE = 6  # repeat count >= REPETITIVE_AT: circular talk, more history is noise
WINDOW_DISTRESSED = 16  # distress above DISTRESS_WIDE: see what led up to it
WINDOW_NORMAL = 12
REPETITIVE_AT = 4
DISTRESS_WIDE = 0.7
EMOTION_HISTORY = 10
CROSS_SESSION_DAYS = 7


@dataclass(frozen=True)
class WindowMessage:
    role: str
    content: str
    sequence_number: int


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


def session_get(*, session_id: uuid.UUID) -> Session:
    """The session with its person, or NotFound."""
    session = Session.objects.select_related("person").filter(id=session_id).first()
    if session is None:
        raise NotFound("No session with this id.", field="session_id")
    return session


def window_size_for(*, message_count: int, repeat_count: int, distress: float) -> int:
    """How many recent messages the companion sees this turn (seed §5.1, first rule that applies)."""
    if message_count <= WINDOW_SHORT_SESSION:
        return message_count
    if repeat_count >= REPETITIVE_AT:
        return WINDOW_REPETITIVE
    if distress > DISTRESS_WIDE:
        return WINDOW_DISTRESSED
    return WINDOW_NORMAL


def _session_info(cursor, session_id: uuid.UUID, db_session_id) -> SessionInfo:
    cursor.execute(storage.SESSION_WITH_PERSON, [db_session_id])
    row = cursor.fetchone()
    if row is None:
        raise NotFound("No session with this id.", field="session_id")
    person_id, message_count, display_name, caregiver_context = row
    return SessionInfo(
        id=session_id,
        person_id=storage.from_db_uuid(person_id),
        message_count=message_count,
        display_name=display_name or "",
        caregiver_context=storage.from_db_encrypted_json(caregiver_context),
    )


def cross_session_repeat_count(
    *, cursor, session: SessionInfo, fingerprints: list[str], question_type: str, now: datetime
) -> int:
    """How often the person asked this in their *other* sessions of the last 7 days (analytics only).

    Counted by question type for the specific types, and by exact fingerprint for general
    messages (a general message with no content words counts nothing). `fingerprints` are the
    message's stored (keyed) fingerprint under each configured key.
    """
    if session.person_id is None:
        return 0
    if question_type != QuestionType.GENERAL:
        sql, match = storage.PERSON_REPEATS_BY_TYPE, [question_type]
    elif fingerprints[0]:
        sql, match = storage.person_repeats_by_fingerprint_sql(len(fingerprints)), fingerprints
    else:
        return 0
    since = storage.db_datetime(now - timedelta(days=CROSS_SESSION_DAYS))
    cursor.execute(
        sql, [storage.db_uuid(session.person_id), *match, since, storage.db_uuid(session.id)]
    )
    return cursor.fetchone()[0]


def memory_query(
    *,
    session_id: uuid.UUID,
    message: str,
    emotion: EmotionReading | None = None,
    now: datetime | None = None,
) -> MemoryQueryResult:
    """The per-turn memory read (flow step 3). Stores nothing.

    Returns the repetition result for `message`, the conversation window sized by §5.1, the
    last 10 emotion records, the narratives already used this session, and caregiver context.
    """
    now = now or timezone.now()
    # Compared as stored: redacted first, so a secret neither changes the match nor travels on.
    message = sensitive.redact_text(message)
    # Stored fingerprints are keyed tokens: this message's, under every configured key.
    fingerprints = repetition.stored_variants(repetition.fingerprint(message))
    question_type = repetition.question_type(message)
    db_session_id = storage.db_uuid(session_id)
    with connection.cursor() as cursor:
        session = _session_info(cursor, session_id, db_session_id)

        cursor.execute(storage.SESSION_FINGERPRINTS, [db_session_id])
        repeat_count = repetition.count_repeats_stored(
            variants=fingerprints, question_type_=question_type, earlier=cursor.fetchall()
        )

        cursor.execute(storage.SESSION_EMOTIONS, [db_session_id, EMOTION_HISTORY])
        history = [
            EmotionRecord(emotion, confidence, distress, trajectory, storage.from_db_datetime(at))
            for emotion, confidence, distress, trajectory, at in reversed(cursor.fetchall())
        ]
        if emotion is None:
            emotion = emotion_reader.analyse(
                message, recent_distress=[record.distress_score for record in history]
            )

        size = window_size_for(
            message_count=session.message_count,
            repeat_count=repeat_count,
            distress=emotion.distress_score,
        )
        window: list[WindowMessage] = []
        if size:
            cursor.execute(storage.SESSION_WINDOW, [db_session_id, size])
            window = [
                WindowMessage(role, storage.from_db_encrypted(content), sequence)
                for role, content, sequence in reversed(cursor.fetchall())
            ]

        cursor.execute(storage.SESSION_NARRATIVES, [db_session_id])
        used_narratives = list(dict.fromkeys(row[0] for row in cursor.fetchall()))

        cross_count = cross_session_repeat_count(
            cursor=cursor,
            session=session,
            fingerprints=fingerprints,
            question_type=question_type,
            now=now,
        )
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
    )


def messages_list(*, session_id: uuid.UUID, limit: int = 50) -> list[ChatMessage]:
    """The last `limit` messages of a session, oldest first."""
    session = session_get(session_id=session_id)
    rows = list(
        ChatMessage.objects.filter(session_id=session.id).order_by("-sequence_number")[:limit]
    )
    rows.reverse()
    return rows


# --- Context assembly ------------------------------------------------------------------------

# Anchors are looked for in this many of the session's latest messages.
ANCHOR_MESSAGES = 40
# A story is offered when the person repeats a question or is upset; a first, calm question
# gets Clara's own answer.
NARRATIVE_DISTRESS = 0.5
_UPSET = {"anxious", "fearful", "lonely", "sad"}


@dataclass(frozen=True)
class ContextResult:
    rendered: context.RenderedContext
    query: MemoryQueryResult
    narrative: Narrative | None
    escalation: escalation_detector.Escalation

    @property
    def chronic_repetition_pattern(self) -> bool:
        return self.query.repeat_count >= context.CHRONIC_AT


def _wants_narrative(query: MemoryQueryResult) -> bool:
    reading = query.current_emotion
    return (
        query.repeat_count > 0
        or reading.distress_score >= NARRATIVE_DISTRESS
        or reading.emotion in _UPSET
    )


def _told_themes(narrative_ids: list[str]) -> list[str]:
    if not narrative_ids:
        return []
    tags_by_id = dict(
        Narrative.objects.filter(id__in=narrative_ids).values_list("id", "theme_tags")
    )
    themes: dict[str, None] = {}
    for narrative_id in narrative_ids:
        for tag in tags_by_id.get(narrative_id) or []:
            themes.setdefault(tag, None)
    return list(themes)


def confirmed_facts_for(
    *, person_id: uuid.UUID | None, message: str, now: datetime | None = None
) -> list[str]:
    """Caregiver-confirmed facts for this turn: name and top preferences, pinned facts, and the
    confirmed facts whose words match the message. Unconfirmed ones never reach the prompt.

    Keyword matching only (no embedding of the message), to keep the turn fast.
    """
    if person_id is None:
        return []
    from memory import search

    picked = search.turn_facts(person_id=person_id, message=message, at=now)
    seen: set = set()
    facts = []
    for memory in picked:
        if memory.id not in seen and memory.confirmed:
            seen.add(memory.id)
            facts.append(memory.content)
    return facts


def context_build(
    *,
    session_id: uuid.UUID,
    message: str,
    emotion: EmotionReading | None = None,
    now: datetime | None = None,
) -> ContextResult:
    """What the companion's LLM sees this turn, built by the dementia-safe rules. Stores nothing."""
    query = memory_query(session_id=session_id, message=message, emotion=emotion, now=now)
    session = query.session
    reading = query.current_emotion
    caregiver = query.caregiver_context
    avoid = [str(topic) for topic in caregiver.get("avoidTopics") or []]
    known = [str(topic) for topic in caregiver.get("knownTopics") or []]
    name = str(caregiver.get("preferredName") or query.display_name or "")

    flagged = escalation_detector.detect(
        message, emotion=reading.emotion, distress=reading.distress_score
    )
    chosen = None
    if _wants_narrative(query):
        chosen = narratives.narrative_choose(
            person_id=session.person_id,
            session_id=session.id,
            question_type=query.question_type,
            emotion=reading.emotion,
            distress=reading.distress_score,
            repeat_count=query.repeat_count,
            avoid_topics=avoid,
            now=now,
            used_in_session=query.used_narrative_ids,
        )
    recent_texts = list(
        ChatMessage.objects.filter(session_id=session.id)
        .order_by("-sequence_number")
        .values_list("content", flat=True)[:ANCHOR_MESSAGES]
    )[::-1]
    feelings = [
        context.Feeling(record.emotion, record.distress_score, record.trajectory)
        for record in query.emotion_history
    ] + [context.Feeling(reading.emotion, reading.distress_score, reading.trajectory)]
    agreed = caregiver.get("agreedAnswers") or {}
    agreed_answer = agreed.get(query.question_type) if query.question_type else None
    inputs = context.ContextInputs(
        agreed_answer=str(agreed_answer) if agreed_answer else None,
        facts=confirmed_facts_for(person_id=session.person_id, message=message, now=now),
        name=name,
        message=message,
        window=[context.Turn(m.role, m.content) for m in query.conversation_window],
        repeat_count=query.repeat_count,
        feelings=feelings,
        narrative=context.NarrativeSeed(chosen.text, tuple(chosen.theme_tags)) if chosen else None,
        told_themes=_told_themes(query.used_narrative_ids),
        anchors=context.find_anchors([*recent_texts, message]),
        known_topics=known,
        avoid_topics=avoid,
        escalate=flagged.escalate,
    )
    rendered = context.render(inputs)
    if session.person_id is not None:
        from memory import continuity

        if continuity.policy_of(session.person_id) == MemoryPolicy.CONTINUOUS:
            # A companion outside dementia care: one stream across sessions (memory/continuity.py).
            rendered = continuity.stream_render(
                person_id=session.person_id, message=message, now=now
            )
    return ContextResult(rendered=rendered, query=query, narrative=chosen, escalation=flagged)
