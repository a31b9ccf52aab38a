from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"

    def ready(self) -> None:
        # Connects the user_logged_in receiver that starts a login's lifetime (before any
        # request has loaded the middleware: a login may come first, as in tests).
        from dashboard import sessions  # noqa: F401
