"""Rules about what is coming up or just happened: visits, calls, appointments."""

import re
from typing import Any

from memory.facts.extraction.core import (
    _CAP_WORD,
    _LATE,
    _NAME,
    _PARENTS,
    _PAST_TIME_RE,
    _PLURAL,
    _PLURALS,
    _REL,
    _RELATIVE_TIME,
    _TIME_RE,
    CONFLICT_CONFIDENCE,
    PARENT_VISIT_CONFIDENCE,
    _about_them,
    _alternation,
    _article,
    _Clause,
    _Entity,
    _Facts,
    _is_name,
    _key_words,
    _relative,
    _tidy,
    _when_text,
    entity_ref,
    entity_slug,
)

# --- Rules: events ----------------------------------------------------------------------------

_EVENT_VERBS = {
    "coming": "visit",
    "visiting": "visit",
    "popping": "visit",
    "dropping": "visit",
    "calling": "call",
    "phoning": "call",
    "ringing": "call",
    "taking": "take",
    "going": "go",
    "picking": "pick_up",
    "bringing": "bring",
    "having": "have",
    "getting": "get",
    "staying": "stay",
    "moving": "move",
    "starting": "start",
    "flying": "fly",
    "driving": "drive",
    "waiting": "wait",
    "home": "return",
    "back": "return",
}
_PAST_EVENT_VERBS = {
    "came": "visit",
    "visited": "visit",
    "popped in": "visit",
    "dropped in": "visit",
    "phoned": "call",
    "rang": "call",
    "called": "call",
    "took me": "take",
}
# Events whose key names what they are about: "go:hospital", not just "go".
_EVENT_WITH_OBJECT = {"go", "take", "bring", "have", "get", "move", "start", "pick_up", "drive"}
_EVENT_VERB = _alternation(set(_EVENT_VERBS) - {"home", "back"})
_AUX = r"(?P<aux>is|are|am|'s|'re|'m|will\s+be|'ll\s+be|is\s+going\s+to\s+be)"
_EVENT_SUBJECT = (
    rf"(?:my\s+{_LATE}(?:(?P<rel>{_REL})(?:,?\s+{_NAME},?)?|(?P<group>{_PLURAL}|family))"
    rf"|(?P<bare>{_CAP_WORD})|(?P<i>i|we))"
)
_EVENT = re.compile(
    rf"^{_EVENT_SUBJECT}\s*{_AUX}\s+(?P<verb>{_EVENT_VERB})\b(?P<rest>.*)$"
    rf"|^{_EVENT_SUBJECT.replace('(?P<', '(?P<h_')}\s*(?P<h_aux>will\s+be|'ll\s+be|is\s+going\s+to\s+be)"
    rf"\s+(?P<h_verb>home|back)\b(?P<h_rest>.*)$",
    re.I,
)
_PAST_VISIT = re.compile(
    rf"^{_EVENT_SUBJECT}\s+(?P<verb>{_alternation(_PAST_EVENT_VERBS)})\b(?P<rest>.*)$",
    re.I,
)
_APPOINTMENT = re.compile(
    r"^i(?:'ve|\s+have)?\s+(?:got\s+)?(?P<det>a|an|my|the)\s+(?P<what>(?:[a-z']+\s+){0,2}(?:appointment|check-?up|operation|hairdresser|dentist|doctor|chiropodist|optician|clinic|scan|hospital\s+visit|day\s+centre|club))(?=\s|$)(?P<rest>.*)$",
    re.I,
)
_BIRTHDAY_EVENT = re.compile(
    r"^(?:it(?:'s|\s+is)\s+my\s+(?P<what>birthday|anniversary)\s+(?P<rest>.+)"
    r"|my\s+(?P<what2>birthday|anniversary)\s+(?:is|'s)\s+(?P<rest2>.+))$",
    re.I,
)
_AUX_WORDS = {"'s": "is", "'re": "are", "'m": "am", "'ll be": "will be"}


def _event_subject(match: re.Match, out: _Facts, prefix: str = "") -> _Entity | None:
    """Who the event is about: a relative, a group, a named person; None for the person."""
    group = match.group(prefix + "group")
    if match.group(prefix + "rel"):
        raw = match.group(prefix + "name")
        return _relative(match.group(prefix + "rel"), raw if _is_name(raw) else None)
    if group:
        label = _PLURALS.get(group.lower(), group.lower()).capitalize()
        ref = entity_ref("person", label)
        return _Entity(ref, label, None, "person") if ref else None
    bare = match.group(prefix + "bare")
    if bare:
        if not _is_name(bare):
            return _relative(bare, None)  # "Mum is coming": a relation word used as a name
        ref = entity_ref("person", bare)
        if ref is None:
            return None
        # A name this message already gave a relation keeps it ("my son Tom ... Tom is").
        relation = next(
            (
                f.value
                for f in out.facts
                if ref in f.entity_refs and f.subtype["fact_type"] == "relationship"
            ),
            None,
        )
        return _Entity(ref, bare, relation, "person")
    return None


def _rule_events(clause: _Clause, out: _Facts) -> None:
    text = clause.text
    if match := _APPOINTMENT.match(text):
        time = _TIME_RE.search(match.group("rest"))
        if time:
            what = _tidy(match.group("what")).lower()
            det = match.group("det").lower()
            det = {"my": "their", "an": "a"}.get(det, det)
            det = _article(what) if det == "a" else det
            out.add(
                clause,
                type="event",
                content=f"Has {det} {what} {_when_text(time.group('time'))}",
                key=f"event|self|appointment:{_key_words(what)}",
                value=entity_slug(time.group("time")),
                confidence=0.6,
                importance=1,
                fact_type="event",
                rule="event.appointment",
            )
        return
    if match := _BIRTHDAY_EVENT.match(text):
        what = (match.group("what") or match.group("what2")).lower()
        rest = _tidy(match.group("rest") or match.group("rest2"))
        time = _TIME_RE.match(rest)
        if time and _RELATIVE_TIME.match(rest):
            out.add(
                clause,
                type="event",
                content=f"Their {what} is {_when_text(time.group('time'))}",
                key=f"event|self|{what}",
                value=entity_slug(time.group("time")),
                confidence=0.6,
                importance=1,
                fact_type="event",
                rule="event.birthday",
            )
        return
    prefix, past = "", False
    match = _EVENT.match(text)
    if match and match.group("h_verb"):
        prefix = "h_"
    if not match:
        match = _PAST_VISIT.match(text)
        past = match is not None
    if not match:
        return
    entity = _event_subject(match, out, prefix)
    subject_word = match.group(prefix + "i")
    if subject_word is None and entity is None:
        return
    rest = match.group(prefix + "rest")
    time_match = (_PAST_TIME_RE if past else _TIME_RE).search(rest)
    if past and time_match is None:
        return  # "my son visited" with no when is history, not a dated event
    when = _when_text(time_match.group("time")) if time_match else None
    verb = re.sub(r"\s+", " ", match.group(prefix + "verb").lower())
    lemma = (_PAST_EVENT_VERBS if past else _EVENT_VERBS)[verb]
    detail = _tidy((_PAST_TIME_RE if past else _TIME_RE).sub("", rest))
    attribute = lemma
    if lemma in _EVENT_WITH_OBJECT and detail:
        attribute = f"{lemma}:{_key_words(detail, limit=4)}"
    aux = "" if past else match.group(prefix + "aux").lower()
    aux = re.sub(r"\s+", " ", _AUX_WORDS.get(aux, aux))
    if subject_word is not None:
        # The person themself: "Is going to the hospital on Tuesday".
        aux = {"am": "is", "are": "is"}.get(aux, aux)
        content = f"{aux} {verb}{rest}"
    else:
        content = f"{entity.subject} {aux} {verb}{rest}"
    confidence = 0.55 if past else 0.6
    extra: dict[str, Any] = {}
    if subject_word is not None and subject_word.lower() == "we":
        extra["with_others"] = True
    if entity is not None and entity.ref in out.deceased and not past:
        # The sentence itself says this person has died: a time-shifted memory, not a plan.
        confidence = CONFLICT_CONFIDENCE
        extra["conflict"] = "deceased_person_expected"
    elif entity is not None and entity.relation in _PARENTS and not past:
        confidence = PARENT_VISIT_CONFIDENCE
        extra["caution"] = "parent_expected"
    out.add(
        clause,
        type="event",
        content=_about_them(_tidy(content)),
        key=f"event|{entity.ref if entity else 'self'}|{attribute}",
        value=entity_slug(when) if when else "upcoming",
        confidence=confidence,
        importance=1,
        fact_type="event",
        rule="event.past" if past else "event.coming",
        entities=(entity,) if entity else (),
        entity_type=entity.entity_type if entity else "self",
        **extra,
    )
