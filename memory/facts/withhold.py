""" "Don't remember this": the person asks Clara not to keep what they just said.

When the person's message asks it, no fact is read from that message or from the message the
person sent just before it in the same conversation (what "this" or "that" most often points
at), and facts already read from them, still unconfirmed, are forgotten. Facts a caregiver
confirmed stay: they are the care team's, not the conversation's. Each time leaves one audit row
(no words copied). An urgent moment in those words is still raised: safety is not memory.

The wordings are requests, not the person's own forgetting: "I don't remember that" or "I always
forget this" is dementia talking, not an instruction, and never matches.
"""

import logging
import re
import uuid

from memory.conversations import audit
from memory.conversations.models import (
    AccessAction,
    AccessChannel,
    AccessOutcome,
    ChatMessage,
)
from memory.facts.models import Memory

logger = logging.getLogger(__name__)

# Where a request can start: the message's or a sentence's start, or after a word that leads
# into one ("please", "oh", "and", "Clara,"). "I don't remember" never starts like this.
_LEAD = r"(?:^|[.!?;:,\n]\s*|\b(?:please|oh|now|actually|clara|love|dear)\s+)"
_THIS = r"(?:this|that|it|what\s+i(?:'ve|\s+have)?\s*(?:just\s+)?(?:said|told\s+you|say)|any\s+of\s+(?:this|that|it))"
_ASKS = re.compile(
    _LEAD
    + r"(?:"
    # don't remember / keep / write down / save / record / store this
    + r"(?:do\s*n[o']?t|never|no\s+need\s+to|you\s+(?:don't|do\s+not|mustn't)\s+(?:need|have)\s+to)\s+"
    + r"(?:you\s+)?(?:remember|keep|write\s+(?:down\s+)?|put\s+(?:down\s+)?|save|record|store|note)\s*"
    + _THIS
    + r"|(?:do\s*n[o']?t|never)\s+(?:write|put|note)\s+"
    + _THIS
    + r"\s+down"
    # forget this / forget I said that / forget what I told you
    + r"|forget\s+(?:"
    + _THIS
    + r"|(?:that\s+)?i\s+(?:ever\s+)?(?:said|told\s+you|mentioned)\b|about\s+(?:it|that|this)|all\s+(?:about\s+)?(?:it|that|this))"
    # strike / scratch that (from the record)
    + r"|(?:strike|scratch|delete|erase|wipe)\s+(?:that|this)\b"
    + r")"
    # keep it between us / off the record
    + r"|\boff\s+the\s+record\b"
    + r"|\b(?:just\s+)?between\s+(?:you\s+and\s+me|ourselves|us)\b"
    + r"|\bkeep\s+(?:this|that|it)\s+(?:to\s+yourself|between\s+us|secret)\b",
    re.IGNORECASE,
)


def asks_not_to_remember(text: str) -> bool:
    """Whether the person's words ask Clara not to keep what they said."""
    return bool(_ASKS.search(text.replace("’", "'")))


def _previous_from_person(message: ChatMessage) -> ChatMessage | None:
    return (
        ChatMessage.objects.filter(
            session_id=message.session_id,
            role=ChatMessage.Role.USER,
            sequence_number__lt=message.sequence_number,
        )
        .order_by("-sequence_number")
        .first()
    )


def withheld(message: ChatMessage) -> bool:
    """Whether facts must not be read from this message of the person's: it asks so itself, or
    their next message in the conversation does."""
    if asks_not_to_remember(message.content):
        return True
    following = (
        ChatMessage.objects.filter(
            session_id=message.session_id,
            role=ChatMessage.Role.USER,
            sequence_number__gt=message.sequence_number,
        )
        .order_by("sequence_number")
        .first()
    )
    return following is not None and asks_not_to_remember(following.content)


def withhold_exchange(message_id: uuid.UUID) -> int:
    """Forget the unconfirmed facts read from this message and the person's message before it;
    one audit row. Returns how many facts were forgotten. Idempotent."""
    from memory.facts import store

    message = ChatMessage.objects.filter(id=message_id, role=ChatMessage.Role.USER).first()
    if message is None or message.person_id is None:
        return 0
    covered = [message.id]
    previous = _previous_from_person(message)
    if previous is not None:
        covered.append(previous.id)
    forgotten = 0
    for memory in Memory.objects.filter(
        source_message_id__in=covered,
        source=Memory.Source.CONVERSATION_EXTRACTION,
        confirmed=False,
    ):
        forgotten += store.memory_forget(memory.id)
    audit.record(
        organisation_id=message.session.organisation_id,
        channel=AccessChannel.JOB,
        actor="the person asked not to be remembered",
        action=AccessAction.WITHHOLD,
        outcome=AccessOutcome.ALLOWED,
        person_id=message.person_id,
        object_id=str(message.id),
    )
    return forgotten
