"""Messages that need a human: the one question every caller asks (`detect`).

The recogniser itself is memory/conversations/urgency/: explicit phrases in fourteen languages
and, beside them, readers by meaning fitted on thousands of written examples of each reason and
of calm messages that share their words. Its verdict reads the message alone, so the same words always get the same
answer. It never blocks anything: the bot decides what to do with the flag, and an escalation
stored with the exchange becomes a caregiver alert.

Two more things raise the flag, both the bot's own judgement: its `escalation: true` on an
exchange (services), and its own emotion reading of severe fear (`emotion`/`distress` here,
passed only when the bot sent them: the built-in reader's level depends on the session's
history, and a verdict must not).
"""

from dataclasses import dataclass

from memory.conversations.models import Emotion
from memory.conversations.urgency import Verdict, reasons, recognise

# Fear this strong, in the bot's own reading, needs a person even without words that say so.
SEVERE_DISTRESS = 0.9
# The reason recorded when only the bot's flag raised the escalation.
FLAGGED_BY_COMPANION = "flagged_by_companion"


@dataclass(frozen=True)
class Escalation:
    escalate: bool
    reason: str | None = None
    verdict: Verdict | None = None

    def explanation(self) -> dict:
        """What decided it, with no word of the person's (stored with the alert)."""
        if self.verdict is not None and self.verdict.urgent:
            return self.verdict.explanation()
        if self.escalate:
            return {"reason": self.reason, "source": "companion"}
        return {}


def detect(
    message: str,
    *,
    emotion: str | None = None,
    distress: float = 0.0,
    flagged: bool = False,
) -> Escalation:
    """Whether this message needs a human, and why (a short code for caregivers and the bot).

    `emotion` and `distress` are the bot's own reading of the message, if it sent one;
    `flagged` its own `escalation: true`, which wins whatever the recogniser says."""
    verdict = recognise(message)
    if verdict.urgent:
        return Escalation(True, verdict.reason, verdict)
    if emotion == Emotion.FEARFUL and distress >= SEVERE_DISTRESS:
        return Escalation(True, reasons.SEVERE_DISTRESS, verdict)
    if flagged:
        return Escalation(True, FLAGGED_BY_COMPANION, verdict)
    return Escalation(False, None, verdict)
