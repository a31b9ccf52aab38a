"""The turn queue: messages that arrive while a turn is in flight become one turn, in order.

People send several short messages in a row ("hello" / "are you there" / "it's Ann"). Answering
each as it lands makes the companion talk over them. Every message goes into the person's queue
(`pending_messages`), numbered from the person's `turn_locks` row under its row lock, so the
order holds across web workers. The request that finds no turn in flight leads one: it waits a
moment (CLARA_TURN_GATHER_SECONDS) for the rest of a burst, then takes every unclaimed message, in
arrival order, as one turn. Others answer "queued". When the bot stores the turn's reply, the
lock is released and the bot can take what arrived meanwhile as the next turn.
"""

import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from memory.companion.models import PendingMessage, TurnLock
from memory.conversations import services
from memory.conversations.models import Session
from memory.core import crypto
from memory.core.errors import Conflict, NotFound


def _gather_seconds() -> float:
    """How long the leader of a turn waits for the rest of a burst (CLARA_TURN_GATHER_SECONDS)."""
    return float(settings.CLARA_TURN_GATHER_SECONDS)


def _turn_timeout() -> timedelta:
    """A turn whose reply never came frees the person after this long."""
    return timedelta(seconds=settings.CLARA_TURN_TIMEOUT_SECONDS)


JOINER = "\n"


@dataclass(frozen=True)
class Turn:
    turn_id: uuid.UUID
    session_id: uuid.UUID
    parts: list[str]

    @property
    def message(self) -> str:
        return JOINER.join(self.parts)


@dataclass(frozen=True)
class Queued:
    """The message waits: it joins the turn in flight if that is still gathering, else the next."""

    pending_id: uuid.UUID


def _lock_row(person_id: uuid.UUID) -> TurnLock:
    """The person's lock row, locked for this transaction (created on first use)."""
    try:
        with transaction.atomic():
            TurnLock.objects.get_or_create(person_id=person_id)
    except IntegrityError:
        pass  # created by a concurrent request
    return TurnLock.objects.select_for_update().get(person_id=person_id)


def _session_person(session_id: uuid.UUID):
    session = Session.objects.filter(id=session_id).select_related("person").first()
    if session is None:
        raise NotFound("No such session.", field="session_id")
    if session.person_id is None:
        raise Conflict("The turn queue needs a session linked to a person.", field="session_id")
    return session


CLIENT_KEY = "pending_messages.client_key"


def client_key_digests(client_key: str, *, person_id: uuid.UUID) -> list[str]:
    """The bot's key for a queued message as `PendingMessage.client_key` stores it: a keyed
    digest of the person and the key (never the key itself, which the bot may fill with what it
    likes), under every configured key, the primary's first (a retry during a rotation)."""
    return crypto.keyring().keyed_digest_variants(
        f"{person_id}\x00{client_key}", purpose=CLIENT_KEY
    )


def message_submit(
    *,
    session_id: uuid.UUID,
    message: str,
    client_key: str,
    channel: str | None = None,
    at: datetime | None = None,
) -> Turn | Queued:
    """Queue a message; lead a turn if none is in flight for the person (see module docstring)."""
    from memory.core.sensitive import redact

    at = at or timezone.now()
    session = _session_person(session_id)
    with transaction.atomic():
        lock = _lock_row(session.person_id)
        digests = client_key_digests(client_key, person_id=session.person_id)
        existing = PendingMessage.objects.filter(
            person_id=session.person_id, client_key__in=digests
        ).first()
        if existing is None:
            existing = PendingMessage.objects.create(
                person_id=session.person_id,
                session_id=session.id,
                content=redact(message).text,
                channel=channel,
                client_key=digests[0],
                arrival=lock.next_arrival,
                arrived_at=at,
            )
            lock.next_arrival += 1
        leads = lock.turn_id is None or (lock.held_until is not None and lock.held_until < at)
        if leads and existing.turn_id is None:
            lock.turn_id = uuid.uuid4()
            lock.held_until = at + _turn_timeout()
        lock.save()
        if not leads or existing.turn_id is not None:
            return Queued(existing.id)
        turn_id = lock.turn_id
    if gather := _gather_seconds():
        # Outside any transaction: the rest of the burst must be able to queue meanwhile.
        time.sleep(gather)
    return _gather(person_id=session.person_id, session_id=session.id, turn_id=turn_id)


def _gather(*, person_id: uuid.UUID, session_id: uuid.UUID, turn_id: uuid.UUID) -> Turn:
    with transaction.atomic():
        lock = _lock_row(person_id)
        if lock.turn_id != turn_id:
            raise Conflict("This turn is no longer in flight.", field="turn_id")
        pending = list(
            PendingMessage.objects.filter(person_id=person_id, turn_id__isnull=True).order_by(
                "arrival"
            )
        )
        PendingMessage.objects.filter(id__in=[p.id for p in pending]).update(turn_id=turn_id)
    return Turn(turn_id=turn_id, session_id=session_id, parts=[p.content for p in pending])


def turn_next(*, session_id: uuid.UUID, at: datetime | None = None) -> Turn | None:
    """Lead a turn from what arrived while the last one was in flight (None if nothing waits)."""
    at = at or timezone.now()
    session = _session_person(session_id)
    with transaction.atomic():
        lock = _lock_row(session.person_id)
        if lock.turn_id is not None and lock.held_until and lock.held_until >= at:
            raise Conflict("A turn is already in flight for this person.", field="session_id")
        if not PendingMessage.objects.filter(
            person_id=session.person_id, turn_id__isnull=True
        ).exists():
            return None
        lock.turn_id = uuid.uuid4()
        lock.held_until = at + _turn_timeout()
        lock.save()
        turn_id = lock.turn_id
    return _gather(person_id=session.person_id, session_id=session.id, turn_id=turn_id)


def turn_complete(
    *,
    session_id: uuid.UUID,
    turn_id: uuid.UUID,
    assistant_message: str,
    at: datetime | None = None,
    **exchange_fields,
) -> tuple[services.StoredExchange, int]:
    """Store the turn as one exchange (exactly once) and free the person for the next turn.

    Returns the stored exchange and how many messages are waiting for the next turn.
    """
    session = _session_person(session_id)
    with transaction.atomic():
        lock = _lock_row(session.person_id)
        rows = list(
            PendingMessage.objects.filter(person_id=session.person_id, turn_id=turn_id)
            .order_by("arrival")
            .values_list("content", "channel")
        )
        if not rows:
            raise NotFound("No such turn.", field="turn_id")
        stored = services.exchange_record(
            session_id=session.id,
            user_message=JOINER.join(content for content, _ in rows),
            channel=rows[-1][1],
            assistant_message=assistant_message,
            # The turn id makes completing it twice store it once.
            idempotency_key=f"turn:{turn_id}",
            at=at,
            **exchange_fields,
        )
        if lock.turn_id == turn_id:
            lock.turn_id = None
            lock.held_until = None
            lock.save()
        waiting = PendingMessage.objects.filter(
            person_id=session.person_id, turn_id__isnull=True
        ).count()
    return stored, waiting
