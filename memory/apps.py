from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Conversation memory"

    def ready(self) -> None:
        # The conversation core announces; the parts above it subscribe (memory/conversations/
        # signals.py). dispatch_uid keeps a second ready() (tests) from connecting twice.
        from django.core import checks as django_checks

        from memory import checks
        from memory.conversations import signals

        django_checks.register(checks.check_development_data, django_checks.Tags.database)
        from memory.facts import receivers as facts
        from memory.insights import receivers as insights

        signals.exchange_stored.connect(
            insights.on_exchange_stored, dispatch_uid="insights.exchange_stored"
        )
        signals.exchange_stored.connect(
            facts.on_exchange_stored, dispatch_uid="facts.exchange_stored"
        )
        signals.session_closed.connect(
            insights.on_session_closed, dispatch_uid="insights.session_closed"
        )
        signals.session_linked.connect(
            insights.on_session_linked, dispatch_uid="insights.session_linked"
        )
