"""Request and response shapes of the bot API. This is a contract: add to it only compatibly."""

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from ninja import Field, Schema

from memory.conversations.emotion import EmotionReading
from memory.conversations.models import Emotion, NarrativeUsage, Session, Trajectory
from memory.core.schemas import (  # noqa: F401 - the conversation API's shapes build on these
    ERRORS,
    AssistantText,
    ErrorOut,
    MessageText,
    PastTime,
    RequestSchema,
    Text,
)

EmotionName = Literal[tuple(Emotion.values)]  # type: ignore[valid-type]
TrajectoryName = Literal[tuple(Trajectory.values)]  # type: ignore[valid-type]
NarrativeMode = Literal[tuple(NarrativeUsage.Mode.values)]  # type: ignore[valid-type]
SessionStatusName = Literal[tuple(Session.Status.values)]  # type: ignore[valid-type]


class SessionIn(RequestSchema):
    session_id: UUID | None = None
    user_id: UUID | None = None
    display_name: Text(max_length=200) | None = None
    # When the conversation began, for a bot that opened it offline; default now.
    started_at: PastTime | None = None


class SessionCloseIn(RequestSchema):
    # When the conversation ended, for a bot closing it late; default now.
    ended_at: PastTime | None = None


class SessionOut(Schema):
    session_id: UUID
    user_id: UUID | None
    status: SessionStatusName
    created_at: datetime
    last_activity_at: datetime
    message_count: int
    ended_at: datetime | None
    dominant_emotion: str | None
    escalation_triggered: bool


class EmotionIn(RequestSchema):
    emotion: EmotionName
    confidence: float = Field(ge=0, le=1)
    distress_score: float = Field(ge=0, le=1)
    trajectory: TrajectoryName


class NarrativeIn(RequestSchema):
    id: Text(min_length=1, max_length=128)
    mode: NarrativeMode
    category: Text(min_length=1, max_length=64)


class QueryIn(RequestSchema):
    message: MessageText
    # Optional: the bot's own reading of this message; without it the built-in reader is used.
    emotion: EmotionIn | None = None
    # Optional: when the turn happens, for a bot replaying turns it buffered offline; default
    # now. Sets the 7-day cross-session window and which stories count as heard lately.
    occurred_at: PastTime | None = None


class WindowMessageOut(Schema):
    role: str
    content: str
    sequence_number: int


class EmotionRecordOut(Schema):
    emotion: str
    confidence: float
    distress_score: float
    trajectory: str
    timestamp: datetime


class QueryOut(Schema):
    is_repeat: bool
    repeat_count: int
    question_type: str
    cross_session_repeat_count: int
    window_size: int
    conversation_window: list[WindowMessageOut]
    emotion_history: list[EmotionRecordOut]
    used_narrative_ids: list[str]
    caregiver_context: dict
    display_name: str


class ExchangeIn(RequestSchema):
    user_message: MessageText
    assistant_message: AssistantText
    idempotency_key: Text(min_length=1, max_length=128) | None = None
    emotion: EmotionIn | None = None
    intent: Text(max_length=64) | None = None
    narrative: NarrativeIn | None = None
    processing_time_ms: Annotated[int, Field(ge=0, le=3_600_000)] | None = None
    escalation: bool = False
    # When the exchange happened, for a bot uploading exchanges it buffered offline; default
    # now. Exchanges of one session should be sent in the order they happened.
    occurred_at: PastTime | None = None
    # Where it was said ("voice", "app", "sms"...), for companions that follow a person around.
    channel: Text(min_length=1, max_length=32) | None = None


class StoredMessageOut(Schema):
    message_id: UUID
    sequence_number: int


class ExchangeOut(Schema):
    user_message: StoredMessageOut
    assistant_message: StoredMessageOut


class ExchangePendingOut(Schema):
    status: Literal["pending"] = "pending"
    detail: str
    idempotency_key: str


class MessageOut(Schema):
    message_id: UUID
    role: str
    content: str
    sequence_number: int
    timestamp: datetime


class MessagesOut(Schema):
    messages: list[MessageOut]


def emotion_reading(emotion: "EmotionIn | None") -> EmotionReading | None:
    """The bot's emotion reading as the domain's type (None: Clara reads the message herself)."""
    if emotion is None:
        return None
    return EmotionReading(
        emotion=emotion.emotion,
        confidence=emotion.confidence,
        distress_score=emotion.distress_score,
        trajectory=emotion.trajectory,
    )
