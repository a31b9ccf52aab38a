"""Rule-based extraction of candidate facts from what the person says about themselves.

`extract_facts(text)` reads one message from the person (never the companion's reply) and
returns the facts it states plainly: the person's name and what they like to be called, the
people in their life and how they are related, likes and dislikes, routines, feelings, coming
events, and their life story. It is deterministic (same text, same facts) and needs no model.

**Output is a candidate, never truth.** A person living with dementia may say, and mean, that
her late husband is coming home tonight, or that she still works at the mill. The store keeps
every extracted fact unconfirmed until a caregiver confirms it, and nothing unconfirmed is ever
told to the person as true. `confidence` says how plainly the sentence stated the fact: lower
for hedged statements ("I think ..."), and very low where the sentence contradicts itself (a
person the sentence says has died is "coming to visit"; two different values for one attribute).

Filters:

* **Uncertainty**: questions, hypotheticals and guesses ("maybe", "might", "if", "would",
  "I'm not sure", "I can't remember if") give nothing. Mild hedges ("I think", "I believe",
  "apparently") are kept at lower confidence.
* **Ownership**: only the person's own statements about themselves become their preferences
  and routines. "My son likes football" is about the son: it is kept as a fact about the son's
  entity (type `people`), never as the person's own preference.
* **Negation**: negative statements become facts only where they mean something on their own
  ("I don't like loud music" is a dislike; "I don't walk the dog any more" ends a routine,
  under the routine's own key so the store supersedes it). "I don't have a daughter" and other
  negated claims give nothing.
* **Sensitive data**: the text is redacted first (`memory.core.sensitive`), and a clause that held a
  secret gives no fact at all.

Each fact has a `memory_key` naming the attribute it sets, `<type>|<subject>|<attribute>`, with
the value kept apart in `metadata["value"]`: the same fact said differently gives the same key
and value ("I love tea", "I really like tea"), and a contradicting value for the same attribute
gives the same key with another value ("I don't like tea"), so the store can bump the one and
supersede the other. Subjects are `self` or an entity ref `<type>:<slug>`.

Entity refs follow the state-and-memory seed: `<type>:<slug>`, the slug lower-case ASCII with
punctuation removed and spaces or hyphens turned into underscores, at most 64 characters.
"""

import re
from collections.abc import Iterator
from dataclasses import replace

from memory.core.sensitive import PLACEHOLDERS, redact
from memory.facts.extraction.core import (
    _CAP_WORD,
    _FILLER,
    _FREQ,
    _FREQ_ADVERB,
    _HEDGE,
    _PAST_TIME,
    _REL,
    _TIME,
    _UNCERTAIN,
    CONFLICT_CONFIDENCE,
    CONTRADICTION_CONFIDENCE,
    ENTITY_REF_RE,
    ENTITY_TYPES,
    FACT_TYPES,
    HEDGE_FACTOR,
    MEMORY_TYPES,
    PARENT_VISIT_CONFIDENCE,
    SLUG_MAX,
    ExtractedFact,
    _Clause,
    _Facts,
    entity_ref,
    entity_slug,
)
from memory.facts.extraction.events import (
    _rule_events,
)
from memory.facts.extraction.habits import (
    _rule_feelings,
    _rule_preferences,
    _rule_routines,
)
from memory.facts.extraction.people import (
    _rule_names,
    _rule_people,
)
from memory.facts.extraction.story import (
    _rule_life_story,
    _rule_profile,
)

# --- Clauses and the pipeline -----------------------------------------------------------------

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+|;\s*|\s+-\s+")
_CLAUSE_SPLIT = re.compile(
    r",?\s+but\s+|,\s+(?:and\s+|so\s+|because\s+)?(?=(?:i|i'm|i've|my|we|it's)\b)"
    r"|\s+(?:and|so|because)\s+(?=(?:i|i'm|i've|my|we)\b)",
    re.IGNORECASE,
)
_FRONT_ONLY = re.compile(rf"^(?:{_FREQ}|{_FREQ_ADVERB}|{_TIME}|{_PAST_TIME})$", re.I)
_PLACEHOLDER = re.compile("|".join(re.escape(p) for p in set(PLACEHOLDERS.values())))


def _normalise(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
    text = text.replace("\u201d", '"')
    return re.sub(r"[ \t]+", " ", text)


def _clauses(sentence: str) -> Iterator[str]:
    parts = [p.strip() for p in _CLAUSE_SPLIT.split(sentence) if p and p.strip()]
    merged: list[str] = []
    for part in parts:
        # "On Sundays, I go to church": the frequency belongs to the clause after it.
        if merged and _FRONT_ONLY.match(merged[-1].strip(" ,")):
            merged[-1] = f"{merged[-1].strip(' ,')} {part}"
        elif merged and merged[-1].lower() in {"me", "i"}:
            merged[-1] = f"{merged[-1]} and {part}"  # "Me and my husband used to ..."
        else:
            merged.append(part)
    yield from merged


_WE = re.compile(
    rf"^(?:(?:me|i)\s+and\s+my\s+(?:{_REL})(?:\s+{_CAP_WORD})?|my\s+(?:{_REL})(?:\s+{_CAP_WORD})?\s+and\s+(?:i|me))\b",
    re.IGNORECASE,
)


# Said at the end of a clause to the listener, not about the fact: "..., thank you, dear".
_TALK_TAIL = re.compile(
    r"(?:,?\s+(?:thank\s+you|thanks|you\s+know|dear|love|darling|pet|duck))+$", re.IGNORECASE
)


def _prepare(raw: str, *, hedged: bool = False) -> tuple[str, bool] | None:
    """Fillers and hedges off the front; None when the clause is uncertain or held a secret."""
    text = _FILLER.sub("", raw.strip(' ,.!"')).strip()
    text = _TALK_TAIL.sub("", text).strip()
    if not text or _PLACEHOLDER.search(text):
        return None
    if _HEDGE.search(text):
        hedged = True
        text = _HEDGE.sub("", text).strip(" ,")
        text = _FILLER.sub("", text).strip()
    if not text or _UNCERTAIN.search(text):
        return None
    # "Me and my husband used to ...": the person and someone else, said as "we".
    text = _WE.sub("we", text)
    return text, hedged


_SENTENCE_RULES = (_rule_people,)
_CLAUSE_RULES = (
    _rule_names,
    _rule_preferences,
    _rule_routines,
    _rule_feelings,
    _rule_life_story,
    _rule_profile,
    _rule_events,
)


def extract_facts(text: str, *, speaker: str = "person") -> list[ExtractedFact]:
    """Candidate facts the person states in `text`; nothing from anyone else's words.

    Pure: reads only the text. Facts come in the order they were said, one per memory_key and
    value; two different values for one key in one message are both kept at low confidence,
    marked `metadata["conflict"] = "contradiction_in_message"`.
    """
    if speaker != "person" or not text or not text.strip():
        return []
    safe = _normalise(redact(text).text)
    out = _Facts()
    for sentence in _SENTENCE_SPLIT.split(safe):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?"):
            continue  # a question states nothing
        body = sentence.rstrip(" .!")
        # "My daughter is coming, I think": a hedge anywhere hedges the whole sentence.
        sentence_hedged = _HEDGE.search(body) is not None
        prepared = _prepare(body)
        if prepared is not None:
            for rule in _SENTENCE_RULES:
                rule(_Clause(prepared[0], prepared[1], sentence), out)
        for clause_text in _clauses(body):
            prepared = _prepare(clause_text, hedged=sentence_hedged)
            if prepared is None:
                continue
            clause = _Clause(prepared[0], prepared[1], sentence)
            for rule in _CLAUSE_RULES:
                rule(clause, out)
    return _settle(out.facts)


def _settle(facts: list[ExtractedFact]) -> list[ExtractedFact]:
    """One fact per (key, value), the most confident; contradictions inside the message marked."""
    best: dict[tuple[str, str], ExtractedFact] = {}
    for fact in facts:
        slot = (fact.memory_key, fact.value)
        if slot not in best or fact.confidence > best[slot].confidence:
            best[slot] = fact
    values_per_key: dict[str, set[str]] = {}
    for key, value in best:
        values_per_key.setdefault(key, set()).add(value)
    settled = []
    for fact in best.values():
        if len(values_per_key[fact.memory_key]) > 1:
            fact = replace(
                fact,
                confidence=min(fact.confidence, CONTRADICTION_CONFIDENCE),
                metadata={**fact.metadata, "conflict": "contradiction_in_message"},
            )
        settled.append(fact)
    return settled


__all__ = [
    "CONFLICT_CONFIDENCE",
    "CONTRADICTION_CONFIDENCE",
    "ENTITY_REF_RE",
    "ENTITY_TYPES",
    "FACT_TYPES",
    "HEDGE_FACTOR",
    "MEMORY_TYPES",
    "PARENT_VISIT_CONFIDENCE",
    "SLUG_MAX",
    "ExtractedFact",
    "entity_ref",
    "entity_slug",
    "extract_facts",
]
