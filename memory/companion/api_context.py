"""The bot API's per-turn context: what the companion's LLM sees this turn."""

from uuid import UUID

from ninja import Router

from memory.companion import context
from memory.companion.schemas import ContextOut
from memory.conversations import tenancy
from memory.conversations.models import Scope
from memory.conversations.schemas import ERRORS, QueryIn, emotion_reading

router = Router(tags=["sessions"])


@router.post("/sessions/{session_id}/context", response={200: ContextOut, **ERRORS})
def build_context(request, session_id: UUID, payload: QueryIn):
    """What the companion's LLM sees this turn, built by the dementia-safe rules. Stores nothing.

    `system_prompt` and `messages` go to the LLM as they are: they hold only this session's
    conversation and never reveal repetition. `analysis` is for the bot's own logic and must
    not be put in the prompt. Store the exchange afterwards with the narrative and escalation.
    """
    caller = tenancy.request_caller(request, Scope.TURNS)
    return context.context_for_bot(
        organisation_id=caller.organisation_id,
        session_id=session_id,
        message=payload.message,
        emotion=emotion_reading(payload.emotion),
        occurred_at=payload.occurred_at,
    )
