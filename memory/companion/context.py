"""The turn's context: what the companion's LLM sees, built from the per-turn memory query.

`context_build` reads (never writes): the conversation's per-turn query
(`memory.conversations.selectors.memory_query`), the story to offer, the confirmed facts that fit
the message, and the caregivers' settings, then renders them with `memory.companion.prompt`.
"""

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from memory.companion import continuity, narratives
from memory.companion import prompt as context
from memory.companion.models import Narrative
from memory.conversations import escalation as escalation_detector
from memory.conversations import repeats
from memory.conversations.emotion import EmotionReading
from memory.conversations.models import MemoryPolicy, Trajectory
from memory.conversations.selectors import (
    WINDOW_DISTRESSED,
    MemoryQueryResult,
    memory_query,
    texts_before,
)
from memory.core.person import CaregiverContext
from memory.core.screening import Approvals
from memory.facts import search, usage

# --- Context assembly ------------------------------------------------------------------------

# Anchors are looked for in this many of the session's latest messages.
ANCHOR_MESSAGES = 40
# A story is offered when the person repeats a question or is upset; a first, calm question
# gets Clara's own answer.
NARRATIVE_DISTRESS = 0.5
_UPSET = {"anxious", "fearful", "lonely", "sad"}


@dataclass(frozen=True)
class ContextResult:
    rendered: context.RenderedContext
    query: MemoryQueryResult
    narrative: Narrative | None
    escalation: escalation_detector.Escalation

    @property
    def chronic_repetition_pattern(self) -> bool:
        return self.query.repeat_count >= context.CHRONIC_AT


def _wants_narrative(query: MemoryQueryResult) -> bool:
    reading = query.current_emotion
    return (
        query.repeat_count > 0
        # A question the person keeps asking day after day: a memory-loop answer from the first
        # time it comes up today (the other sessions only choose the story; the prompt never
        # hears of them).
        or query.cross_session_repeat_count >= narratives.CROSS_SESSION_LOOP_AT
        or reading.distress_score >= NARRATIVE_DISTRESS
        or reading.emotion in _UPSET
    )


def _answer_helps(query: MemoryQueryResult) -> bool:
    """Whether Clara's last answer to this question is helping: the person is not getting more
    upset. Then consistency comes first (the same reassurance, a story on its theme)."""
    return query.current_emotion.trajectory != Trajectory.ESCALATING


def _told_themes(narrative_ids: list[str], person_id) -> list[str]:
    if not narrative_ids:
        return []
    tags_by_id = narratives.theme_tags_of(narrative_ids, person_id=person_id)
    themes: dict[str, None] = {}
    for narrative_id in narrative_ids:
        for tag in tags_by_id.get(narrative_id) or []:
            themes.setdefault(tag, None)
    return list(themes)


def _anchor_texts(query: MemoryQueryResult) -> list[str]:
    """The session's latest ANCHOR_MESSAGES texts, oldest first: the ones the memory query
    already read and decrypted, and only the older ones read here."""
    latest = [text for _role, text, _sequence in query.latest][-ANCHOR_MESSAGES:]
    if len(query.latest) < WINDOW_DISTRESSED or len(latest) >= ANCHOR_MESSAGES:
        return latest  # the query read the whole session, or enough of it
    older = texts_before(
        session_id=query.session.id,
        sequence_number=query.latest[0][2],
        limit=ANCHOR_MESSAGES - len(latest),
    )
    return older + latest


@dataclass(frozen=True)
class TurnFacts:
    """Caregiver-confirmed facts for one turn: the pinned ones (each reaches the prompt) and the
    others (the prompt keeps the first prompt.MAX_FACTS)."""

    pinned: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)
    # The memories' ids, in the same order (their use is recorded: memory/facts/usage.py).
    pinned_ids: list[uuid.UUID] = field(default_factory=list)
    other_ids: list[uuid.UUID] = field(default_factory=list)

    @property
    def all(self) -> list[str]:
        return self.pinned + self.others


def _person_reads(person_id: uuid.UUID | None) -> dict[str, tuple[str, list]]:
    """What the turn reads about the session's person beside the session's own rows (one round
    trip on PostgreSQL): their companion's memory policy and whether this process's copy of
    their memories is current."""
    if person_id is None:
        return {}
    return {"policy": continuity.policy_read(person_id), "facts": search.turn_scope_read(person_id)}


def confirmed_facts_for(
    *,
    person_id: uuid.UUID | None,
    message: str,
    now: datetime | None = None,
    scope_rows: list[tuple] | None = None,
) -> TurnFacts:
    """Caregiver-confirmed facts for this turn: name and top preferences, pinned facts, and the
    confirmed facts whose words match the message. Unconfirmed ones never reach the prompt.

    Keyword matching only (no embedding of the message), to keep the turn fast.
    """
    facts = TurnFacts()
    if person_id is None:
        return facts
    picked = search.turn_facts(person_id=person_id, message=message, at=now, scope_rows=scope_rows)
    seen: set = set()
    for memory in picked:
        if memory.id not in seen and memory.confirmed:
            seen.add(memory.id)
            (facts.pinned if memory.pinned else facts.others).append(memory.content)
            (facts.pinned_ids if memory.pinned else facts.other_ids).append(memory.id)
    return facts


def agreed_answer_for(
    about: CaregiverContext, *, message: str, question_type: str | None, meaning=None
) -> str | None:
    """The family's agreed answer for this message: to the repeated question it asks again
    (by words or meaning, memory.conversations.repeats.asks_the_same), else to its kind of
    question (the five kinds of the first profile)."""
    for agreed in about.agreed_questions:
        if repeats.asks_the_same(agreed.question, message, meaning):
            return agreed.answer
    if question_type:
        return about.agreed_answers.get(question_type) or None
    return None


_HOME_WORDS = frozenset({"home", "house", "live", "living", "lives", "room", "place"})


def _profile_words(about: CaregiverContext) -> tuple[str, str, str]:
    """By name, else by the pronoun the caregivers chose: ("Peggy's", "Peggy", "lives")."""
    poss = f"{about.name}'s" if about.name else about.possessive
    subject = about.name or about.subject.capitalize()
    lives = "live" if not about.name and about.subject == "they" else "lives"
    return poss, subject, lives


def contact_fact(about: CaregiverContext, contact) -> str:
    """A family contact from the settings as one sentence: "Sarah is her daughter"."""
    poss, _subject, _lives = _profile_words(about)
    fact = (
        f"{contact.name} is {poss} {contact.relation}"
        if contact.relation
        else (f"{contact.name} is someone in {poss} life")
    )
    if contact.visit_day:
        fact += f", who usually visits on {contact.visit_day}"
    return fact


def home_fact(about: CaregiverContext) -> str:
    _poss, subject, lives = _profile_words(about)
    return f"{subject} {lives} at {about.home}"


def profile_facts_for(about: CaregiverContext, *, message: str) -> list[str]:
    """What the caregivers entered in the person's settings (people in their life, their home)
    that this message touches, as facts. Not confirmed by staff (every member of the team edits
    the profile): the prompt quotes them as [family profile] and screens them.
    Nothing is added for a message that names none of them (keeps the prompt short)."""
    said = {word.strip(".,!?;:'\"").lower() for word in message.split()}
    said |= {word.removesuffix("'s") for word in said}
    facts = []
    for contact in about.family:
        names = {contact.name.lower(), *contact.name.lower().split()}
        if said & names or (contact.relation and contact.relation.lower() in said):
            facts.append(contact_fact(about, contact))
    if about.home and (said & _HOME_WORDS or said & set(about.home.lower().split())):
        facts.append(home_fact(about))
    return facts


def context_build(
    *,
    session_id: uuid.UUID,
    message: str,
    emotion: EmotionReading | None = None,
    now: datetime | None = None,
    organisation_id: uuid.UUID | None = None,
) -> ContextResult:
    """What the companion's LLM sees this turn, built by the dementia-safe rules. Stores nothing."""
    query = memory_query(
        session_id=session_id,
        message=message,
        emotion=emotion,
        now=now,
        organisation_id=organisation_id,
        also=_person_reads,
    )
    session = query.session
    reading = query.current_emotion
    about = CaregiverContext.from_blob(query.caregiver_context, display_name=query.display_name)
    approvals = Approvals.of(session.person_id, session.approved_texts)
    avoid, known = list(about.avoid_topics), list(about.known_topics)

    # Only the bot's own reading may raise the flag on its own (escalation.detect).
    flagged = escalation_detector.detect(
        message,
        emotion=emotion.emotion if emotion else None,
        distress=emotion.distress_score if emotion else 0.0,
    )
    if (
        session.person_id is not None
        and continuity.policy_from(query.also["policy"]) == MemoryPolicy.CONTINUOUS
    ):
        # A companion outside dementia care: one stream across sessions (continuity.py). The
        # dementia-safe prompt's story and facts are not chosen: none of them would reach the
        # LLM, so none may be recorded as told or used.
        rendered = continuity.stream_render(person_id=session.person_id, message=message, now=now)
        return ContextResult(rendered=rendered, query=query, narrative=None, escalation=flagged)
    chosen = None
    helping = _answer_helps(query)
    if _wants_narrative(query):
        chosen = narratives.narrative_choose(
            person_id=session.person_id,
            session_id=session.id,
            question_type=query.question_type,
            emotion=reading.emotion,
            distress=reading.distress_score,
            repeat_count=query.repeat_count,
            avoid_topics=avoid,
            now=now,
            used_in_session=query.used_narrative_ids,
            cross_session_repeats=query.cross_session_repeat_count,
            last_answer=query.last_answer,
            answer_helped=helping,
            approvals=approvals,
        )
    recent_texts = _anchor_texts(query)
    feelings = [
        context.Feeling(record.emotion, record.distress_score, record.trajectory)
        for record in query.emotion_history
    ] + [context.Feeling(reading.emotion, reading.distress_score, reading.trajectory)]
    agreed_answer = agreed_answer_for(
        about, message=message, question_type=query.question_type, meaning=query.meaning
    )
    remembered = confirmed_facts_for(
        person_id=session.person_id, message=message, now=now, scope_rows=query.also.get("facts")
    )
    from_profile = profile_facts_for(about, message=message)
    inputs = context.ContextInputs(
        agreed_answer=agreed_answer,
        facts=remembered.others,
        profile_facts=from_profile,
        pinned_facts=remembered.pinned,
        name=about.name,
        pronoun=about.subject,
        message=message,
        window=[context.Turn(m.role, m.content, m.meaning) for m in query.conversation_window],
        repeat_count=query.repeat_count,
        feelings=feelings,
        narrative=context.NarrativeSeed(chosen.text, tuple(chosen.theme_tags)) if chosen else None,
        told_themes=_told_themes(query.used_narrative_ids, query.session.person_id),
        anchors=context.find_anchors([*recent_texts, message]),
        known_topics=known,
        avoid_topics=avoid,
        escalate=flagged.escalate,
        # Within this session only, and only while it helps: the same reassurance, kept.
        reassurance=query.last_answer if helping else None,
        approvals=approvals,
    )
    rendered = context.render(inputs)
    # The facts this prompt holds count as used, once in this conversation (after the response:
    # a job writes it). The others are cut at MAX_FACTS, after the profile's own.
    usage.note(
        remembered.pinned_ids
        + remembered.other_ids[: max(0, context.MAX_FACTS - len(from_profile))],
        session_id=session.id,
        at=now,
    )
    return ContextResult(rendered=rendered, query=query, narrative=chosen, escalation=flagged)


def context_for_bot(
    *,
    session_id: UUID,
    message: str,
    emotion: EmotionReading | None = None,
    occurred_at: datetime | None = None,
    organisation_id: uuid.UUID | None = None,
) -> dict[str, Any]:
    """This turn's context in the shape of the /context response. Stores nothing.

    Shared by the /context endpoint and the `get_context` agent tool, so both build a turn the same
    way.
    """
    result = context_build(
        session_id=session_id,
        message=message,
        emotion=emotion,
        now=occurred_at,
        organisation_id=organisation_id,
    )
    query, reading = result.query, result.query.current_emotion
    narrative = None
    if result.narrative is not None:
        narrative = {
            "id": result.narrative.id,
            "mode": "seed",
            "text": result.narrative.text,
            "category": result.narrative.category,
            "theme_tags": result.narrative.theme_tags,
        }
    return {
        "system_prompt": result.rendered.system_prompt,
        "messages": result.rendered.messages,
        "max_tokens": result.rendered.max_tokens,
        "narrative": narrative,
        "analysis": {
            "is_repeat": query.is_repeat,
            "repeat_count": query.repeat_count,
            "question_type": query.question_type,
            "cross_session_repeat_count": query.cross_session_repeat_count,
            "emotion": reading.emotion,
            "distress_score": reading.distress_score,
            "trajectory": reading.trajectory,
            "window_size": query.window_size,
            "escalate": result.escalation.escalate,
            "escalation_reason": result.escalation.reason,
            "chronic_repetition_pattern": result.chronic_repetition_pattern,
        },
    }
