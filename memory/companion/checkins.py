"""Proactive check-ins: at the times caregivers set, the companion may say hello first.

Every few minutes the scheduler (`tasks.schedule_check_ins`) finds the people whose check-ins
are on and one of whose times has passed today, in their own time zone, without a decision
yet; one task per person (`tasks.decide_check_ins`) then decides each such slot once. The
(person, slot) unique constraint makes the decision idempotent: a second run, or a second
worker, finds the slot decided and does nothing.

A slot is suppressed, and the reason recorded, when:
- `night`: it is night where the person is (night_start to night_end, local hours);
- `conversation_active`: a conversation is going on (an active session with activity in the
  last CLARA_SESSION_IDLE_MINUTES, or a turn in flight);
- `companion_spoke_recently`: the companion said something in the last
  CLARA_CHECKIN_QUIET_MINUTES (120 by default);
- `unanswered`: the person answered none of their last `max_unanswered` check-ins;
- `late`: the scheduler reached the slot more than CLARA_CHECKIN_LATE_MINUTES (60) after it (a
  "good morning" at tea time helps nobody).

A check-in is *answered* once the person sends any message after it. That is worked out when
deciding (`check_ins_mark_answered`, run before each person's decisions), so the exchange path
needs no hook; it is one UPDATE over the person's unanswered check-ins.

A check-in that goes out is an assistant message in a new session (opened for the person with
`services.session_resolve`, in the decision's transaction), worded to be dementia-safe: a warm
hello with the person's preferred name, no reference to earlier conversations, nothing to
remember or answer correctly. The bot collects it from the outbox
(`GET /people/{id}/outbox`) and confirms delivery (`POST .../outbox/{id}/delivered`); the
person's reply goes into that session as a normal exchange.

Delivery state of a sent check-in lives in its `reason` (the model has no delivery column):
`awaiting_delivery`, then `delivered`, or `undelivered` once the outbox stops offering it
(CLARA_CHECKIN_DELIVERY_MINUTES, 60, after the decision). An undelivered check-in never counts
as unanswered.
"""

import re
import uuid
import zlib
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from memory.companion import outgoing
from memory.companion.models import CheckIn, CheckInSettings, TurnLock
from memory.conversations import services
from memory.conversations.models import ChatMessage, Person, Session
from memory.core.errors import Invalid, NotFound
from memory.core.person import CaregiverContext, person_zone


class Reason:
    """Why a slot was suppressed, or where a sent check-in is on its way to the person."""

    NIGHT = "night"
    CONVERSATION_ACTIVE = "conversation_active"
    COMPANION_SPOKE_RECENTLY = "companion_spoke_recently"
    UNANSWERED = "unanswered"
    LATE = "late"
    AWAITING_DELIVERY = "awaiting_delivery"
    DELIVERED = "delivered"
    UNDELIVERED = "undelivered"


MAX_TIMES = 12
MAX_UNANSWERED_LIMIT = 10
CHECK_IN_INTENT = "check_in"
_TIME = re.compile(r"(?P<hour>[01]\d|2[0-3]):(?P<minute>[0-5]\d)")
_NAME_CHARS = 60


def _minutes(name: str) -> timedelta:
    # Read on each call, so a test or an operator changing the setting takes effect at once.
    return timedelta(minutes=int(getattr(settings, name)))


def quiet_after_companion() -> timedelta:
    return _minutes("CLARA_CHECKIN_QUIET_MINUTES")


def late_after() -> timedelta:
    return _minutes("CLARA_CHECKIN_LATE_MINUTES")


def delivery_window() -> timedelta:
    return _minutes("CLARA_CHECKIN_DELIVERY_MINUTES")


# --- Slots ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """One configured time on one local day: `key` is what the unique constraint sees."""

    key: str  # "2026-11-22T09:00", local
    local: datetime  # aware, in the person's zone
    at: datetime  # the same instant in UTC


def slot_for(day: date, hhmm: str, zone: ZoneInfo) -> Slot:
    """The slot of a local "HH:MM" on a local day. On a DST change a time that does not exist
    (spring) falls an hour later, and one that happens twice (autumn) is the first; either way
    the key is the same, so it is decided once."""
    match = _TIME.fullmatch(hhmm)
    if match is None:
        raise Invalid(f"{hhmm!r} is not a time of day (HH:MM, 24-hour).", field="times")
    local = datetime.combine(
        day, time(int(match["hour"]), int(match["minute"])), tzinfo=zone
    )  # fold=0
    at = local.astimezone(UTC)
    return Slot(key=f"{day.isoformat()}T{hhmm}", local=at.astimezone(zone), at=at)


def due_slots(row: CheckInSettings, *, zone: ZoneInfo, now: datetime) -> list[Slot]:
    """Today's (local) slots that have passed, oldest first. Slots before the settings last
    changed are not due: a time set at noon for 09:00 starts tomorrow."""
    today = now.astimezone(zone).date()
    slots = []
    for hhmm in sorted(set(row.times or [])):
        try:
            slot = slot_for(today, str(hhmm), zone)
        except Invalid:
            continue  # a bad value slipped in by hand: skip it, the valid times still count
        if slot.at <= now and (row.updated_at is None or slot.at >= row.updated_at):
            slots.append(slot)
    return slots


def is_night(hour: int, *, night_start: int, night_end: int) -> bool:
    """Whether a local hour is in the night window; the window may wrap midnight (21 to 8)."""
    if night_start == night_end:
        return False
    if night_start < night_end:
        return night_start <= hour < night_end
    return hour >= night_start or hour < night_end


# --- Wording ----------------------------------------------------------------------------------

# Warm and open: no "again", no "remember", nothing about an earlier conversation, no question
# with a right answer. How they are feeling is theirs to tell, never a test.
_OPENINGS = (
    "I was thinking of you — how are you feeling today?",
    "It's lovely to say hello. How are you doing?",
    "I'm here if you'd like some company. How are you feeling?",
)


def _greeting(hour: int) -> str:
    if hour < 12:
        return "Good morning"
    if hour < 18:
        return "Good afternoon"
    return "Good evening"


def preferred_name(person: Person) -> str:
    """What to call the person: the caregivers' preferred name, else the display name."""
    name = " ".join(CaregiverContext.of(person).name.split())[:_NAME_CHARS]
    return name


def check_in_text(*, person: Person, slot: Slot) -> str:
    """The check-in's words: a greeting for the local time of day, the name, a warm opening.

    The opening is picked from the slot key, so the same slot always gets the same words (a
    retried decision cannot say something else) while days vary.
    """
    name = preferred_name(person)
    greeting = _greeting(slot.local.hour)
    opening = _OPENINGS[zlib.crc32(slot.key.encode()) % len(_OPENINGS)]
    return f"{greeting}, {name}. {opening}" if name else f"{greeting}. {opening}"


# --- Decisions --------------------------------------------------------------------------------


def _conversation_active(person_id: uuid.UUID, now: datetime) -> bool:
    idle = timedelta(minutes=settings.CLARA_SESSION_IDLE_MINUTES)
    # idx_sessions_person_created narrows to the person's sessions.
    if Session.objects.filter(
        person_id=person_id, status=Session.Status.ACTIVE, last_activity_at__gte=now - idle
    ).exists():
        return True
    # A turn in flight (the turn queue) is a conversation even before its exchange is stored.
    return TurnLock.objects.filter(
        person_id=person_id, turn_id__isnull=False, held_until__gt=now
    ).exists()


def _companion_spoke_recently(person_id: uuid.UUID, now: datetime) -> bool:
    # idx_messages_user_time: the person's messages in a time range.
    return ChatMessage.objects.filter(
        person_id=person_id,
        role=ChatMessage.Role.ASSISTANT,
        timestamp__gte=now - quiet_after_companion(),
        timestamp__lte=now,
    ).exists()


def _unanswered_streak(person_id: uuid.UUID, limit: int) -> bool:
    # idx_checkins_person_latest. Suppressed and undelivered ones were never seen: they neither
    # break nor extend the streak.
    latest = list(
        CheckIn.objects.filter(person_id=person_id, outcome=CheckIn.Outcome.SENT)
        .exclude(reason=Reason.UNDELIVERED)
        .order_by("-decided_at")
        .values_list("answered", flat=True)[:limit]
    )
    return len(latest) == limit and not any(latest)


def suppression_reason(
    *, person: Person, row: CheckInSettings, slot: Slot, now: datetime, zone: ZoneInfo
) -> str | None:
    """Why this slot should not go out now, or None to send it. Reads only."""
    if is_night(now.astimezone(zone).hour, night_start=row.night_start, night_end=row.night_end):
        return Reason.NIGHT
    if _conversation_active(person.id, now):
        return Reason.CONVERSATION_ACTIVE
    if _companion_spoke_recently(person.id, now):
        return Reason.COMPANION_SPOKE_RECENTLY
    if _unanswered_streak(person.id, max(row.max_unanswered, 1)):
        return Reason.UNANSWERED
    if now - slot.at > late_after():
        return Reason.LATE
    return None


def check_ins_mark_answered(*, person_id: uuid.UUID) -> int:
    """Mark answered every sent check-in the person has spoken after; returns how many."""
    # idx_messages_user_time, newest first.
    latest = (
        ChatMessage.objects.filter(person_id=person_id, role=ChatMessage.Role.USER)
        .order_by("-timestamp")
        .values_list("timestamp", flat=True)
        .first()
    )
    if latest is None:
        return 0
    # decided_at is the check-in message's own timestamp (written together).
    return (
        CheckIn.objects.filter(
            person_id=person_id,
            outcome=CheckIn.Outcome.SENT,
            answered=False,
            decided_at__lt=latest,
        )
        .exclude(reason=Reason.UNDELIVERED)
        .update(answered=True)
    )


def _expire_undelivered(person_id: uuid.UUID, now: datetime) -> int:
    return CheckIn.objects.filter(
        person_id=person_id,
        outcome=CheckIn.Outcome.SENT,
        reason=Reason.AWAITING_DELIVERY,
        decided_at__lt=now - delivery_window(),
    ).update(reason=Reason.UNDELIVERED)


def _decide_slot(
    *, person: Person, row: CheckInSettings, slot: Slot, now: datetime, zone: ZoneInfo
) -> CheckIn | None:
    try:
        with transaction.atomic():
            # Deciders of one person queue on the person's row (PostgreSQL; SQLite's IMMEDIATE
            # transactions are serial already), so the checks below see the previous slot's
            # message and two workers never both send.
            Person.objects.select_for_update().filter(id=person.id).values_list("id").first()
            if CheckIn.objects.filter(person_id=person.id, slot=slot.key).exists():
                return None
            reason = suppression_reason(person=person, row=row, slot=slot, now=now, zone=zone)
            message = None
            if reason is None:
                session, _ = services.session_resolve(
                    user_id=person.id, at=now, organisation_id=person.organisation_id
                )
                message = outgoing.assistant_message_post(
                    session_id=session.id,
                    content=check_in_text(person=person, slot=slot),
                    at=now,
                    intent=CHECK_IN_INTENT,
                )
            return CheckIn.objects.create(
                person=person,
                persona=person.persona,
                slot=slot.key,
                decided_at=now,
                outcome=CheckIn.Outcome.SUPPRESSED if reason else CheckIn.Outcome.SENT,
                reason=reason or Reason.AWAITING_DELIVERY,
                message=message,
            )
    except IntegrityError:
        # uniq_checkin_person_slot: decided by someone else meanwhile; our message rolled back.
        return None


def check_ins_decide(*, person_id: uuid.UUID, now: datetime | None = None) -> list[CheckIn]:
    """Decide each of the person's due, undecided slots once; returns the new decisions.

    Retires undelivered check-ins and marks answered ones first. A sent check-in writes an
    assistant message into a new session for the person, in the decision's transaction.
    Does nothing for an unknown person, check-ins switched off, or a person not active.
    """
    now = now or timezone.now()
    row = CheckInSettings.objects.select_related("person").filter(person_id=person_id).first()
    if row is None or not row.enabled or row.person.status != Person.Status.ACTIVE:
        return []
    person = row.person
    zone = person_zone(person)
    # Retire the undelivered first: a message the person never saw cannot have been answered.
    _expire_undelivered(person.id, now)
    check_ins_mark_answered(person_id=person.id)
    decided = []
    for slot in due_slots(row, zone=zone, now=now):
        check_in = _decide_slot(person=person, row=row, slot=slot, now=now, zone=zone)
        if check_in is not None:
            decided.append(check_in)
    return decided


def people_due_for_check_ins(*, now: datetime | None = None, chunk: int = 500) -> list[uuid.UUID]:
    """People with check-ins on and a passed, undecided slot today (local). Reads only."""
    now = now or timezone.now()
    rows = (
        CheckInSettings.objects.filter(enabled=True, person__status=Person.Status.ACTIVE)
        .select_related("person")
        .order_by("person_id")
    )
    due: dict[uuid.UUID, set[str]] = {}
    for row in rows.iterator(chunk_size=chunk):
        slots = due_slots(row, zone=person_zone(row.person), now=now)
        if slots:
            due[row.person_id] = {slot.key for slot in slots}
    people = list(due)
    result = []
    for start in range(0, len(people), chunk):
        batch = people[start : start + chunk]
        keys = set().union(*(due[person_id] for person_id in batch))
        decided = set(
            CheckIn.objects.filter(person_id__in=batch, slot__in=keys).values_list(
                "person_id", "slot"
            )
        )
        result += [p for p in batch if any((p, key) not in decided for key in due[p])]
    return result


# --- Outbox -----------------------------------------------------------------------------------


def outbox_for_person(*, person_id: uuid.UUID, now: datetime | None = None) -> list[CheckIn]:
    """Check-ins sent to the person and not yet delivered by the bot, oldest first.

    Only those decided within CLARA_CHECKIN_DELIVERY_MINUTES: a greeting hours late is not
    offered. Raises NotFound for an unknown person. Reads only.
    """
    now = now or timezone.now()
    if not Person.objects.filter(id=person_id).exists():
        raise NotFound("No such person.", field="person_id")
    return list(
        CheckIn.objects.filter(
            person_id=person_id,
            outcome=CheckIn.Outcome.SENT,
            reason=Reason.AWAITING_DELIVERY,
            decided_at__gte=now - delivery_window(),
            message__isnull=False,
        )
        .select_related("message")
        .order_by("decided_at")
    )


def check_in_mark_delivered(*, person_id: uuid.UUID, check_in_id: uuid.UUID) -> CheckIn:
    """Record that the bot delivered a sent check-in. Confirming twice is harmless.

    A check-in the outbox had stopped offering may still be confirmed: it was said after all.
    Raises NotFound unless it is a sent check-in of this person.
    """
    with transaction.atomic():
        check_in = (
            CheckIn.objects.select_for_update()
            .filter(id=check_in_id, person_id=person_id, outcome=CheckIn.Outcome.SENT)
            .first()
        )
        if check_in is None:
            raise NotFound("No check-in with this id for this person.", field="check_in_id")
        if check_in.reason != Reason.DELIVERED:
            check_in.reason = Reason.DELIVERED
            check_in.save(update_fields=["reason"])
    return check_in


# --- Settings ---------------------------------------------------------------------------------


def _hour(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 23:
        raise Invalid(f"{field} is an hour from 0 to 23.", field=field)
    return value


def clean_times(times: object) -> list[str]:
    """Distinct "HH:MM" strings, sorted; Invalid (field "times") naming the first bad one."""
    if not isinstance(times, list | tuple):
        raise Invalid('times is a list of "HH:MM" strings.', field="times")
    if len(times) > MAX_TIMES:
        raise Invalid(f"At most {MAX_TIMES} check-in times.", field="times")
    cleaned = set()
    for index, value in enumerate(times):
        text = value.strip() if isinstance(value, str) else None
        if text is None or _TIME.fullmatch(text) is None:
            raise Invalid(
                f'times[{index}] ({value!r}) is not a time of day: "HH:MM", 24-hour.',
                field="times",
            )
        cleaned.add(text)
    return sorted(cleaned)


def checkin_settings_get(*, person_id: uuid.UUID) -> CheckInSettings:
    """The person's check-in settings, or the defaults (off, unsaved). NotFound if no person."""
    if not Person.objects.filter(id=person_id).exists():
        raise NotFound("No such person.", field="person_id")
    row = CheckInSettings.objects.filter(person_id=person_id).first()
    return row or CheckInSettings(person_id=person_id)


@dataclass(frozen=True)
class CleanSettings:
    enabled: bool
    times: list[str]
    night_start: int
    night_end: int
    max_unanswered: int | None


def checkin_settings_validate(
    *,
    enabled: bool,
    times: list[str],
    night_start: int,
    night_end: int,
    max_unanswered: int | None = None,
) -> CleanSettings:
    """Check-in settings checked and normalised (times distinct and sorted), or Invalid.

    Refused, naming the field: a time that is not "HH:MM", an hour outside 0-23, check-ins on
    with no time, a time inside the night hours (it would never go out), max_unanswered
    outside 1-10. Shared by the service, the API and the admin form.
    """
    if not isinstance(enabled, bool):
        raise Invalid("enabled is true or false.", field="enabled")
    cleaned = clean_times(times)
    night_start = _hour(night_start, "night_start")
    night_end = _hour(night_end, "night_end")
    if max_unanswered is not None and (
        isinstance(max_unanswered, bool)
        or not isinstance(max_unanswered, int)
        or not 1 <= max_unanswered <= MAX_UNANSWERED_LIMIT
    ):
        raise Invalid(
            f"max_unanswered is a number from 1 to {MAX_UNANSWERED_LIMIT}.",
            field="max_unanswered",
        )
    if enabled and not cleaned:
        raise Invalid("Check-ins that are on need at least one time.", field="times")
    for hhmm in cleaned:
        if is_night(int(hhmm[:2]), night_start=night_start, night_end=night_end):
            raise Invalid(
                f"{hhmm} is in the night hours ({night_start}:00 to {night_end}:00), "
                "when check-ins never go out.",
                field="times",
            )
    return CleanSettings(enabled, cleaned, night_start, night_end, max_unanswered)


def checkin_settings_update(
    *,
    person_id: uuid.UUID,
    enabled: bool,
    times: list[str],
    night_start: int,
    night_end: int,
    max_unanswered: int | None = None,
) -> CheckInSettings:
    """Set when the companion may check in on a person, or switch it off; validated first
    (`checkin_settings_validate`: Invalid names the field, nothing is saved). Slots that
    already passed today are not sent late."""
    clean = checkin_settings_validate(
        enabled=enabled,
        times=times,
        night_start=night_start,
        night_end=night_end,
        max_unanswered=max_unanswered,
    )
    with transaction.atomic():
        if not Person.objects.select_for_update().filter(id=person_id).exists():
            raise NotFound("No such person.", field="person_id")
        row = CheckInSettings.objects.filter(person_id=person_id).first() or CheckInSettings(
            person_id=person_id
        )
        row.enabled = clean.enabled
        row.times = clean.times
        row.night_start = clean.night_start
        row.night_end = clean.night_end
        if clean.max_unanswered is not None:
            row.max_unanswered = clean.max_unanswered
        row.save()
    return row
