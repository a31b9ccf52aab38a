"""Continuity mode: one unbroken conversation across sessions and channels, for companions outside
dementia care.

Clara's rule (dementia_safe, the default) puts only the current session into the prompt. A
persona with the `continuous` policy instead gets the person's whole stream: the latest turns
verbatim up to a token budget, everything older folded into a compaction summary that grows as
the stream does, the companion's notes with the time each was written, and who the person is.
What to keep when compacting is an instruction the companion edits itself: the `compaction`
field of its notes (`update_status`).

A person in a care team is in dementia care: switching them, or their persona, to `continuous`
is refused, so nothing here can weaken Clara's rules for them.
"""

import re
import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memory.companion import prompt as context
from memory.companion.models import StreamSummary
from memory.conversations import sql as storage
from memory.conversations.models import (
    DEFAULT_PERSONA,
    ChatMessage,
    MemoryPolicy,
    Person,
    Persona,
    default_organisation_id,
)
from memory.core.errors import Conflict, Invalid, NotFound
from memory.core.person import CaregiverContext
from memory.core.screening import Approvals
from memory.facts import search
from memory.facts.models import PersonNotes

CHARS_PER_TOKEN = 4
# Recent turns kept word for word, by estimated tokens.
RECENT_TOKEN_BUDGET = 1500
# The compaction summary is kept under this many characters (oldest lines drop first).
SUMMARY_MAX_CHARS = 2400
# Notes field holding the companion's own instructions for compaction.
COMPACTION_NOTE = "compaction"
DEFAULT_COMPACTION = "Keep names of people and places, plans and promises, and how they felt."
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")
_PLAN = re.compile(
    r"\b(will|going to|tomorrow|tonight|next|plan|promise|remind|call|visit|meet|birthday)\b",
    re.IGNORECASE,
)


# --- Policy -----------------------------------------------------------------------------------


def persona_for(person: Person) -> Persona:
    """The person's persona in their organisation; Clara's dementia-safe default without a row."""
    persona = Persona.objects.filter(
        organisation_id=person.organisation_id, slug=person.persona
    ).first()
    return persona or Persona(
        organisation_id=person.organisation_id,
        slug=person.persona,
        display_name=person.persona.title(),
    )


# The person's persona in their own organisation: people's primary key, then
# uniq_persona_org_slug. Hand-written because it runs on every /context turn: compiling the ORM
# form (two scalar subqueries) cost about 0.25 ms a turn more than the query itself.
PERSON_POLICY = """
    SELECT pe.memory_policy FROM people p
    JOIN personas pe ON pe.organisation_id = p.organisation_id AND pe.slug = p.persona
    WHERE p.id = %s"""


def policy_of(person_id: uuid.UUID) -> str:
    """The policy of a person's companion in one query (the per-turn path)."""
    return policy_from(storage.fetch(policy_read(person_id)))


def policy_read(person_id: uuid.UUID) -> tuple[str, list]:
    """`policy_of`'s read, for a caller that sends it with its own reads (`policy_from`)."""
    return PERSON_POLICY, [storage.db_uuid(person_id)]


def policy_from(rows: list[tuple]) -> str:
    return rows[0][0] if rows else MemoryPolicy.DEMENTIA_SAFE


def _in_care(person_ids) -> bool:
    from django.apps import apps

    if not apps.is_installed("dashboard"):
        return False
    membership = apps.get_model("dashboard", "CareTeamMembership")
    return membership.objects.filter(person_id__in=person_ids).exists()


def person_persona_set(
    *, person_id: uuid.UUID, persona: str, organisation_id: uuid.UUID | None = None
) -> Person:
    """Give a person another of their organisation's personas (or Clara's default).

    Refused when that would lift dementia care; another organisation's person is NotFound.
    """
    people = Person.objects.filter(id=person_id)
    if organisation_id is not None:
        people = people.filter(organisation_id=organisation_id)
    person = people.first()
    if person is None:
        raise NotFound("No such person.", field="person_id")
    target = Persona.objects.filter(organisation_id=person.organisation_id, slug=persona).first()
    if target is None and persona == DEFAULT_PERSONA:
        target = persona_for(Person(organisation_id=person.organisation_id, persona=persona))
    if target is None:
        raise Invalid(f"No persona {persona!r}.", field="persona")
    if target.memory_policy == MemoryPolicy.CONTINUOUS and _in_care([person.id]):
        raise Conflict(
            "This person is in a care team: their companion stays dementia-safe.",
            field="persona",
        )
    person.persona = target.slug
    person.save(update_fields=["persona"])
    return person


def persona_policy_set(
    *,
    slug: str,
    policy: str,
    display_name: str | None = None,
    organisation_id: uuid.UUID | None = None,
) -> Persona:
    """Create one of an organisation's personas or set its memory policy (the default
    organisation's without one). `continuous` is refused while anyone in care talks with it."""
    organisation_id = organisation_id or default_organisation_id()
    if policy not in MemoryPolicy.values:
        raise Invalid(f"Unknown memory policy {policy!r}.", field="memory_policy")
    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,31}", slug):
        raise Invalid("A persona slug is lowercase letters, digits, - and _.", field="slug")
    with transaction.atomic():
        persona, _ = Persona.objects.select_for_update().get_or_create(
            organisation_id=organisation_id,
            slug=slug,
            defaults={"display_name": display_name or slug.title()},
        )
        if display_name:
            persona.display_name = display_name
        if policy == MemoryPolicy.CONTINUOUS:
            people = Person.objects.filter(
                organisation_id=organisation_id, persona=slug
            ).values_list("id", flat=True)
            if _in_care(people):
                raise Conflict(
                    "People in a care team talk with this persona: it stays dementia-safe.",
                    field="memory_policy",
                )
        persona.memory_policy = policy
        persona.save(update_fields=["memory_policy", "display_name"])
    return persona


# --- The stream -------------------------------------------------------------------------------


@dataclass(frozen=True)
class StreamTurn:
    id: uuid.UUID
    role: str
    content: str
    channel: str | None


def _tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def _stream(
    person_id: uuid.UUID,
    persona: str,
    *,
    after: uuid.UUID | None = None,
    limit: int | None = None,
):
    """The person's messages with this persona across sessions, newest first (optionally only
    those after one). Each persona has its own stream: a person moved to another persona starts
    a new one, and their conversations with the first stay its own.

    Ordered by time, then by sequence within a session: both messages of an exchange share a
    timestamp, and ids made in the same millisecond do not sort by creation.
    """
    rows = ChatMessage.objects.filter(person_id=person_id, session__persona=persona)
    if after is not None:
        mark = ChatMessage.objects.filter(id=after).values("timestamp", "sequence_number").first()
        if mark is not None:
            rows = rows.filter(
                Q(timestamp__gt=mark["timestamp"])
                | Q(timestamp=mark["timestamp"], sequence_number__gt=mark["sequence_number"])
            )
    rows = rows.order_by("-timestamp", "-sequence_number").values_list(
        "id", "role", "content", "channel"
    )
    if limit is not None:
        rows = rows[:limit]
    return [StreamTurn(*row) for row in rows]


# How far back a continuous companion's search of its conversations reaches, in messages.
SEARCHABLE_MESSAGES = 2000


def searchable_stream(person: Person) -> list[tuple[str, str]]:
    """(role, content) of the person's conversation with their persona, oldest first, as far
    back as a search reaches: what a continuous companion may look up."""
    turns = _stream(person.id, person.persona, limit=SEARCHABLE_MESSAGES)
    return [(turn.role, turn.content) for turn in reversed(turns)]


def recent_turns(
    person_id: uuid.UUID, persona: str, *, budget: int | None = None
) -> list[StreamTurn]:
    """The newest turns that fit the token budget, oldest first."""
    budget = RECENT_TOKEN_BUDGET if budget is None else budget
    picked: list[StreamTurn] = []
    used = 0
    # Read in pages so a long stream is not loaded whole.
    for turn in _stream(person_id, persona, limit=400):
        cost = _tokens(turn.content)
        if picked and used + cost > budget:
            break
        picked.append(turn)
        used += cost
    return picked[::-1]


def _instructions(notes: dict) -> str:
    field = notes.get(COMPACTION_NOTE) or {}
    return str(field.get("value") or DEFAULT_COMPACTION)


def _fold(turns: list[StreamTurn], instructions: str) -> list[str]:
    """Extractive compaction: the lines worth keeping, under the companion's instructions.

    Kept: the person's lines that name someone or somewhere (capitalised words beyond the first),
    that make plans or promises, or that use a word of the instructions; the companion's promises.
    """
    wanted = {w.lower() for w in _WORD.findall(instructions) if len(w) > 3}
    lines = []
    for turn in turns:
        text = " ".join(turn.content.split())
        words = _WORD.findall(text)
        named = any(w[0].isupper() for w in words[1:])
        keep = (
            (turn.role == ChatMessage.Role.USER and (named or _PLAN.search(text)))
            or (turn.role == ChatMessage.Role.ASSISTANT and _PLAN.search(text))
            or any(w.lower() in wanted for w in words)
        )
        if keep:
            who = "They" if turn.role == ChatMessage.Role.USER else "You"
            via = f" (by {turn.channel})" if turn.channel else ""
            lines.append(f"{who} said{via}: {text[:240]}")
    return lines


def stream_compact(
    *, person: Person, keep_from: uuid.UUID | None, at: datetime | None = None
) -> StreamSummary | None:
    """Fold every turn older than `keep_from` that is not folded yet into the summary."""
    at = at or timezone.now()
    if keep_from is None:
        return StreamSummary.objects.filter(person=person, persona=person.persona).first()
    with transaction.atomic():
        summary = (
            StreamSummary.objects.select_for_update()
            .filter(person=person, persona=person.persona)
            .first()
        )
        after = summary.covers_through if summary else None
        unfolded = _stream(person.id, person.persona, after=after)[::-1]
        cut = next((i for i, t in enumerate(unfolded) if t.id == keep_from), len(unfolded))
        older = unfolded[:cut]
        if not older:
            return summary
        notes = _notes(person)
        lines = _fold(older, _instructions(notes))
        text = "\n".join([*(summary.text.splitlines() if summary else []), *lines])
        while len(text) > SUMMARY_MAX_CHARS and "\n" in text:
            text = text.split("\n", 1)[1]
        if summary is None:
            summary = StreamSummary(person=person, persona=person.persona)
        summary.text = text[-SUMMARY_MAX_CHARS:]
        summary.covers_through = older[-1].id
        summary.messages_covered = (summary.messages_covered or 0) + len(older)
        summary.updated_at = at
        summary.save()
    return summary


def _notes(person: Person) -> dict:
    notes = PersonNotes.objects.filter(person=person, persona=person.persona).first()
    return dict(notes.fields) if notes else {}


def _label(key: str) -> str:
    """A note's name as a label: letters, digits and spaces only (it cannot close the label)."""
    return re.sub(r"[^\w ]+", " ", key).strip()[:40] or "note"


def stream_render(*, person_id: uuid.UUID, message: str, now: datetime | None = None):
    """The continuous companion's prompt: identity, notes, compaction, recent turns, message."""
    person = Person.objects.get(id=person_id)
    recent = recent_turns(person.id, person.persona)
    summary = stream_compact(person=person, keep_from=recent[0].id if recent else None, at=now)
    notes = _notes(person)
    about = CaregiverContext.of(person)
    who = context.Who(about.name, about.subject)
    persona = persona_for(person)

    zone = about.zone
    local = timezone.localtime(now or timezone.now(), zone)
    where = about.time_zone if about.time_zone and zone.key != "UTC" else "UTC"
    sections = [
        f"You are {persona.display_name}, a companion in one continuing conversation with "
        f"{about.name or 'someone'}. It carries on across days and channels; pick up where you "
        "left off.",
        f"It is now {local:%A} {local.day} {local:%B %Y}, {local:%H:%M} ({where}), "
        + who.say("where {name} {is}."),
        who.say(
            "What you remember of {obj}: who {name} {is} (facts the family or {name} shared), "
            "your own notes, a summary of your earlier conversation and its latest turns word "
            "for word, below. To look further back in your conversations, call the "
            "search_memory tool with scope 'conversations'."
        ),
    ]
    # Stored text enters only as quoted data, after the instructions (memory/companion/prompt.py).
    notes_part = context.Notes(Approvals.of(person.id, person.approved_texts))
    facts = [m.content for m in search.always_inject(person_id=person.id, at=now)]
    facts += [m.content for m in search.foundation_memories(person_id=person.id, at=now)]
    if notes_part.admit(context.CONFIRMED, list(dict.fromkeys(facts))):
        sections.append(who.say("Who {name} {is}: the notes marked [confirmed by staff] below."))
    shown = {k: v for k, v in notes.items() if k != COMPACTION_NOTE}
    written = False
    for key, value in sorted(shown.items()):
        when = str(value.get("updated_at", ""))[:16].replace("T", " ")
        source = context.Source(f"your note: {_label(key)}, noted {when}")
        written = bool(notes_part.admit(source, [str(value.get("value") or "")])) or written
    if written:
        sections.append(who.say("Your notes about {obj} are marked [your note] below."))
    if summary is not None and summary.text:
        lines = notes_part.admit(context.EARLIER, summary.text.splitlines())
        if lines:
            sections.append(
                "A summary of your earlier conversation is marked [earlier conversation] below."
            )
    sections += notes_part.sections(who)
    messages = [{"role": t.role, "content": t.content} for t in recent]
    messages.append({"role": ChatMessage.Role.USER.value, "content": message})
    return context.RenderedContext(
        system_prompt="\n\n".join(sections),
        messages=messages,
        max_tokens=context.DEFAULT_MAX_TOKENS,
        held_back=tuple(notes_part.held_back),
    )
