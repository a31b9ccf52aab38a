"""What alert delivery does when insights announce an alert (connected in DashboardConfig.ready)."""

from dashboard.alerting import tasks
from memory.insights.signals import AlertRaised


def on_alert_raised(sender, event: AlertRaised, **kwargs) -> None:
    """Deliver after the raising transaction commits: a rolled-back alert tells nobody."""
    tasks.deliver_alert.delay_on_commit(event.alert_id)
