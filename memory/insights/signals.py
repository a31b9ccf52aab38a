"""What insights announce, for the parts above them (delivery, the dashboard) to act on.

Insights never call up: an alert raised here is announced, and whoever tells people about it
(dashboard/alerting) subscribes. Sent inside the raising transaction; a subscriber queues its job
with `delay_on_commit`, so an alert rolled back with its exchange is never delivered.
"""

from dataclasses import dataclass

from django.dispatch import Signal


@dataclass(frozen=True)
class AlertRaised:
    """A new alert row was written (once per dedupe key)."""

    alert_id: int
    kind: str


# Sent with `event=AlertRaised(...)`.
alert_raised = Signal()
