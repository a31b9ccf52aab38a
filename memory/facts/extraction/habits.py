"""Rules about how the person lives: likes and dislikes, routines, feelings."""

import re

from memory.facts.extraction.core import (
    _CAP_WORD,
    _FEELING_ADVERBS,
    _FEELINGS,
    _FREQ,
    _FREQ_ADVERB,
    _NAME,
    _REL,
    _WHEN_WORDS,
    _about_them,
    _alternation,
    _Clause,
    _Entity,
    _Facts,
    _habit_verb,
    _is_name,
    _key_words,
    _relative,
    _third_person,
    _tidy,
    _when_text,
    entity_ref,
    entity_slug,
)

# --- Rules: preferences -----------------------------------------------------------------------

_LIKE_VERBS = {
    "love": ("likes", "Loves"),
    "adore": ("likes", "Loves"),
    "like": ("likes", "Likes"),
    "enjoy": ("likes", "Enjoys"),
    "prefer": ("likes", "Prefers"),
    "am fond of": ("likes", "Is fond of"),
    "'m fond of": ("likes", "Is fond of"),
    "am a big fan of": ("likes", "Is a big fan of"),
    "'m a big fan of": ("likes", "Is a big fan of"),
    "am a fan of": ("likes", "Is a fan of"),
    "'m a fan of": ("likes", "Is a fan of"),
    "am keen on": ("likes", "Is keen on"),
    "'m keen on": ("likes", "Is keen on"),
    "don't like": ("dislikes", "Does not like"),
    "do not like": ("dislikes", "Does not like"),
    "don't really like": ("dislikes", "Does not like"),
    "don't enjoy": ("dislikes", "Does not enjoy"),
    "do not enjoy": ("dislikes", "Does not enjoy"),
    "don't care for": ("dislikes", "Does not care for"),
    "dislike": ("dislikes", "Dislikes"),
    "hate": ("dislikes", "Hates"),
    "detest": ("dislikes", "Hates"),
    "loathe": ("dislikes", "Hates"),
    "can't stand": ("dislikes", "Cannot stand"),
    "cannot stand": ("dislikes", "Cannot stand"),
    "can't bear": ("dislikes", "Cannot bear"),
    "cannot bear": ("dislikes", "Cannot bear"),
    "never liked": ("dislikes", "Has never liked"),
    "never did like": ("dislikes", "Has never liked"),
    "am not keen on": ("dislikes", "Is not keen on"),
    "'m not keen on": ("dislikes", "Is not keen on"),
    "am not fond of": ("dislikes", "Is not fond of"),
    "'m not fond of": ("dislikes", "Is not fond of"),
    "am not a fan of": ("dislikes", "Is not a fan of"),
    "'m not a fan of": ("dislikes", "Is not a fan of"),
}
# "I'm very fond of": an intensifier may sit inside the verb phrase.
_INTENSIFIER = r"(?:(?:very|really|quite|so|particularly|ever\s+so|that|terribly)\s+)?"
_LIKE = "|".join(
    re.escape(v).replace(r"\ ", rf"\s+{_INTENSIFIER}")
    for v in sorted(_LIKE_VERBS, key=len, reverse=True)
)
_ADVERBS = r"(?:(?:really|do|just|absolutely|so|still|always|also|truly|simply|quite|very\s+much|much|particularly|especially)\s+)*"
_I_LIKE = re.compile(rf"^(?:i|i(?='))\s*{_ADVERBS}(?P<verb>{_LIKE})\s+(?P<object>.+)$", re.I)
_USED_TO_LIKE = re.compile(
    rf"^i\s+used\s+to\s+{_ADVERBS}(?P<verb>love|like|enjoy|adore)\s+(?P<object>.+)$", re.I
)
_FAVOURITE = re.compile(
    r"\bmy\s+(?:very\s+)?(?:favourite|favorite)\s+(?P<what>[a-z ]{2,30}?)\s+(?:is|are|'s|was)\s+(?P<object>.+)$",
    re.I,
)
_IS_MY_FAVOURITE = re.compile(
    r"^(?P<object>[\w' -]{2,40}?)\s+(?:is|are|'s)\s+my\s+(?:very\s+)?(?:favourite|favorite)"
    r"(?:\s+(?P<what>[a-z ]{2,30}))?$",
    re.I,
)
_HOW_I_TAKE = re.compile(
    r"^i\s+(?:always\s+|usually\s+)?(?:take|have|like|drink)\s+my\s+(?P<drink>tea|coffee|cuppa|porridge|toast|eggs?|steak)\s+(?P<how>(?:with|black|white|strong|weak|milky|no|without|well|runny|hot|cold)\b.*)$",
    re.I,
)
_OTHER_LIKES = re.compile(
    rf"\bmy\s+(?P<rel>{_REL})(?:,?\s+{_NAME},?)?\s+{_ADVERBS}"
    rf"(?P<verb>loves|likes|adores|enjoys|prefers|hates|loved|liked|enjoyed|hated"
    rf"|doesn't\s+like|does\s+not\s+like|didn't\s+like|can't\s+stand)\s+(?P<object>.+)$",
    re.I,
)
_NOT_AN_OBJECT = re.compile(
    rf"^(?:it|that|this|them|him|her|you|me|us|everyone|everybody|everything|nothing|anything"
    rf"|all\s+of\s+(?:them|you)|people|being\s+here|my\s+(?:{_REL})\b|{_CAP_WORD}$)\b",
    re.I,
)
_MAX_OBJECT_WORDS = 6


def _object(raw: str) -> str | None:
    obj = _tidy(raw)
    if not obj or _NOT_AN_OBJECT.match(obj) or len(obj.split()) > _MAX_OBJECT_WORDS:
        return None
    if not re.search(r"[a-z]", obj, re.I):
        return None
    return obj


def _preference_verb(raw: str) -> str:
    text = re.sub(r"\s+", " ", raw.lower().replace("\u2019", "'"))
    return re.sub(r"\b(?:very|really|quite|so|particularly|ever so|that|terribly) ", "", text)


def _rule_preferences(clause: _Clause, out: _Facts) -> None:
    text = clause.text
    if match := _HOW_I_TAKE.match(text):
        drink, how = match.group("drink").lower(), _tidy(match.group("how"))
        out.add(
            clause,
            type="preference",
            content=f"Takes their {drink} {how}",
            key=f"preference|self|how:{entity_slug(drink)}",
            value=_key_words(how),
            confidence=0.8,
            importance=2,
            fact_type="preference",
            rule="preference.how_i_take",
        )
        return
    if match := _I_LIKE.match(text):
        verb = _preference_verb(match.group("verb"))
        polarity, phrase = _LIKE_VERBS[verb]
        obj = _object(match.group("object"))
        if obj:
            out.add(
                clause,
                type="preference",
                content=f"{phrase} {_about_them(obj)}",
                key=f"preference|self|likes:{_key_words(obj)}",
                value=polarity,
                confidence=0.8 if verb in {"love", "adore", "hate", "can't stand"} else 0.75,
                importance=1,
                fact_type="preference",
                rule=f"preference.{polarity}",
                intensity="strong" if verb in {"love", "adore", "hate", "detest"} else "normal",
            )
        return
    if match := _USED_TO_LIKE.match(text):
        obj = _object(match.group("object"))
        if obj:
            verb = match.group("verb").lower()
            out.add(
                clause,
                type="life_story",
                content=f"Used to {verb} {_about_them(obj)}",
                key=f"life_story|self|used_to_like:{_key_words(obj)}",
                value="liked",
                confidence=0.75,
                importance=1,
                fact_type="preference",
                rule="life_story.used_to_like",
            )
        return
    match = _FAVOURITE.search(text) or _IS_MY_FAVOURITE.match(text)
    if match:
        raw = match.group("object")
        if match.re is _IS_MY_FAVOURITE:
            raw = raw[:1].lower() + raw[1:]  # capitalised only because it starts the sentence
        obj = _object(raw)
        what = _tidy(match.group("what") or "")
        if obj and what:
            out.add(
                clause,
                type="preference",
                content=f"Favourite {what} is {_about_them(obj)}",
                key=f"preference|self|favourite:{_key_words(what)}",
                value=_key_words(obj),
                confidence=0.8,
                importance=2,
                fact_type="preference",
                rule="preference.favourite",
            )
        elif obj:
            out.add(
                clause,
                type="preference",
                content=f"Loves {_about_them(obj)}",
                key=f"preference|self|likes:{_key_words(obj)}",
                value="likes",
                confidence=0.8,
                importance=1,
                fact_type="preference",
                rule="preference.favourite_thing",
            )
        return
    if match := _OTHER_LIKES.search(text):
        name = match.group("name") if _is_name(match.group("name")) else None
        entity = _relative(match.group("rel"), name)
        obj = _object(match.group("object"))
        if entity and obj:
            verb = _preference_verb(match.group("verb"))
            polarity = "dislikes" if re.search(r"hate|n't|not|stand", verb) else "likes"
            out.add(
                clause,
                type="people",
                content=f"{entity.subject} {verb} {_about_them(obj)}",
                key=f"people|{entity.ref}|likes:{_key_words(obj)}",
                value=polarity,
                confidence=0.6,
                importance=1,
                fact_type="preference",
                rule="people.their_preference",
                entities=(entity,),
                entity_type=entity.entity_type,
            )


# --- Rules: routines --------------------------------------------------------------------------

_FRONT_FREQ = re.compile(rf"^(?P<freq>{_FREQ}|{_FREQ_ADVERB}),?\s+(?P<rest>.+)$", re.I)
_BACK_FREQ = re.compile(rf"^(?P<rest>.+?),?\s+(?P<freq>{_FREQ})$", re.I)
_MID_ADVERB = re.compile(rf"^(?P<subject>i|we)\s+(?P<freq>{_FREQ_ADVERB})\s+(?P<rest>.+)$", re.I)
_I_VERB = re.compile(r"^(?P<subject>i|we)\s+(?P<verb>[a-z]+)\b(?P<rest>.*)$", re.I)
_REL_VERB = re.compile(
    rf"^my\s+(?P<rel>{_REL})(?:,?\s+{_NAME},?)?\s+(?P<verb>[a-z]+s)\b(?P<rest>.*)$", re.I
)
_STOPPED = re.compile(
    r"^i\s+(?:(?:don'?t|do\s+not)\s+(?P<verb>[a-z]+)(?P<rest>.*?)\s+(?:any\s?more|these\s+days)"
    r"|no\s+longer\s+(?P<verb2>[a-z]+)(?P<rest2>.*))$",
    re.I,
)


def _frequency(text: str) -> tuple[str | None, str]:
    """The clause's frequency phrase and what is left of the clause without it."""
    if match := _FRONT_FREQ.match(text):
        return match.group("freq"), match.group("rest")
    if match := _BACK_FREQ.match(text):
        return match.group("freq"), match.group("rest")
    if match := _MID_ADVERB.match(text):
        return match.group("freq"), f"{match.group('subject')} {match.group('rest')}"
    return None, text


def _rule_routines(clause: _Clause, out: _Facts) -> None:
    text = clause.text
    if match := _STOPPED.match(text):
        verb = match.group("verb") or match.group("verb2")
        rest = _tidy(match.group("rest") or match.group("rest2") or "")
        if _habit_verb(verb):
            rest, _freq_dropped = _strip_freq(rest)
            activity = f"{verb} {rest}".strip()
            out.add(
                clause,
                type="routine",
                content=f"No longer {_third_person(verb)} {_about_them(rest)}",
                key=f"routine|self|{_key_words(activity)}",
                value="stopped",
                confidence=0.6,
                importance=1,
                fact_type="habit",
                rule="routine.stopped",
            )
        return
    # Frequencies may sit at both ends and in the middle ("Every Sunday I always ...").
    freqs: list[str] = []
    rest = text
    for _ in range(3):
        freq, remainder = _frequency(rest)
        if freq is None:
            break
        freqs.append(freq)
        rest = remainder
    if not freqs:
        return
    rest = _tidy(rest)
    if clock := _CLOCK.match(rest):
        rest = clock.group("rest")
    adverbs = [f.lower() for f in freqs if re.fullmatch(_FREQ_ADVERB, f, re.I)]
    phrases = [f for f in freqs if f.lower() not in adverbs]
    if clock:
        phrases.append(clock.group("clock"))
    when = _when_text(" ".join(phrases))
    adverb = adverbs[0] if adverbs else ""
    value = entity_slug(f"{adverb} {when}")
    if match := _I_VERB.match(rest):
        verb = match.group("verb")
        # "I have to ...", "I've got to ...": an obligation, not a habit.
        if not _habit_verb(verb) or (
            verb.lower() in {"have", "got"} and re.match(r"\s+to\b", match.group("rest"))
        ):
            return
        obj = _tidy(match.group("rest"))
        activity = f"{verb} {obj}".strip()
        with_others = match.group("subject").lower() == "we"
        out.add(
            clause,
            type="routine",
            content=_routine_content(_third_person(verb), obj, when, adverb=adverb),
            key=f"routine|self|{_key_words(activity)}",
            value=value,
            confidence=0.7,
            importance=1,
            fact_type="habit",
            rule="routine.i_do",
            **({"with_others": True} if with_others else {}),
        )
        return
    if match := _REL_VERB.match(rest):
        name = match.group("name") if _is_name(match.group("name")) else None
        entity = _relative(match.group("rel"), name)
        verb = match.group("verb")
        if entity is None or verb.lower() in {"is", "was", "has", "does", "likes", "loves"}:
            return
        obj = _tidy(match.group("rest"))
        activity = f"{verb} {obj}".strip()
        out.add(
            clause,
            type="routine",
            content=_routine_content(f"{entity.subject} {verb}", obj, when, adverb=adverb),
            key=f"routine|{entity.ref}|{_key_words(activity)}",
            value=value,
            confidence=0.65,
            importance=1,
            fact_type="habit",
            rule="routine.relative_does",
            entities=(entity,),
            entity_type=entity.entity_type,
        )


_CLOCK = re.compile(
    r"^(?P<rest>.+?)\s+(?P<clock>(?:at|around|about|by|before|after)\s+(?:\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)?"
    r"|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|noon|midnight"
    r"|half\s+past\s+\w+|(?:breakfast|lunch|lunchtime|tea|teatime|dinner|supper|bedtime))"
    r"(?:\s+o'?clock)?)$",
    re.I,
)


def _routine_content(doer: str, obj: str, when: str, *, adverb: str) -> str:
    """ "Always has a nap after lunch", "Goes to church on Sundays"."""
    parts = [adverb, doer, _about_them(obj), when]
    return " ".join(p for p in parts if p)


def _strip_freq(text: str) -> tuple[str, str | None]:
    freq, rest = _frequency(text)
    return (_tidy(rest), freq) if freq else (text, None)


# --- Rules: feelings --------------------------------------------------------------------------

_FEELING_WORD = rf"(?:{_alternation(_FEELINGS)})"
_I_FEEL = re.compile(
    rf"^i(?:'m|\s+am|\s+feel|'ve\s+been\s+feeling|\s+have\s+been\s+feeling|'m\s+feeling|\s+am\s+feeling|\s+felt|\s+was\s+feeling)"
    rf"\s+(?P<adverb>{_FEELING_ADVERBS})?(?P<feeling>{_FEELING_WORD}(?:\s+and\s+{_FEELING_WORD})?)"
    rf"(?P<rest>(?:\s+(?:about|of|because)\s+.+)?)(?:\s+(?:here|in\s+here|at\s+home))?"
    rf"(?:\s+(?P<when>{_WHEN_WORDS}))?$",
    re.I,
)
_NOT_WELL = re.compile(
    rf"^i(?:'m|\s+am)\s+not\s+(?:feeling\s+)?(?:very\s+|too\s+|so\s+)?(?P<what>well|good|great|right|myself)(?:\s+(?P<when>{_WHEN_WORDS}))?$",
    re.I,
)


_I_MISS = re.compile(
    rf"^i\s+(?:really\s+|do\s+|so\s+)?miss\s+(?:my\s+(?P<rel>{_REL})(?:,?\s+{_NAME})?|(?P<bare>{_CAP_WORD}))"
    rf"(?:\s+(?:so\s+much|terribly|a\s+lot|dreadfully))?$",
    re.I,
)


def _whose(entity: _Entity) -> str:
    """ "their mother", "their son Tom" or "Tom", as the object of a sentence about the person."""
    if entity.relation is None:
        return entity.label
    if entity.label.lower() == entity.relation:
        return f"their {entity.relation}"
    return f"their {entity.relation} {entity.label}"


def _rule_feelings(clause: _Clause, out: _Facts) -> None:
    text = clause.text
    if match := _I_MISS.match(text):
        if match.group("rel"):
            raw = match.group("name")
            entity = _relative(match.group("rel"), raw if _is_name(raw) else None)
        elif _is_name(match.group("bare")):
            bare = match.group("bare")
            ref = entity_ref("person", bare)
            entity = _Entity(ref, bare, None, "person") if ref else None
        else:
            entity = None
        if entity:
            out.add(
                clause,
                type="feeling",
                content=f"Misses {_whose(entity)}",
                key=f"feeling|self|misses:{entity.ref}",
                value="misses",
                confidence=0.6,
                importance=1,
                fact_type="feeling",
                rule="feeling.misses",
                entities=(entity,),
            )
        return
    if match := _NOT_WELL.match(text):
        when = match.group("when")
        content = "Does not feel well" + (f" {when.lower()}" if when else "")
        out.add(
            clause,
            type="feeling",
            content=content,
            key="feeling|self|current",
            value="unwell",
            confidence=0.6,
            importance=0,
            fact_type="feeling",
            rule="feeling.not_well",
        )
        return
    match = _I_FEEL.match(text)
    if not match:
        return
    feeling = re.sub(r"\s+", " ", match.group("feeling").lower())
    rest = _tidy(match.group("rest") or "")
    if feeling == "afraid" and not rest.lower().startswith("of"):
        return  # "I'm afraid I don't know" is politeness, not fear
    if " was " in text.lower() or " felt " in text.lower():
        tense = "Felt"
    else:
        tense = "Feels"
    adverb = (match.group("adverb") or "").strip().lower()
    when = (match.group("when") or "").lower()
    content = " ".join(p for p in (tense, adverb, feeling, _about_them(rest), when) if p)
    out.add(
        clause,
        type="feeling",
        content=content,
        key="feeling|self|current",
        value=entity_slug(feeling),
        confidence=0.6,
        importance=0,
        fact_type="feeling",
        rule="feeling.i_feel",
    )
