"""What the conversation record announces, for the parts above it to act on.

The conversation core never calls up into insights, long-term facts or the companion: it
announces what happened, and those parts subscribe (`MemoryConfig.ready` connects them). Each
subscriber owns its rules: when a job is due, which words make a fact worth reading, whether an
alert is raised. A subscriber that queues a job does it with `delay_on_commit`, so a write that
rolls back queues nothing.

Every announcement is sent inside the writing transaction: a subscriber's own writes (an
escalation alert) commit or roll back with it. Receivers are called in the order they connected;
an exception in one rolls the whole write back, so subscribers do only what must be atomic with
the write and leave the rest to jobs.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.dispatch import Signal


@dataclass(frozen=True)
class ExchangeStored:
    """An exchange (the person's message and Clara's reply) was just written."""

    session_id: uuid.UUID
    person_id: uuid.UUID | None
    user_message_id: uuid.UUID
    assistant_message_id: uuid.UUID
    # The assistant message's sequence number: the session holds this many messages now.
    message_count: int
    user_message: str
    assistant_message: str
    # The session's first escalation (and why): an alert for caregivers.
    escalated_now: bool
    escalation_reason: str | None
    at: datetime
    # What decided it (escalation.Escalation.explanation: reason, language, phrase rule or
    # nearest example; never the person's words).
    escalation_detail: dict | None = None


@dataclass(frozen=True)
class SessionClosed:
    """A session was closed by the bot or expired after being idle."""

    session_id: uuid.UUID
    person_id: uuid.UUID | None
    at: datetime


@dataclass(frozen=True)
class SessionLinked:
    """An anonymous session now belongs to a person: rows without a person follow it."""

    session_id: uuid.UUID
    person_id: uuid.UUID


@dataclass(frozen=True)
class PersonMoved:
    """A person was moved to another unit of a home (or out of every unit: None)."""

    person_id: uuid.UUID
    organisation_id: uuid.UUID
    from_unit_id: uuid.UUID | None
    to_unit_id: uuid.UUID | None


# Each is sent with one keyword argument, `event`, holding the dataclass above.
exchange_stored = Signal()
session_closed = Signal()
session_linked = Signal()
person_moved = Signal()
