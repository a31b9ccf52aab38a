"""Explicit phrases, per language: the words that need a person whatever is around them.

Each language's list is a JSON file in memory/data/urgent/ (`<lang>.json`): for each reason,
regular expressions that are urgent on their own ("I've gone down and can't get up",
"upadłam", "ਮੈਂ ਡਿੱਗ ਪਈ"), and `mask`: calm idioms that share those words ("fell asleep",
"dying for a cuppa"), blanked out before the reasons are searched, so "I fell asleep and then
fell out of bed" is still a fall. `distance`: what sets a phrase at a distance from now and
here (long ago, on television, "I'm fine now", "in case I fall"); a phrase in such a message
decides only when the meaning agrees. Every language's phrases are tried on every message: the
person's language is not given, and a message may mix two. Vague wording is left to the
meaning-based part (examples.py); a phrase here must be precise enough to decide alone.

What a hit says: the reason, the language of the list, which pattern (`rule`, e.g. "pl/fall/3",
stable while the file is), and where in the normalised text it matched.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

from memory.conversations.urgency import reasons
from memory.conversations.urgency.text import fold_pattern

DATA_DIR = Path(__file__).resolve().parents[2] / "data" / "urgent"


@dataclass(frozen=True)
class PhraseHit:
    reason: str
    language: str
    rule: str  # "<lang>/<reason>/<index in the file's list>"
    start: int  # the span in the normalised text
    end: int
    # The message also sets it at a distance (long ago, on television, "I'm fine now", "in
    # case I fall"): the phrase alone does not decide, the meaning must agree.
    distanced: bool = False


# A pattern that starts with this regex comment applies only when the message is identified as
# written in its list's language: the word is a common word of another (Dutch "brand" is a fire,
# English "brand" a make of tea; Welsh "help" is English "help").
OWN = "(?#own)"


@dataclass(frozen=True)
class Reason:
    reason: str
    anywhere: re.Pattern | None  # its patterns that apply whatever the language, as one
    own: re.Pattern | None  # all its patterns, when the message is in the list's language
    each: tuple[tuple[re.Pattern, bool], ...]  # (pattern, only in its own language), in order


@dataclass(frozen=True)
class Lexicon:
    language: str
    mask: re.Pattern | None
    distance: re.Pattern | None
    reasons: tuple[Reason, ...]  # in reasons.ORDER
    emotion: dict[str, re.Pattern]

    def blank_masks(self, text: str) -> str:
        """`text` with its calm idioms blanked (same length, so spans stay where they were)."""
        if self.mask is None:
            return text
        return self.mask.sub(lambda m: " " * len(m.group(0)), text)

    def search(self, text: str, *, written_in: str | None = None) -> PhraseHit | None:
        """The first reason (in reasons.ORDER) one of whose phrases is in `text` (normalised);
        `written_in`: the language the message was identified as."""
        masked = self.blank_masks(text)
        own = written_in == self.language
        for entry in self.reasons:
            joined = entry.own if own else entry.anywhere
            if joined is None or joined.search(masked) is None:
                continue
            for index, (pattern, own_only) in enumerate(entry.each):
                if own_only and not own:
                    continue
                found = pattern.search(masked)
                if found is not None:
                    return PhraseHit(
                        entry.reason,
                        self.language,
                        f"{self.language}/{entry.reason}/{index}",
                        *found.span(),
                        distanced=bool(self.distance and self.distance.search(text)),
                    )
        return None


def _compile(patterns: list[str]) -> re.Pattern:
    return re.compile("|".join(f"(?:{fold_pattern(p)})" for p in patterns), re.IGNORECASE)


def _lexicon(language: str, files: list[dict]) -> Lexicon:
    """One language's lists, from all its files (`<lang>.json`, `<lang>_<more>.json`) merged."""
    compiled = []
    for reason in reasons.ORDER:
        patterns = [p for data in files for p in data.get("reasons", {}).get(reason, []) if p]
        if patterns:
            anywhere = [p for p in patterns if not p.startswith(OWN)]
            compiled.append(
                Reason(
                    reason=reason,
                    anywhere=_compile(anywhere) if anywhere else None,
                    own=_compile(patterns),
                    each=tuple(
                        (re.compile(fold_pattern(p), re.IGNORECASE), p.startswith(OWN))
                        for p in patterns
                    ),
                )
            )
    masks = [p for data in files for p in data.get("mask", []) if p]
    distance = [p for data in files for p in data.get("distance", []) if p]
    feelings: dict[str, list[str]] = {}
    for data in files:
        for feeling, cues in data.get("emotion", {}).items():
            feelings.setdefault(feeling, []).extend(c for c in cues if c)
    return Lexicon(
        language=language,
        mask=_compile(masks) if masks else None,
        distance=_compile(distance) if distance else None,
        reasons=tuple(compiled),
        emotion={feeling: _compile(cues) for feeling, cues in feelings.items() if cues},
    )


@functools.cache
def lexicons() -> dict[str, Lexicon]:
    """Every language's phrases, by ISO 639-1 code (read once per process)."""
    files: dict[str, list[dict]] = {}
    for path in sorted(DATA_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        files.setdefault(data["lang"], []).append(data)
    return {language: _lexicon(language, found) for language, found in files.items()}


def search(
    text: str, *, prefer: str | None = None, languages: tuple[str, ...] | None = None
) -> PhraseHit | None:
    """The phrase hit that decides for `text` (normalised), or None.

    The lists of `languages` are tried (every language's when None; each list costs 0.1-0.9 ms
    on a long line, so a turn tries the language found, its likeliest neighbours and English:
    language.Language.candidates). Of several hits the most pressing reason wins
    (reasons.ORDER); of hits for one reason, the `prefer`red language's (the message's own)."""
    known = lexicons()
    chosen = known.values() if languages is None else [known[c] for c in languages if c in known]
    hits = [hit for lexicon in chosen if (hit := lexicon.search(text, written_in=prefer))]
    if not hits:
        return None
    return min(hits, key=lambda hit: (reasons.ORDER.index(hit.reason), hit.language != prefer))
