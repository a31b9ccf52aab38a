"""Alert delivery jobs (`dashboard.tasks.<name>`, gathered by dashboard/tasks.py)."""

from celery import shared_task

from dashboard.alerting import digest, ladder
from memory.core.jobs import PER_TURN_JOB, RETRY_ON_DATABASE_ERRORS


@shared_task(name="dashboard.tasks.deliver_alert", **PER_TURN_JOB)
def deliver_alert(alert_id: int) -> int:
    """Route and send a new alert (webhooks, e-mails); returns how many e-mails left now."""
    return len(ladder.alert_deliver(alert_id=alert_id))


@shared_task(name="dashboard.tasks.sweep_alerts", **RETRY_ON_DATABASE_ERRORS)
def sweep_alerts() -> dict:
    """The ladder's steps that are due (escalations, reminders of claims); held e-mails whose
    hour came."""
    return ladder.alerts_sweep()


@shared_task(name="dashboard.tasks.send_weekly_digests", **RETRY_ON_DATABASE_ERRORS)
def send_weekly_digests() -> int:
    """Hourly: the weekly digest to each opted-in member whose local Sunday evening it is."""
    return digest.digests_send()
