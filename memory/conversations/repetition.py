"""Repeated-question detection: fingerprints, Jaccard similarity and question types.

Pure functions, no database: the services feed them the session's stored fingerprints.

`fingerprint()` gives the content words. What the database stores is `stored_fingerprint()`:
each word as a keyed-hash token (memory/core/crypto.py) under the person's own key (`scope_of`:
the person's, or an anonymous session's), sorted, so the words are not readable in the database,
one person's equal word sets are still equal strings, Jaccard on the tokens equals Jaccard on
the words, and two people's equal words differ. Stored fingerprints are compared with
`count_repeats_stored`.
"""

import re
from collections.abc import Callable, Iterable, Sequence

from memory.conversations.models import QuestionType
from memory.core import crypto
from memory.core.fields import FingerprintTokens

SIMILARITY_THRESHOLD = 0.6
# From this many repeats in a session the talk is circular: the session is flagged chronic for
# caregivers, and the prompt keeps answers short and warm.
CHRONIC_AT = 5

# Articles, pronouns, prepositions, auxiliaries and the common verbs of confused questions
# ("I don't know where I am" has no content word left, and falls through to its question type).
STOPWORDS = frozenset(
    """
    a an the and or but if so of to in on at by for with from into onto over under about up down
    out off as than then there here this that these those it its i me my mine myself you your yours
    he him his she her hers we us our ours they them their what whats which who whom whose where
    when why how am is are was were be been being do does did doing done dont doesnt didnt have has
    had having can cant could will wont would shall should may might must im ive id ill youre isnt
    arent wasnt werent not no yes just now please know tell go going get got any some all very
    really again still oh well okay ok hi hello dear wheres whos whens hows whys thats theres
    heres lets youve weve theyre shes hes its whatre
    """.split()
)

_PUNCTUATION = re.compile(r"[^\w\s]")
_WHITESPACE = re.compile(r"\s+")

_RELATIONS = (
    r"husband|wife|mum|mom|mother|mummy|dad|father|daddy|son|daughter|brother|sister|"
    r"grandson|granddaughter|grandchildren|grandkids|children|kids|family|nurse|carer|"
    r"caregiver|friend|dog|cat"
)

# Order matters: the first type whose patterns match wins ("where is this" is a place, not a person).
_TYPE_PATTERNS: list[tuple[str, list[str]]] = [
    (
        QuestionType.IDENTITY,
        [
            r"\bwho am i\b",
            r"\bwho are you\b",
            r"\bwhat(?:'s| is) my name\b",
            r"\bare you my\b",
            r"\bdon'?t know who\b",
            r"\bwho is this\b",
        ],
    ),
    (
        QuestionType.LOCATION,
        [
            r"\bwhere am i\b",
            r"\bwhat is this place\b",
            r"\bwhere is this\b",
            r"\bwhere are we\b",
            r"\bwhere i am\b",
            r"\bdon'?t recogni[sz]e\b",
            r"\bwhat place\b",
            r"\blost\b",
            r"\bwhere is here\b",
            r"\bthis place\b",
        ],
    ),
    (
        QuestionType.PERSON,
        [
            rf"\bwhere(?:'s| is| are) (?:my )?(?:{_RELATIONS})\b",
            rf"\bhave you seen (?:my )?(?:{_RELATIONS})\b",
            rf"\bwhen is (?:my )?(?:{_RELATIONS})\b.*\bcoming\b",
            rf"\bi miss (?:my )?(?:{_RELATIONS})\b",
            r"\bwhen is \w+ coming\b",
        ],
    ),
    (
        QuestionType.TIME,
        [
            r"\bwhat day\b",
            r"\bwhat time\b",
            r"\bwhat year\b",
            r"\bwhen is\b",
            r"\bhow long\b",
            r"\bwhat month\b",
            r"\bis it (?:morning|night|evening|afternoon)\b",
        ],
    ),
    (
        QuestionType.ACTIVITY,
        [
            r"\bwhat do i do\b",
            r"\bwhat should i do\b",
            r"\bwhat(?:'s| is) happening\b",
            r"\bwhat happens now\b",
            r"\bwhat am i (?:supposed|meant) to do\b",
        ],
    ),
]
# Each type's patterns as one alternation (the same answer as trying them one by one).
_COMPILED = [
    (qtype, re.compile("|".join(f"(?:{pattern})" for pattern in patterns)))
    for qtype, patterns in _TYPE_PATTERNS
]

# Names are capitalised in what the person wrote: "Where is Tom?", "I miss Ann".
_NAMED_PERSON = re.compile(r"\b(?:[Ww]here(?:'s| is)|[Hh]ave you seen|I miss)\s+(?!I\b)[A-Z][a-z]+")


def normalise(message: str) -> str:
    """Lower-case, straight apostrophes, single spaces."""
    text = message.replace("\u2019", "'").replace("\u2018", "'").lower()
    return _WHITESPACE.sub(" ", text).strip()


def fingerprint(message: str) -> str:
    """Content words of the message, punctuation and stopwords removed, sorted, space-joined."""
    text = _PUNCTUATION.sub("", normalise(message))
    words = {word for word in text.split() if word not in STOPWORDS}
    return " ".join(sorted(words))


def jaccard(left: str, right: str) -> float:
    """Similarity of two fingerprints' word sets; 0 when either is empty (nothing to compare)."""
    a, b = set(left.split()), set(right.split())
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def question_type(message: str) -> str:
    """The coarse kind of question, by keyword pattern; `general` when nothing specific matches."""
    text = normalise(message)
    # Case is kept for spotting names; only the phone's curly apostrophes are straightened.
    cased = message.replace("\u2019", "'").replace("\u2018", "'")
    named_person = _NAMED_PERSON.search(cased) is not None
    for qtype, pattern in _COMPILED:
        if pattern.search(text):
            if qtype == QuestionType.LOCATION and named_person:
                return QuestionType.PERSON
            return qtype
    if named_person:
        return QuestionType.PERSON
    return QuestionType.GENERAL


def is_repeat_of(
    *, fingerprint_: str, question_type_: str, earlier_fingerprint: str, earlier_type: str
) -> bool:
    """Whether one message repeats an earlier one.

    Similar wording (Jaccard above the threshold) is a repeat. So is the same *specific* question
    type: "Where am I?" and "What is this place?" share no words but ask the same thing. Two
    `general` messages are not repeats by type alone, or every chat line would be one.
    """
    if jaccard(fingerprint_, earlier_fingerprint) > SIMILARITY_THRESHOLD:
        return True
    return question_type_ != QuestionType.GENERAL and question_type_ == earlier_type


def matcher(variants: Sequence[str], question_type_: str) -> Callable[[str, str], bool]:
    """`is_repeat_of` of one message against earlier rows, as a function of an earlier row's
    (stored fingerprint, question type): true when any of `variants` (the message's
    `stored_variants`) matches. The message's word sets are split once, not for every row (a
    turn checks every earlier row of its session)."""
    word_sets = [words for words in (set(variant.split()) for variant in variants) if words]
    specific = question_type_ != QuestionType.GENERAL

    def repeats(earlier_fingerprint: str, earlier_type: str) -> bool:
        if specific and earlier_type == question_type_:
            return True
        if not word_sets or not earlier_fingerprint:
            return False  # Jaccard with an empty side is 0
        earlier = set(earlier_fingerprint.split())
        return any(
            len(words & earlier) / len(words | earlier) > SIMILARITY_THRESHOLD
            for words in word_sets
        )

    return repeats


def count_repeats(
    *, fingerprint_: str, question_type_: str, earlier: Iterable[tuple[str, str]]
) -> int:
    """How many of the earlier (fingerprint, question type) pairs this message repeats."""
    return sum(
        1
        for earlier_fp, earlier_type in earlier
        if is_repeat_of(
            fingerprint_=fingerprint_,
            question_type_=question_type_,
            earlier_fingerprint=earlier_fp,
            earlier_type=earlier_type,
        )
    )


def scope_of(*, person_id, session_id) -> str:
    """Whose key a message's fingerprint is made with: its person's, else its session's (an
    anonymous session; linking it to a person re-keys its rows, services.session_resolve)."""
    return crypto.fingerprint_scope(person_id=person_id, session_id=session_id)


def stored_fingerprint(message: str, *, scope: str) -> FingerprintTokens:
    """The fingerprint of `message` as the database stores it (keyed tokens under `scope`'s
    key, made from the primary key): also what a `fingerprint=` lookup takes."""
    return FingerprintTokens(crypto.fingerprint_tokens(fingerprint(message), scope=scope))


def stored_variants(fingerprint_: str, *, scope: str) -> list[str]:
    """A (word) fingerprint as stored for `scope` under each configured key, the primary key's
    first."""
    if not fingerprint_:
        return [""]
    return crypto.fingerprint_variants(fingerprint_, scope=scope)


def count_repeats_stored(
    *, variants: Sequence[str], question_type_: str, earlier: Iterable[tuple[str, str]]
) -> int:
    """`count_repeats` against stored fingerprints, given this message's `stored_variants`.

    Tokens made under different keys never match, so the best Jaccard over the variants is the
    Jaccard under the key the earlier row was written with: the same answer as on the words.
    """
    if len(variants) == 1:
        return count_repeats(
            fingerprint_=variants[0], question_type_=question_type_, earlier=earlier
        )
    return sum(
        1
        for earlier_fp, earlier_type in earlier
        if any(
            is_repeat_of(
                fingerprint_=variant,
                question_type_=question_type_,
                earlier_fingerprint=earlier_fp,
                earlier_type=earlier_type,
            )
            for variant in variants
        )
    )
