"""Retention per organisation: conversations' text is kept N days, people's status follows use.

Each organisation sets `transcript_retention_days` (default 365) and `inactive_after_days`
(default 90). Every night (memory.tasks.apply_retention, one task per organisation):

- Conversations whose last message is older than the retention period lose their text: every
  message's content, and the repeated question's own words, the reply given, its meaning vector
  and its keyed fingerprint (all derived from what the person said). What stays, so caregivers'
  summaries and charts are unchanged: the session with its summary, dominant emotion and
  counts; each message's row (role, time, order, intent, story used) without its text; every
  emotion reading; each repetition record's question type and repeat count; stories told;
  trends, rolling summaries, alerts; long-term memories (facts, not transcripts: they have
  their own lifetimes and curation).
- People with no conversation for `inactive_after_days` are marked inactive; an inactive
  person who has talked since is active again. Archived people are left as they are.

`person_archive` archives one person on request (the admin's action). Every change is audited
(memory.conversations.audit) with the person and a count, never text. Running the job twice
changes nothing the second time: sessions are marked `transcript_removed_at`, statuses are
compared before they are written.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from memory.conversations import audit
from memory.conversations.models import (
    AccessAction,
    AccessChannel,
    AccessOutcome,
    ChatMessage,
    Organisation,
    Person,
    RepetitionRecord,
    Session,
)

JOB_ACTOR = "job:retention"
# Sessions handled per transaction: a first run on a large organisation stays in small steps.
BATCH = 200


@dataclass(frozen=True)
class RetentionReport:
    sessions: int  # conversations whose text was removed
    messages: int  # messages whose text was removed
    inactive: int  # people marked inactive
    active: int  # inactive people active again


def _remove_text(session_ids: list[uuid.UUID]) -> int:
    """Blank the text of these sessions' messages and repetition records; the rows stay."""
    # Not `.update()`: encrypted fields are written per row, as everywhere else, so a cipher
    # bound to its row (issue 15 item 2) stays valid.
    messages = 0
    for message in ChatMessage.objects.filter(session_id__in=session_ids).only("id", "content"):
        message.content = ""
        message.save(update_fields=["content"])
        messages += 1
    for record in RepetitionRecord.objects.filter(session_id__in=session_ids).only("id"):
        record.original_message = ""
        record.response_given = None
        record.meaning = None
        record.fingerprint = ""
        record.save(update_fields=["original_message", "response_given", "meaning", "fingerprint"])
    return messages


def transcripts_expire(*, organisation: Organisation, now: datetime) -> tuple[int, int]:
    """Remove the text of the organisation's conversations past its retention period."""
    cutoff = now - timedelta(days=organisation.transcript_retention_days)
    due = (
        Session.objects.filter(
            organisation_id=organisation.pk,
            transcript_removed_at__isnull=True,
            last_activity_at__lt=cutoff,
        )
        .exclude(status=Session.Status.ACTIVE)
        .order_by("last_activity_at")
    )
    sessions = messages = 0
    while True:
        batch = list(due.values_list("id", "person_id")[:BATCH])
        if not batch:
            return sessions, messages
        with transaction.atomic():
            ids = [session_id for session_id, _ in batch]
            removed = _remove_text(ids)
            # Conditional: a session another run already handled is not counted twice.
            Session.objects.filter(id__in=ids, transcript_removed_at__isnull=True).update(
                transcript_removed_at=now
            )
            per_person: dict[uuid.UUID | None, int] = {}
            for _, person_id in batch:
                per_person[person_id] = per_person.get(person_id, 0) + 1
            audit.record_many(
                {
                    "organisation_id": organisation.pk,
                    "channel": AccessChannel.JOB,
                    "actor": JOB_ACTOR,
                    "person_id": person_id,
                    "action": AccessAction.RETENTION,
                    "object_id": f"sessions:{count}",
                    "outcome": AccessOutcome.ALLOWED,
                }
                for person_id, count in per_person.items()
            )
        sessions += len(batch)
        messages += removed


def _set_status(
    people: list[uuid.UUID], *, organisation: Organisation, status: str, action: str
) -> int:
    if not people:
        return 0
    with transaction.atomic():
        Person.objects.filter(id__in=people).update(status=status)
        audit.record_many(
            {
                "organisation_id": organisation.pk,
                "channel": AccessChannel.JOB,
                "actor": JOB_ACTOR,
                "person_id": person_id,
                "action": action,
                "outcome": AccessOutcome.ALLOWED,
            }
            for person_id in people
        )
    return len(people)


def statuses_update(*, organisation: Organisation, now: datetime) -> tuple[int, int]:
    """Mark people inactive after the organisation's set time; active again once they talk."""
    cutoff = now - timedelta(days=organisation.inactive_after_days)
    people = Person.objects.filter(organisation_id=organisation.pk)
    gone_quiet = list(
        people.filter(status=Person.Status.ACTIVE, last_active_at__lt=cutoff).values_list(
            "id", flat=True
        )
    )
    back = list(
        people.filter(status=Person.Status.INACTIVE, last_active_at__gte=cutoff).values_list(
            "id", flat=True
        )
    )
    inactive = _set_status(
        gone_quiet,
        organisation=organisation,
        status=Person.Status.INACTIVE,
        action=AccessAction.MARK_INACTIVE,
    )
    active = _set_status(
        back,
        organisation=organisation,
        status=Person.Status.ACTIVE,
        action=AccessAction.MARK_ACTIVE,
    )
    return inactive, active


def retention_apply(*, organisation_id: uuid.UUID, now: datetime | None = None) -> RetentionReport:
    """The nightly retention of one organisation; idempotent."""
    now = now or timezone.now()
    organisation = Organisation.objects.get(pk=organisation_id)
    sessions, messages = transcripts_expire(organisation=organisation, now=now)
    inactive, active = statuses_update(organisation=organisation, now=now)
    return RetentionReport(sessions=sessions, messages=messages, inactive=inactive, active=active)


def person_archive(*, person: Person, actor: str, channel: str, user=None) -> bool:
    """Archive a person on request (their data stays; they no longer count as in care).

    Audited; returns False, and changes nothing, if they were archived already.
    """
    with transaction.atomic():
        changed = (
            Person.objects.filter(id=person.id)
            .exclude(status=Person.Status.ARCHIVED)
            .update(status=Person.Status.ARCHIVED)
        )
        if changed:
            audit.record(
                organisation_id=person.organisation_id,
                channel=channel,
                actor=actor,
                user=user,
                person_id=person.id,
                action=AccessAction.ARCHIVE,
                outcome=AccessOutcome.ALLOWED,
            )
    person.status = Person.Status.ARCHIVED
    return bool(changed)
