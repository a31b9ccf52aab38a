"""Invitations: an organisation's admin asks someone, by e-mail, to join its dashboard.

The link carries the invitation's id signed with a timestamp (dashboard/accounts/services.py):
it expires after CLARA_INVITATION_MAX_AGE_SECONDS and works once (accepted_at is set by a
conditional UPDATE). The address is a caregiver's, like a login's own e-mail; nothing about the
person cared for is stored here but which care team the invitee will join.
"""

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from dashboard.models import CareRole
from memory.models import Organisation, Person


class Invitation(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Indexed by idx_invitation_org_created, which leads with it.
    organisation = models.ForeignKey(
        Organisation, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    email = models.EmailField()
    # The care teams to join (none: the organisation only), all with one role (never the
    # transcript right: a team admin grants that on the team page). Erasing a person takes them
    # off the invitation.
    people = models.ManyToManyField(
        Person, blank=True, related_name="+", db_table="dashboard_invitation_people"
    )
    role = models.CharField(max_length=16, choices=CareRole.choices, blank=True, default="")
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    created_at = models.DateTimeField(default=timezone.now)
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "dashboard_invitations"
        indexes = [
            # The organisation's invitations page, newest first.
            models.Index(fields=["organisation", "-created_at"], name="idx_invitation_org_created"),
        ]

    def __str__(self) -> str:
        return f"invitation to {self.email}"
