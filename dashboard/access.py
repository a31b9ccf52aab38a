"""The one access check of the dashboard: every view, partial and export goes through it.

A caregiver sees a person when they are in the person's care team *and* belong to the person's
organisation (a login may belong to several; each shows its own people and nothing more). An
outsider (no membership, unknown id, anonymous, another organisation) gets 404, as if the person
did not exist, so nothing about them leaks; a member whose role lacks what is asked gets 403.
Every call that is allowed writes an audit row (who, which person, what, when); a refused member
is audited too. The people list and the organisation pages are scoped here as well.
"""

import uuid
from dataclasses import dataclass
from enum import StrEnum

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404

from dashboard.models import AuditAction, AuditEvent, CareRole, CareTeamMembership
from memory.models import Organisation, OrganisationMembership, Person


class Need(StrEnum):
    VIEW = "view"  # summaries, trends, alerts, profile, memories: every member
    TRANSCRIPTS = "transcripts"  # full conversations: members granted it
    ADMIN = "admin"  # the team, exports, erasure: the team admin
    # Saying what is true (confirm, pin, accept a suggestion, agreed answers): admin and staff.
    # Family suggest; Clara would state a confirmed fact to the person as true.
    CONFIRM = "confirm"
    # Everything stored, conversations included (the JSON export): the team admin, and only
    # with the transcript right too.
    EXPORT_ALL = "export_all"


# What acting on one memory needs, on "What Clara remembers" and on the profile alike. Forgetting
# is permanent and takes a fact away from what Clara says: like saying what is true, it is for
# team admins and care staff. Family suggest a change (a suggestion staff accept or decline) and
# ask the team to forget; their "edit" is that suggestion (dashboard.views.memory_action).
MEMORY_ACTION_NEEDS = {
    "confirm": Need.CONFIRM,
    "pin": Need.CONFIRM,
    "unpin": Need.CONFIRM,
    "accept": Need.CONFIRM,
    "decline": Need.CONFIRM,
    "forget": Need.CONFIRM,
    "edit": Need.VIEW,
}


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

    @property
    def may_confirm(self) -> bool:
        return allows(self.membership, Need.CONFIRM)

    @property
    def may_forget(self) -> bool:
        return allows(self.membership, MEMORY_ACTION_NEEDS["forget"])


def allows(membership: CareTeamMembership, need: Need) -> bool:
    """Whether this membership may do what `need` asks."""
    if need == Need.TRANSCRIPTS:
        return membership.can_see_transcripts
    if need == Need.ADMIN:
        return membership.role == CareRole.ADMIN
    if need == Need.EXPORT_ALL:
        return membership.role == CareRole.ADMIN and membership.can_see_transcripts
    if need == Need.CONFIRM:
        return membership.role in (CareRole.ADMIN, CareRole.STAFF)
    return True


def audit_record(
    *,
    user,
    person_id: uuid.UUID | None,
    action: str,
    object_id: str = "",
    allowed: bool = True,
    organisation_id: uuid.UUID | None = None,
) -> AuditEvent:
    """Append one audit row. Only codes and ids go in: never names or message text."""
    return AuditEvent.objects.create(
        user=user,
        username=user.get_username(),
        organisation_id=organisation_id,
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
    audit_allowed: bool = True,
) -> Access:
    """The person, if `user` is in their care team with what `need` asks; audits the access.

    Raises Http404 for outsiders (and anonymous users), PermissionDenied (403) for members
    without the right. Side effect: one AuditEvent row, allowed or refused; with
    `audit_allowed=False` only a refusal is written here, and the caller writes the row once it
    knows the outcome (an erasure: done, or refused for a wrong confirmation).
    """
    if user is None or not user.is_authenticated:
        raise Http404("No such person.")
    # One query: the membership and its person (uniq_care_team_person_user), with the login's
    # membership of the person's organisation (uniq_org_member_user).
    membership = care_memberships(user).select_related("person").filter(person_id=person_id).first()
    if membership is None:
        raise Http404("No such person.")
    organisation_id = membership.person.organisation_id
    if not allows(membership, need):
        audit_record(
            user=user,
            person_id=person_id,
            action=action,
            object_id=object_id,
            allowed=False,
            organisation_id=organisation_id,
        )
        raise PermissionDenied("Your role in this care team does not allow this.")
    if not audit_allowed:
        return Access(person=membership.person, membership=membership)
    audit_record(
        user=user,
        person_id=person_id,
        action=action,
        object_id=object_id,
        organisation_id=organisation_id,
    )
    return Access(person=membership.person, membership=membership)


def care_memberships(user) -> QuerySet[CareTeamMembership]:
    """The login's care-team memberships that count: those in its own organisations.

    The people list and every person page read through this (a login taken out of an
    organisation loses that organisation's people at once, whatever care teams it was in).
    """
    if user is None or not user.is_authenticated:
        return CareTeamMembership.objects.none()
    return CareTeamMembership.objects.filter(
        user_id=user.pk, person__organisation__members__user_id=user.pk
    )


def organisations_of(user) -> list[OrganisationMembership]:
    """The login's organisations (with whether it is their admin), by name."""
    if user is None or not user.is_authenticated:
        return []
    return list(
        OrganisationMembership.objects.filter(user_id=user.pk)
        .select_related("organisation")
        .order_by("organisation__name", "organisation__slug")
    )


@dataclass(frozen=True)
class OrganisationAccess:
    organisation: Organisation
    membership: OrganisationMembership


def get_organisation_for(user, slug: str, *, need: Need = Need.ADMIN) -> OrganisationAccess:
    """The organisation, if `user` belongs to it with what `need` asks (its audit: an admin).

    Http404 for anyone outside it (and anonymous users), PermissionDenied (403) for a member who
    is not its admin.
    """
    if user is None or not user.is_authenticated:
        raise Http404("No such organisation.")
    membership = (
        OrganisationMembership.objects.select_related("organisation")
        .filter(user_id=user.pk, organisation__slug=slug)
        .first()
    )
    if membership is None:
        raise Http404("No such organisation.")
    if need == Need.ADMIN and not membership.is_admin:
        raise PermissionDenied("Only the organisation's admins read its audit.")
    return OrganisationAccess(organisation=membership.organisation, membership=membership)
