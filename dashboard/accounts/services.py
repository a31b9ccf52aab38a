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


def invitation_send(
    *,
    organisation: Organisation,
    email: str,
    person: Person | None,
    role: str,
    invited_by,
    accept_url,
) -> Invitation:
    """Record an invitation, e-mail its link and audit it.

    `accept_url(token)` makes the absolute link. The message names the organisation and who
    invites, never the person cared for. A failed send leaves no pending invitation (the row is
    rolled back) and raises the mail error.
    """
    with transaction.atomic():
        invitation = Invitation.objects.create(
            organisation=organisation,
            email=email,
            person=person,
            role=role if person is not None else "",
            invited_by=invited_by,
        )
        context = {
            "organisation": organisation,
            "inviter": invited_by.get_full_name() or invited_by.get_username(),
            "url": accept_url(invitation_token(invitation)),
            "days": max(1, max_age() // 86400),
            "with_team": person is not None,
        }
        send_mail(
            subject=f"You are invited to the Clara care dashboard of {organisation.name}",
            message=render_to_string("registration/invitation_email.txt", context),
            from_email=None,
            recipient_list=[email],
        )
        audit_record(
            user=invited_by,
            person_id=person.id if person is not None else None,
            action=AuditAction.INVITATION_SENT,
            object_id=str(invitation.id),
            organisation_id=organisation.id,
        )
    return invitation


def invitation_revoke(*, invitation: Invitation, user) -> bool:
    """Revoke a pending invitation (its link stops working); audited. False if not pending."""
    with transaction.atomic():
        changed = Invitation.objects.filter(
            pk=invitation.pk, accepted_at__isnull=True, revoked_at__isnull=True
        ).update(revoked_at=timezone.now())
        if changed:
            audit_record(
                user=user,
                person_id=invitation.person_id,
                action=AuditAction.INVITATION_REVOKED,
                object_id=str(invitation.id),
                organisation_id=invitation.organisation_id,
            )
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
        if invitation.person_id is not None:
            CareTeamMembership.objects.get_or_create(
                person_id=invitation.person_id,
                user=user,
                defaults={"role": invitation.role or CareRole.FAMILY},
            )
        audit_record(
            user=user,
            person_id=invitation.person_id,
            action=AuditAction.INVITATION_ACCEPTED,
            object_id=str(invitation.id),
            organisation_id=invitation.organisation_id,
        )
    return Accepted(user=user, created=created)


def invitations_of(organisation: Organisation, *, limit: int = 50) -> list[Invitation]:
    """The organisation's invitations, newest first, for its admins' page."""
    return list(
        Invitation.objects.filter(organisation=organisation)
        .select_related("person", "invited_by", "accepted_by")
        .order_by("-created_at")[:limit]
    )


def invitation_expired(invitation: Invitation) -> bool:
    return invitation.created_at <= timezone.now() - timedelta(seconds=max_age())
