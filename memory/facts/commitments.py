"""Commitments and open loops: what the companion promised and what the person planned.

A deterministic extractor reads each stored exchange (`tasks.extract_commitments`, enqueued
after the exchange commits): the companion's promises ("I'll remind you about the doctor",
"I will ask Sarah to ring") and the person's plans ("I'm going to call Ann on Sunday",
"tomorrow I'll bake a cake"). A due time is resolved in the person's time zone from the words
said with it (today, tonight, tomorrow, a weekday, next week, "at 3pm"), relative to when the
message was said. Commitments are kept per persona, shown to caregivers
(`commitments_for_person`) and in session summaries (`session_open_loops`), and closed by a
caregiver as done or dropped.

Dementia-safe: a person's plan may be confused ("I'm going to visit my mother" when their
mother died long ago). Commitments are for caregivers to read with care, never put in the
companion's prompt as something to hold the person to, remind them of, or check: nothing here
is read by the context builder, and nothing may be. A plan is a record of what was said, not a
fact about the world.

Nothing is extracted for a person whose memory is switched off (`Person.memory_enabled`).
"""

import re
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.db import transaction
from django.utils import timezone

from memory.conversations.models import ChatMessage, Person, Persona, Session
from memory.core.errors import Invalid, NotFound
from memory.core.person import CaregiverContext, person_zone
from memory.facts.models import Commitment

MAX_WORDS = 14
DEFAULT_HOUR = 12  # a day said without a time is due at midday, local
LIST_LIMIT = 200

# --- Extraction (pure) --------------------------------------------------------------------------

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
# Where a plan's words stop: the end of the clause, or a word that starts another thought.
_CLAUSE_END = re.compile(
    r"[,.!?;()\"]|:(?!\d)|\s(?:but|because|cos|although|though|unless)\s", re.I
)
_WHAT = r"(?P<what>[^.!?;]+)"

# The person's plans: first person (or "we"), future.
# (pattern, whether a place may follow instead of a verb: "going to the shops").
_PLAN_PATTERNS = [
    (
        re.compile(
            r"\b(?:i|we)(?:'m| am|'re| are) (?:going to|gonna|planning to|planning on) " + _WHAT
        ),
        True,
    ),
    (re.compile(r"\b(?:i|we)(?:'ll| will| shall) " + _WHAT), False),
    (re.compile(r"\b(?:i|we) (?:plan|intend|mean) to " + _WHAT), False),
    (re.compile(r"\b(?:i'm|i am|we're|we are) off to " + _WHAT), True),
]
# Verbs that make a sentence a feeling or a passing remark, not a plan ("I'm going to cry",
# "I'll be fine", "we'll see").
_NOT_PLANS = frozenset(
    """
    be cry die fall faint scream shout lose miss forget sleep rest sit stay wait try think
    manage cope feel need just never not probably tell let explode burst panic throw
    """.split()
)
# "I'll see Ann" is a plan; "I'll see what happens" is not.
_SEE_NOT_A_PLAN = frozenset("what how if about whether".split())
# After "going to", a place rather than a verb: "I'm going to the shops" is "go to the shops".
_PLACE_STARTS = frozenset(
    """
    the a an my our his her their church town school work mass chapel bingo lunch dinner tea
    """.split()
)
# The companion's promises: "I'll"/"I will"/"I'm going to"/"I promise to" + a verb that
# does something for the person later.
_PROMISE = re.compile(
    r"\bi(?:'ll| will| shall|'m going to| am going to| promise to| promise i'll) "
    r"(?:(?:also|definitely|certainly|gladly|happily|make sure to) )?"
    r"(?P<what>(?:remind|ask|tell|let|call|phone|ring|check|find out|make sure|look into|pass"
    r"|mention|text|message|send|write|arrange|remember|note|bring|come back)\b[^.!?;]*)"
)
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
# "last Sunday", "last night": the past, not a due date.
_WEEKDAY = re.compile(r"\b(?<!last )(?:on |this |next |coming )?(" + "|".join(_WEEKDAYS) + r")s?\b")
_PARTS_OF_DAY = [
    (re.compile(r"\btonight\b|\bthis evening\b|\btomorrow (?:night|evening)\b"), 19),
    (re.compile(r"\bafternoon\b"), 15),
    (re.compile(r"\bmorning\b"), 9),
    (re.compile(r"\b(?:noon|midday|lunchtime)\b"), 12),
    (re.compile(r"\bevening\b|(?<!last )\bnight\b"), 19),
]
_CLOCK = re.compile(
    r"\bat (?P<h>\d{1,2})(?::(?P<m>[0-5]\d))?(?:\s*(?P<ampm>a\.?m\.?|p\.?m\.?|o'clock))?"
    r"(?P<after>$|[,.!?;]|\s+(?:today|tomorrow|tonight|on|this|then|in the)\b)?"
)
_PRONOUNS = {
    "she": {"obj": "her", "pos": "her", "refl": "herself", "poss": "hers"},
    "he": {"obj": "him", "pos": "his", "refl": "himself", "poss": "his"},
    "they": {"obj": "them", "pos": "their", "refl": "themselves", "poss": "theirs"},
}


_SUBJECT_AFTER = frozenset("know that when if and so because whether how what".split())


@dataclass(frozen=True)
class Found:
    """One commitment read from a message: kind, caregiver-readable text, due time (UTC)."""

    kind: str
    text: str
    due_at: datetime | None


def _plain(text: str) -> str:
    return text.replace("\u2019", "'").replace("\u2018", "'")


def _clause(words: str) -> str:
    """The plan's own words: up to the end of its clause, at most MAX_WORDS."""
    cut = _CLAUSE_END.search(words)
    if cut:
        words = words[: cut.start()]
    return " ".join(words.split()[:MAX_WORDS]).strip(" -—'\"")


def _third_person(text: str, *, pronoun: str, speaker: str, companion: str) -> str:
    """Rewrite a message's words for a caregiver: the person is `pronoun`, the companion by name.

    The person's "my" becomes "her"; in the companion's words "you/your" is the person and
    "I/me/my" the companion.
    """
    forms = _PRONOUNS.get(pronoun, _PRONOUNS["they"])
    if speaker == ChatMessage.Role.USER:
        swaps = {"my": forms["pos"], "me": forms["obj"], "myself": forms["refl"],
                 "mine": forms["poss"], "i": pronoun, "our": "their", "us": "them"}  # fmt: skip
    else:
        swaps = {"you": forms["obj"], "your": forms["pos"], "yourself": forms["refl"],
                 "yours": forms["poss"], "i": companion, "me": companion,
                 "my": f"{companion}'s", "myself": companion}  # fmt: skip
    out: list[str] = []
    for word in text.split():
        core = word.rstrip(",.!?;:")
        swap = swaps.get(core.lower())
        if core.lower() == "you" and speaker != ChatMessage.Role.USER:
            # "let Sarah know you called": after these words "you" does something, so "she".
            if not out or out[-1].lower() in _SUBJECT_AFTER:
                swap = pronoun
        out.append(swap + word[len(core) :] if swap else word)
    return " ".join(out)


def _plan_text(what: str, *, place_may_follow: bool) -> str | None:
    """The plan as a verb phrase ("call Ann on Sunday"), or None if it is not a plan."""
    words = _clause(what).split()
    if not words:
        return None
    first = words[0].lower()
    if place_may_follow and (first in _PLACE_STARTS or (words[0][0].isupper() and first != "i")):
        words = ["go", "to", *words]  # "going to the shops", "going to Brighton"
        first = "go"
    if first == "be" and len(words) > 1 and words[1].lower().endswith("ing"):
        first = words[1].lower()  # "I'll be seeing Ann": judge by "seeing"
        if first[:-3] in _NOT_PLANS:
            return None
    elif first in _NOT_PLANS:
        return None
    if first == "see" and len(words) > 1 and words[1].lower() in _SEE_NOT_A_PLAN:
        return None
    if len(words) < 2:
        return None  # "I'll try", "we'll see": nothing to follow up
    return " ".join(words)


def _promise_text(what: str) -> str | None:
    words = _clause(what).split()
    if len(words) < 2:
        return None  # "I'll check": too vague to follow
    lowered = [w.lower() for w in words]
    if lowered[0] == "tell" and lowered[1] in ("you", "a", "another", "the"):
        return None  # "I'll tell you a story": said now, not owed
    if lowered[0] == "let" and "know" not in lowered[:4]:
        return None  # "I'll let you rest"
    if lowered[0] == "remember" and lowered[1] in ("that", "you", "this"):
        # "I'll remember that": the companion keeps it; still worth a caregiver's eye.
        return " ".join(words)
    return " ".join(words)


def _day_from_words(lowered: str, today: date) -> date | None:
    if "day after tomorrow" in lowered:
        return today + timedelta(days=2)
    if re.search(r"\btomorrow\b", lowered):
        return today + timedelta(days=1)
    match = _WEEKDAY.search(lowered)
    if match:
        ahead = (_WEEKDAYS.index(match.group(1)) - today.weekday()) % 7
        # A weekday said on that very day means the next one ("on Sunday", said on a Sunday),
        # unless it is "this Sunday" / "today".
        if ahead == 0 and not match.group(0).startswith("this "):
            ahead = 7
        return today + timedelta(days=ahead)
    if re.search(r"\bnext week\b", lowered):
        return today + timedelta(days=7 - today.weekday())
    if re.search(r"\b(?:this|at the) weekend\b", lowered):
        return today + timedelta(days=max(5 - today.weekday(), 0))
    if re.search(r"\b(?:today|later|tonight|this (?:morning|afternoon|evening))\b", lowered):
        return today
    return None


def _time_from_words(lowered: str) -> time | None:
    clock = next(
        (
            m
            for m in _CLOCK.finditer(lowered)
            # A bare number needs the clause to end or a day to follow: "at 3 Elm Street" is
            # an address, "at 3 tomorrow" a time.
            if m["m"] or m["ampm"] or m["after"] is not None
        ),
        None,
    )
    if clock:
        hour, minute = int(clock["h"]), int(clock["m"] or 0)
        ampm = (clock["ampm"] or "").replace(".", "")
        if ampm == "pm" and hour < 12:
            hour += 12
        elif ampm == "am" and hour == 12:
            hour = 0
        elif ampm in ("", "o'clock") and 1 <= hour <= 7:
            hour += 12  # "at 3" is an afternoon plan, not 3 in the night
        if hour <= 23:
            return time(hour, minute)
    for pattern, hour in _PARTS_OF_DAY:
        if pattern.search(lowered):
            return time(hour)
    return None


def due_at(sentence: str, *, said_at: datetime, zone: ZoneInfo) -> datetime | None:
    """When a sentence says its plan is due, in UTC; None when it names no day or time.

    Resolved in the person's zone from when it was said. A day without a time is due at
    midday; a time without a day is today, or tomorrow if that time has already passed.
    """
    lowered = _plain(sentence).lower()
    local_now = said_at.astimezone(zone)
    day = _day_from_words(lowered, local_now.date())
    at = _time_from_words(lowered)
    if day is None and at is None:
        return None
    if day is None:
        day = local_now.date()
        if datetime.combine(day, at, tzinfo=zone) <= local_now:
            day += timedelta(days=1)
    local = datetime.combine(day, at or time(DEFAULT_HOUR), tzinfo=zone)
    return local.astimezone(UTC)


def extract(
    text: str,
    *,
    role: str,
    said_at: datetime,
    zone: ZoneInfo,
    pronoun: str = "they",
    companion: str = "Clara",
) -> list[Found]:
    """Promises (the companion's messages) or plans (the person's) in one message, each once.

    Questions are skipped ("Am I going to see Ann?" is not a plan). Pure: stores nothing.
    """
    found: dict[tuple[str, str], Found] = {}
    for sentence in _SENTENCE.split(_plain(text)):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?"):
            continue
        lowered = sentence.lower()
        # (the commitment's words, the sentence up to and including them)
        candidates: list[tuple[str | None, str]] = []
        if role == ChatMessage.Role.USER:
            kind = Commitment.Kind.PLAN
            for pattern, place_may_follow in _PLAN_PATTERNS:
                for m in pattern.finditer(lowered):
                    words = _plan_text(
                        sentence[m.start("what") : m.end("what")],
                        place_may_follow=place_may_follow,
                    )
                    candidates.append((words, f"{sentence[: m.start('what')]} {words}"))
        else:
            kind = Commitment.Kind.PROMISE
            for m in _PROMISE.finditer(lowered):
                words = _promise_text(sentence[m.start("what") : m.end("what")])
                candidates.append((words, f"{sentence[: m.start('what')]} {words}"))
        for words, said in candidates:
            if not words:
                continue
            readable = _third_person(words, pronoun=pronoun, speaker=role, companion=companion)
            key = (kind, readable.lower())
            if key not in found:
                # The due time comes from what led up to the commitment and its own clause,
                # not from a later one ("I'll write to Peter, but not today").
                when = due_at(said, said_at=said_at, zone=zone)
                found[key] = Found(kind=kind, text=readable[:500], due_at=when)
    return list(found.values())


# --- Storage ------------------------------------------------------------------------------------


def _pronoun(person: Person) -> str:
    pronoun = CaregiverContext.of(person).subject
    return pronoun if pronoun in _PRONOUNS else "they"


def companion_name(persona_slug: str, *, organisation_id: uuid.UUID | None = None) -> str:
    """The companion's name for caregivers: the persona's display name ("Clara" by default)."""
    personas = Persona.objects.filter(slug=persona_slug)
    if organisation_id is not None:
        personas = personas.filter(organisation_id=organisation_id)
    name = personas.values_list("display_name", flat=True).first()
    return name or persona_slug.replace("-", " ").replace("_", " ").title()


def commitments_extract(*, message_id: uuid.UUID) -> list[Commitment]:
    """Store the commitments of one exchange; returns the new rows. Idempotent.

    Give the person's message id: its reply (the next message of the session) is read too. An
    assistant message on its own (a check-in) is read alone. A message already read (it has
    commitments) is skipped, and an open commitment with the same words for the same person
    and persona is not stored twice (people say their plans more than once). Runs under the
    person's row lock, so two runs of the task cannot both insert.
    """
    message = ChatMessage.objects.filter(id=message_id).first()
    if message is None:
        raise NotFound("No message with this id.", field="message_id")
    if message.person_id is None:
        return []  # an anonymous session: nobody to keep it for
    messages = [message]
    if message.role == ChatMessage.Role.USER:
        reply = ChatMessage.objects.filter(
            session_id=message.session_id,
            sequence_number=message.sequence_number + 1,
            role=ChatMessage.Role.ASSISTANT,
        ).first()
        if reply is not None:
            messages.append(reply)
    created: list[Commitment] = []
    with transaction.atomic():
        person = Person.objects.select_for_update().filter(id=message.person_id).first()
        if person is None or not person.memory_enabled:
            return []
        zone, pronoun = person_zone(person), _pronoun(person)
        companion = companion_name(person.persona, organisation_id=person.organisation_id)
        # Compared here, not in SQL: the text may be stored encrypted. idx_commitments_open.
        open_now = {
            (kind, text.lower())
            for kind, text in Commitment.objects.filter(
                person=person, persona=person.persona, status=Commitment.Status.OPEN
            ).values_list("kind", "text")
        }
        for said in messages:
            if Commitment.objects.filter(source_message_id=said.id).exists():
                continue
            for item in extract(
                said.content,
                role=said.role,
                said_at=said.timestamp,
                zone=zone,
                pronoun=pronoun,
                companion=companion,
            ):
                if (item.kind, item.text.lower()) in open_now:
                    continue
                open_now.add((item.kind, item.text.lower()))
                created.append(
                    Commitment.objects.create(
                        person=person,
                        persona=person.persona,
                        kind=item.kind,
                        text=item.text,
                        due_at=item.due_at,
                        source_message=said,
                        session_id=said.session_id,
                        created_at=said.timestamp,
                    )
                )
    return created


def commitment_close(
    *, commitment_id: uuid.UUID, status: str, at: datetime | None = None
) -> Commitment:
    """Close a commitment as done or dropped. Closing again keeps the first time, takes the
    new status (a caregiver may correct "dropped" to "done"). Invalid status or NotFound."""
    if status not in (Commitment.Status.DONE, Commitment.Status.DROPPED):
        raise Invalid('status is "done" or "dropped".', field="status")
    with transaction.atomic():
        commitment = Commitment.objects.select_for_update().filter(id=commitment_id).first()
        if commitment is None:
            raise NotFound("No commitment with this id.", field="commitment_id")
        commitment.status = status
        commitment.closed_at = commitment.closed_at or at or timezone.now()
        commitment.save(update_fields=["status", "closed_at"])
    return commitment


def commitments_for_person(
    *,
    person_id: uuid.UUID,
    status: str | None = Commitment.Status.OPEN,
    persona: str | None = None,
    limit: int = LIST_LIMIT,
) -> list[Commitment]:
    """A person's commitments, newest first: open ones by default, `status=None` for all.

    For caregivers (dashboard, admin); never for the companion's prompt. Reads only.
    """
    if status is not None and status not in Commitment.Status.values:
        raise Invalid(f"Unknown status {status!r}.", field="status")
    rows = Commitment.objects.filter(person_id=person_id)
    if status is not None:
        rows = rows.filter(status=status)
    if persona is not None:
        rows = rows.filter(persona=persona)
    # idx_commitments_open
    return list(rows.order_by("-created_at")[:limit])


def describe(
    commitment: Commitment,
    *,
    zone: ZoneInfo | None = None,
    organisation_id: uuid.UUID | None = None,
) -> str:
    """One line for a caregiver, the person the implied subject: "plans to call Ann on Sunday
    (Sun 29 Mar)", "was told Clara would remind her about the doctor"."""
    if commitment.kind == Commitment.Kind.PROMISE:
        line = (
            f"was told {companion_name(commitment.persona, organisation_id=organisation_id)} "
            f"would {commitment.text}"
        )
    else:
        line = f"plans to {commitment.text}"
    if commitment.due_at is not None:
        local = commitment.due_at.astimezone(zone or UTC)
        line += f" ({local:%a} {local.day} {local:%b})"
    return line


def session_open_loops(session: Session) -> list[str]:
    """The session's open commitments as summary open loops, in the order said."""
    rows = Commitment.objects.filter(session_id=session.id, status=Commitment.Status.OPEN)
    # A person's plan and Clara's promise in one exchange share a timestamp, and ids made in the
    # same millisecond are in random order: the message's place in the conversation decides.
    rows = list(rows.order_by("created_at", "source_message__sequence_number", "id"))
    if not rows:
        return []
    zone = person_zone(session.person) if session.person is not None else ZoneInfo("UTC")
    return [describe(row, zone=zone, organisation_id=session.organisation_id) for row in rows]
