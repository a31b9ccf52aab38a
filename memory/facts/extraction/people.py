"""Rules about who the person is and the people in their life: names, relations, deaths."""

import re

from memory.facts.extraction.core import (
    _ANY_NAME,
    _CAP_WORD,
    _COUNT,
    _FEELINGS,
    _LATE,
    _NAME,
    _NOT_NAMES,
    _NUMBERS,
    _PLURAL,
    _PLURALS,
    _REL,
    _RELATIONS,
    _any_name,
    _Clause,
    _Entity,
    _Facts,
    _is_name,
    _relative,
    _title,
    entity_slug,
)

# --- Rules: names -----------------------------------------------------------------------------

_NOT_A_CALLED_NAME = frozenset(
    "back later tomorrow today tonight when if on at in please a an the again soon now anything "
    "anytime sometime whenever every".split()
)
_MY_NAME = re.compile(rf"\bmy\s+name(?:\s+is|'s)\s+{_ANY_NAME}", re.IGNORECASE)
_CALLED = re.compile(rf"^(?:i\s+am|i'm)\s+called\s+{_ANY_NAME}", re.IGNORECASE)
_CALL_ME = re.compile(
    rf"(?:^|\b(?:you\s+can|please|just|everyone|everybody|people|they|friends|my\s+friends"
    rf"|my\s+family|most\s+people|family)\s+)(?:all\s+)?call(?:s)?\s+me\s+{_ANY_NAME}",
    re.IGNORECASE,
)
_DONT_CALL_ME = re.compile(
    rf"\b(?:don'?t|do\s+not|never)\s+call\s+me\s+{_ANY_NAME}"
    rf"|\bi\s+(?:hate|don'?t\s+like|do\s+not\s+like|can'?t\s+stand)\s+being\s+called\s+{_any_name('name2')}",
    re.IGNORECASE,
)
_IM_NAME = re.compile(rf"^(?:hello|hi)?[,\s]*(?:i'm|i\s+am)\s+{_NAME}$", re.IGNORECASE)


def _clean_name(raw: str) -> str | None:
    words = []
    for word in raw.split():
        if word.lower() in _NOT_A_CALLED_NAME or word.lower() in _NOT_NAMES:
            break
        words.append(word)
    if not words:
        return None
    return _title(" ".join(words))


def _rule_names(clause: _Clause, out: _Facts) -> None:
    text = clause.text
    negated = _DONT_CALL_ME.search(text)
    if negated:
        raw = negated.group("name") or negated.group("name2")
        name = _clean_name(raw) if raw else None
        if name:
            out.add(
                clause,
                type="preference",
                content=f"Does not like being called {name}",
                key=f"preference|self|called:{entity_slug(name)}",
                value="dislikes",
                confidence=0.8,
                importance=2,
                fact_type="preference",
                rule="name.dont_call_me",
            )
        return
    match = _MY_NAME.search(text) or _CALLED.search(text)
    if match and (name := _clean_name(match.group("name"))):
        out.add(
            clause,
            type="profile",
            content=f"Name is {name}",
            key="profile|self|name",
            value=entity_slug(name),
            confidence=0.9,
            importance=3,
            fact_type="fact",
            rule="name.my_name_is",
        )
    match = _CALL_ME.search(text)
    if match and (name := _clean_name(match.group("name"))):
        out.add(
            clause,
            type="profile",
            content=f"Likes to be called {name}",
            key="profile|self|preferred_name",
            value=entity_slug(name),
            confidence=0.9,
            importance=3,
            fact_type="preference",
            rule="name.call_me",
        )
    match = _IM_NAME.match(text)
    if match and _is_name(match.group("name")) and match.group("name").lower() not in _FEELINGS:
        name = match.group("name")
        out.add(
            clause,
            type="profile",
            content=f"Name is {name}",
            key="profile|self|name",
            value=entity_slug(name),
            confidence=0.7,
            importance=3,
            fact_type="fact",
            rule="name.i_am",
        )


# --- Rules: people ----------------------------------------------------------------------------

_MY_REL_NAME = re.compile(
    rf"\bmy\s+(?:dear\s+|lovely\s+|youngest\s+|eldest\s+|oldest\s+|little\s+|other\s+|older\s+|younger\s+|big\s+|baby\s+)?"
    rf"{_LATE}(?P<rel>{_REL})(?:,\s*|\s+)(?:(?:who\s+is\s+|who's\s+)?(?:called|named)\s+{_any_name('called')}|{_NAME})",
    re.IGNORECASE,
)
_NAME_IS_MY_REL = re.compile(
    rf"(?:^|,\s*|\band\s+){_NAME}(?P<verb>\s+is|'s|\s+was|,)\s+my\s+{_LATE}(?P<rel>{_REL})\b",
    re.IGNORECASE,
)
_MY_REL_IS_CALLED = re.compile(
    rf"\bmy\s+{_LATE}(?P<rel>{_REL})(?:'s\s+name\s+(?P<verb>is|was)|\s+(?P<verb2>is|was)\s+called|\s+is\s+named)\s+{_ANY_NAME}",
    re.IGNORECASE,
)
_HAVE_A_REL = re.compile(
    rf"^i(?:\s+have|'ve\s+got|\s+have\s+got|'ve)\s+(?:a|an|one)\s+"
    rf"(?:(?:little|lovely|old|young|big|new|beautiful|gorgeous|grown-up|good|dear)\s+)?(?P<rel>{_REL})"
    rf"(?:\s+(?:called|named)\s+{_ANY_NAME})?\s*$",
    re.IGNORECASE,
)
_HAVE_COUNT = re.compile(
    rf"^i(?:\s+have|'ve\s+got|\s+have\s+got|'ve)\s+{_COUNT}\s+(?:{_PLURAL}|{_REL})\b",
    re.IGNORECASE,
)
_COUNTED = re.compile(
    rf"(?:^i(?:\s+have|'ve\s+got|\s+have\s+got|'ve)|,|\band)\s+(?P<count>{_COUNT})\s+(?P<noun>{_PLURAL}|{_REL})\b",
    re.IGNORECASE,
)
_DIED = re.compile(
    rf"\bmy\s+{_LATE}(?P<rel>{_REL})(?:,?\s+{_NAME},?)?\s+(?:has\s+|had\s+)?"
    rf"(?:died|passed\s+away|passed\s+on|passed|is\s+dead|was\s+killed)"
    rf"|\bi\s+lost\s+my\s+(?P<rel2>{_REL})(?:,?\s+(?P<name2>{_CAP_WORD}))?",
    re.IGNORECASE,
)
_WIDOW = re.compile(
    r"^i'?m\s+a\s+(?P<w>widow|widower)\b|^i\s+am\s+a\s+(?P<w2>widow|widower)\b", re.I
)


def _relationship(out: _Facts, clause: _Clause, entity: _Entity, *, rule: str, past: bool) -> None:
    relation = entity.relation or ""
    out.add(
        clause,
        type="people",
        content=f"{relation.capitalize()}'s name is {entity.label}",
        key=f"people|{entity.ref}|relationship",
        value=relation,
        confidence=0.85 if not past else 0.75,
        importance=2,
        fact_type="relationship",
        rule=rule,
        entities=(entity,),
        entity_type=entity.entity_type,
    )


def _deceased(out: _Facts, clause: _Clause, entity: _Entity, *, rule: str) -> None:
    out.deceased.add(entity.ref)
    out.add(
        clause,
        type="people",
        content=f"{entity.subject} has died",
        key=f"people|{entity.ref}|deceased",
        value="deceased",
        confidence=0.85,
        importance=3,
        fact_type="fact",
        rule=rule,
        entities=(entity,),
        entity_type=entity.entity_type,
    )


def _rule_people(clause: _Clause, out: _Facts) -> None:
    text = clause.text
    for match in _MY_REL_NAME.finditer(text):
        name = _clean_name(match.group("called")) if match.group("called") else match.group("name")
        if not _is_name(name):
            continue
        entity = _relative(match.group("rel"), name)
        if entity:
            _relationship(out, clause, entity, rule="people.my_relation_name", past=False)
            if match.group("late"):
                _deceased(out, clause, entity, rule="people.late")
    for match in _NAME_IS_MY_REL.finditer(text):
        if not _is_name(match.group("name")):
            continue
        entity = _relative(match.group("rel"), match.group("name"))
        if entity:
            past = match.group("verb").strip() == "was"
            _relationship(out, clause, entity, rule="people.name_is_my_relation", past=past)
            if match.group("late"):
                _deceased(out, clause, entity, rule="people.late")
    for match in _MY_REL_IS_CALLED.finditer(text):
        name = _clean_name(match.group("name"))
        entity = _relative(match.group("rel"), name) if name else None
        if entity:
            past = "was" in (match.group("verb"), match.group("verb2"))
            _relationship(out, clause, entity, rule="people.my_relation_is_called", past=past)
            if match.group("late"):
                _deceased(out, clause, entity, rule="people.late")
    if match := _HAVE_A_REL.match(text):
        name = _clean_name(match.group("name")) if match.group("name") else None
        entity = _relative(match.group("rel"), name)
        if entity and name:
            _relationship(out, clause, entity, rule="people.have_a_relation_called", past=False)
        elif entity:
            out.add(
                clause,
                type="people",
                content=f"Has a {entity.relation}",
                key=f"people|self|has:{entity_slug(entity.relation or '')}",
                value="1",
                confidence=0.8,
                importance=1,
                fact_type="relationship",
                rule="people.have_a_relation",
            )
    if _HAVE_COUNT.match(text):
        # "I have two sons and a daughter": every counted relation in the list.
        for match in _COUNTED.finditer(text):
            count_word = match.group("count").lower()
            count = int(count_word) if count_word.isdigit() else _NUMBERS[count_word]
            noun = re.sub(r"\s+", " ", match.group("noun").lower())
            what = _PLURALS.get(noun) or _RELATIONS[noun]
            out.add(
                clause,
                type="people",
                content=f"Has {match.group('count')} {noun}",
                key=f"people|self|{'count' if noun in _PLURALS else 'has'}:{entity_slug(what)}",
                value=str(count),
                confidence=0.8,
                importance=1,
                fact_type="fact",
                rule="people.count",
            )
    for match in _DIED.finditer(text):
        rel = match.group("rel") or match.group("rel2")
        raw_name = match.group("name") or match.group("name2")
        name = raw_name if _is_name(raw_name) else None
        entity = _relative(rel, name)
        if entity and entity.ref not in out.deceased:
            _deceased(out, clause, entity, rule="people.died")
    if match := _WIDOW.match(text):
        word = (match.group("w") or match.group("w2")).lower()
        out.add(
            clause,
            type="profile",
            content=f"Is a {word}",
            key="profile|self|marital_status",
            value="widowed",
            confidence=0.85,
            importance=2,
            fact_type="fact",
            rule="people.widowed",
        )
