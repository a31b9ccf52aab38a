"""What long-term memory does when an exchange is stored (connected in `MemoryConfig.ready`)."""

import logging
import re

from memory.conversations.signals import ExchangeStored
from memory.facts import extraction, tasks, withhold

logger = logging.getLogger(__name__)

# Cheap gates before queueing the readers: only first-person statements can state facts about the
# person, and only future or promise words can make a commitment. Most turns queue nothing.
_MAY_STATE_FACTS = re.compile(r"\b(i|i'm|im|i've|i'd|my|me|mine)\b", re.IGNORECASE)
_MAY_COMMIT = re.compile(
    r"\b(will|i'll|going to|gonna|tomorrow|tonight|next|remind|promise|plan(?:ning)?)\b",
    re.IGNORECASE,
)


def _states_facts(text: str) -> bool:
    """Whether the job would find a fact in the person's message.

    The reader (`extraction.extract_facts`) reads only the text and takes about 0.1 ms, so it
    runs here, on the statements the word gate lets through, and the job (its queries, the
    broker's round trip) is queued only when it will have something to store: of the load
    test's first-person statements, about one in four.
    """
    if not _MAY_STATE_FACTS.search(text) or text.rstrip().endswith("?"):
        return False
    try:
        return bool(extraction.extract_facts(text))
    except Exception as exc:  # noqa: BLE001 - the reader's fault must never cost the exchange
        # This runs inside the exchange's transaction: the job reads the message again, fails
        # there on its own, and the exchange is stored either way.
        logger.warning("fact reader failed before queueing (%s): job queued", type(exc).__name__)
        return True


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
    if _states_facts(event.user_message):
        tasks.remember_message.delay_on_commit(message_id)
    if _MAY_COMMIT.search(event.user_message) or _MAY_COMMIT.search(event.assistant_message):
        tasks.extract_commitments.delay_on_commit(message_id)
