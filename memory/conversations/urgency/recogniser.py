"""The verdict on one message: does it need a person now, why, in which language, and what
decided it.

Two parts, either of which can raise it:

1. An explicit phrase of any language (phrases.py): precise wording that is urgent wherever it
   appears. Explained by the rule and the words it matched.
2. Meaning (examples.py): the message is close to examples of one reason and clearly closer to
   them than to the calm examples that share their words. English is compared in the repeat
   check's MiniLM space, every other language in multilingual-e5's; an English-looking line
   the identifier is unsure of is compared in both. Explained by the nearest example.

The verdict reads the text alone (no history, no emotion reading), so the same message always
gets the same verdict; it is kept per process (`VERDICT_CACHE`), so the exchange write that
follows a turn's /context pays nothing more for the message /context read.

`FLOOR` and `MARGIN` per space were chosen on the tuning half of the evaluation set
(bench/urgent_eval.py --fit) and are reported on the other half.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from memory.conversations.urgency import examples, language, phrases
from memory.conversations.urgency.text import normalise

PHRASE = "phrase"
MEANING = "meaning"

# Per space: the closest reason's closeness must reach FLOOR, and beat the calm side by MARGIN.
FLOOR = {examples.ENGLISH_SPACE: 0.465, examples.MULTILINGUAL_SPACE: 0.3}
MARGIN = {examples.ENGLISH_SPACE: 0.025, examples.MULTILINGUAL_SPACE: -0.0075}
# A phrase in a message set at a distance (phrases.PhraseHit.distanced) stands when the meaning
# beats the calm side by MARGIN too (FLOOR aside).
# Below this confidence that a Latin-script line is English, it is compared in both spaces.
ENGLISH_SURE = 0.5
VERDICT_CACHE = 2048


@dataclass(frozen=True)
class Verdict:
    urgent: bool
    reason: str | None = None
    language: str = language.ENGLISH
    source: str | None = None  # PHRASE or MEANING when urgent
    rule: str | None = None  # the phrase's rule ("pl/fall/3")
    # The person's own words that matched (normalised). Never stored: it is recomputed from
    # the stored message for those allowed to read it (the verdict is deterministic).
    words: str | None = field(default=None, repr=False)
    example: str | None = None  # the nearest example (our text, not the person's)
    score: float | None = None  # meaning: the closeness margin over calm

    def explanation(self) -> dict:
        """What may be stored and shown with an alert: no word of the person's."""
        return {
            "reason": self.reason,
            "language": self.language,
            "source": self.source,
            "rule": self.rule,
            "example": self.example,
            "score": self.score,
        }


CALM = Verdict(False)


def closeness_in(text: str, spaces: list[str]) -> list[examples.Closeness]:
    """How close `text` is to the examples in each of `spaces` (one model pass each)."""
    found = []
    for space in spaces:
        vector = (
            examples.minilm_vector(text)
            if space == examples.ENGLISH_SPACE
            else examples.embed_e5([text])[0]
        )
        close = examples.closeness(space, vector)
        if close is not None:
            found.append(close)
    return found


def _urgent_by_meaning(near: list[examples.Closeness]) -> examples.Closeness | None:
    """The closeness that says urgent by meaning alone (FLOOR and MARGIN), the clearest."""
    passing = [
        close
        for close in near
        if close.urgent >= FLOOR[close.space] and close.margin >= MARGIN[close.space]
    ]
    return max(passing, key=lambda close: close.margin - MARGIN[close.space], default=None)


def spaces_for(said: language.Language, text: str = "") -> list[str]:
    """The meaning spaces a message is compared in: English in MiniLM's; other languages in
    e5's; a line the identifier is unsure is English (short ones often) in both, unless
    nearly all its words are common English words."""
    if said.code != language.ENGLISH:
        return [examples.MULTILINGUAL_SPACE]
    if said.confidence < ENGLISH_SURE and not _plain_english(text):
        return [examples.ENGLISH_SPACE, examples.MULTILINGUAL_SPACE]
    return [examples.ENGLISH_SPACE]


_WORDS = re.compile(r"[a-z]+")
# A word this common in pyspellchecker's English list is English, whatever else it may be.
COMMON_ENGLISH = 1000


def _plain_english(text: str) -> bool:
    from memory.conversations.wording import _english

    words = _WORDS.findall(text)
    if not words:
        return False
    english = _english()
    known = sum(1 for word in words if english.get(word, 0) >= COMMON_ENGLISH)
    return known / len(words) >= 0.8


def _phrase(text: str, said: language.Language) -> phrases.PhraseHit | None:
    """The explicit phrase in `text` (normalised), searched in the lists of its language, its
    likeliest neighbours and English."""
    return phrases.search(text, prefer=said.code, languages=said.candidates)


@functools.lru_cache(maxsize=VERDICT_CACHE)
def recognise(message: str) -> Verdict:
    """The verdict on one message of the person's (the text as the bot sent it)."""
    text = normalise(message)
    if not any(char.isalnum() for char in text):
        return CALM
    said = language.identify(message)
    hit = _phrase(text, said)
    near = None  # computed once, for a distanced phrase and for meaning alike
    if hit is not None and hit.distanced:
        near = closeness_in(message, spaces_for(said, text))
        if not any(close.margin >= MARGIN[close.space] for close in near):
            hit = None  # a fall decades ago, on the news, or over and done with
    if hit is not None:
        return Verdict(
            True,
            reason=hit.reason,
            language=hit.language,
            source=PHRASE,
            rule=hit.rule,
            words=text[hit.start : hit.end].strip(),
        )
    if near is None:
        near = closeness_in(message, spaces_for(said, text))
    best = _urgent_by_meaning(near)
    if best is not None:
        return Verdict(
            True,
            reason=best.reason,
            language=said.code,
            source=MEANING,
            example=best.example.text,
            score=round(best.margin, 4),
        )
    return Verdict(False, language=said.code)


@functools.lru_cache(maxsize=VERDICT_CACHE)
def said_in_phrases(message: str) -> bool:
    """Whether an explicit phrase of any language is in `message` (no model: for messages
    stored before their verdict was kept, which the turn reads again for its window)."""
    hit = _phrase(normalise(message), language.identify(message))
    return hit is not None and not hit.distanced


def clear_caches() -> None:
    said_in_phrases.cache_clear()
    recognise.cache_clear()
    language.identify.cache_clear()
