"""Long-term memory's jobs: reading messages for facts and commitments, expiry, curation.

Each task keeps the name it was first registered under (`memory.tasks.<name>`), so queued
messages and the beat schedule survive the move; `memory/tasks.py` imports them all.
"""

import dataclasses
import logging
import uuid

from celery import shared_task

from memory.core.errors import NotFound
from memory.core.jobs import PER_TURN_JOB, RETRY_ON_DATABASE_ERRORS
from memory.facts import commitments, curation, remember, store, usage, withhold

logger = logging.getLogger(__name__)


@shared_task(name="memory.tasks.remember_message", **PER_TURN_JOB)
def remember_message(message_id: str) -> int:
    """Read one of the person's messages for facts; stores them unconfirmed. Idempotent."""
    return remember.remember_from_message(uuid.UUID(message_id)).stored


@shared_task(name="memory.tasks.extract_commitments", **PER_TURN_JOB)
def extract_commitments(message_id: str) -> int:
    """Store the promises and plans of the exchange this message (the person's) opens."""
    try:
        return len(commitments.commitments_extract(message_id=uuid.UUID(message_id)))
    except NotFound:
        logger.warning("commitments: no message %s (nothing to do)", message_id)
        return 0


@shared_task(name="memory.tasks.expire_memories", **RETRY_ON_DATABASE_ERRORS)
def expire_memories() -> int:
    """Delete memories whose lifetime is over (feelings, events, small talk)."""
    return curation.memories_expire()


@shared_task(name="memory.tasks.curate_memories", **RETRY_ON_DATABASE_ERRORS)
def curate_memories() -> dict:
    """Archive stale trivia and fold near-duplicate memories (never pinned or confirmed ones)."""
    return dataclasses.asdict(curation.memories_curate())


@shared_task(name="memory.tasks.record_fact_use", **PER_TURN_JOB)
def record_fact_use(uses: list[list]) -> int:
    """Record which facts reached a prompt or a search (memory/facts/usage.py)."""
    return store.memories_used(usage.parse(uses))


@shared_task(name="memory.tasks.withhold_exchange", **PER_TURN_JOB)
def withhold_exchange(message_id: str) -> int:
    """The person asked not to be remembered: forget what was read from this exchange."""
    return withhold.withhold_exchange(uuid.UUID(message_id))
