"""Request and response shapes of the bot API. This is a contract: add to it only compatibly."""

from datetime import datetime, timedelta
from typing import Annotated, Literal
from uuid import UUID

from django.utils import timezone
from ninja import Field, Schema
from ninja.schema import DjangoGetter
from pydantic import AfterValidator, AwareDatetime, BeforeValidator, model_validator

from memory.models import Emotion, NarrativeUsage, Trajectory

MAX_MESSAGE_CHARS = 8000


def _no_nul(value: str) -> str:
    if "\x00" in value:
        # PostgreSQL cannot store NUL in text; refuse it on every database alike.
        raise ValueError("must not contain NUL characters")
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty or only whitespace")
    return _no_nul(value)


# How far back a bot may date what it uploads (an exchange buffered offline, a replayed log).
MAX_BACKDATE = timedelta(days=400)
CLOCK_SKEW = timedelta(minutes=1)


def _in_the_past(value: datetime) -> datetime:
    now = timezone.now()
    if value > now + CLOCK_SKEW:
        raise ValueError("must not be in the future")
    if value < now - MAX_BACKDATE:
        raise ValueError("must be within the last 400 days")
    return value


# A moment that already happened, with its time zone.
PastTime = Annotated[AwareDatetime, AfterValidator(_in_the_past)]


def Text(*, max_length: int, min_length: int = 0):  # noqa: N802 - reads as a type
    """A short free-text field: bounded length, no NUL characters."""
    return Annotated[
        str, Field(min_length=min_length, max_length=max_length), AfterValidator(_no_nul)
    ]


MessageText = Annotated[
    str, Field(min_length=1, max_length=MAX_MESSAGE_CHARS), AfterValidator(_not_blank)
]


def _spoken(value):
    """Keep only what was said: reasoning blocks and <think> tags never reach storage."""
    from memory.hygiene import spoken_text

    if isinstance(value, str):
        return spoken_text(value)
    if isinstance(value, list) and all(isinstance(block, dict) for block in value):
        return spoken_text(value)
    return value


# The companion's reply: a string, or the LLM's content blocks ([{"type": "text", "text": ...},
# {"type": "thinking", ...}]); reasoning is stripped before anything else sees it.
AssistantText = Annotated[
    str,
    BeforeValidator(_spoken),
    Field(
        min_length=1,
        max_length=MAX_MESSAGE_CHARS,
        description="The reply as said. Content blocks are accepted too; reasoning blocks and "
        "<think> tags are removed before storage.",
    ),
    AfterValidator(_not_blank),
]
EmotionName = Literal[tuple(Emotion.values)]  # type: ignore[valid-type]
TrajectoryName = Literal[tuple(Trajectory.values)]  # type: ignore[valid-type]
NarrativeMode = Literal[tuple(NarrativeUsage.Mode.values)]  # type: ignore[valid-type]


class ErrorOut(Schema):
    detail: str
    code: str
    field: str | None = None
    # For invalid input: every problem found, each with its location and message.
    errors: list[dict] | None = None


class RequestSchema(Schema):
    """A request body (or part of one) that must be a JSON object.

    Ninja's Schema reads attributes off whatever it is given, so without this check a JSON array,
    string or null validates as an object with every field missing: all-optional bodies would
    be accepted.
    """

    @model_validator(mode="before")
    @classmethod
    def _must_be_object(cls, data):
        # Ninja's own validator has already wrapped the input in a DjangoGetter.
        raw = data._obj if isinstance(data, DjangoGetter) else data
        if not isinstance(raw, dict):
            raise ValueError("must be a JSON object")
        return data


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
    status: str
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


class LLMMessageOut(Schema):
    role: str
    content: str


class ContextNarrativeOut(Schema):
    id: str
    mode: str
    text: str
    category: str
    theme_tags: list[str]


class AnalysisOut(Schema):
    is_repeat: bool
    repeat_count: int
    question_type: str
    cross_session_repeat_count: int
    emotion: str
    distress_score: float
    trajectory: str
    window_size: int
    escalate: bool
    escalation_reason: str | None
    chronic_repetition_pattern: bool


class ContextOut(Schema):
    system_prompt: str
    messages: list[LLMMessageOut]
    max_tokens: int
    narrative: ContextNarrativeOut | None
    analysis: AnalysisOut
