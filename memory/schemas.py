"""Request and response shapes of the bot API. This is a contract: add to it only compatibly."""

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from ninja import Field, Schema
from pydantic import AfterValidator

from memory.models import Emotion, NarrativeUsage, Trajectory

MAX_MESSAGE_CHARS = 8000


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty or only whitespace")
    return value


MessageText = Annotated[str, Field(min_length=1, max_length=MAX_MESSAGE_CHARS), AfterValidator(_not_blank)]
EmotionName = Literal[tuple(Emotion.values)]  # type: ignore[valid-type]
TrajectoryName = Literal[tuple(Trajectory.values)]  # type: ignore[valid-type]
NarrativeMode = Literal[tuple(NarrativeUsage.Mode.values)]  # type: ignore[valid-type]


class ErrorOut(Schema):
    detail: str
    code: str
    field: str | None = None


class SessionIn(Schema):
    session_id: UUID | None = None
    user_id: UUID | None = None
    display_name: Annotated[str, Field(max_length=200)] | None = None


class SessionOut(Schema):
    session_id: UUID
    user_id: UUID | None
    status: str
    created_at: datetime
    last_activity_at: datetime
    message_count: int
    ended_at: datetime | None
    dominant_emotion: str | None
    escalation_triggered: bool


class EmotionIn(Schema):
    emotion: EmotionName
    confidence: float = Field(ge=0, le=1)
    distress_score: float = Field(ge=0, le=1)
    trajectory: TrajectoryName


class NarrativeIn(Schema):
    id: Annotated[str, Field(min_length=1, max_length=128)]
    mode: NarrativeMode
    category: Annotated[str, Field(min_length=1, max_length=64)]


class QueryIn(Schema):
    message: MessageText
    # Optional: the bot's own reading of this message; without it the built-in reader is used.
    emotion: EmotionIn | None = None


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


class ExchangeIn(Schema):
    user_message: MessageText
    assistant_message: MessageText
    idempotency_key: Annotated[str, Field(min_length=1, max_length=128)] | None = None
    emotion: EmotionIn | None = None
    intent: Annotated[str, Field(max_length=64)] | None = None
    narrative: NarrativeIn | None = None
    processing_time_ms: Annotated[int, Field(ge=0, le=3_600_000)] | None = None
    escalation: bool = False


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
