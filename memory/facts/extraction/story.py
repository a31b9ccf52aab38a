"""Rules about the person's life story and circumstances: work, places, marriage, age."""

import re

from memory.facts.extraction.core import (
    _MONTHS,
    _NAME,
    _OCCUPATIONS,
    _REL,
    _RELATIVE_TIME,
    _about_them,
    _article,
    _Clause,
    _Entity,
    _Facts,
    _habit_verb,
    _is_name,
    _key_words,
    _relative,
    _tidy,
    entity_ref,
    entity_slug,
)

# --- Rules: life story and profile ------------------------------------------------------------

_OCCUPATION = re.compile(
    r"^i\s+(?:was|used\s+to\s+be|worked\s+as|trained\s+as|qualified\s+as|became|'m\s+a\s+retired|am\s+a\s+retired)"
    r"\s+(?:a|an)?\s*(?P<occ>(?:[a-z'-]+\s+){0,2}?[a-z'-]+)(?P<rest>(?:\s+(?:for|at|in|on|until|till|during|before|after)\b.*)?)$",
    re.I,
)
_RETIRED_OCC = re.compile(
    r"^i(?:'m|\s+am)\s+a\s+retired\s+(?P<occ>(?:[a-z'-]+\s+){0,2}?[a-z'-]+)$", re.I
)
_WORKED_AT = re.compile(
    r"^i\s+(?:worked|used\s+to\s+work)\s+(?P<prep>at|in|for|on)\s+(?P<place>(?:the\s+|a\s+)?[\w'&-]+(?:\s+[\w'&-]+){0,4}?)"
    r"(?P<rest>(?:\s+(?:for|until|till|during|in|when)\b.*)?)$",
    re.I,
)
_GREW_UP = re.compile(
    r"^i\s+(?P<verb>grew\s+up|was\s+brought\s+up|was\s+raised|was\s+born\s+and\s+(?:bred|raised|brought\s+up))\s+(?:in|on|near)\s+(?P<place>.+)$",
    re.I,
)
_BORN = re.compile(
    r"^i\s+was\s+born\s+(?:in|at)\s+(?P<what>.+?)(?:\s+in\s+(?P<year>(?:18|19|20)\d{2}))?$", re.I
)
_BORN_ON = re.compile(r"^i\s+was\s+born\s+on\s+(?P<date>.+)$", re.I)
_MARRIED = re.compile(
    rf"^i\s+(?P<verb>married|got\s+married\s+to|was\s+married\s+to|wed)\s+{_NAME}(?P<rest>.*)$|^i\s+got\s+married\s+in\s+(?P<year>(?:18|19|20)\d{{2}})",
    re.I,
)
_SERVED = re.compile(
    r"^i\s+(?:was|served)\s+in\s+the\s+(?P<service>army|navy|royal\s+navy|merchant\s+navy|raf|royal\s+air\s+force|air\s+force|land\s+army|wrens|waaf|wrns|ats|marines|home\s+guard)\b(?P<rest>.*)$",
    re.I,
)
_USED_TO_LIVE = re.compile(
    r"^i\s+(?:used\s+to\s+live|lived)\s+in\s+(?P<place>[\w' -]+?)(?P<rest>\s+(?:for|until|till|when|as)\b.*)?$",
    re.I,
)
# "I sang in the church choir for years", "I played cricket on Saturdays": what they did, long.
_PAST_DID = re.compile(
    r"^i\s+(?P<verb>[a-z]+ed|sang|ran|taught|drove|wrote|went|made|grew|kept|swam|rode|sold|built"
    r"|read|sewed|knitted|knit|did|won|led|fought|flew|spent|brought\s+up|kept)\b(?P<rest>.+)$",
    re.I,
)
_PAST_SPAN = re.compile(
    r"\s*\b(?:for\s+(?:(?:\w+|\d+)\s+){0,2}years\b|for\s+(?:decades|ages|a\s+long\s+time)\b"
    r"|every\s+\w+|on\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s\b"
    r"|all\s+(?:my|our)\s+life|as\s+a\s+(?:child|girl|boy|youngster|lad|lass))",
    re.I,
)
# Past verbs that are not a life's habit, or that other rules read better.
_NOT_A_PAST_HABIT = frozenset(
    "used liked loved hated wanted needed tried asked married retired worked lived moved died "
    "passed missed talked called phoned rang visited".split()
)
_USED_TO_DO = re.compile(r"^(?P<subject>i|we)\s+used\s+to\s+(?P<verb>[a-z]+)\b(?P<rest>.*)$", re.I)
_RETIRED = re.compile(r"^i\s+retired\s+(?P<rest>(?:in|from|at|when)\b.+)$", re.I)
_LIVE_IN = re.compile(
    r"^i\s+(?:live|'m\s+living|am\s+living)\s+(?P<prep>in|at|on)\s+(?P<place>.+)$", re.I
)
_LIVE_WITH = re.compile(
    rf"^i\s+(?:live|'m\s+living|am\s+living)\s+(?:with\s+my\s+(?P<rel>{_REL})(?:,?\s+{_NAME})?|(?P<alone>alone|on\s+my\s+own|by\s+myself))\b",
    re.I,
)
_AGE = re.compile(r"^i(?:'m|\s+am)\s+(?P<age>[5-9]\d|1[01]\d)(?:\s+years?\s+(?:old|young))?$", re.I)
_FROM = re.compile(r"^i(?:'m|\s+am|\s+come)\s+(?:originally\s+)?from\s+(?P<place>.+)$", re.I)
_BIRTHDAY = re.compile(r"^my\s+birthday\s+(?:is|'s)\s+(?:on\s+|in\s+)?(?P<date>.+)$", re.I)
_NOT_A_PLACE = re.compile(r"^(?:here|there|home|it|this|that|the\s+same|a\s+mess)\b", re.I)


def _place(raw: str) -> tuple[str, _Entity | None] | None:
    place = _tidy(raw)
    if not place or _NOT_A_PLACE.match(place) or len(place.split()) > 5:
        return None
    if place[:1].isupper():
        ref = entity_ref("place", place)
        return place, _Entity(ref, place, None, "place") if ref else None
    return place, None


def _head_is_occupation(phrase: str) -> bool:
    words = phrase.lower().split()
    return bool(words) and words[-1] in _OCCUPATIONS


def _rule_life_story(clause: _Clause, out: _Facts) -> None:
    text = clause.text
    match = _RETIRED_OCC.match(text) or _OCCUPATION.match(text)
    if match and _head_is_occupation(match.group("occ")):
        occ = match.group("occ").lower()
        rest = _tidy(match.groupdict().get("rest") or "")
        content = f"Worked as {_article(occ)} {occ}" + (f" {_about_them(rest)}" if rest else "")
        out.add(
            clause,
            type="life_story",
            content=content,
            key="life_story|self|occupation",
            value=entity_slug(occ),
            confidence=0.8,
            importance=2,
            fact_type="fact",
            rule="life_story.occupation",
        )
        return
    if match := _WORKED_AT.match(text):
        place = _tidy(match.group("place"))
        if place.lower() not in {"hard", "there", "here", "it"} and not _NOT_A_PLACE.match(place):
            rest = _tidy(match.group("rest") or "")
            found = _place(place)
            entities = (found[1],) if found and found[1] else ()
            out.add(
                clause,
                type="life_story",
                content=f"Worked {match.group('prep').lower()} {_about_them(place)}"
                + (f" {_about_them(rest)}" if rest else ""),
                key=f"life_story|self|worked_at:{_key_words(place)}",
                value=_key_words(place),
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="life_story.workplace",
                entities=entities,
            )
        return
    if match := _GREW_UP.match(text):
        found = _place(match.group("place"))
        if found:
            place, entity = found
            out.add(
                clause,
                type="life_story",
                content=f"Grew up in {place}",
                key="life_story|self|grew_up",
                value=_key_words(place),
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="life_story.grew_up",
                entities=(entity,) if entity else (),
            )
        return
    if match := _BORN.match(text):
        what, year = _tidy(match.group("what")), match.group("year")
        if re.fullmatch(r"(?:18|19|20)\d{2}", what):
            what, year = "", what
        found = _place(what) if what else None
        if found:
            place, entity = found
            out.add(
                clause,
                type="life_story",
                content=f"Was born in {place}",
                key="life_story|self|birthplace",
                value=_key_words(place),
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="life_story.born_in",
                entities=(entity,) if entity else (),
            )
        if year:
            out.add(
                clause,
                type="profile",
                content=f"Was born in {year}",
                key="profile|self|birth_year",
                value=year,
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="profile.birth_year",
            )
        return
    if match := _BORN_ON.match(text):
        date = _tidy(match.group("date"))
        out.add(
            clause,
            type="profile",
            content=f"Was born on {date}",
            key="profile|self|birth_date",
            value=entity_slug(date),
            confidence=0.8,
            importance=2,
            fact_type="fact",
            rule="profile.born_on",
        )
        return
    if match := _MARRIED.match(text):
        if match.group("year"):
            out.add(
                clause,
                type="life_story",
                content=f"Got married in {match.group('year')}",
                key="life_story|self|married",
                value=match.group("year"),
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="life_story.married",
            )
        elif _is_name(match.group("name")):
            name = match.group("name")
            ref = entity_ref("person", name)
            entity = _Entity(ref, name, None, "person") if ref else None
            rest = _tidy(match.group("rest") or "")
            out.add(
                clause,
                type="life_story",
                content=f"{match.group('verb')} {name}" + (f" {_about_them(rest)}" if rest else ""),
                key="life_story|self|married",
                value=entity_slug(name),
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="life_story.married",
                entities=(entity,) if entity else (),
            )
        return
    if match := _SERVED.match(text):
        service = match.group("service")
        service = (
            service.upper()
            if service.lower() in {"raf", "waaf", "wrns", "ats"}
            else service.lower()
        )
        rest = _tidy(match.group("rest") or "")
        out.add(
            clause,
            type="life_story",
            content=f"Served in the {service}" + (f" {_about_them(rest)}" if rest else ""),
            key="life_story|self|service",
            value=entity_slug(service),
            confidence=0.8,
            importance=2,
            fact_type="fact",
            rule="life_story.service",
        )
        return
    if match := _USED_TO_LIVE.match(text):
        found = _place(match.group("place"))
        if found:
            place, entity = found
            rest = _tidy(match.group("rest") or "")
            out.add(
                clause,
                type="life_story",
                content=f"Used to live in {place}" + (f" {_about_them(rest)}" if rest else ""),
                key=f"life_story|self|lived_in:{_key_words(place)}",
                value=_key_words(place),
                confidence=0.75,
                importance=1,
                fact_type="fact",
                rule="life_story.lived_in",
                entities=(entity,) if entity else (),
            )
        return
    if match := _RETIRED.match(text):
        rest = _tidy(match.group("rest"))
        out.add(
            clause,
            type="life_story",
            content=f"Retired {_about_them(rest)}",
            key="life_story|self|retired",
            value=_key_words(rest),
            confidence=0.75,
            importance=1,
            fact_type="fact",
            rule="life_story.retired",
        )
        return
    if match := _USED_TO_DO.match(text):
        verb = match.group("verb")
        rest = _tidy(match.group("rest"))
        if _habit_verb(verb) and verb.lower() not in {"live", "work", "be"}:
            activity = f"{verb} {rest}".strip()
            out.add(
                clause,
                type="life_story",
                content=f"Used to {verb.lower()} {_about_them(rest)}",
                key=f"life_story|self|used_to:{_key_words(activity)}",
                value="past",
                confidence=0.7,
                importance=1,
                fact_type="fact",
                rule="life_story.used_to",
            )
        return
    if match := _PAST_DID.match(text):
        verb, rest = match.group("verb").lower(), _tidy(match.group("rest"))
        span = _PAST_SPAN.search(rest)
        if span and verb not in _NOT_A_PAST_HABIT:
            activity = f"{verb} {rest[: span.start()]}".strip()
            out.add(
                clause,
                type="life_story",
                content=f"{verb} {_about_them(rest)}",
                key=f"life_story|self|did:{_key_words(activity)}",
                value="past",
                confidence=0.7,
                importance=1,
                fact_type="fact",
                rule="life_story.past_habit",
            )


def _rule_profile(clause: _Clause, out: _Facts) -> None:
    text = clause.text
    if match := _LIVE_WITH.match(text):
        if match.group("alone"):
            out.add(
                clause,
                type="profile",
                content="Lives alone",
                key="profile|self|lives_with",
                value="alone",
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="profile.lives_alone",
            )
            return
        name = match.group("name") if _is_name(match.group("name")) else None
        entity = _relative(match.group("rel"), name)
        if entity:
            out.add(
                clause,
                type="profile",
                content=f"Lives with their {entity.relation}"
                + (f" {entity.label}" if name else ""),
                key="profile|self|lives_with",
                value=entity.ref,
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="profile.lives_with",
                entities=(entity,),
            )
        return
    if match := _LIVE_IN.match(text):
        found = _place(match.group("place"))
        if found:
            place, entity = found
            out.add(
                clause,
                type="profile",
                content=f"Lives {match.group('prep').lower()} {_about_them(place)}",
                key="profile|self|home",
                value=_key_words(place),
                confidence=0.75,
                importance=2,
                fact_type="fact",
                rule="profile.lives_in",
                entities=(entity,) if entity else (),
            )
        return
    if match := _AGE.match(text):
        out.add(
            clause,
            type="profile",
            content=f"Is {match.group('age')} years old",
            key="profile|self|age",
            value=match.group("age"),
            confidence=0.7,
            importance=1,
            fact_type="fact",
            rule="profile.age",
        )
        return
    if match := _FROM.match(text):
        found = _place(match.group("place"))
        if found:
            place, entity = found
            out.add(
                clause,
                type="life_story",
                content=f"Comes from {place}",
                key="life_story|self|from",
                value=_key_words(place),
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="life_story.from",
                entities=(entity,) if entity else (),
            )
        return
    if match := _BIRTHDAY.match(text):
        date = _tidy(match.group("date"))
        if date and not _RELATIVE_TIME.match(date):
            out.add(
                clause,
                type="profile",
                content=f"Birthday is {'in' if date.split()[0].lower() in _MONTHS else 'on'} {date}",
                key="profile|self|birthday",
                value=entity_slug(date),
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="profile.birthday",
            )
