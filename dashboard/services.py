"""Writes of the dashboard: alert states and the care team. Each is one transaction.

Audit rows are written by dashboard.access before a view calls any of these.
"""

from django.db import transaction

from dashboard.models import CareRole, CareTeamMembership
from memory import alerts
from memory.models import Alert, Person


def alert_act(*, alert: Alert, status: str, user) -> Alert:
    """A caregiver is looking into an alert, has dealt with it, or reopens it (who and when)."""
    return alerts.alert_set_status(alert_id=alert.id, status=status, user_id=user.pk)


def _other_admins(membership: CareTeamMembership) -> bool:
    return (
        CareTeamMembership.objects.filter(person_id=membership.person_id, role=CareRole.ADMIN)
        .exclude(id=membership.id)
        .exists()
    )


def member_add(*, person: Person, user, role: str, can_see_transcripts: bool) -> str | None:
    """Put `user` in the person's care team; returns an error sentence if already there."""
    with transaction.atomic():
        _, created = CareTeamMembership.objects.get_or_create(
            person=person,
            user=user,
            defaults={"role": role, "can_see_transcripts": can_see_transcripts},
        )
    return None if created else "Already in the care team."


def member_update(
    *, membership: CareTeamMembership, role: str, can_see_transcripts: bool
) -> str | None:
    """Change a member's role or transcript right; the team always keeps one admin."""
    with transaction.atomic():
        locked = CareTeamMembership.objects.select_for_update().get(id=membership.id)
        if locked.role == CareRole.ADMIN and role != CareRole.ADMIN and not _other_admins(locked):
            return "The care team needs at least one admin: make someone else admin first."
        locked.role = role
        locked.can_see_transcripts = can_see_transcripts
        locked.save(update_fields=["role", "can_see_transcripts"])
    return None


def member_remove(*, membership: CareTeamMembership) -> str | None:
    """Take a member off the care team; never the last admin."""
    with transaction.atomic():
        locked = CareTeamMembership.objects.select_for_update().get(id=membership.id)
        if locked.role == CareRole.ADMIN and not _other_admins(locked):
            return "The care team needs at least one admin: make someone else admin first."
        locked.delete()
    return None
