"""The one access check of the dashboard: every view, partial and export goes through it.

An outsider (no membership, unknown id, anonymous) gets 404, as if the person did not exist, so
nothing about them leaks; a member whose role lacks what is asked gets 403. Every call that is
allowed writes an audit row (who, which person, what, when); a refused member is audited too.
"""

import uuid
from dataclasses import dataclass
from enum import StrEnum

from django.core.exceptions import PermissionDenied
from django.http import Http404

from dashboard.models import AuditAction, AuditEvent, CareRole, CareTeamMembership
from memory.models import Person


class Need(StrEnum):
    VIEW = "view"  # summaries, trends, alerts, profile, memories: every member
    TRANSCRIPTS = "transcripts"  # full conversations: members granted it
    ADMIN = "admin"  # the team, exports, erasure: the team admin


@dataclass(frozen=True)
class Access:
    person: Person
    membership: CareTeamMembership

    @property
    def can_see_transcripts(self) -> bool:
        return self.membership.can_see_transcripts

    @property
    def is_admin(self) -> bool:
        return self.membership.role == CareRole.ADMIN


def allows(membership: CareTeamMembership, need: Need) -> bool:
    """Whether this membership may do what `need` asks."""
    if need == Need.TRANSCRIPTS:
        return membership.can_see_transcripts
    if need == Need.ADMIN:
        return membership.role == CareRole.ADMIN
    return True


def audit_record(
    *, user, person_id: uuid.UUID | None, action: str, object_id: str = "", allowed: bool = True
) -> AuditEvent:
    """Append one audit row. Only codes and ids go in: never names or message text."""
    return AuditEvent.objects.create(
        user=user,
        username=user.get_username(),
        person_id=person_id,
        action=action,
        object_id=str(object_id or ""),
        allowed=allowed,
    )


def get_person_for(
    user,
    person_id: uuid.UUID,
    *,
    need: Need = Need.VIEW,
    action: AuditAction | str,
    object_id: str = "",
) -> Access:
    """The person, if `user` is in their care team with what `need` asks; audits the access.

    Raises Http404 for outsiders (and anonymous users), PermissionDenied (403) for members
    without the right. Side effect: one AuditEvent row, allowed or refused.
    """
    if user is None or not user.is_authenticated:
        raise Http404("No such person.")
    # One query: the membership and its person (uniq_care_team_person_user).
    membership = (
        CareTeamMembership.objects.select_related("person")
        .filter(user_id=user.pk, person_id=person_id)
        .first()
    )
    if membership is None:
        raise Http404("No such person.")
    if not allows(membership, need):
        audit_record(
            user=user, person_id=person_id, action=action, object_id=object_id, allowed=False
        )
        raise PermissionDenied("Your role in this care team does not allow this.")
    audit_record(user=user, person_id=person_id, action=action, object_id=object_id)
    return Access(person=membership.person, membership=membership)
