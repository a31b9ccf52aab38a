"""What the background jobs compute for caregivers: summaries, trends and alerts."""

from django.conf import settings
from django.db import models

from memory.conversations.models import DEFAULT_PERSONA, Person, Session
from memory.core.fields import EncryptedJSONField, EncryptedTextField


class RollingSummary(models.Model):
    """A short running account of the person's latest conversation, overwritten every 4 turns."""

    # Indexed by the unique constraint below, which leads with it.
    person = models.ForeignKey(
        Person, on_delete=models.CASCADE, related_name="rolling_summaries", db_index=False
    )
    persona = models.CharField(max_length=32, default=DEFAULT_PERSONA)
    text = EncryptedTextField(max_length=600)
    # The person's total message count (all sessions) when this text was written.
    messages_covered = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "rolling_summaries"
        constraints = [
            # One running summary per person and persona; also the lookup of each update.
            models.UniqueConstraint(
                fields=["person", "persona"], name="uniq_rolling_person_persona"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.person_id} ({self.persona})"


class SummarySpine(models.Model):
    """A versioned long-term outline of the person (profile, people, open loops); new every 20+ messages."""

    # Indexed by the unique constraint below, which leads with it.
    person = models.ForeignKey(
        Person, on_delete=models.CASCADE, related_name="summary_spines", db_index=False
    )
    persona = models.CharField(max_length=32, default=DEFAULT_PERSONA)
    version = models.PositiveIntegerField()
    content = EncryptedJSONField(default=dict)
    # The person's total message count (all sessions) this version covers.
    message_count = models.PositiveIntegerField()
    created_at = models.DateTimeField()

    class Meta:
        db_table = "summary_spines"
        constraints = [
            # Versions count up per person and persona; the latest is the highest (ORDER BY DESC).
            models.UniqueConstraint(
                fields=["person", "persona", "version"], name="uniq_spine_person_persona_version"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.person_id} ({self.persona}) v{self.version}"


class PersonTrend(models.Model):
    """A person's emotional trends as of one day (their own time zone): for caregivers only."""

    # Indexed by the unique constraint below, which leads with it.
    person = models.ForeignKey(
        Person, on_delete=models.CASCADE, related_name="trends", db_index=False
    )
    day = models.DateField()
    data = models.JSONField(default=dict)
    computed_at = models.DateTimeField()

    class Meta:
        db_table = "person_trends"
        constraints = [
            # One row per person per day; also the dashboard's "latest trends of a person" read.
            models.UniqueConstraint(fields=["person", "day"], name="uniq_trend_person_day"),
        ]

    def __str__(self) -> str:
        return f"{self.person_id} {self.day}"


class Alert(models.Model):
    """Something a caregiver should look at; written once per dedupe key (the outbox).

    Its state: open (nobody has it yet) → claimed (someone allowed to act is on it: who, when)
    → resolved (who, when, and the outcome). Who may claim and resolve is the dashboard's rule
    (dashboard/alerting/rights.py); this row only records what happened.
    """

    class Kind(models.TextChoices):
        ESCALATION = "escalation"
        DISTRESS_ABOVE_BASELINE = "distress_above_baseline"
        CHRONIC_REPETITION = "chronic_repetition"

    class Status(models.TextChoices):
        OPEN = "open"
        CLAIMED = "claimed"
        RESOLVED = "resolved"

    class Outcome(models.TextChoices):
        WELL = "well", "checked and well"
        HURT_CARED_FOR = "hurt_cared_for", "hurt, care given"
        EMERGENCY = "emergency", "emergency services called"
        FALSE_ALARM = "false_alarm", "false alarm"
        OTHER = "other", "other"
        # Only for alerts resolved before outcomes were asked for (migration 0031); never offered.
        UNKNOWN = "unknown", "not recorded (resolved before outcomes were asked for)"

    # Null for an escalation in an anonymous session: the alert must not be lost for want of a person.
    # Indexed by idx_alerts_person_created, which leads with it.
    person = models.ForeignKey(
        Person,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="alerts",
        db_index=False,
    )
    session = models.ForeignKey(
        Session,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="alerts",
    )
    kind = models.CharField(max_length=32, choices=Kind.choices)
    detail = models.JSONField(default=dict, blank=True)
    # Unique, so the event that raises an alert can never raise it twice (retries, reruns).
    dedupe_key = models.CharField(max_length=200, unique=True)
    created_at = models.DateTimeField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    # Who has it now (a take-over replaces them) and since when.
    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    claimed_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, blank=True, default="")
    # Required with "other" ("her son took her to the GP"): about the person, so encrypted.
    # Null, not "", when there is none: an encrypted default can name no row for old rows.
    outcome_note = EncryptedTextField(blank=True, null=True)

    class Meta:
        db_table = "alerts"
        indexes = [
            # Caregiver inbox: open alerts, newest first.
            models.Index(fields=["status", "-created_at"], name="idx_alerts_status_created"),
            # A person's alerts, newest first (person page).
            models.Index(fields=["person", "-created_at"], name="idx_alerts_person_created"),
            # What was resolved lately (the shift's "resolved this shift"; false alarms a week).
            models.Index(fields=["person", "resolved_at"], name="idx_alerts_person_resolved"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} ({self.status})"
