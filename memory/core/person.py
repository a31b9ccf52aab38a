"""What the caregivers told Clara about a person, as one typed value.

`Person.caregiver_context` is an encrypted JSON blob (new settings need no migration). Its keys
are camelCase for historical reasons (`preferredName`, `knownTopics`, ...); this module is the
only place that knows them. Everything else reads a `CaregiverContext`:

    about = CaregiverContext.of(person)
    about.name            # what to call the person: preferred name, else display name
    about.subject         # "she", "he" or "they", from the pronouns the caregivers chose
    about.zone            # the person's ZoneInfo (UTC when unset or unknown)
    about.zone_set        # whether caregivers chose a zone that exists
    about.home            # where the person lives ("Beech House")
    about.room            # their room there, if any ("Room 12"): said in an alert's e-mail
    about.family          # people the caregivers entered (name, relation, visit day)
    about.agreed_questions  # agreed answers to questions the person repeats, in their words

and writes with `about.updated(...)`, which returns the blob to store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

# The stored keys. Other keys in the blob are kept untouched by `updated`.
PREFERRED_NAME = "preferredName"
PRONOUNS = "pronouns"
TIME_ZONE = "timezone"
KNOWN_TOPICS = "knownTopics"
AVOID_TOPICS = "avoidTopics"
AGREED_ANSWERS = "agreedAnswers"
HOME = "home"
ROOM = "room"
FAMILY = "familyContacts"
AGREED_QUESTIONS = "agreedQuestions"

_FIELDS = {
    "preferred_name": PREFERRED_NAME,
    "pronouns": PRONOUNS,
    "time_zone": TIME_ZONE,
    "known_topics": KNOWN_TOPICS,
    "avoid_topics": AVOID_TOPICS,
    "agreed_answers": AGREED_ANSWERS,
    "home": HOME,
    "room": ROOM,
    "family": FAMILY,
    "agreed_questions": AGREED_QUESTIONS,
}
_SUBJECTS = {"she": "she", "he": "he", "they": "they"}
_OBJECTS = {"she": "her", "he": "him", "they": "them"}
_POSSESSIVES = {"she": "her", "he": "his", "they": "their"}


def pronoun_forms(subject: str) -> tuple[str, str, str]:
    """("she", "her", "her"), ("he", "him", "his") or ("they", "them", "their") for a subject
    pronoun; "they" for anything else."""
    subject = _SUBJECTS.get(subject, "they")
    return subject, _OBJECTS[subject], _POSSESSIVES[subject]


@dataclass(frozen=True)
class FamilyContact:
    """Someone in the person's life as the caregivers entered them in the settings."""

    name: str
    relation: str = ""
    visit_day: str = ""

    def to_blob(self) -> dict[str, str]:
        blob = {"name": self.name, "relation": self.relation, "usualVisitDay": self.visit_day}
        return {key: value for key, value in blob.items() if value}


@dataclass(frozen=True)
class AgreedQuestion:
    """A question the person repeats, in their words, with the answer the family agreed.

    `question_type` is the repetition record's kind; `fingerprint` its keyed content words
    (memory.conversations.repetition), so the dashboard finds the same question again. The
    companion matches a new message against `question` by meaning.
    """

    question: str
    answer: str
    question_type: str = ""
    fingerprint: str = ""

    def to_blob(self) -> dict[str, str]:
        blob = {
            "question": self.question,
            "answer": self.answer,
            "questionType": self.question_type,
            "fingerprint": self.fingerprint,
        }
        return {key: value for key, value in blob.items() if value}


def _family(value: Any) -> tuple[FamilyContact, ...]:
    if not isinstance(value, (list, tuple)):
        return ()
    found = []
    for item in value:
        if isinstance(item, Mapping) and str(item.get("name") or "").strip():
            found.append(
                FamilyContact(
                    name=str(item["name"]).strip(),
                    relation=str(item.get("relation") or "").strip(),
                    visit_day=str(item.get("usualVisitDay") or "").strip(),
                )
            )
    return tuple(found)


def _agreed_questions(value: Any) -> tuple[AgreedQuestion, ...]:
    if not isinstance(value, (list, tuple)):
        return ()
    found = []
    for item in value:
        if not isinstance(item, Mapping):
            continue
        question = str(item.get("question") or "").strip()
        answer = str(item.get("answer") or "").strip()
        if question and answer:
            found.append(
                AgreedQuestion(
                    question=question,
                    answer=answer,
                    question_type=str(item.get("questionType") or "").strip(),
                    fingerprint=str(item.get("fingerprint") or "").strip(),
                )
            )
    return tuple(found)


def zone_exists(name: str) -> bool:
    """Whether `name` is a time zone the system knows ("Europe/London"; not "" or "Mars/Base")."""
    if not name or name != name.strip():
        return False
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


class HasCaregiverContext(Protocol):
    caregiver_context: Any
    display_name: str


def _texts(value: Any) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)):
        return ()
    return tuple(text for text in (str(item).strip() for item in value) if text)


@dataclass(frozen=True)
class CaregiverContext:
    preferred_name: str = ""
    pronouns: str = ""
    time_zone: str = ""
    known_topics: tuple[str, ...] = ()
    avoid_topics: tuple[str, ...] = ()
    # One agreed answer per kind of question (QuestionType values), as the family worded it.
    agreed_answers: Mapping[str, str] = field(default_factory=dict)
    home: str = ""
    room: str = ""
    family: tuple[FamilyContact, ...] = ()
    agreed_questions: tuple[AgreedQuestion, ...] = ()
    display_name: str = ""
    # The whole stored blob, so an update keeps the keys this type does not know.
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_blob(
        cls, blob: Mapping[str, Any] | None, *, display_name: str = ""
    ) -> CaregiverContext:
        blob = blob if isinstance(blob, Mapping) else {}
        answers = blob.get(AGREED_ANSWERS)
        return cls(
            preferred_name=str(blob.get(PREFERRED_NAME) or "").strip(),
            pronouns=str(blob.get(PRONOUNS) or "").strip(),
            time_zone=str(blob.get(TIME_ZONE) or "").strip(),
            known_topics=_texts(blob.get(KNOWN_TOPICS)),
            avoid_topics=_texts(blob.get(AVOID_TOPICS)),
            agreed_answers={
                str(kind): str(text).strip()
                for kind, text in (answers.items() if isinstance(answers, Mapping) else ())
                if str(text).strip()
            },
            home=str(blob.get(HOME) or "").strip(),
            room=str(blob.get(ROOM) or "").strip(),
            family=_family(blob.get(FAMILY)),
            agreed_questions=_agreed_questions(blob.get(AGREED_QUESTIONS)),
            display_name=(display_name or "").strip(),
            raw=dict(blob),
        )

    @classmethod
    def of(cls, person: HasCaregiverContext) -> CaregiverContext:
        return cls.from_blob(person.caregiver_context, display_name=person.display_name)

    # --- What to call the person ------------------------------------------------------------

    def name_or(self, fallback: str) -> str:
        """The preferred name, else the display name, else `fallback`."""
        return self.preferred_name or self.display_name or fallback

    @property
    def name(self) -> str:
        return self.name_or("")

    @property
    def subject(self) -> str:
        """'she', 'he' or 'they' (the first part of "she/her"); 'they' when not given."""
        first = self.pronouns.split("/")[0].strip().lower()
        return _SUBJECTS.get(first, "they")

    @property
    def object(self) -> str:
        return _OBJECTS[self.subject]

    @property
    def possessive(self) -> str:
        return _POSSESSIVES[self.subject]

    # --- Where the person lives -------------------------------------------------------------

    @property
    def zone(self) -> ZoneInfo:
        """The person's time zone; UTC when missing or unknown."""
        try:
            return ZoneInfo(self.time_zone or "UTC")
        except (ZoneInfoNotFoundError, ValueError):
            return ZoneInfo("UTC")

    @property
    def zone_set(self) -> bool:
        """Whether the caregivers set a time zone that exists (else times are shown in UTC)."""
        return zone_exists(self.time_zone)

    # --- Writing --------------------------------------------------------------------------------

    def updated(self, **changes: Any) -> dict[str, Any]:
        """The blob to store with `changes` applied (by field name); empty values remove a key."""
        blob = dict(self.raw)
        for name, value in changes.items():
            key = _FIELDS[name]
            if name in ("family", "agreed_questions"):
                value = [item.to_blob() for item in value]
            elif isinstance(value, Mapping):
                value = {str(k): str(v).strip() for k, v in value.items() if str(v).strip()}
            elif isinstance(value, Iterable) and not isinstance(value, str):
                value = list(_texts(list(value)))
            elif isinstance(value, str):
                value = value.strip()
            if value:
                blob[key] = value
            else:
                blob.pop(key, None)
        return blob


def person_zone(person: HasCaregiverContext) -> ZoneInfo:
    """The person's time zone (caregivers set it); UTC when missing or unknown."""
    return CaregiverContext.of(person).zone
