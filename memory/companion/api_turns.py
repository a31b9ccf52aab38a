"""The turn queue and companion settings in the bot API.

A bot that receives messages in bursts posts each one to /turns. The first request of a burst
leads the turn: it answers 200 with every message gathered so far, joined in arrival order; the
rest answer 202 "queued". The bot builds the context for the joined message, replies, and
completes the turn; if more arrived meanwhile, /turns/next gathers them into the next turn.
"""

from typing import Literal
from uuid import UUID

from ninja import Router, Schema, Status
from pydantic import Field

from memory.companion import continuity, turns
from memory.conversations import tenancy
from memory.conversations.models import MemoryPolicy, Scope
from memory.conversations.schemas import (
    ERRORS,
    AssistantText,
    EmotionIn,
    MessageText,
    Text,
    emotion_reading,
)
from memory.core.schemas import RequestSchema

router = Router(tags=["turns and companions"])

PolicyName = Literal[tuple(MemoryPolicy.values)]  # type: ignore[valid-type]


class TurnMessageIn(RequestSchema):
    message: MessageText
    # The bot's id for this message: a retried POST is recognised, not queued twice.
    client_key: Text(min_length=1, max_length=128)
    channel: Text(min_length=1, max_length=32) | None = None


class TurnOut(Schema):
    status: Literal["turn", "queued", "idle"]
    turn_id: UUID | None = None
    # The turn's messages joined in arrival order: what the context and the exchange use.
    message: str | None = None
    parts: list[str] = []


class TurnCompleteIn(RequestSchema):
    assistant_message: AssistantText
    emotion: EmotionIn | None = None
    processing_time_ms: int | None = Field(default=None, ge=0, le=3_600_000)


class TurnCompleteOut(Schema):
    user_message_id: UUID
    assistant_message_id: UUID
    # Messages that arrived during the turn: take them with /turns/next.
    waiting: int


class PersonaIn(RequestSchema):
    persona: Text(min_length=1, max_length=32)


class PersonaOut(Schema):
    person_id: UUID
    persona: str
    memory_policy: str


class PersonaPolicyIn(RequestSchema):
    memory_policy: PolicyName
    display_name: Text(min_length=1, max_length=100) | None = None


class PersonaPolicyOut(Schema):
    slug: str
    display_name: str
    memory_policy: str


def _turn_out(result) -> dict:
    if isinstance(result, turns.Turn):
        return {
            "status": "turn",
            "turn_id": result.turn_id,
            "message": result.message,
            "parts": result.parts,
        }
    return {"status": "queued"}


@router.post("/sessions/{session_id}/turns", response={200: TurnOut, 202: TurnOut, **ERRORS})
def turn_message(request, session_id: UUID, payload: TurnMessageIn):
    """Queue a message; lead a turn (200) if none is in flight for the person, else 202 queued."""
    tenancy.session_check(tenancy.request_caller(request, Scope.TURNS), session_id)
    result = turns.message_submit(
        session_id=session_id,
        message=payload.message,
        client_key=payload.client_key,
        channel=payload.channel,
    )
    return Status(200 if isinstance(result, turns.Turn) else 202, _turn_out(result))


@router.post("/sessions/{session_id}/turns/next", response={200: TurnOut, **ERRORS})
def turn_next(request, session_id: UUID):
    """Lead a turn from the messages that arrived during the last one ('idle' if none)."""
    tenancy.session_check(tenancy.request_caller(request, Scope.TURNS), session_id)
    result = turns.turn_next(session_id=session_id)
    return _turn_out(result) if result else {"status": "idle"}


@router.post(
    "/sessions/{session_id}/turns/{turn_id}/complete",
    response={200: TurnCompleteOut, 201: TurnCompleteOut, **ERRORS},
)
def turn_complete(request, session_id: UUID, turn_id: UUID, payload: TurnCompleteIn):
    """Store the turn's exchange once (201; again: 200) and free the person for the next turn."""
    tenancy.session_check(tenancy.request_caller(request, Scope.TURNS), session_id)
    stored, waiting = turns.turn_complete(
        session_id=session_id,
        turn_id=turn_id,
        assistant_message=payload.assistant_message,
        emotion=emotion_reading(payload.emotion),
        processing_time_ms=payload.processing_time_ms,
    )
    return Status(
        201 if stored.created else 200,
        {
            "user_message_id": stored.user_message_id,
            "assistant_message_id": stored.assistant_message_id,
            "waiting": waiting,
        },
    )


@router.put("/people/{person_id}/persona", response={200: PersonaOut, **ERRORS})
def person_persona(request, person_id: UUID, payload: PersonaIn):
    """Choose the companion persona for a person (refused: continuous for someone in care)."""
    caller = tenancy.request_caller(request, Scope.ADMIN)
    person = continuity.person_persona_set(
        person_id=person_id, persona=payload.persona, organisation_id=caller.organisation_id
    )
    return {
        "person_id": person.id,
        "persona": person.persona,
        "memory_policy": continuity.policy_of(person.id),
    }


@router.put("/personas/{slug}", response={200: PersonaPolicyOut, **ERRORS})
def persona_policy(request, slug: str, payload: PersonaPolicyIn):
    """Create a persona or set its memory policy (continuous refused while anyone in care uses it)."""
    caller = tenancy.request_caller(request, Scope.ADMIN)
    persona = continuity.persona_policy_set(
        slug=slug,
        policy=payload.memory_policy,
        display_name=payload.display_name,
        organisation_id=caller.organisation_id,
    )
    return persona
