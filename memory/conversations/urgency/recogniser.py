"""The verdict on one message: does it need a person now, why, in which language, and what
decided it.

Two parts:

1. Meaning (heads.py): a reader fitted on thousands of written examples gives the probability
   that the message is urgent and its likeliest reason. English is read in the repeat check's
   MiniLM space, every other language in multilingual-e5's; an English-looking line the
   identifier is unsure of is read in both. A long message (rambling, where the urgent words
   come at the end of talk about something else) is read whole and clause by clause, and its
   most urgent part counts. Explained by the example of that reason nearest the message.
2. An explicit phrase of any language (phrases.py): precise wording, explained by the rule and
   the words it matched. It stands unless the meaning is plainly calm (below PHRASE_VETO: "I was
   tickled to death", "tombee des nues", a fall sixty years ago); a phrase set at a distance
   (phrases.PhraseHit.distanced) stands only when the meaning says urgent too.

The verdict reads the text alone (no history, no emotion reading), so the same message always
gets the same verdict; it is kept per process (`VERDICT_CACHE`), so the exchange write that
follows a turn's /context pays nothing more for the message /context read.

`THRESHOLD` per space and reason and `PHRASE_VETO` were chosen on the tuning half of the evaluation set
(bench/urgent_eval.py --fit) and are reported on the other half.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

import numpy as np

from memory.conversations.urgency import examples, heads, language, phrases, reasons
from memory.conversations.urgency.text import clauses, normalise

PHRASE = "phrase"
MEANING = "meaning"

# Per space and reason: the probability of urgent a message (or one of its clauses) must reach
# when that reason is its likeliest. Reasons differ in how much calm talk resembles them ("I need
# to go home" and wanting to leave; "I fell asleep" and a fall).
THRESHOLD = {
    examples.ENGLISH_SPACE: {
        reasons.FALL: 0.55,
        reasons.PAIN: 0.35,
        reasons.SELF_HARM: 0.575,
        reasons.WANTS_TO_LEAVE: 0.7,
        reasons.ASKS_FOR_HELP: 0.575,
        reasons.SEVERE_DISTRESS: 0.7,
        reasons.DANGER_AT_HOME: 0.675,
    },
    examples.MULTILINGUAL_SPACE: {
        reasons.FALL: 0.325,
        reasons.PAIN: 0.575,
        reasons.SELF_HARM: 0.3,
        reasons.WANTS_TO_LEAVE: 0.575,
        reasons.ASKS_FOR_HELP: 0.75,
        reasons.SEVERE_DISTRESS: 0.375,
        reasons.DANGER_AT_HOME: 0.475,
    },
}
# An explicit phrase stands unless the meaning's probability of urgent is below this.
PHRASE_VETO = 0.2
# Characters about an explicit phrase read again when a long message reads calm as a whole.
PHRASE_WINDOW = 160
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
    score: float | None = None  # the meaning's probability that the message is urgent

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


@dataclass(frozen=True)
class Meaning:
    """The most urgent reading of a message (whole or one clause) in one space."""

    reading: heads.Reading
    vector: np.ndarray = field(repr=False)  # of the text that was read

    @property
    def urgent(self) -> bool:
        return self.reading.urgent >= self.threshold

    @property
    def threshold(self) -> float:
        return THRESHOLD[self.reading.space][self.reading.reason]


def _vectors(space: str, texts: list[str], message: str) -> np.ndarray:
    if space == examples.ENGLISH_SPACE:
        # The whole message's vector is the repeat check's, computed by the turn anyway.
        whole = examples.minilm_vector(message)[None, :]
        rest = texts[1:]
        return np.vstack([whole, examples.embed_minilm(rest)]) if rest else whole
    return examples.embed_e5(texts)


def meaning_in(message: str, spaces: list[str]) -> list[Meaning]:
    """The most urgent reading of `message` in each of `spaces`: the whole message, and each
    clause of a long one."""
    texts = [message, *clauses(message)]
    found = []
    for space in spaces:
        vectors = _vectors(space, texts, message)
        meanings = [
            Meaning(reading=reading, vector=vector)
            for reading, vector in zip(heads.read(space, vectors), vectors, strict=True)
        ]
        # The clearest over its own reason's bar: a clause read as a fall (bar 0.5) at 0.6
        # counts, though the whole reads as wanting to leave at 0.8 (bar 0.85).
        found.append(max(meanings, key=lambda m: m.reading.urgent - m.threshold))
    return found


def _most_urgent(found: list[Meaning]) -> Meaning | None:
    """The reading that says urgent, the clearest (its probability over its threshold)."""
    passing = [meaning for meaning in found if meaning.urgent]
    return max(
        passing,
        key=lambda m: m.reading.urgent - m.threshold,
        default=None,
    )


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
    found = meaning_in(message, spaces_for(said, text))
    urgent = _most_urgent(found)
    hit = _phrase(text, said)
    if hit is not None:
        probability = max(meaning.reading.urgent for meaning in found)
        if probability < PHRASE_VETO and len(text) > PHRASE_WINDOW:
            # In a long message the whole may read calm around a phrase that is not: read the
            # words about the phrase too.
            around = text[max(hit.start - PHRASE_WINDOW // 2, 0) : hit.end + PHRASE_WINDOW // 2]
            near = meaning_in(around, spaces_for(said, around))
            probability = max([probability, *(m.reading.urgent for m in near)])
        stands = urgent is not None if hit.distanced else probability >= PHRASE_VETO
        if stands:
            return Verdict(
                True,
                reason=hit.reason,
                language=hit.language,
                source=PHRASE,
                rule=hit.rule,
                words=text[hit.start : hit.end].strip(),
                score=round(probability, 4),
            )
    if urgent is not None:
        reading = urgent.reading
        example = examples.nearest(reading.space, urgent.vector, reading.reason)
        return Verdict(
            True,
            reason=reading.reason,
            language=said.code,
            source=MEANING,
            example=example.text if example else None,
            score=reading.urgent,
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
