"""Urgent moments: does a message of the person's need someone now, and why.

`recognise(message)` gives a `Verdict`: urgent or not, the reason (reasons.ORDER), the language
the person used, and what decided it (an explicit phrase, or the nearest example by meaning).
Read recogniser.py for how, phrases.py and examples.py for the two parts, language.py for the
language. The exchange write, the turn's context and the summaries all ask through
memory/conversations/escalation.py.
"""

from memory.conversations.urgency.recogniser import (
    Verdict,
    clear_caches,
    recognise,
    said_in_phrases,
)

__all__ = ["Verdict", "clear_caches", "recognise", "said_in_phrases"]
