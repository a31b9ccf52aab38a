from enum import Enum


class WebhookEvent(str, Enum):
    ALERT_ACKNOWLEDGED = "alert.acknowledged"
    ALERT_ESCALATED = "alert.escalated"
    ALERT_RAISED = "alert.raised"

    def __str__(self) -> str:
        return str(self.value)
