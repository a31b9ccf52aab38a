"""How a message is worded: the text side of the repeat detector (memory/conversations/meaning.py).

Everything here works on strings, before and beside the model: the canonical text that is
embedded (apostrophes, spelling, regional words, filler and stammer), the content words and
their negation scopes, names, and what a message asks (question or not, which wh-question,
whether it asks where something is or asks for something). No model, no numpy.
"""

from __future__ import annotations

import functools
import re
import threading

from memory.conversations import lexicon

_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)([A-Za-z]+)")
_PHRASES = re.compile(
    r"\b(" + "|".join(re.escape(p) for p in sorted(lexicon.PHRASES, key=len, reverse=True)) + r")\b"
)

# Function words, wh-words and the light verbs of everyday requests: they carry the frame of a
# message ("where is my …", "can I have …"), which the sentence vector already weighs; the word
# check looks only at what fills the frame.
FUNCTION_WORDS = (
    frozenset(
        """
    a an the and or but if so of to in on at by for with from into onto over under about up
    down out off as than then there here this that these those it its i me my mine myself you
    your yours he him his she her hers we us our ours they them their what which who whom
    whose where when why how am is are was were be been being do does did doing done have has
    had having can could will would shall should may might must just now please know tell go
    going goes went gone get got gets getting any some all very really again still oh well okay
    ok hi hello dear yet too also anyone anybody someone somebody everyone everything something
    anything thing let lets one ever even much many lot bit right way yes s t m ll ve re d
    want wanted need needed like would rather think seen see look looking come coming came
    take taking took put make made give gave say said alright sure anywhere somewhere
    feel feels feeling felt comes seem seems keep keeps wants needs taken find back soon
    later already always often sometimes maybe perhaps probably while because since until
    till though although whilst supposed meant
    """.split()
    )
    | lexicon.NEGATIONS
)


def canonical_text(message: str) -> str:
    """Lower-cased, straight quotes, apostrophes put back ("wheres" → "where's"), misspelt
    words corrected (`spelling`), regional words in their common form (lexicon.CANONICAL)."""
    text = " ".join(message.translate(_QUOTES).split())
    text = WORD.sub(_spelt_word, text).lower()
    text = _PHRASES.sub(lambda m: lexicon.PHRASES[m.group(1)], text)
    return tidy(WORD.sub(_canonical_word, text))


_FILLER = re.compile(
    r"(?:^|(?<=[,.!?;]))\s*(?:" + "|".join(lexicon.FILLERS) + r")\s*(?:[,.!?;]+|$)"
)
_SPACE_PUNCT = re.compile(r"\s+([,.!?;])")


def tidy(text: str) -> str:
    """A canonical text without its filler and stammer: clauses that are only filler ("oh
    dear,", "I don't know,", "you know,") are dropped, and a word or phrase said twice in a row
    is said once ("where, where is it" → "where is it"; "I feel, I feel funny" → "I feel
    funny"). What is left is what the message asks; a message that is all filler is kept."""
    kept = _FILLER.sub(" ", text).strip(" ,;")
    if not WORD.search(kept):
        return text
    tokens = re.findall(r"[A-Za-z']+|[^\sA-Za-z']+", kept)
    words = [(i, t) for i, t in enumerate(tokens) if WORD.fullmatch(t)]
    drop: set[int] = set()
    for n in (3, 2, 1):
        for k in range(len(words) - 2 * n + 1):
            first = [t for _, t in words[k : k + n]]
            second = [t for _, t in words[k + n : k + 2 * n]]
            if first == second and not any(i in drop for i, _ in words[k : k + 2 * n]):
                start, end = words[k][0], words[k + n][0]
                drop.update(range(start, end))
    out = " ".join(t for i, t in enumerate(tokens) if i not in drop)
    out = _SPACE_PUNCT.sub(r"\1", out).strip(" ,;")
    return out


def _spelt_word(match: re.Match) -> str:
    word = match.group(0)
    if word[:1].isupper() and word.lower() not in ("i", "im", "ive", "id", "ill"):
        return word  # a capitalised word may be a name: never "corrected"
    lower = word.lower()
    if lower in lexicon.CONTRACTIONS:
        return lexicon.CONTRACTIONS[lower]
    return spelling(lower)


_ALPHABET = "abcdefghijklmnopqrstuvwxyz"
_dictionary = None
_dictionary_lock = threading.Lock()


def _english() -> dict[str, int]:
    """English words and their frequencies, from the list pyspellchecker ships (en.json.gz in
    its wheel), read once (~0.1 s) and kept as a plain dict of lower-case ASCII words (~12 MB;
    pyspellchecker's own SpellChecker object would keep ~40 MB)."""
    global _dictionary
    if _dictionary is None:
        with _dictionary_lock:
            if _dictionary is None:
                _dictionary = _load_english()
    return _dictionary


def _load_english() -> dict[str, int]:
    import gzip
    import json
    from importlib import resources

    try:
        source = resources.files("spellchecker") / "resources" / "en.json.gz"
        with source.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as text:
            words = json.load(text)
    except FileNotFoundError:  # another layout: ask the library itself
        from spellchecker import SpellChecker

        words = SpellChecker(distance=1).word_frequency.dictionary
    return {w: int(n) for w, n in words.items() if w.isascii() and w.isalpha()}


@functools.lru_cache(maxsize=4096)
def spelling(word: str) -> str:
    """A lower-case word that is not English, corrected to a word one edit away: letters
    swapped ("hoem" → "home"), else a letter missing ("mony" → "money"), else a letter too many
    ("comming" → "coming"), else a wrong letter ("medecine" → "medicine"); among the candidates
    of the first kind that has any, the most frequent (unless it is rare beside the best of the
    later kinds). Known words (pyspellchecker's English
    list, British and American forms, colloquial words like "telly" and "budgie"),
    words under 3 letters and words with no such neighbour are left as they are."""
    if len(word) < 3 or not word.isalpha() or word in lexicon.CANONICAL:
        return word
    english = _english()
    if word in english:
        return word
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    edits = (
        [a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1],
        [a + c + b for a, b in splits for c in _ALPHABET],
        [a + b[1:] for a, b in splits if b],
        [a + c + b[1:] for a, b in splits if b for c in _ALPHABET],
    )
    tiers = [
        max(found, key=lambda c: (english[c], c))
        for found in ([c for c in candidates if c in english] for candidates in edits)
        if found
    ]
    if not tiers:
        return word
    # An earlier kind of edit wins unless its word is rare beside the best of all ("docter":
    # "doter" by a letter too many, "doctor" by a wrong letter).
    commonest = max(english[c] for c in tiers)
    return next(c for c in tiers if english[c] * 100 >= commonest)


def _canonical_word(match: re.Match) -> str:
    word = match.group(0)
    base, apostrophe, rest = word.partition("'")
    if apostrophe and rest != "t":
        return lexicon.CANONICAL.get(base, base) + apostrophe + rest
    return lexicon.CANONICAL.get(word, word)


def names_of(message: str) -> set[str]:
    """Capitalised words not at the start of a sentence: names ("Where's Tom?"), lower-cased."""
    text = message.translate(_QUOTES)
    starts = {m.start(1) for m in _SENTENCE_START.finditer(text)}
    names = set()
    for m in WORD.finditer(text):
        word = m.group(0).split("'")[0]
        if m.start() in starts or not word[:1].isupper() or word in ("I", "TV", "OK"):
            continue
        lower = word.lower()
        if lower not in lexicon.CANONICAL and not any(lower in c for c in lexicon.CLASSES.values()):
            names.add(lower)
    return names


def stem(word: str) -> str:
    """The plural and third-person -s off, so "clock" and "clocks" are one word."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def plain_word(word: str) -> str:
    """A word of the canonical text without its apostrophe: "can't" → "cant", "mum's" → "mum"."""
    base, apostrophe, rest = word.partition("'")
    if apostrophe and rest == "t":
        return base + rest
    return base


def seeking(words: list[str], i: int) -> bool:
    return any(w in lexicon.SEEKING_VERBS for w in words[i + 1 : i + 3])


NEGATION_SCOPE = 6  # a negation covers this many words after it (to the clause's end)


def negation_scopes(words: list[str]) -> list[bool]:
    """For each word, whether a negation covers it. A negation before a verb of seeking does
    not count: "I can't find my glasses" asks where they are, it does not deny them."""
    covered = [False] * len(words)
    for i, word in enumerate(words):
        if word not in lexicon.NEGATIONS:
            continue
        if seeking(words, i):
            continue
        following = words[i + 1 : i + 1 + NEGATION_SCOPE]
        for j in range(i + 1, i + 1 + len(following)):
            covered[j] = not covered[j]
    return covered


_QUESTION_START = re.compile(
    r"^(?:where|when|who|whose|what|which|why|how|is|are|am|was|were|do|does|did|have|has|had|"
    r"can|could|will|would|shall|should|may|might|must)\b"
)


PRESENCE = re.compile(
    r"\b(?:where|seen|find|found|lost|missing|gone|taken|stolen|coming|come|back|here|arrive|"
    r"arriving|visit|visiting|on (?:her|his|their|my) way)\b"
)
REQUEST = re.compile(
    r"\b(?:want|wants|need|needs|like to|love|can i|could i|may i|please|let me|take me|have to|"
    r"got to|must)\b"
)


# What a message asks: a statement, a yes/no question, or the first wh-word's question.
# "What time / day / date …" asks when (also "what's today's date"); "which" asks what; "whose"
# asks who.
FRAMES = ("statement", "yesno", "where", "what", "when", "who", "why", "how")
_WH = re.compile(
    r"\b(?:(what|which)(?:\W+\w+){0,3}?\W+(?:time|day|date|month|year)s?|where|what|which|when|"
    r"whose|who|why|how)\b"
)
_WH_FRAME = {"which": "what", "whose": "who"}


def frame_of(text: str) -> int:
    """FRAMES index of a canonical text's question (a statement is 0, yes/no 1)."""
    match = _WH.search(text)
    if match:
        if match.group(1):
            return FRAMES.index("when")
        word = match.group(0)
        return FRAMES.index(_WH_FRAME.get(word, word))
    return FRAMES.index("yesno") if is_question(text) else FRAMES.index("statement")


def is_question(text: str) -> bool:
    return "?" in text or _QUESTION_START.match(text) is not None


# Direction particles, in opposite pairs: "Let the cat in" / "Let the cat out" have the same
# content words (the particles are function words), and only these say which way. Bit 2k and
# bit 2k + 1 are a pair.
PARTICLES = ("in", "out", "on", "off", "up", "down")


# Words of greetings, thanks, yes and no, and pleasantries ("Hello", "Thank you", "Okay",
# "Lovely day", "I'm fine"), with the few little words they come with. A message made only of
# these asks for nothing and voices no worry: saying it again is conversation, not the
# repetition the memory tracks (tests/memory/test_meaning.py).
SMALL_TALK = frozenset(
    """
    hello hi hey hiya morning afternoon evening night goodnight bye goodbye cheerio later see
    soon welcome yes yeah yep yup aye no nope nah ok okay alright right sure fine good great
    lovely nice wonderful beautiful brilliant grand super perfect well oh ah aw mm hmm um er
    indeed really true quite exactly course absolutely certainly maybe perhaps thank thanks
    cheers ta day weather sunshine sunny dear love darling pleased glad meet kind sweet much
    i im you youre it its that thats this is was be a an the so very too then and all me to of
    isnt wasnt there here today again now just
    """.split()
)
WH_WORDS = frozenset("what where when who whom whose why how which".split())


def small_talk(words: list[str], *, question: bool) -> bool:
    """Only greetings, thanks, yes or no, pleasantries (`SMALL_TALK`), and not a wh-question
    ("What day is it?" is a question about time, not small talk)."""
    if not words or not all(w in SMALL_TALK or w in WH_WORDS for w in words):
        return False
    return not (question and any(w in WH_WORDS for w in words))


def particles_of(words: list[str]) -> int:
    """Bit i set when PARTICLES[i] is one of `words` (the plain words of a canonical text)."""
    bits = 0
    for i, particle in enumerate(PARTICLES):
        if particle in words:
            bits |= 1 << i
    return bits


def particles_flip(earlier: int, current: int) -> bool:
    """One message has a particle the other lacks, and the other has its opposite instead
    ("in" / "out"; not "in" / "in and out")."""
    only_earlier, only_current = earlier & ~current, current & ~earlier
    swapped = ((only_current & 0b010101) << 1) | ((only_current & 0b101010) >> 1)
    return bool(only_earlier & swapped)
