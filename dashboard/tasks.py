"""The dashboard's background jobs, for Celery's autodiscovery (each lives beside its service)."""

from dashboard.alerting.tasks import deliver_alert, send_weekly_digests, sweep_alerts

__all__ = ["deliver_alert", "send_weekly_digests", "sweep_alerts"]
