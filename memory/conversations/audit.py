"""The audit of every disclosure outside the per-turn path: the one place `AccessEvent` rows are written.

Who (an API key's prefix, or an operator's login), which person, what, when, and the outcome:
allowed, refused (the key lacks the scope, the operator the permission) or not found (unknown,
or another organisation's). Codes and ids only: never a name, a query or message text.

The bot API's routers and the agent tools (REST and MCP) wrap what they do in `audited(...)`;
every admin page of a person's data calls `record_many(...)` (memory.admin.base). The per-turn
path (sessions, /context, /query, exchanges, turns) is not audited: it is the bot doing its job,
and it must stay fast.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from memory.conversations import tenancy
from memory.conversations.models import (
    AccessAction,
    AccessChannel,
    AccessEvent,
    AccessOutcome,
)
from memory.conversations.tenancy import Caller
from memory.core.errors import DomainError, Invalid, NotFound

OBJECT_ID_MAX = AccessEvent._meta.get_field("object_id").max_length


@dataclass
class Access:
    """What an audited call found out as it went: filled in by the caller of `audited`."""

    # Set once the person is known to be the caller's (never another organisation's).
    person_id: uuid.UUID | None = None
    object_id: str = ""
    # The person the request names, not checked yet: a call that fails (a key without the
    # scope, a missing memory) still names them in the row if they are the caller's.
    claimed: uuid.UUID | None = None
    # The outcome to record if the block fails with bad input (normally no row at all): an
    # erasure refused for a wrong confirmation is still an attempt worth a row.
    outcome_if_invalid: str | None = None

    def claim(self, person_id: object) -> None:
        try:
            self.claimed = person_id if isinstance(person_id, uuid.UUID) else uuid.UUID(person_id)
        except (TypeError, ValueError, AttributeError):
            self.claimed = None


def outcome_of(exc: BaseException) -> str | None:
    """The audit outcome of an error a call raised; None for bad input (nothing was looked up)."""
    if isinstance(exc, NotFound):
        return AccessOutcome.NOT_FOUND
    if isinstance(exc, Invalid):
        return None
    if isinstance(exc, DomainError):
        # 403 without the scope; 409 when the person's memory is switched off.
        return AccessOutcome.REFUSED
    return None


def record(
    *,
    organisation_id: uuid.UUID | None,
    channel: str,
    actor: str,
    action: str,
    outcome: str,
    person_id: uuid.UUID | None = None,
    object_id: str = "",
    user=None,
) -> AccessEvent:
    """Append one audit row."""
    return AccessEvent.objects.create(
        organisation_id=organisation_id,
        channel=channel,
        actor=actor[:160],
        user=user,
        person_id=person_id,
        action=action,
        object_id=str(object_id or "")[:OBJECT_ID_MAX],
        outcome=outcome,
    )


def record_many(rows: Iterable[dict]) -> list[AccessEvent]:
    """Append several rows in one statement (an admin list showing several people's messages)."""
    return AccessEvent.objects.bulk_create(
        AccessEvent(
            **{**row, "object_id": str(row.get("object_id") or "")[:OBJECT_ID_MAX]},
        )
        for row in rows
    )


@contextmanager
def audited(
    caller: Caller,
    action: AccessAction | str,
    *,
    channel: AccessChannel | str = AccessChannel.API,
    object_id: object = "",
    person: object = None,
) -> Iterator[Access]:
    """Audit the block as one access by `caller`: exactly one row, whatever it ends with.

    `person`: the person id the request names (checked only if the call fails). The block sets
    `access.person_id` once it has checked the person is the caller's. A DomainError leaving the
    block is recorded as refused or not found (and raised on); bad input (Invalid, a 422) and
    unexpected errors leave no row: nothing was disclosed or done.
    """
    access = Access(object_id=str(object_id or ""))
    if person is not None:
        access.claim(person)
    try:
        yield access
    except DomainError as exc:
        outcome = outcome_of(exc)
        if outcome is None and isinstance(exc, Invalid):
            outcome = access.outcome_if_invalid
        if outcome is not None:
            _write(caller, action, channel, access, outcome)
        raise
    _write(caller, action, channel, access, AccessOutcome.ALLOWED)


def _write(caller: Caller, action: str, channel: str, access: Access, outcome: str) -> None:
    person_id = access.person_id
    if (
        person_id is None
        and outcome != AccessOutcome.ALLOWED
        and access.claimed is not None
        and tenancy.people(caller).filter(id=access.claimed).exists()
    ):
        person_id = access.claimed
    record(
        organisation_id=caller.organisation_id,
        channel=channel,
        actor=caller.label or "system",
        action=action,
        outcome=outcome,
        # Only the caller's own: another organisation's person never appears in this
        # organisation's audit.
        person_id=person_id,
        object_id=access.object_id,
    )
