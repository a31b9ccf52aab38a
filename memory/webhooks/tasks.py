"""Webhook delivery jobs (`memory.tasks.<name>`, gathered by memory/tasks.py)."""

import uuid
from datetime import timedelta

from celery import shared_task
from django.utils import timezone

from memory.core.errors import NotFound
from memory.core.jobs import RETRY_ON_DATABASE_ERRORS
from memory.webhooks import services
from memory.webhooks.models import WebhookDelivery


@shared_task(name="memory.tasks.deliver_webhook", bind=True, **RETRY_ON_DATABASE_ERRORS)
def deliver_webhook(self, delivery_id: str) -> str:
    """Try a delivery once; on failure, queue the next try at its backoff (the sweep backs it up)."""
    try:
        delivery = services.delivery_attempt(delivery_id=uuid.UUID(delivery_id))
    except NotFound:
        return "gone"
    if delivery.status == WebhookDelivery.Status.PENDING and delivery.next_attempt_at:
        countdown = max((delivery.next_attempt_at - timezone.now()).total_seconds(), 0)
        deliver_webhook.apply_async((delivery_id,), countdown=countdown)
    return delivery.status


@shared_task(name="memory.tasks.retry_due_webhooks", **RETRY_ON_DATABASE_ERRORS)
def retry_due_webhooks() -> int:
    """Queue every pending delivery whose next try is overdue by a minute (a lost job)."""
    due = services.deliveries_due(now=timezone.now() - timedelta(minutes=1))
    for delivery_id in due:
        deliver_webhook.delay(str(delivery_id))
    return len(due)
