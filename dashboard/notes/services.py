"""Reading and writing caregivers' notes, and the alerts' handover notes beside them.

One timeline per person: the notes left on the person, and the handover notes left on their
alerts (dashboard/alerting, AlertStep "note"), newest first; a handover note links to its
alert. Who reads what (minimum necessary): a note marked for care staff is read by team admins
and care staff only; family read the notes marked for the whole team, and every handover note
(the alerts panel shows those to every member already). Family's own notes are always for the
whole team: they write for everyone, and must be able to read what they wrote.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction

from dashboard.access import Need, allows
from dashboard.alerting.models import AlertStep
from dashboard.models import CareTeamMembership
from dashboard.notes.models import CaregiverNote, NoteVisibility
from dashboard.words import alert_headline
from memory.models import Person

NOTES_SHOWN = 50


def sees_staff_notes(membership: CareTeamMembership) -> bool:
    """Team admins and care staff (those who may also say what is true: Need.CONFIRM)."""
    return allows(membership, Need.CONFIRM)


@dataclass
class NoteRow:
    at: datetime
    who: str
    text: str
    # "note" (on the person) or "handover" (on one of their alerts).
    kind: str
    visibility: str = NoteVisibility.TEAM
    alert_id: int | None = None
    alert_headline: str = ""
    note_id: uuid.UUID | None = None

    @property
    def staff_only(self) -> bool:
        return self.visibility == NoteVisibility.STAFF


def _author_name(user) -> str:
    return (user.get_full_name() or user.get_username())[:150]


def note_add(*, person: Person, membership: CareTeamMembership, text: str, visibility: str):
    """Store one note by this member; family's notes are for the whole team."""
    if not sees_staff_notes(membership):
        visibility = NoteVisibility.TEAM
    with transaction.atomic():
        return CaregiverNote.objects.create(
            person=person,
            author=membership.user,
            author_name=_author_name(membership.user),
            visibility=visibility,
            text=text,
        )


def notes_for(*, person: Person, membership: CareTeamMembership) -> list[NoteRow]:
    """The notes this member may read, with the alerts' handover notes, newest first."""
    notes = CaregiverNote.objects.filter(person_id=person.id)
    if not sees_staff_notes(membership):
        notes = notes.filter(visibility=NoteVisibility.TEAM)
    rows = [
        NoteRow(
            at=note.created_at,
            who=note.author_name,
            text=note.text,
            kind="note",
            visibility=note.visibility,
            note_id=note.id,
        )
        for note in notes.order_by("-created_at")[:NOTES_SHOWN]  # idx_caregiver_notes_person
    ]
    rows += [
        NoteRow(
            at=step["at"],
            who=step["who"],
            text=step["note"],
            kind="handover",
            alert_id=step["alert_id"],
            alert_headline=alert_headline(step["alert__kind"], step["alert__detail"]),
        )
        for step in _handover_steps(person.id)[:NOTES_SHOWN]
    ]
    rows.sort(key=lambda row: row.at, reverse=True)
    return rows[:NOTES_SHOWN]


def _handover_steps(person_id: uuid.UUID):
    return (
        AlertStep.objects.filter(alert__person_id=person_id, kind=AlertStep.Kind.NOTE)
        .order_by("-at")
        .values("alert_id", "at", "who", "note", "alert__kind", "alert__detail")
    )


def export_rows(person_id: uuid.UUID) -> dict[str, list[dict]]:
    """Every note about the person, for the full export (which needs every right anyway)."""
    return {
        "caregiver_notes": [
            {
                "id": str(note.id),
                "created_at": note.created_at.isoformat(),
                "author": note.author_name,
                "visibility": note.visibility,
                "text": note.text,
            }
            for note in CaregiverNote.objects.filter(person_id=person_id).order_by("created_at")
        ],
        "alert_handover_notes": [
            {
                "alert_id": step["alert_id"],
                "created_at": step["at"].isoformat(),
                "author": step["who"],
                "text": step["note"],
            }
            for step in reversed(list(_handover_steps(person_id)))
        ],
    }
