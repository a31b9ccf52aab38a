from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"

    def ready(self) -> None:
        # Connects the user_logged_in receiver that starts a login's lifetime (before any
        # request has loaded the middleware: a login may come first, as in tests).
        from dashboard import sessions  # noqa: F401

        # Alerts raised in insights are delivered from here (dashboard/alerting/delivery.py).
        from dashboard.alerting import receivers
        from memory.insights import signals

        signals.alert_raised.connect(
            receivers.on_alert_raised, dispatch_uid="alerting.alert_raised"
        )

        # A person moved between units: the care teams units give follow them (dashboard/units.py).
        from dashboard.units import services as units
        from memory.conversations import signals as conversation_signals

        conversation_signals.person_moved.connect(
            units.on_person_moved, dispatch_uid="units.person_moved"
        )
