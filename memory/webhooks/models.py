"""An organisation's webhooks and every delivery made to them.

A delivery row is written once per (webhook, event, alert step), before anything is sent: its id
is the delivery id the receiver sees on every attempt (at-least-once, deduplicated by the
receiver on that id). Bodies carry codes and ids only, never what the person said.
"""

import uuid

from django.db import models
from django.utils import timezone

from memory.conversations.models import Organisation
from memory.core.fields import EncryptedTextField


class WebhookEvent(models.TextChoices):
    ALERT_RAISED = "alert.raised"
    ALERT_ESCALATED = "alert.escalated"
    ALERT_ACKNOWLEDGED = "alert.acknowledged"


class Webhook(models.Model):
    """A URL of the organisation's own systems (nurse call, SMS gateway) told about alerts."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Indexed by idx_webhooks_org, which leads with it.
    organisation = models.ForeignKey(
        Organisation, on_delete=models.CASCADE, related_name="webhooks", db_index=False
    )
    url = models.URLField(max_length=500)
    # Values of WebhookEvent.
    events = models.JSONField(default=list)
    # Encrypted at rest; needed in the clear to sign each delivery. Shown once, at creation or
    # rotation. Standard Webhooks' form: `whsec_` + standard base64 of the key bytes
    # (memory/webhooks/signing.py).
    secret = EncryptedTextField()
    # The secret a rotation replaced: it still signs deliveries (a second `v1,` signature) until
    # previous_secret_expires_at, so the receiver can move to the new one without a gap.
    previous_secret = EncryptedTextField(null=True, blank=True)
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "webhooks"
        indexes = [
            # "The organisation's webhooks" (the API's list, and each event's fan-out).
            models.Index(fields=["organisation", "created_at"], name="idx_webhooks_org"),
        ]

    def __str__(self) -> str:
        return self.url

    def previous_secret_at(self, now) -> str | None:
        """The rotated-out secret if it still signs at `now`."""
        if (
            self.previous_secret
            and self.previous_secret_expires_at
            and (now < self.previous_secret_expires_at)
        ):
            return self.previous_secret
        return None


class WebhookDelivery(models.Model):
    """One event for one webhook: tried until delivered, or failed after the retry window."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DELIVERED = "delivered"
        FAILED = "failed"

    # The delivery id sent with every attempt (webhook-id; X-Clara-Delivery while it is sent).
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=32, choices=WebhookEvent.choices)
    # Unique: emitting the same event twice (a retried job) makes no second delivery.
    dedupe_key = models.CharField(max_length=200, unique=True)
    # Codes and ids only (alert id, person id, kind, reason code, level), never message text.
    payload = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    # The receiver's last HTTP status (null: no answer), and a short reason (never a body).
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        db_table = "webhook_deliveries"
        indexes = [
            # The sweep of pending deliveries whose next attempt is due.
            models.Index(fields=["status", "next_attempt_at"], name="idx_webhook_due"),
        ]

    def __str__(self) -> str:
        return f"{self.event} → {self.webhook_id} ({self.status})"
