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
    """Something a caregiver should look at; written once per dedupe key (the outbox)."""

    class Kind(models.TextChoices):
        ESCALATION = "escalation"
        DISTRESS_ABOVE_BASELINE = "distress_above_baseline"
        CHRONIC_REPETITION = "chronic_repetition"

    class Status(models.TextChoices):
        OPEN = "open"
        LOOKING_INTO = "looking_into"
        ACKNOWLEDGED = "acknowledged"

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
    acted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    acted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "alerts"
        indexes = [
            # Caregiver inbox: open alerts, newest first.
            models.Index(fields=["status", "-created_at"], name="idx_alerts_status_created"),
            # A person's alerts, newest first (person page).
            models.Index(fields=["person", "-created_at"], name="idx_alerts_person_created"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} ({self.status})"
