"""Who hears about an alert, when, and what happened to it since (the alert's timeline).

`AlertRouting` is a care-team member's choice (which alerts, by e-mail or not, their hours, the
weekly digest). `AlertNotice` is one message to one recipient at one escalation level (or one
reminder of a claim), written before it is sent, so a retried job never sends it twice.
`AlertStep` is the timeline: every step (sent, held for the morning, opened, claimed, taken
over, reminded, escalated, resolved, a handover note) with who (people's names, not logins) and
when; the handover note is the only free text, encrypted. `AlertEscalation` says when the next
step of an urgent alert's ladder is due (the sweep's index): an escalation while nobody has
claimed it, a reminder to the claimer, an escalation again when a claim is not resolved.
"""

from django.conf import settings
from django.db import models
from django.utils import timezone

from memory.core.fields import EncryptedTextField
from memory.models import Alert


class CareSetting(models.TextChoices):
    """Where an organisation cares for its people: it decides what family may do with alerts."""

    CARE_HOME = "care_home", "A care home"
    CARE_AT_HOME = "care_at_home", "Care at home (carers who visit)"
    FAMILY_AT_HOME = "family_at_home", "Family carers at home"


def default_acting_roles() -> list[str]:
    return ["admin", "staff"]


class OrganisationAlerting(models.Model):
    """An organisation's rules for its alerts: its care setting and which care-team roles may
    claim and resolve them (dashboard/alerting/rights.py). Set by the organisation's admins;
    an organisation without a row has the defaults (a care home; team admins and care staff)."""

    organisation = models.OneToOneField(
        "memory.Organisation", on_delete=models.CASCADE, related_name="alerting"
    )
    care_setting = models.CharField(
        max_length=16, choices=CareSetting.choices, default=CareSetting.CARE_HOME
    )
    # CareRole values. Family act only outside a care home (and a family member who is the
    # named carer at home acts whatever this says); admins or staff always remain.
    acting_roles = models.JSONField(default=default_acting_roles)
    # IANA zone of the on-call list's hours.
    time_zone = models.CharField(max_length=64, default="UTC")
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "alert_organisation_settings"

    def __str__(self) -> str:
        return f"{self.organisation_id}: {self.care_setting}"


class OnCall(models.Model):
    """One login on the organisation's on-call list, and their hours: who an urgent alert with
    no care team to tell goes to (a session with no person yet), and a rung of every alert's
    ladder. The organisation's contact comes last, after them (dashboard/alerting/ladder.py)."""

    organisation = models.ForeignKey(
        "memory.Organisation", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # Local times in the organisation's on-call zone; both null: at any hour. An end before
    # the start runs past midnight (a night shift, 20:00-08:00).
    hours_start = models.TimeField(null=True, blank=True)
    hours_end = models.TimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "alert_on_call"
        constraints = [
            # One entry per login and organisation; also "the organisation's on-call list".
            models.UniqueConstraint(fields=["organisation", "user"], name="uniq_on_call_org_user"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} on call for {self.organisation_id}"


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
    """One alert e-mail to one recipient at one rung of the ladder (dashboard/alerting/ladder.py:
    0 the team, then its admins, the organisation's on-call list, its contact), or a reminder
    to whoever claimed it."""

    class Purpose(models.TextChoices):
        ALERT = "alert"
        REMINDER = "reminder"  # "you have it, and it is not resolved yet"

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
    purpose = models.CharField(max_length=8, choices=Purpose.choices, default=Purpose.ALERT)
    # "<alert>:<level>:<user id or contact>" (a reminder: "<alert>:remind:<claim time>"): one
    # notice each, however often the job runs.
    dedupe_key = models.CharField(max_length=100, unique=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.HELD)
    attempts = models.PositiveSmallIntegerField(default=0)
    due_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)
    opened_at = models.DateTimeField(null=True, blank=True)
    # When its recipient first claimed the alert through the e-mail's link.
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
        CLAIMED = "claimed", "is dealing with it"
        TOOK_OVER = "took_over", "took it over"
        REMINDED = "reminded", "reminded"
        RESOLVED = "resolved", "resolved it"
        ESCALATED = "escalated", "escalated"
        NOTE = "note", "added a handover note"
        ATTACHED = "attached", "said who it was about"
        # Steps of alerts acted on before claims and outcomes (shown as they happened).
        LOOKING_INTO = "looking_into", "is looking into it"
        ACKNOWLEDGED = "acknowledged", "acknowledged"
        REOPENED = "reopened", "reopened"

    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="steps")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    at = models.DateTimeField(default=timezone.now)
    # Who it went to (sent, held, reminded) or who acted (opened, claimed, resolved, note).
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Their name (full name, else the login), kept when the login is deleted; for an
    # escalation, whom it went to ("the team's admins: Ann Lee, Raj Patel"). Never the person.
    who = models.CharField(max_length=300, blank=True, default="")
    level = models.PositiveSmallIntegerField(default=0)
    # "email" or "dashboard" for a claim or a resolution; blank otherwise.
    via = models.CharField(max_length=16, blank=True, default="")
    # A handover note ("called her daughter, she is fine"): about the person, so encrypted.
    note = EncryptedTextField(blank=True, default="")
    # A handover note is for the care staff and team admins unless its writer marks it for the
    # family too (dashboard/notes/services.py: every read of notes goes through that rule).
    for_family = models.BooleanField(default=False)

    class Meta:
        db_table = "alert_steps"
        indexes = [
            # An alert's timeline, in order.
            models.Index(fields=["alert", "at"], name="idx_alert_steps_alert_at"),
        ]

    def __str__(self) -> str:
        return f"{self.alert_id} {self.kind}"


class AlertEscalation(models.Model):
    """Where an urgent alert's ladder stands: the rung reached and when its next step is due."""

    alert = models.OneToOneField(Alert, on_delete=models.CASCADE, related_name="escalation")
    level = models.PositiveSmallIntegerField(default=0)
    # Null once resolved. While open: the next escalation; while claimed: the reminder to the
    # claimer (CLARA_CLAIM_TIMEOUT_MINUTES after the claim), then the next escalation.
    next_at = models.DateTimeField(null=True, blank=True)
    # When the present claim's reminder went (null: not yet; a new claim clears it).
    reminded_at = models.DateTimeField(null=True, blank=True)

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
