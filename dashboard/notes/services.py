"""Reading and writing caregivers' notes, and the alerts' handover notes beside them.

One timeline per person: the notes left on the person, and the handover notes left on their
alerts (dashboard/alerting, AlertStep "note"), newest first; a handover note links to its
alert. Who reads what (minimum necessary): a note marked for care staff is read by team admins
and care staff only; family read the notes marked for the whole team, and the handover notes
their writer marked for family (a handover note is for staff unless so marked). Family's own
notes are always for the whole team: they write for everyone, and must be able to read what
they wrote. Every read of a note goes through here: the notes panel, the alerts panel's
timelines (`timeline_for`) and the family page.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction

from dashboard.access import Need, allows
from dashboard.alerting.models import AlertStep
from dashboard.models import CareTeamMembership
from dashboard.notes.models import CaregiverNote, NoteVisibility
from dashboard.words import alert_headline, caregiver_name, login_name
from memory.core.person import CaregiverContext
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


def seen_by(*, name: str, for_family: bool) -> str:
    """Who reads a note, as its writer is told: "Seen by: staff of Peggy's care team" (and
    family)."""
    readers = f"staff of {name}'s care team"
    return f"Seen by: {readers} and family" if for_family else f"Seen by: {readers}"


def seen_by_choices(person: Person) -> dict[str, str]:
    """What a note form tells its writer either way (`seen_by_staff`, `seen_by_family`), the
    person named as every page names them."""
    name = CaregiverContext.of(person).name_or("them")
    return {
        "seen_by_staff": seen_by(name=name, for_family=False),
        "seen_by_family": seen_by(name=name, for_family=True),
    }


def note_add(*, person: Person, membership: CareTeamMembership, text: str, visibility: str):
    """Store one note by this member; family's notes are for the whole team."""
    if not sees_staff_notes(membership):
        visibility = NoteVisibility.TEAM
    with transaction.atomic():
        return CaregiverNote.objects.create(
            person=person,
            author=membership.user,
            author_name=caregiver_name(membership.user),
            visibility=visibility,
            text=text,
        )


def notes_for(*, person: Person, membership: CareTeamMembership) -> list[NoteRow]:
    """The notes this member may read, with the alerts' handover notes, newest first."""
    staff = sees_staff_notes(membership)
    notes = CaregiverNote.objects.filter(person_id=person.id)
    if not staff:
        notes = notes.filter(visibility=NoteVisibility.TEAM)
    rows = [
        NoteRow(
            at=note.created_at,
            # The writer as named now (a note written before the login had a name kept its login).
            who=caregiver_name(note.author) if note.author_id else note.author_name,
            text=note.text,
            kind="note",
            visibility=note.visibility,
            note_id=note.id,
        )
        for note in notes.select_related("author").order_by("-created_at")[:NOTES_SHOWN]
        # idx_caregiver_notes_person
    ]
    rows += [
        NoteRow(
            at=step["at"],
            # The writer as named now, else as named when it was written.
            who=login_name(
                step["user__first_name"], step["user__last_name"], step["user__username"]
            )
            or step["who"],
            text=step["note"],
            kind="handover",
            visibility=NoteVisibility.TEAM if step["for_family"] else NoteVisibility.STAFF,
            alert_id=step["alert_id"],
            alert_headline=alert_headline(step["alert__kind"], step["alert__detail"]),
        )
        for step in _handover_steps(person.id, family=not staff)[:NOTES_SHOWN]
    ]
    rows.sort(key=lambda row: row.at, reverse=True)
    return rows[:NOTES_SHOWN]


def _handover_steps(person_id: uuid.UUID, *, family: bool = False):
    """The handover notes on the person's alerts, newest first; with `family`, only those
    marked for family."""
    steps = AlertStep.objects.filter(alert__person_id=person_id, kind=AlertStep.Kind.NOTE)
    if family:
        steps = steps.filter(for_family=True)
    return steps.order_by("-at").values(
        "alert_id",
        "at",
        "who",
        "note",
        "for_family",
        "alert__kind",
        "alert__detail",
        "user__username",
        "user__first_name",
        "user__last_name",
    )


def timeline_for(
    *, membership: CareTeamMembership, timelines: dict[int, list[AlertStep]]
) -> dict[int, list[AlertStep]]:
    """Alerts' timelines (dashboard.alerting.delivery.timeline) as this member may read them:
    family without the handover notes that are for staff."""
    if sees_staff_notes(membership):
        return timelines
    return {
        alert_id: [s for s in steps if s.kind != AlertStep.Kind.NOTE or s.for_family]
        for alert_id, steps in timelines.items()
    }


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
                "for_family": step["for_family"],
                "text": step["note"],
            }
            for step in reversed(list(_handover_steps(person_id)))
        ],
    }
