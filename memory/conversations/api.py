"""The bot API: sessions, the per-turn memory query, exchange writes, message history.

Reading a session's message history is audited (memory.conversations.audit); the per-turn calls
(sessions, query, exchanges, close) are the bot doing its job, and are not.
"""

from uuid import UUID

from ninja import Body, Query, Router, Schema, Status
from ninja.security import HttpBearer
from pydantic import Field

from memory.conversations import audit, selectors, services, tenancy
from memory.conversations.models import AccessAction, Scope, Session
from memory.conversations.schemas import (
    ERRORS,
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
    emotion_reading,
)
from memory.core.errors import MissingApiKey, UnsupportedAuthScheme

router = Router(tags=["sessions"])


class BotKey(HttpBearer):
    """`Authorization: Bearer <key>`, checked against the stored hashes of live keys.

    Every way of getting it wrong is its own 401 (memory/core/errors.py `Unauthenticated`), so a
    bot developer reads what to fix: no key, another scheme or header, not a Clara key, an
    unknown, revoked or expired one.
    """

    def __call__(self, request):
        header = request.headers.get("Authorization", "")
        if not header.strip():
            if request.headers.get("X-API-Key"):
                raise UnsupportedAuthScheme(
                    "The X-API-Key header is not read: send the key as "
                    "'Authorization: Bearer <key>'."
                )
            raise MissingApiKey("No API key: send it as 'Authorization: Bearer <key>'.")
        scheme, _, token = header.strip().partition(" ")
        if scheme.lower() != "bearer":
            # The scheme is not echoed: a key sent without one would be.
            raise UnsupportedAuthScheme(
                "Only the Bearer scheme is supported: send 'Authorization: Bearer <key>'.",
                field="Authorization",
            )
        return self.authenticate(request, token.strip())

    def authenticate(self, request, token: str):
        return services.api_key_check(raw_key=token)


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


@router.post("/sessions", response={200: SessionOut, 201: SessionOut, **ERRORS})
def resolve_session(request, payload: SessionIn):
    """Resume a session (200) or create it (201); a `user_id` links it to that person, created if new."""
    caller = tenancy.request_caller(request, Scope.TURNS)
    session, created = services.session_resolve(
        organisation_id=caller.organisation_id,
        session_id=payload.session_id,
        user_id=payload.user_id,
        display_name=payload.display_name,
        at=payload.started_at,
    )
    return Status(201 if created else 200, _session_out(session))


@router.get("/sessions/{session_id}", response={200: SessionOut, **ERRORS})
def get_session(request, session_id: UUID):
    """One session; 404 when unknown."""
    caller = tenancy.request_caller(request, Scope.TURNS)
    return _session_out(
        selectors.session_get(session_id=session_id, organisation_id=caller.organisation_id)
    )


@router.post("/sessions/{session_id}/query", response={200: QueryOut, **ERRORS})
def query_memory(request, session_id: UUID, payload: QueryIn):
    """The per-turn memory read: repetition result, conversation window, emotions. Stores nothing."""
    caller = tenancy.request_caller(request, Scope.TURNS)
    result = selectors.memory_query(
        organisation_id=caller.organisation_id,
        session_id=session_id,
        message=payload.message,
        emotion=emotion_reading(payload.emotion),
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


@router.post(
    "/sessions/{session_id}/exchanges",
    response={200: ExchangeOut, 201: ExchangeOut, 202: ExchangePendingOut, **ERRORS},
)
def store_exchange(request, session_id: UUID, payload: ExchangeIn):
    """Store one exchange exactly once (201; a retried idempotency_key gives 200 and the original).

    An unknown session is created on the fly. If the database cannot take the write, the
    exchange is kept in the recovery log and the answer is 202: it will be stored on replay.
    """
    caller = tenancy.request_caller(request, Scope.TURNS)
    narrative = None
    if payload.narrative is not None:
        narrative = services.NarrativeRef(
            id=payload.narrative.id,
            mode=payload.narrative.mode,
            category=payload.narrative.category,
        )
    result = services.exchange_submit(
        organisation_id=caller.organisation_id,
        session_id=session_id,
        user_message=payload.user_message,
        assistant_message=payload.assistant_message,
        idempotency_key=payload.idempotency_key,
        emotion=emotion_reading(payload.emotion),
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
    caller = tenancy.caller_for_key(request.auth)
    with audit.audited(caller, AccessAction.READ_MESSAGES, object_id=session_id) as access:
        caller.require(Scope.TURNS)
        rows = selectors.messages_list(
            session_id=session_id, limit=filters.limit, organisation_id=caller.organisation_id
        )
        # Every message carries its session's person (none while the session is anonymous).
        access.person_id = next((row.person_id for row in rows if row.person_id), None)
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
    caller = tenancy.request_caller(request, Scope.TURNS)
    ended_at = payload.ended_at if payload is not None else None
    return _session_out(
        services.session_close(
            session_id=session_id, at=ended_at, organisation_id=caller.organisation_id
        )
    )
