"""What long-term memory does when an exchange is stored (connected in `MemoryConfig.ready`)."""

import re

from memory.conversations.signals import ExchangeStored
from memory.facts import tasks, withhold

# Cheap gates before queueing the readers: only first-person statements can state facts about the
# person, and only future or promise words can make a commitment. Most turns queue nothing.
_MAY_STATE_FACTS = re.compile(r"\b(i|i'm|im|i've|i'd|my|me|mine)\b", re.IGNORECASE)
_MAY_COMMIT = re.compile(
    r"\b(will|i'll|going to|gonna|tomorrow|tonight|next|remind|promise|plan(?:ning)?)\b",
    re.IGNORECASE,
)


def on_exchange_stored(sender, event: ExchangeStored, **kwargs) -> None:
    """After commit: read the person's statements for facts, and the exchange for commitments."""
    if event.person_id is None:
        return
    message_id = str(event.user_message_id)
    if withhold.asks_not_to_remember(event.user_message):
        # "Don't remember this": nothing is read from it, and what was read from the person's
        # message before it is forgotten (memory/facts/withhold.py).
        tasks.withhold_exchange.delay_on_commit(message_id)
        return
    if _MAY_STATE_FACTS.search(event.user_message) and not event.user_message.rstrip().endswith(
        "?"
    ):
        tasks.remember_message.delay_on_commit(message_id)
    if _MAY_COMMIT.search(event.user_message) or _MAY_COMMIT.search(event.assistant_message):
        tasks.extract_commitments.delay_on_commit(message_id)
