"""The one access check of the dashboard: every view, partial and export goes through it.

A caregiver sees a person when they are in the person's care team *and* belong to the person's
organisation (a login may belong to several; each shows its own people and nothing more). An
outsider (no membership, unknown id, anonymous, another organisation) gets 404, as if the person
did not exist, so nothing about them leaks; a member whose role lacks what is asked gets 403.
Every call that is allowed writes an audit row (who, which person, what, when); a refused member
is audited too, and so is an outsider's probe (a logged-in login answered 404: `_record_not_found`).
A background poll (`poll_since`) repeats the read its page recorded when it opened and writes
nothing more, and so do the panels a person page loads with itself (`part_since`): one row
per page view. The people list and the organisation pages are scoped here as well.
"""

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404
from django.utils import timezone

from dashboard import sessions
from dashboard.models import AuditAction, AuditEvent, CareRole, CareTeamMembership
from memory.models import Organisation, OrganisationMembership, Person

# The person page loads its panels itself (htmx, "load"): each sends this header, and within
# this window of the page's own audit row is not written again (dashboard.access.part_since).
PART_HEADER = "X-Clara-Part"
PAGE_PARTS_WINDOW = timedelta(minutes=5)


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
    # Whether a name Clara heard is a person she knows (memory/facts/names.py).
    "same_person": Need.CONFIRM,
    "other_person": Need.CONFIRM,
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


def may_change_rights(access: Access, member: CareTeamMembership) -> bool:
    """Whether the team admin behind `access` may change `member`'s role and rights: never
    their own row (no one grants themselves a right, the transcript right say); another admin
    of the team does it."""
    return access.is_admin and member.user_id != access.membership.user_id


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
    poll_since: datetime | None = None,
    part_since: datetime | None = None,
) -> Access:
    """The person, if `user` is in their care team with what `need` asks; audits the access.

    Raises Http404 for outsiders (and anonymous users), PermissionDenied (403) for members
    without the right. Side effect: one AuditEvent row, allowed, refused or not found (the
    probe: `_record_not_found`); with `audit_allowed=False` only a refusal is written here, and
    the caller writes the row once it knows the outcome (an erasure: done, or refused for a
    wrong confirmation). `poll_since`: the request is a background poll of a page opened in the
    login that began then (`poll_since(request)`); a read (or a probe) already on record since
    then is not written again, nor is it when the person page that holds the panel is.
    `part_since`: the request is a panel the person page loads with itself
    (`part_since(request)`); the page's row, written since then, stands for it: one row for one
    page view.
    """
    if user is None or not user.is_authenticated:
        raise Http404("No such person.")
    # One query: the membership and its person (uniq_care_team_person_user), with the login's
    # membership of the person's organisation (uniq_org_member_user).
    membership = care_memberships(user).select_related("person").filter(person_id=person_id).first()
    if membership is None:
        if not (
            poll_since
            and recorded_since(
                user, poll_since, action=AuditAction.PERSON_NOT_FOUND, object_id=str(person_id)
            )
        ):
            _record_not_found(user, person_id)
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
    if poll_since and recorded_since(
        user, poll_since, action=(action, AuditAction.VIEW_PERSON), person_id=person_id
    ):
        return Access(person=membership.person, membership=membership)
    if part_since and recorded_since(
        user, part_since, action=AuditAction.VIEW_PERSON, person_id=person_id
    ):
        return Access(person=membership.person, membership=membership)
    audit_record(
        user=user,
        person_id=person_id,
        action=action,
        object_id=object_id,
        organisation_id=organisation_id,
    )
    return Access(person=membership.person, membership=membership)


def _record_not_found(user, person_id: uuid.UUID) -> None:
    """A login asked for a person page it may not see (answered 404, as for an unknown id).

    One row per organisation of the login, so each sees its own login's attempts; the person is
    named only if they are of one of those organisations (a member outside the care team).
    Another organisation's person and an unknown id are written alike (the id asked for, no
    person), and the lookup is the same for both, so the audit tells nothing more than the 404.
    """
    organisation_ids = list(
        OrganisationMembership.objects.filter(user_id=user.pk).values_list(
            "organisation_id", flat=True
        )
    )
    own = (
        Person.objects.filter(pk=person_id, organisation_id__in=organisation_ids)
        .values_list("organisation_id", flat=True)
        .first()
    )
    targets = [(own, person_id)] if own else [(org, None) for org in organisation_ids]
    AuditEvent.objects.bulk_create(
        AuditEvent(
            user=user,
            username=user.get_username(),
            organisation_id=organisation_id,
            person_id=named,
            action=AuditAction.PERSON_NOT_FOUND,
            object_id=str(person_id),
            allowed=False,
        )
        for organisation_id, named in targets or [(None, None)]
    )


def poll_since(request) -> datetime | None:
    """For a background poll (a GET with `X-Clara-Poll: 1`, dashboard.sessions.is_poll): when the
    login began, so the poll is not audited again when its page's read is on record since then.
    None for anything else (audited as usual).

    The header is the browser's to send, so it is trusted only this far: a poll whose read was
    never recorded in this login (a hand-made request with the header) is audited like a read.
    """
    if not sessions.is_poll(request):
        return None
    started = request.session.get(sessions.LOGIN_STARTED)
    if not isinstance(started, int | float):
        return None
    return datetime.fromtimestamp(started, tz=UTC)


def part_since(request) -> datetime | None:
    """For a panel the person page loads with itself (a GET with `X-Clara-Part: 1`, which only
    the page's placeholders send): the time since which the page's own read stands for it,
    PAGE_PARTS_WINDOW back at most and never before the login began. None for anything else.

    Trusted as far as `poll_since`: a request with the header but no page read on record in
    that window is audited like any read.
    """
    if request.method not in ("GET", "HEAD") or request.headers.get(PART_HEADER) != "1":
        return None
    started = request.session.get(sessions.LOGIN_STARTED)
    if not isinstance(started, int | float):
        return None
    return max(datetime.fromtimestamp(started, tz=UTC), timezone.now() - PAGE_PARTS_WINDOW)


def recorded_since(
    user,
    since: datetime,
    *,
    action: str | tuple[str, ...],
    person_id: uuid.UUID | None = None,
    object_id: str | None = None,
) -> bool:
    """Whether `user` has a row of `action` (or of one of several) for this person, or object,
    since `since`."""
    actions = (action,) if isinstance(action, str) else action
    rows = AuditEvent.objects.filter(user_id=user.pk, action__in=actions, at__gte=since)
    if person_id is not None:
        rows = rows.filter(person_id=person_id)
    if object_id is not None:
        rows = rows.filter(object_id=object_id)
    return rows.exists()


def organisations_read_record(user, organisation_ids, action: str) -> None:
    """One row per organisation whose page (or part of a page) the login read; person empty."""
    AuditEvent.objects.bulk_create(
        AuditEvent(
            user=user,
            username=user.get_username(),
            organisation_id=organisation_id,
            action=action,
        )
        for organisation_id in sorted(set(organisation_ids), key=str)
    )


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
