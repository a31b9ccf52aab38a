"""What insights do when the conversation record announces something (connected in `MemoryConfig.ready`)."""

from django.db import transaction

from memory.conversations.escalation import FLAGGED_BY_COMPANION
from memory.conversations.signals import ExchangeStored, SessionClosed, SessionLinked
from memory.conversations.urgency import reasons
from memory.core import metrics
from memory.insights import alerts, tasks
from memory.insights.models import Alert

# The reason codes an escalation is counted under (anything else: "other").
ESCALATION_REASONS = frozenset((*reasons.ORDER, FLAGGED_BY_COMPANION))

# Messages between rolling-summary refreshes: every 4 turns.
ROLLING_SUMMARY_EVERY = 8


def on_exchange_stored(sender, event: ExchangeStored, **kwargs) -> None:
    """Raise the escalation alert in the exchange's transaction; refresh the rolling summary."""
    if event.escalated_now:
        _, created = alerts.escalation_alert_raise(
            person_id=event.person_id,
            session_id=event.session_id,
            reason=event.escalation_reason,
            explanation=event.escalation_detail,
            message_id=event.user_message_id,
            at=event.at,
        )
        if created:
            # Counted once the alert exists for good: a rolled-back exchange raised nothing.
            counter = metrics.ESCALATIONS.labels(
                metrics.bounded(event.escalation_reason, ESCALATION_REASONS)
            )
            transaction.on_commit(counter.inc)
    # Crossing a multiple, not landing on one: a lone assistant message (a check-in) shifts the
    # count by one.
    if (
        event.message_count // ROLLING_SUMMARY_EVERY
        > (event.message_count - 2) // ROLLING_SUMMARY_EVERY
    ):
        tasks.update_rolling_summary.delay_on_commit(str(event.session_id))


def on_session_closed(sender, event: SessionClosed, **kwargs) -> None:
    """The caregivers' summary reads the whole session: a job, after the close commits."""
    tasks.compute_session_summary.delay_on_commit(str(event.session_id))


def on_session_linked(sender, event: SessionLinked, **kwargs) -> None:
    """Alerts raised while the session had no person now belong to that person."""
    Alert.objects.filter(session_id=event.session_id, person__isnull=True).update(
        person_id=event.person_id
    )
