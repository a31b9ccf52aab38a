"""Inviting logins into an organisation (and a care team), and accepting an invitation.

An invitation link holds the invitation's id signed with a timestamp (Django's TimestampSigner,
salted for this use): a changed link fails its signature, an old one is refused after
CLARA_INVITATION_MAX_AGE_SECONDS, and accepting is a conditional UPDATE, so a link works once.
Sent, accepted and revoked invitations are audited (dashboard_audit, with the organisation and
the invitation's id; never the address).
"""

import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.utils import timezone

from dashboard.access import audit_record
from dashboard.accounts.models import Invitation
from dashboard.models import AuditAction, CareRole, CareTeamMembership
from memory.models import Organisation, OrganisationMembership, Person

SALT = "clara.dashboard.invitation"


class InvitationRefused(Exception):
    """The link is not (or no longer) good: altered, expired, used or revoked."""


class LoginNameTaken(Exception):
    """Another login took the name after the form checked it (two sign-ups at once)."""


def _signer() -> signing.TimestampSigner:
    return signing.TimestampSigner(salt=SALT)


def invitation_token(invitation: Invitation) -> str:
    return _signer().sign(str(invitation.id))


def max_age() -> int:
    return settings.CLARA_INVITATION_MAX_AGE_SECONDS


def invitation_from_token(token: str) -> Invitation:
    """The pending invitation a link names; InvitationRefused otherwise (one message for all)."""
    try:
        invitation_id = uuid.UUID(_signer().unsign(token, max_age=max_age()))
    except (signing.BadSignature, ValueError) as bad:  # SignatureExpired is a BadSignature
        raise InvitationRefused from bad
    invitation = (
        Invitation.objects.select_related("organisation")
        .filter(pk=invitation_id, accepted_at__isnull=True, revoked_at__isnull=True)
        .first()
    )
    if invitation is None:
        raise InvitationRefused
    return invitation


def existing_login(invitation: Invitation):
    """The login that already uses the invited address, if one does."""
    return (
        get_user_model()
        .objects.filter(email__iexact=invitation.email, is_active=True)
        .order_by("pk")
        .first()
    )


# Least right first: the order the form offers them, and what "above" means.
ROLES_LEAST_FIRST = (CareRole.FAMILY, CareRole.STAFF, CareRole.ADMIN)


class NotAllowed(Exception):
    """The inviter may not invite to this (a person not theirs, a role above their own)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Inviter:
    """Who invites into an organisation, and to what: its admins to any of its people's care
    teams (or to the organisation alone), a team admin only to the care teams they admin
    (`people`). Team admin is the highest care-team role, so no role given is above the
    inviter's own in a team chosen: nobody hands out, or gives themselves, more than they hold."""

    user: object
    organisation: Organisation
    organisation_admin: bool

    def people(self):
        """The people whose care teams this login may invite to (indexed by the care team's
        unique (person, user) for a team admin)."""
        people = Person.objects.filter(organisation=self.organisation)
        if not self.organisation_admin:
            people = people.filter(care_team__user_id=self.user.pk, care_team__role=CareRole.ADMIN)
        return people.order_by("created_at")

    def may_invite(self) -> bool:
        return self.organisation_admin or self.people().exists()

    def check(self, *, email: str, people, role: str) -> None:
        """NotAllowed (naming the field) unless this login may send this invitation."""
        if email.casefold() == (self.user.email or "").casefold():
            raise NotAllowed("email", "You cannot invite yourself.")
        chosen = {p.pk for p in people}
        if chosen - set(self.people().filter(pk__in=chosen).values_list("pk", flat=True)):
            raise NotAllowed("people", "Choose people from the list.")
        if not people and not self.organisation_admin:
            raise NotAllowed("people", "Choose the people whose care team they will join.")


def invitation_send(
    *,
    inviter: Inviter,
    email: str,
    people,
    role: str,
    accept_url,
) -> Invitation:
    """Record an invitation, e-mail its link and audit it (a row for each person, or one for
    the organisation).

    `accept_url(token)` makes the absolute link. The message names the organisation and who
    invites, never the people cared for. Raises NotAllowed for what the inviter may not send
    (Inviter.check). A failed send leaves no pending invitation (the row is rolled back) and
    raises the mail error.
    """
    people = list(people)
    inviter.check(email=email, people=people, role=role)
    invited_by = inviter.user
    organisation = inviter.organisation
    with transaction.atomic():
        invitation = Invitation.objects.create(
            organisation=organisation,
            email=email,
            role=role if people else "",
            invited_by=invited_by,
        )
        invitation.people.set(people)
        context = {
            "organisation": organisation,
            "inviter": invited_by.get_full_name() or invited_by.get_username(),
            "url": accept_url(invitation_token(invitation)),
            "days": max(1, max_age() // 86400),
            "with_team": bool(people),
        }
        send_mail(
            subject=f"You are invited to the Clara care dashboard of {organisation.name}",
            message=render_to_string("registration/invitation_email.txt", context),
            from_email=None,
            recipient_list=[email],
        )
        _audit_each(invitation, user=invited_by, action=AuditAction.INVITATION_SENT)
    return invitation


def _audit_each(invitation: Invitation, *, user, action: str) -> None:
    """One audit row for each person of the invitation (each person's audit shows it), or one
    for the organisation when it names no one."""
    people = list(invitation.people.values_list("pk", flat=True)) or [None]
    for person_id in people:
        audit_record(
            user=user,
            person_id=person_id,
            action=action,
            object_id=str(invitation.id),
            organisation_id=invitation.organisation_id,
        )


def invitation_revoke(*, invitation: Invitation, user) -> bool:
    """Revoke a pending invitation (its link stops working); audited. False if not pending."""
    with transaction.atomic():
        changed = Invitation.objects.filter(
            pk=invitation.pk, accepted_at__isnull=True, revoked_at__isnull=True
        ).update(revoked_at=timezone.now())
        if changed:
            _audit_each(invitation, user=user, action=AuditAction.INVITATION_REVOKED)
    return bool(changed)


@dataclass(frozen=True)
class Accepted:
    user: object
    created: bool


def invitation_accept(
    *,
    invitation: Invitation,
    user=None,
    username: str = "",
    password: str = "",
    first_name: str = "",
    last_name: str = "",
) -> Accepted:
    """Join the invitation's organisation (and care team): as `user` (an existing login, already
    checked to own the invited address) or as a new login made here. Audited; works once.

    Raises InvitationRefused when the invitation was accepted, revoked or has just expired, and
    LoginNameTaken when the new login's name was taken since the form checked it (nothing kept).
    """
    with transaction.atomic():
        # Claim the invitation first: of two tabs submitting the same link, one wins.
        claimed = Invitation.objects.filter(
            pk=invitation.pk,
            accepted_at__isnull=True,
            revoked_at__isnull=True,
            created_at__gt=timezone.now() - timedelta(seconds=max_age()),
        ).update(accepted_at=timezone.now())
        if not claimed:
            raise InvitationRefused
        created = user is None
        if created:
            try:
                with transaction.atomic():
                    user = get_user_model().objects.create_user(
                        username=username,
                        email=invitation.email,
                        password=password,
                        first_name=first_name,
                        last_name=last_name,
                    )
            except IntegrityError as taken:
                # Out of the outer block too: the claim is rolled back, the link still works.
                raise LoginNameTaken from taken
        Invitation.objects.filter(pk=invitation.pk).update(accepted_by=user)
        OrganisationMembership.objects.get_or_create(
            organisation_id=invitation.organisation_id, user=user
        )
        # Only the organisation's own people (an invitation never reaches past it); a team the
        # login is already in keeps its role.
        for person_id in invitation.people.filter(
            organisation_id=invitation.organisation_id
        ).values_list("pk", flat=True):
            CareTeamMembership.objects.get_or_create(
                person_id=person_id,
                user=user,
                defaults={"role": invitation.role or CareRole.FAMILY},
            )
        _audit_each(invitation, user=user, action=AuditAction.INVITATION_ACCEPTED)
    return Accepted(user=user, created=created)


def _visible(inviter: Inviter):
    rows = Invitation.objects.filter(organisation=inviter.organisation)
    if not inviter.organisation_admin:
        rows = rows.filter(invited_by_id=inviter.user.pk)
    return rows


def invitation_of(inviter: Inviter, invitation_id: uuid.UUID) -> Invitation | None:
    """One invitation this login sees (None for any other: another's, another organisation's)."""
    return _visible(inviter).filter(pk=invitation_id).first()


def invitations_of(inviter: Inviter, *, limit: int = 50) -> list[Invitation]:
    """The invitations this login sees, newest first, with their people: all of the
    organisation's for its admins, a team admin's own."""
    return list(
        _visible(inviter)
        .select_related("invited_by", "accepted_by")
        .prefetch_related("people")
        .order_by("-created_at")[:limit]
    )


def invitation_expired(invitation: Invitation) -> bool:
    return invitation.created_at <= timezone.now() - timedelta(seconds=max_age())
