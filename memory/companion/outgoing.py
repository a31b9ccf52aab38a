"""Messages the companion starts: an assistant message with no message of the person before it.

The exchange path (`services.exchange_record`) always writes a pair, the person's message and the
reply. A proactive check-in is a single assistant message, stored in the conversation like any
other: same table, same gapless per-session sequence numbers, same redaction and reasoning
stripping, so the session reads as one conversation that the person may answer.
"""

import uuid
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from memory.conversations.models import ChatMessage, Session
from memory.core import hygiene, sensitive
from memory.core.errors import Invalid, NotFound


def assistant_message_post(
    *,
    session_id: uuid.UUID,
    content: str,
    at: datetime | None = None,
    intent: str | None = None,
    channel: str | None = None,
) -> ChatMessage:
    """Append one assistant message to a session, with the session's next sequence number.

    Runs in its own transaction (or the caller's). The session row is locked first, like the
    exchange write, so a concurrent exchange and this message never take the same number. The
    session's message count and last activity move on and it is active again; the person's
    own `last_active_at` is left alone (they said nothing). Raises NotFound for an unknown
    session and Invalid for a message that is empty once reasoning is stripped.
    """
    at = at or timezone.now()
    text = sensitive.redact_text(hygiene.spoken_text(content))
    if not text.strip():
        raise Invalid("The message must not be empty.", field="content")
    with transaction.atomic():
        session = Session.objects.select_for_update().filter(id=session_id).first()
        if session is None:
            raise NotFound("No session with this id.", field="session_id")
        sequence = session.message_count + 1
        message = ChatMessage.objects.create(
            session=session,
            person_id=session.person_id,
            role=ChatMessage.Role.ASSISTANT,
            content=text,
            timestamp=at,
            sequence_number=sequence,
            intent=intent,
            channel=channel,
        )
        session.message_count = sequence
        session.last_activity_at = max(session.last_activity_at, at)
        session.status = Session.Status.ACTIVE
        session.ended_at = None
        session.save(update_fields=["message_count", "last_activity_at", "status", "ended_at"])
    return message
