"""Proactive check-ins in the bot API: the outbox the bot collects them from, and their settings.

The scheduler decides check-ins on its own (memory/companion/checkins.py) and stores each one that goes
out as an assistant message in a new session. The bot polls the person's outbox, says the
message on its channel, confirms delivery, and stores the person's reply into the session the
outbox named, as a normal exchange.
"""

from datetime import datetime
from typing import Annotated
from uuid import UUID

from ninja import Router, Schema
from pydantic import Field, StrictBool, StrictInt

from memory.companion import checkins
from memory.companion.models import CheckIn, CheckInSettings
from memory.conversations import tenancy
from memory.conversations.models import Scope
from memory.conversations.schemas import RequestSchema, Text
from memory.core.schemas import ERRORS

router = Router(tags=["check-ins"])

Hour = Annotated[StrictInt, Field(ge=0, le=23)]


class OutboxItemOut(Schema):
    check_in_id: UUID
    session_id: UUID
    message_id: UUID
    sequence_number: int
    content: str
    slot: str = Field(description='The local time it was for, "YYYY-MM-DDTHH:MM".')
    sent_at: datetime
    delivered: bool


class OutboxOut(Schema):
    check_ins: list[OutboxItemOut]


class CheckInSettingsIn(RequestSchema):
    enabled: StrictBool
    times: list[Text(max_length=16)] = Field(
        max_length=checkins.MAX_TIMES,
        description='Local times of day in the person\'s time zone, "HH:MM" (24-hour).',
    )
    night_start: Hour = Field(description="Local hour night begins; no check-ins until night_end.")
    night_end: Hour
    max_unanswered: StrictInt | None = Field(
        default=None,
        description="Stop after this many unanswered check-ins in a row, until the person "
        "talks again (1-10; unchanged when left out).",
    )


class CheckInSettingsOut(Schema):
    person_id: UUID
    enabled: bool
    times: list[str]
    night_start: int
    night_end: int
    max_unanswered: int


def _item(check_in: CheckIn) -> dict:
    message = check_in.message
    return {
        "check_in_id": check_in.id,
        "session_id": message.session_id,
        "message_id": message.id,
        "sequence_number": message.sequence_number,
        "content": message.content,
        "slot": check_in.slot,
        "sent_at": check_in.decided_at,
        "delivered": check_in.reason == checkins.Reason.DELIVERED,
    }


def _settings_out(row: CheckInSettings) -> dict:
    return {
        "person_id": row.person_id,
        "enabled": row.enabled,
        "times": list(row.times or []),
        "night_start": row.night_start,
        "night_end": row.night_end,
        "max_unanswered": row.max_unanswered,
    }


@router.get("/people/{person_id}/outbox", response={200: OutboxOut, **ERRORS})
def outbox(request, person_id: UUID):
    """Check-ins waiting to be said to the person, oldest first. Stores nothing.

    Each is already an assistant message in `session_id`: say `content`, confirm with
    `POST .../outbox/{check_in_id}/delivered`, and store the person's reply in that session.
    A check-in not collected within an hour is no longer offered.
    """
    tenancy.person_check(tenancy.request_caller(request, Scope.TURNS), person_id)
    return {"check_ins": [_item(c) for c in checkins.outbox_for_person(person_id=person_id)]}


@router.post(
    "/people/{person_id}/outbox/{check_in_id}/delivered",
    response={200: OutboxItemOut, **ERRORS},
)
def outbox_delivered(request, person_id: UUID, check_in_id: UUID):
    """Confirm a check-in was said to the person; it leaves the outbox. Again: same answer."""
    tenancy.person_check(tenancy.request_caller(request, Scope.TURNS), person_id)
    check_in = checkins.check_in_mark_delivered(person_id=person_id, check_in_id=check_in_id)
    if check_in.message_id is None:
        # The message was removed by hand; the delivery is recorded all the same.
        return 404, {
            "detail": "This check-in's message no longer exists.",
            "code": "not_found",
            "field": "check_in_id",
        }
    return _item(CheckIn.objects.select_related("message").get(id=check_in.id))


@router.get("/people/{person_id}/check-ins/settings", response={200: CheckInSettingsOut, **ERRORS})
def get_check_in_settings(request, person_id: UUID):
    """When the companion may check in on the person (off by default)."""
    tenancy.person_check(tenancy.request_caller(request, Scope.ADMIN), person_id)
    return _settings_out(checkins.checkin_settings_get(person_id=person_id))


@router.put("/people/{person_id}/check-ins/settings", response={200: CheckInSettingsOut, **ERRORS})
def put_check_in_settings(request, person_id: UUID, payload: CheckInSettingsIn):
    """Set check-in times and night hours, or switch check-ins off. 422 names a bad field."""
    tenancy.person_check(tenancy.request_caller(request, Scope.ADMIN), person_id)
    row = checkins.checkin_settings_update(
        person_id=person_id,
        enabled=payload.enabled,
        times=payload.times,
        night_start=payload.night_start,
        night_end=payload.night_end,
        max_unanswered=payload.max_unanswered,
    )
    return _settings_out(row)
