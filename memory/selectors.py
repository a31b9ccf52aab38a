"""Reads shared by the bot API and the dashboard; the per-turn memory query lives here.

The per-turn path (`memory_query`) makes a fixed number of indexed reads, whatever the size of
the database: the session by primary key, then the session's repetition records, emotions,
window and narratives through the (session, ...) indexes, and one ranged count on
(person, question_type, timestamp).
"""

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.utils import timezone

from memory import emotion as emotion_reader
from memory import repetition
from memory.emotion import EmotionReading
from memory.errors import NotFound
from memory.models import (
    ChatMessage,
    DetectedEmotion,
    NarrativeUsage,
    QuestionType,
    RepetitionRecord,
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
class MemoryQueryResult:
    session: Session
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


def cross_session_repeat_count(
    *, session: Session, fingerprint: str, question_type: str, now: datetime
) -> int:
    """How often the person asked this in their *other* sessions of the last 7 days (analytics only).

    Counted by question type for the specific types, and by exact fingerprint for general
    messages (a general message with no content words counts nothing).
    """
    if session.person_id is None:
        return 0
    records = RepetitionRecord.objects.filter(
        person_id=session.person_id, timestamp__gte=now - timedelta(days=CROSS_SESSION_DAYS)
    ).exclude(session_id=session.id)
    if question_type != QuestionType.GENERAL:
        return records.filter(question_type=question_type).count()
    if not fingerprint:
        return 0
    return records.filter(fingerprint=fingerprint).count()


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
    session = session_get(session_id=session_id)

    fingerprint = repetition.fingerprint(message)
    question_type = repetition.question_type(message)
    earlier = RepetitionRecord.objects.filter(session_id=session.id).values_list(
        "fingerprint", "question_type"
    )
    repeat_count = repetition.count_repeats(
        fingerprint_=fingerprint, question_type_=question_type, earlier=earlier
    )

    emotion_rows = list(
        DetectedEmotion.objects.filter(session_id=session.id)
        .order_by("-timestamp")
        .values_list("emotion", "confidence", "distress_score", "trajectory", "timestamp")[
            :EMOTION_HISTORY
        ]
    )
    emotion_rows.reverse()
    history = [EmotionRecord(*row) for row in emotion_rows]
    if emotion is None:
        emotion = emotion_reader.analyse(
            message, recent_distress=[record.distress_score for record in history]
        )

    size = window_size_for(
        message_count=session.message_count,
        repeat_count=repeat_count,
        distress=emotion.distress_score,
    )
    window_rows = (
        list(
            ChatMessage.objects.filter(session_id=session.id)
            .order_by("-sequence_number")
            .values_list("role", "content", "sequence_number")[:size]
        )
        if size
        else []
    )
    window_rows.reverse()

    used_narratives = list(
        NarrativeUsage.objects.filter(session_id=session.id)
        .order_by("timestamp")
        .values_list("narrative_id", flat=True)
    )
    person = session.person
    return MemoryQueryResult(
        session=session,
        is_repeat=repeat_count > 0,
        repeat_count=repeat_count,
        question_type=question_type,
        cross_session_repeat_count=cross_session_repeat_count(
            session=session, fingerprint=fingerprint, question_type=question_type, now=now
        ),
        window_size=size,
        conversation_window=[WindowMessage(*row) for row in window_rows],
        emotion_history=history,
        used_narrative_ids=list(dict.fromkeys(used_narratives)),
        current_emotion=emotion,
        caregiver_context=dict(person.caregiver_context) if person else {},
        display_name=person.display_name if person else "",
    )


def messages_list(*, session_id: uuid.UUID, limit: int = 50) -> list[ChatMessage]:
    """The last `limit` messages of a session, oldest first."""
    session = session_get(session_id=session_id)
    rows = list(
        ChatMessage.objects.filter(session_id=session.id).order_by("-sequence_number")[:limit]
    )
    rows.reverse()
    return rows
