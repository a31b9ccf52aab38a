"""The one normal form every part of the recogniser reads a message in.

NFKC, case-folded, curly quotes made straight, whitespace collapsed, and Latin letters stripped
of their accents (é → e, ł → l, ß → ss): people type without accents, and speech recognisers drop
them, so "upadlam" must read as "upadłam". Only accents on Latin letters go: a Devanagari or
Gurmukhi vowel sign is a combining mark too, and the word is not the same word without it.
Patterns in the phrase lists are folded the same way before they are compiled.
"""

from __future__ import annotations

import functools
import re
import unicodedata

_QUOTES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "`": "'",
        "\u00b4": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u00ab": '"',
        "\u00bb": '"',
    }
)
# Latin letters that NFKD does not decompose into a base letter and an accent.
_LATIN_EXTRA = str.maketrans(
    {"ł": "l", "Ł": "l", "ø": "o", "Ø": "o", "ß": "ss", "æ": "ae", "œ": "oe", "đ": "d", "ı": "i"}
)
# Urdu and Shahmukhi typed on Arabic keyboards: the Arabic forms of yeh, kaf and heh read as
# the Urdu ones, and short-vowel marks (rarely typed) are dropped.
_ARABIC = str.maketrans(
    {"\u064a": "\u06cc", "\u0649": "\u06cc", "\u0643": "\u06a9", "\u0647": "\u06c1"}
    | {chr(c): None for c in range(0x064B, 0x0660)}
    | {"\u0670": None}
)
_SPACE = re.compile(r"\s+")


def _is_latin(char: str) -> bool:
    return char.isascii() or "LATIN" in unicodedata.name(char, "")


@functools.lru_cache(maxsize=4096)
def fold_accents(text: str) -> str:
    """`text` with the accents of its Latin letters removed (other scripts untouched)."""
    if text.isascii():
        return text
    text = text.translate(_LATIN_EXTRA)
    out: list[str] = []
    base_is_latin = False
    for char in unicodedata.normalize("NFD", text):
        if unicodedata.combining(char):
            if base_is_latin:
                continue
        else:
            base_is_latin = _is_latin(char)
        out.append(char)
    return unicodedata.normalize("NFC", "".join(out))


def normalise(text: str) -> str:
    """The form phrases are matched in: NFKC, case-folded, straight quotes, one space, no accents
    on Latin letters."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).translate(_ARABIC).casefold()
    return fold_accents(_SPACE.sub(" ", text).strip())


def fold_pattern(pattern: str) -> str:
    """A phrase-list pattern in the same form as `normalise`'s text (accents only: the pattern's
    escapes such as \\b or \\W must keep their case, so it is compiled case-insensitive instead)."""
    return fold_accents(
        unicodedata.normalize("NFKC", pattern).translate(_QUOTES).translate(_ARABIC)
    )


# Clause ends: sentence and clause punctuation of the scripts the recogniser reads (Latin,
# Devanagari's danda, Urdu's full stop and comma, CJK's full-width marks), and a dash set apart.
_CLAUSE_END = re.compile(
    r"[.,;:!?\u2026\u3002\uff0c\uff01\uff1f\uff1b\u3001\u0964\u06d4\u060c]+|\s+-+\s+"
)
# A message this long (in words, or characters where words are not spaced) is read clause by
# clause too: in rambling talk the urgent words are a small part of the whole.
LONG_WORDS = 20
LONG_CHARACTERS = 60


def clauses(message: str) -> list[str]:
    """The clauses of a long message (none for a short one, or one that has a single clause)."""
    spaced = len(message.split())
    if spaced < LONG_WORDS and not (spaced < 3 and len(message) >= LONG_CHARACTERS):
        return []
    pieces = [piece.strip() for piece in _CLAUSE_END.split(message)]
    pieces = [piece for piece in pieces if len(piece.split()) >= 2 or len(piece) >= 6]
    return pieces if len(pieces) >= 2 else []
