"""Messages that need a human: a small deterministic detector.

It errs towards raising the flag: a caregiver glancing at a false alarm costs little, a missed
fall costs a great deal. It never blocks anything; the bot decides what to do with the flag and
an escalation stored with the exchange becomes a caregiver alert.
"""

import re
from dataclasses import dataclass

from memory.conversations.models import Emotion

# Checked in this order; the first reason that matches is reported.
_REASONS: list[tuple[str, list[str]]] = [
    (
        "self_harm",
        [
            r"\b(?:kill|hurt|harm) myself\b",
            r"\bend it all\b",
            r"\b(?:want|wish) (?:to|i could) die\b",
            r"\bdon'?t want to (?:live|be here) any ?more\b",
            r"\bbetter off dead\b",
            r"\bno point (?:in )?living\b",
        ],
    ),
    (
        "fall",
        [
            r"\bi(?:'ve| have)? fallen\b",
            r"\bi fell\b",
            r"\bon the floor\b",
            r"\bcan'?t get up\b",
            r"\bslipped\b",
            r"\btripped\b",
        ],
    ),
    (
        "pain",
        [
            r"\bchest (?:pain|hurts)\b",
            r"\bcan'?t breathe\b",
            r"\bbleeding\b",
            r"\b(?:in|so much) pain\b",
            r"\b(?:it|my \w+) hurts\b",
            r"\bhurts? (?:so|a lot|badly)\b",
            r"\bdizzy\b",
            r"\bfainted?\b",
        ],
    ),
    (
        "wants_to_leave",
        [
            r"\b(?:going|want to go|have to go|need to go|get) out(?:side)?\b",
            r"\bleav(?:e|ing) (?:now|here|this place)\b",
            r"\bi'?m leaving\b",
            r"\bget out of here\b",
            r"\bwalk(?:ing)? out\b",
            r"\bwhere(?:'s| is) the (?:door|exit)\b",
        ],
    ),
    (
        "asks_for_help",
        [
            r"^\s*help\b",
            r"\bhelp(?: me)?!",
            r"\bplease help\b",
            r"\bhelp me,? please\b",
            r"\b(?:someone|somebody) help\b",
            r"\bi need help\b",
            r"\bcall (?:an ambulance|the police|someone|a doctor|the nurse|for help)\b",
            r"\bsomeone (?:is|'s) (?:in|here|trying)\b",
        ],
    ),
]
# Each reason's patterns as one alternation: the same answer as trying them one by one, in a
# third of the time (a turn checks the person's last few messages).
_COMPILED = [
    (reason, re.compile("|".join(f"(?:{pattern})" for pattern in patterns)))
    for reason, patterns in _REASONS
]

# Fear this strong needs a person even without one of the phrases above.
SEVERE_DISTRESS = 0.9


@dataclass(frozen=True)
class Escalation:
    escalate: bool
    reason: str | None = None


def detect(message: str, *, emotion: str | None = None, distress: float = 0.0) -> Escalation:
    """Whether this message needs a human, and why (a short code for caregivers and the bot)."""
    text = message.replace("\u2019", "'").lower()
    for reason, pattern in _COMPILED:
        if pattern.search(text):
            return Escalation(True, reason)
    if emotion == Emotion.FEARFUL and distress >= SEVERE_DISTRESS:
        return Escalation(True, "severe_distress")
    return Escalation(False, None)
