from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"

    def ready(self) -> None:
        # Alerts raised in insights are delivered from here (dashboard/alerting/delivery.py).
        from dashboard.alerting import receivers
        from memory.insights import signals

        signals.alert_raised.connect(
            receivers.on_alert_raised, dispatch_uid="alerting.alert_raised"
        )
