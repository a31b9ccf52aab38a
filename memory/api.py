"""The bot API: sessions, the per-turn memory query, exchange writes, message history."""

from datetime import datetime
from typing import Any
from uuid import UUID

from ninja import Body, Query, Router, Schema, Status
from ninja.security import HttpBearer
from pydantic import Field

from memory import selectors, services
from memory.emotion import EmotionReading
from memory.models import Session
from memory.schemas import (
    ContextOut,
    EmotionIn,
    ErrorOut,
    ExchangeIn,
    ExchangeOut,
    ExchangePendingOut,
    MessageOut,
    MessagesOut,
    QueryIn,
    QueryOut,
    SessionCloseIn,
    SessionIn,
    SessionOut,
)

router = Router(tags=["sessions"])

# 503: the database is busy or away (reads cannot fall back to the recovery log).
ERRORS = {401: ErrorOut, 404: ErrorOut, 409: ErrorOut, 422: ErrorOut, 503: ErrorOut}


class BotKey(HttpBearer):
    """`Authorization: Bearer <key>`, checked against the stored hashes of live keys."""

    def authenticate(self, request, token: str):
        return services.api_key_authenticate(raw_key=token)


def _session_out(session: Session) -> dict:
    return {
        "session_id": session.id,
        "user_id": session.person_id,
        "status": session.status,
        "created_at": session.created_at,
        "last_activity_at": session.last_activity_at,
        "message_count": session.message_count,
        "ended_at": session.ended_at,
        "dominant_emotion": session.dominant_emotion,
        "escalation_triggered": session.escalation_triggered,
    }


def _reading(emotion: EmotionIn | None) -> EmotionReading | None:
    if emotion is None:
        return None
    return EmotionReading(
        emotion=emotion.emotion,
        confidence=emotion.confidence,
        distress_score=emotion.distress_score,
        trajectory=emotion.trajectory,
    )


@router.post("/sessions", response={200: SessionOut, 201: SessionOut, **ERRORS})
def resolve_session(request, payload: SessionIn):
    """Resume a session (200) or create it (201); a `user_id` links it to that person, created if new."""
    session, created = services.session_resolve(
        session_id=payload.session_id,
        user_id=payload.user_id,
        display_name=payload.display_name,
        at=payload.started_at,
    )
    return Status(201 if created else 200, _session_out(session))


@router.get("/sessions/{session_id}", response={200: SessionOut, **ERRORS})
def get_session(request, session_id: UUID):
    """One session; 404 when unknown."""
    return _session_out(selectors.session_get(session_id=session_id))


@router.post("/sessions/{session_id}/query", response={200: QueryOut, **ERRORS})
def query_memory(request, session_id: UUID, payload: QueryIn):
    """The per-turn memory read: repetition result, conversation window, emotions. Stores nothing."""
    result = selectors.memory_query(
        session_id=session_id,
        message=payload.message,
        emotion=_reading(payload.emotion),
        now=payload.occurred_at,
    )
    return {
        "is_repeat": result.is_repeat,
        "repeat_count": result.repeat_count,
        "question_type": result.question_type,
        "cross_session_repeat_count": result.cross_session_repeat_count,
        "window_size": result.window_size,
        "conversation_window": result.conversation_window,
        "emotion_history": result.emotion_history,
        "used_narrative_ids": result.used_narrative_ids,
        "caregiver_context": result.caregiver_context,
        "display_name": result.display_name,
    }


@router.post("/sessions/{session_id}/context", response={200: ContextOut, **ERRORS})
def build_context(request, session_id: UUID, payload: QueryIn):
    """What the companion's LLM sees this turn, built by the dementia-safe rules. Stores nothing.

    `system_prompt` and `messages` go to the LLM as they are: they hold only this session's
    conversation and never reveal repetition. `analysis` is for the bot's own logic and must
    not be put in the prompt. Store the exchange afterwards with the narrative and escalation.
    """
    return context_response(
        session_id=session_id,
        message=payload.message,
        emotion=payload.emotion,
        occurred_at=payload.occurred_at,
    )


def context_response(
    *,
    session_id: UUID,
    message: str,
    emotion: EmotionIn | None = None,
    occurred_at: datetime | None = None,
) -> dict[str, Any]:
    """This turn's context in the shape of the /context response. Stores nothing.

    Shared by the endpoint and the `get_context` agent tool, so both build a turn the same way.
    """
    result = selectors.context_build(
        session_id=session_id,
        message=message,
        emotion=_reading(emotion),
        now=occurred_at,
    )
    query, reading = result.query, result.query.current_emotion
    narrative = None
    if result.narrative is not None:
        narrative = {
            "id": result.narrative.id,
            "mode": "seed",
            "text": result.narrative.text,
            "category": result.narrative.category,
            "theme_tags": result.narrative.theme_tags,
        }
    return {
        "system_prompt": result.rendered.system_prompt,
        "messages": result.rendered.messages,
        "max_tokens": result.rendered.max_tokens,
        "narrative": narrative,
        "analysis": {
            "is_repeat": query.is_repeat,
            "repeat_count": query.repeat_count,
            "question_type": query.question_type,
            "cross_session_repeat_count": query.cross_session_repeat_count,
            "emotion": reading.emotion,
            "distress_score": reading.distress_score,
            "trajectory": reading.trajectory,
            "window_size": query.window_size,
            "escalate": result.escalation.escalate,
            "escalation_reason": result.escalation.reason,
            "chronic_repetition_pattern": result.chronic_repetition_pattern,
        },
    }


@router.post(
    "/sessions/{session_id}/exchanges",
    response={200: ExchangeOut, 201: ExchangeOut, 202: ExchangePendingOut, **ERRORS},
)
def store_exchange(request, session_id: UUID, payload: ExchangeIn):
    """Store one exchange exactly once (201; a retried idempotency_key gives 200 and the original).

    An unknown session is created on the fly. If the database cannot take the write, the
    exchange is kept in the recovery log and the answer is 202: it will be stored on replay.
    """
    narrative = None
    if payload.narrative is not None:
        narrative = services.NarrativeRef(
            id=payload.narrative.id,
            mode=payload.narrative.mode,
            category=payload.narrative.category,
        )
    result = services.exchange_submit(
        session_id=session_id,
        user_message=payload.user_message,
        assistant_message=payload.assistant_message,
        idempotency_key=payload.idempotency_key,
        emotion=_reading(payload.emotion),
        intent=payload.intent,
        narrative=narrative,
        processing_time_ms=payload.processing_time_ms,
        escalation=payload.escalation,
        channel=payload.channel,
        at=payload.occurred_at,
    )
    if isinstance(result, services.PendingExchange):
        return Status(
            202,
            {
                "detail": "The exchange is safe in the recovery log and will be stored shortly.",
                "idempotency_key": result.idempotency_key,
            },
        )
    body = {
        "user_message": {
            "message_id": result.user_message_id,
            "sequence_number": result.user_sequence_number,
        },
        "assistant_message": {
            "message_id": result.assistant_message_id,
            "sequence_number": result.assistant_sequence_number,
        },
    }
    return Status(201 if result.created else 200, body)


class MessagesQuery(Schema):
    limit: int = Field(50, ge=1, le=500)


@router.get("/sessions/{session_id}/messages", response={200: MessagesOut, **ERRORS})
def list_messages(request, session_id: UUID, filters: Query[MessagesQuery]):
    """The session's last `limit` messages (50 by default, 500 at most), oldest first."""
    rows = selectors.messages_list(session_id=session_id, limit=filters.limit)
    return {
        "messages": [
            MessageOut(
                message_id=row.id,
                role=row.role,
                content=row.content,
                sequence_number=row.sequence_number,
                timestamp=row.timestamp,
            )
            for row in rows
        ]
    }


@router.post("/sessions/{session_id}/close", response={200: SessionOut, **ERRORS})
def close_session(request, session_id: UUID, payload: Body[SessionCloseIn | None] = None):
    """Close a session and record its dominant emotion. Closing a closed session changes nothing.

    The body is optional: `{ended_at}` for a bot that closes a conversation late.
    """
    ended_at = payload.ended_at if payload is not None else None
    return _session_out(services.session_close(session_id=session_id, at=ended_at))
