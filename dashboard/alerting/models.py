"""Who hears about an alert, when, and what happened to it since (the alert's timeline).

`AlertRouting` is a care-team member's choice (which alerts, by e-mail or not, their hours, the
weekly digest). `AlertNotice` is one message to one recipient at one escalation level, written
before it is sent, so a retried job never sends it twice. `AlertStep` is the timeline: every
step (sent, held for the morning, opened, acknowledged, escalated, a handover note) with who
and when; the handover note is the only free text, encrypted. `AlertEscalation` says when the
next escalation of an urgent alert is due (the sweep's index).
"""

from django.conf import settings
from django.db import models
from django.utils import timezone

from memory.core.fields import EncryptedTextField
from memory.models import Alert


class Receives(models.TextChoices):
    URGENT = "urgent", "Only urgent alerts (falls, pain, calls for help...)"
    ALL = "all", "Every alert"
    NONE = "none", "None"


class AlertRouting(models.Model):
    """One care-team member's choice of which alerts reach them, how and when."""

    membership = models.OneToOneField(
        "dashboard.CareTeamMembership", on_delete=models.CASCADE, related_name="routing"
    )
    receives = models.CharField(max_length=8, choices=Receives.choices, default=Receives.URGENT)
    by_email = models.BooleanField(default=True)
    # Non-urgent alerts reach them only between these local times (both set), else are held
    # until the next start. Urgent alerts go at once, any hour.
    hours_start = models.TimeField(null=True, blank=True)
    hours_end = models.TimeField(null=True, blank=True)
    # IANA zone of their hours and digest; blank: the person's.
    time_zone = models.CharField(max_length=64, blank=True, default="")
    # The weekly digest (family), on their local Sunday evening.
    weekly_digest = models.BooleanField(default=False)

    class Meta:
        db_table = "alert_routing"

    def __str__(self) -> str:
        return f"{self.membership_id}: {self.receives}"


class AlertNotice(models.Model):
    """One alert e-mail to one recipient at one level (0 the team, 1 its admins, 2 the contact)."""

    class Status(models.TextChoices):
        HELD = "held"  # waiting for the recipient's hours
        SENT = "sent"
        FAILED = "failed"  # the mail server refused; the sweep tries again

    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="notices")
    # Null: the organisation's contact (read from the organisation when sending, not copied).
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    level = models.PositiveSmallIntegerField(default=0)
    # "<alert>:<level>:<user id or contact>": one notice each, however often the job runs.
    dedupe_key = models.CharField(max_length=100, unique=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.HELD)
    attempts = models.PositiveSmallIntegerField(default=0)
    due_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)
    opened_at = models.DateTimeField(null=True, blank=True)
    # The acknowledgement link works once.
    link_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "alert_notices"
        indexes = [
            # The sweep: held or failed notices whose time has come.
            models.Index(fields=["status", "due_at"], name="idx_alert_notices_due"),
        ]

    def __str__(self) -> str:
        return f"{self.alert_id} → {self.user_id or 'contact'} ({self.status})"


class AlertStep(models.Model):
    """One line of an alert's timeline."""

    class Kind(models.TextChoices):
        SENT = "sent", "e-mailed"
        HELD = "held", "held until their hours"
        SEND_FAILED = "send_failed", "e-mail failed"
        OPENED = "opened", "opened the e-mail's link"
        LOOKING_INTO = "looking_into", "is looking into it"
        ACKNOWLEDGED = "acknowledged", "acknowledged"
        REOPENED = "reopened", "reopened"
        ESCALATED = "escalated", "escalated"
        NOTE = "note", "added a handover note"

    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="steps")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    at = models.DateTimeField(default=timezone.now)
    # Who it went to (sent, held, escalated) or who acted (opened, acknowledged, note).
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Kept when the login is deleted; "organisation contact" for level 2. Never the person.
    who = models.CharField(max_length=150, blank=True, default="")
    level = models.PositiveSmallIntegerField(default=0)
    # "email" or "dashboard" for an acknowledgement; blank otherwise.
    via = models.CharField(max_length=16, blank=True, default="")
    # A handover note ("called her daughter, she is fine"): about the person, so encrypted.
    note = EncryptedTextField(blank=True, default="")

    class Meta:
        db_table = "alert_steps"
        indexes = [
            # An alert's timeline, in order.
            models.Index(fields=["alert", "at"], name="idx_alert_steps_alert_at"),
        ]

    def __str__(self) -> str:
        return f"{self.alert_id} {self.kind}"


class AlertEscalation(models.Model):
    """Where an urgent alert's escalation stands: the level reached and when the next is due."""

    alert = models.OneToOneField(Alert, on_delete=models.CASCADE, related_name="escalation")
    level = models.PositiveSmallIntegerField(default=0)
    # Null once acknowledged (or looked into) or past the last level.
    next_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "alert_escalations"
        indexes = [
            # The sweep: escalations due now.
            models.Index(fields=["next_at"], name="idx_alert_escalations_next"),
        ]

    def __str__(self) -> str:
        return f"{self.alert_id} level {self.level}"


class DigestSent(models.Model):
    """A weekly digest went to a member for the week ending on this (their local) Sunday."""

    membership = models.ForeignKey(
        "dashboard.CareTeamMembership", on_delete=models.CASCADE, related_name="+"
    )
    week_ending = models.DateField()
    sent_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "alert_digests_sent"
        constraints = [
            # One digest per member and week, however often the hourly job runs.
            models.UniqueConstraint(
                fields=["membership", "week_ending"], name="uniq_digest_member_week"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.membership_id} {self.week_ending}"
