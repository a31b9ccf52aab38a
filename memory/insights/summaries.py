"""Summaries of conversations: per session, a rolling one every 4 turns, and a versioned spine.

Written for caregivers, in plain words; none of it feeds the companion's prompt. Summaries are
extractive by default and need no network. With CLARA_LLM_URL set (an OpenAI-compatible
server), a session's one-liner and "what mattered" are asked of the LLM at low temperature,
and the extractive ones are kept on any failure.
"""

import json
import logging
import re
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, Sum
from django.utils import timezone

from memory.conversations import escalation, repetition
from memory.conversations.anchors import find_anchors
from memory.conversations.models import (
    DEFAULT_PERSONA,
    ChatMessage,
    DetectedEmotion,
    NarrativeUsage,
    Person,
    QuestionType,
    RepetitionRecord,
    Session,
)
from memory.core import llm
from memory.core.errors import NotFound
from memory.core.person import CaregiverContext
from memory.facts import commitments
from memory.insights.models import RollingSummary, SummarySpine

logger = logging.getLogger(__name__)

SUMMARY_VERSION = 1
ROLLING_EVERY_MESSAGES = 8  # 4 turns
ROLLING_MAX_CHARS = 600
SPINE_EVERY_MESSAGES = 20
SPINE_RECENT_MESSAGES = 200
MAX_POINTS = 3
MAX_OPEN_LOOPS = 5
MAX_SPINE_LOOPS = 8
QUOTE_CHARS = 120
LLM_TIMEOUT_SECONDS = 10.0
LLM_TRANSCRIPT_MESSAGES = 40

# Question types in caregivers' words.
TOPIC_WORDS = {
    QuestionType.LOCATION: "where this place is",
    QuestionType.IDENTITY: "who people are",
    QuestionType.TIME: "the day or time",
    QuestionType.ACTIVITY: "what to do next",
    QuestionType.PERSON: "family and friends",
}
PEOPLE_WORDS = frozenset(
    """
    husband wife mum mom mother dad father son daughter brother sister grandson granddaughter
    grandchildren baby nurse friend neighbour neighbor
    """.split()
)
# The pronouns the caregivers chose (CaregiverContext.subject); "they" when not given.
_POSSESSIVE = {"she": "her", "he": "his", "they": "their"}
_OBJECT = {"she": "her", "he": "him", "they": "them"}

# Things the person wanted or was waiting for: (pattern, how to say it, in the third person).
_WISHES = [
    (r"\bi (?:really )?(?:want|wanna|would like|'d like) to (?P<what>[^.!?,;]+)", "wants to {}"),
    (r"\bi (?:need|have|'ve got|got) to (?P<what>[^.!?,;]+)", "feels they need to {}"),
    (r"\bi miss (?P<what>[^.!?,;]+)", "misses {}"),
    (r"\bcan i (?P<what>(?:see|go|call|have|visit) [^.!?,;]+)", "wants to {}"),
    (
        r"\bwhen (?:is|will|are) (?P<what>[^.!?,;]+?) (?:coming|come|be here|visit\w*)\b",
        "is waiting for {} to come",
    ),
    (r"\bwhere (?:is|are|'s) (?P<what>my [^.!?,;]+)", "is looking for {}"),
]
_WISH_PATTERNS = [(re.compile(pattern), phrase) for pattern, phrase in _WISHES]
_MAX_WISH_WORDS = 8


@dataclass(frozen=True)
class _Message:
    role: str
    content: str
    sequence_number: int


@dataclass(frozen=True)
class _Conversation:
    """What a summary is built from: one session's messages and readings, in order."""

    name: str
    pronoun: str
    messages: list[_Message]
    emotions: list[tuple[str, float]]  # (emotion, distress) of each of the person's messages
    question_types: list[str]
    repeats: int
    narratives: list[dict]

    @property
    def person_texts(self) -> list[str]:
        return [m.content for m in self.messages if m.role == ChatMessage.Role.USER]


# --- Extractive pieces --------------------------------------------------------------------------


def _name_and_pronoun(person: Person | None) -> tuple[str, str]:
    if person is None:
        return "The person", "they"
    about = CaregiverContext.of(person)
    return about.name_or("The person"), about.subject


def _third_person(text: str, pronoun: str) -> str:
    """'see my daughter' -> 'see her daughter' (or 'their'), for a caregiver reading about them."""
    swaps = {
        "my": _POSSESSIVE[pronoun],
        "me": _OBJECT[pronoun],
        "i": pronoun,
        "myself": f"{_OBJECT[pronoun]}self" if pronoun != "they" else "themselves",
        "mine": {"she": "hers", "he": "his", "they": "theirs"}[pronoun],
    }
    words = text.split()[:_MAX_WISH_WORDS]
    return " ".join(swaps.get(word.lower(), word) for word in words)


def open_loops(
    texts: list[str], *, pronoun: str = "they", limit: int = MAX_OPEN_LOOPS
) -> list[str]:
    """Things the person wanted or waited for, in the order first said, each once."""
    found: dict[str, None] = {}
    for text in texts:
        plain = text.replace("\u2019", "'")
        for pattern, phrase in _WISH_PATTERNS:
            for match in pattern.finditer(plain.lower()):
                # Take the words from the original text so names keep their capitals.
                what = plain[match.start("what") : match.end("what")].strip()
                if what:
                    loop = phrase.format(_third_person(what, pronoun))
                    if pronoun != "they":
                        loop = loop.replace("feels they need", f"feels {pronoun} needs")
                    found.setdefault(loop, None)
    return list(found)[:limit]


def people_mentioned(texts: list[str], *, limit: int = 12) -> list[str]:
    """Names and family words in what the person said, most recent first."""
    anchors = find_anchors(texts, limit=100)
    return [a for a in anchors if a[:1].isupper() or a in PEOPLE_WORDS][:limit]


def _dominant(emotions: list[str]) -> str | None:
    """Most frequent; a tie goes to the one felt most recently (as for the session's own)."""
    if not emotions:
        return None
    counts = Counter(emotions)
    last_seen = {emotion: index for index, emotion in enumerate(emotions)}
    return max(counts, key=lambda emotion: (counts[emotion], last_seen[emotion]))


def emotional_arc(emotions: list[str]) -> str | None:
    """'anxious → calm': the dominant feeling of the first third against the last third."""
    if not emotions:
        return None
    third = max(1, -(-len(emotions) // 3))
    start, end = _dominant(emotions[:third]), _dominant(emotions[-third:])
    return f"{start} → {end}"


def _key_topics(question_types: list[str]) -> list[dict]:
    counts = Counter(q for q in question_types if q != QuestionType.GENERAL)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [{"question_type": qtype, "count": count} for qtype, count in ordered]


def _duration_words(seconds: float) -> str:
    minutes = round(seconds / 60)
    if minutes < 1:
        return "under a minute"
    if minutes < 90:
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} hour{'s' if hours != 1 else ''} {minutes} minutes"


def _quote(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > QUOTE_CHARS:
        text = text[: QUOTE_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return f"“{text}”"


def _what_mattered(conversation: _Conversation, *, escalated: bool) -> list[str]:
    """A few of the person's own sentences that carried the most, in the order said."""
    points = []
    if escalated:
        points.append("Clara flagged a moment that needed a person's help.")
    user_messages = [m for m in conversation.messages if m.role == ChatMessage.Role.USER]
    seen, scored = set(), []
    for index, message in enumerate(user_messages):
        fingerprint = repetition.fingerprint(message.content)
        if fingerprint in seen or not fingerprint:
            continue  # the first telling of a repeated question is enough
        seen.add(fingerprint)
        distress = conversation.emotions[index][1] if index < len(conversation.emotions) else 0
        score = distress
        score += 0.3 if open_loops([message.content]) else 0
        score += 0.3 if find_anchors([message.content]) else 0
        score += 0.1 if len(message.content.split()) >= 4 else 0
        scored.append((-score, index, message.content))
    chosen = sorted(sorted(scored)[:MAX_POINTS], key=lambda item: item[1])
    points += [f"Said {_quote(text)}" for _, _, text in chosen]
    return points


def _one_liner(conversation: _Conversation, *, duration: float, escalated: bool) -> str:
    name = conversation.name
    if not conversation.messages:
        return f"{name} opened a conversation with Clara but nothing was said."
    line = f"{name} talked with Clara for {_duration_words(duration)}"
    feelings = [emotion for emotion, _ in conversation.emotions]
    if feelings:
        third = max(1, -(-len(feelings) // 3))
        start, end = _dominant(feelings[:third]), _dominant(feelings[-third:])
        line += f", feeling {start} throughout" if start == end else f", from {start} to {end}"
    topics = _key_topics(conversation.question_types)
    if topics:
        line += f"; mostly asked about {TOPIC_WORDS[topics[0]['question_type']]}"
    line += "."
    if escalated:
        line += " A moment needed a person's help."
    return line


# --- Loading ----------------------------------------------------------------------------------


def _conversation_load(session: Session) -> _Conversation:
    name, pronoun = _name_and_pronoun(session.person)
    messages = [
        _Message(*row)
        for row in ChatMessage.objects.filter(session_id=session.id)
        .order_by("sequence_number")
        .values_list("role", "content", "sequence_number")
    ]
    emotions = list(
        DetectedEmotion.objects.filter(session_id=session.id)
        .order_by("message__sequence_number")
        .values_list("emotion", "distress_score")
    )
    records = list(
        RepetitionRecord.objects.filter(session_id=session.id)
        .order_by("message__sequence_number")
        .values_list("question_type", "repeat_count")
    )
    narratives = [
        {"id": narrative_id, "category": category, "mode": mode}
        for narrative_id, category, mode in NarrativeUsage.objects.filter(session_id=session.id)
        .order_by("message__sequence_number")
        .values_list("narrative_id", "category", "mode")
    ]
    return _Conversation(
        name=name,
        pronoun=pronoun,
        messages=messages,
        emotions=emotions,
        question_types=[qtype for qtype, _ in records],
        repeats=sum(1 for _, count in records if count > 0),
        narratives=narratives,
    )


# --- LLM (optional) ---------------------------------------------------------------------------

_LLM_INSTRUCTIONS = (
    "You write short notes for the family and care team of someone living with dementia, "
    "about one conversation they had with Clara, a companion. Use plain, kind, factual words. "
    "Say 'person', never 'patient'. Do not diagnose or give advice. Reply with JSON only: "
    '{"one_liner": "<one sentence>", "what_mattered": ["<point>", "<point>", "<point>"]} '
    "with at most three points."
)


def _llm_summary(conversation: _Conversation) -> tuple[str, list[str]] | None:
    """(one_liner, what_mattered) from the configured LLM, or None on any failure."""
    model = llm.chat_model(timeout=settings.CLARA_LLM_SUMMARY_TIMEOUT)
    if model is None or not conversation.messages:
        return None
    transcript = "\n".join(
        f"{conversation.name if m.role == ChatMessage.Role.USER else 'Clara'}: {m.content}"
        for m in conversation.messages[-LLM_TRANSCRIPT_MESSAGES:]
    )
    try:
        content = model.complete(
            [
                {"role": "system", "content": _LLM_INSTRUCTIONS},
                {"role": "user", "content": transcript},
            ],
            temperature=0.2,
            max_tokens=300,
        )
        content = re.sub(r"^```(?:json)?\s*|\s*```$", "", content)
        parsed = json.loads(content)
        one_liner = parsed["one_liner"].strip()
        points = [point.strip() for point in parsed["what_mattered"] if point.strip()]
        if not one_liner or not points or len(one_liner) > 400:
            raise ValueError("empty or overlong summary")
        return one_liner, points[:MAX_POINTS]
    except Exception as exc:  # any failure at all: the extractive summary stands
        logger.warning("LLM session summary failed (%r); keeping the extractive one", exc)
        return None


# --- Session summary --------------------------------------------------------------------------


def _is_current(summary: dict | None, session: Session) -> bool:
    # The close writes a fresh basic summary each time, without "summarizer"; so a summary
    # with it, of this version and this many messages, was computed after the latest close.
    return bool(
        summary
        and summary.get("summarizer")
        and summary.get("version") == SUMMARY_VERSION
        and summary.get("message_count") == session.message_count
    )


def session_summary_build(session: Session) -> dict:
    """The full summary of a session, extractive (or LLM where configured). Stores nothing."""
    conversation = _conversation_load(session)
    basic = session.session_summary or {}
    duration = basic.get("duration_seconds", round(session.duration_seconds()))
    escalated = session.escalation_triggered
    person_texts = conversation.person_texts
    # Escalations are stored per session, not per message: count the messages the built-in
    # detector flags (at least one when the session was flagged by the bot).
    escalations = sum(1 for m in person_texts if escalation.detect(m).escalate) or int(escalated)
    summary = {
        "duration_seconds": duration,
        "message_count": session.message_count,
        "dominant_emotion": basic.get("dominant_emotion", session.dominant_emotion),
        "escalation_triggered": escalated,
        "one_liner": _one_liner(conversation, duration=duration, escalated=escalated),
        "what_mattered": _what_mattered(conversation, escalated=escalated),
        # The session's open commitments first (plans and promises said outright), then wishes.
        "open_loops": list(
            dict.fromkeys(
                commitments.session_open_loops(session)
                + open_loops(person_texts, pronoun=conversation.pronoun)
            )
        )[:MAX_OPEN_LOOPS],
        "people_mentioned": people_mentioned(person_texts),
        "emotional_arc": emotional_arc([emotion for emotion, _ in conversation.emotions]),
        "key_topics": _key_topics(conversation.question_types),
        "notable_anchors": find_anchors([m.content for m in conversation.messages]),
        "narratives_used": conversation.narratives,
        "counts": {
            "messages": session.message_count,
            "person_messages": len(person_texts),
            "repeats": conversation.repeats,
            "escalations": escalations,
        },
        "summarizer": "extractive",
        "version": SUMMARY_VERSION,
        # Who it was written about: pages show the current name and pronouns in its place
        # (dashboard/naming.py), so a rename or new pronouns reach old summaries too.
        "written_as": {"name": conversation.name, "subject": conversation.pronoun},
    }
    if conversation.messages and person_texts:
        last = person_texts[-1].strip()
        if last.endswith("?"):
            loop = f"was still asking {_quote(last)}"
            summary["open_loops"] = (summary["open_loops"] + [loop])[:MAX_OPEN_LOOPS]
    llm = _llm_summary(conversation)
    if llm is not None:
        summary["one_liner"], summary["what_mattered"] = llm
        summary["summarizer"] = "llm"
    return summary


def session_summary_compute(*, session_id: uuid.UUID) -> dict:
    """Compute and store the full summary of a closed or expired session; returns it.

    Replaces the basic summary written at close (keeping its keys). Running it again changes
    nothing; an active session (resumed before this ran) is left alone.
    """
    session = Session.objects.select_related("person").filter(id=session_id).first()
    if session is None:
        raise NotFound("No session with this id.", field="session_id")
    if session.status == Session.Status.ACTIVE or _is_current(session.session_summary, session):
        return session.session_summary or {}
    # Built outside the lock: an LLM call may take seconds, and exchanges must not wait.
    summary = session_summary_build(session)
    with transaction.atomic():
        locked = Session.objects.select_for_update().get(id=session_id)
        if _is_current(locked.session_summary, locked):
            return locked.session_summary
        if (
            locked.status == Session.Status.ACTIVE
            or locked.message_count != session.message_count
            or locked.ended_at != session.ended_at
        ):
            # Resumed or re-closed meanwhile: the next close brings a fresh computation.
            return locked.session_summary or {}
        locked.session_summary = {**(locked.session_summary or {}), **summary}
        locked.save(update_fields=["session_summary"])
        return locked.session_summary


# --- Rolling summary and summary spine ----------------------------------------------------------


def _person_message_total(person_id: uuid.UUID) -> int:
    # Sessions have no persona yet: every session counts for the default one.
    total = Session.objects.filter(person_id=person_id).aggregate(total=Sum("message_count"))
    return total["total"] or 0


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0] + "…"


def rolling_text(conversation: _Conversation) -> str:
    """A few lines about the conversation so far, at most 600 characters.

    Written so it could one day sit in the companion's prompt: only this conversation, no
    counts, nothing about questions being asked again.
    """
    name = conversation.name
    parts = []
    arc = emotional_arc([emotion for emotion, _ in conversation.emotions])
    if arc:
        start, end = arc.split(" → ")
        parts.append(
            f"{name} has been feeling {start}."
            if start == end
            else f"{name} started out {start} and is now {end}."
        )
    topics = [TOPIC_WORDS[t["question_type"]] for t in _key_topics(conversation.question_types)]
    if topics:
        parts.append(f"Talked about {', '.join(topics[:3])}.")
    anchors = find_anchors([m.content for m in conversation.messages], limit=6)
    if anchors:
        parts.append(f"Mentioned {', '.join(anchors)}.")
    loops = open_loops(conversation.person_texts, pronoun=conversation.pronoun, limit=3)
    if loops:
        parts.append(f"{name} {'; '.join(loops)}.")
    if conversation.narratives:
        categories = dict.fromkeys(n["category"].replace("_", " ") for n in conversation.narratives)
        parts.append(f"Clara shared {', '.join(categories)}.")
    person_texts = conversation.person_texts
    if person_texts:
        parts.append(f"Last said {_quote(person_texts[-1])}.")
    return _truncate(" ".join(parts) or f"{name} and Clara have just started.", ROLLING_MAX_CHARS)


def session_person(session_id: uuid.UUID) -> uuid.UUID | None:
    """The person a session belongs to (None for an anonymous one); NotFound for no session."""
    session = Session.objects.filter(id=session_id).values("person_id").first()
    if session is None:
        raise NotFound("No session with this id.", field="session_id")
    return session["person_id"]


def rolling_summary_update(
    *,
    session_id: uuid.UUID,
    persona: str = DEFAULT_PERSONA,
    now: datetime | None = None,
    person_id: uuid.UUID | None = None,
) -> RollingSummary | None:
    """Rewrite the person's rolling summary once 8 more messages (4 turns) have come in.

    Counts the person's messages across sessions (not only this one's). A no-op
    (returns None) for an anonymous session or before 8 new messages, so reruns are harmless.
    `person_id`, when the caller already read it (`session_person`), saves reading it again.
    """
    now = now or timezone.now()
    if person_id is None:
        person_id = session_person(session_id)
    if person_id is None:
        return None
    with transaction.atomic():
        current = (
            RollingSummary.objects.select_for_update()
            .filter(person_id=person_id, persona=persona)
            .first()
        )
        total = _person_message_total(person_id)
        covered = current.messages_covered if current else 0
        if total - covered < ROLLING_EVERY_MESSAGES:
            return None
        # The person's latest conversation, whichever session asked for the update.
        latest = (
            Session.objects.select_related("person")
            .filter(person_id=person_id)
            .order_by("-last_activity_at", "-created_at")
            .first()
        )
        text = rolling_text(_conversation_load(latest))
        if current is None:
            # The person's first: another job may be writing it too (update_or_create settles
            # that race on the unique constraint).
            summary, _ = RollingSummary.objects.update_or_create(
                person_id=person_id,
                persona=persona,
                defaults={"text": text, "messages_covered": total, "updated_at": now},
            )
            return summary
        # The row is locked since it was read: write it as is, without reading it again.
        current.text, current.messages_covered, current.updated_at = text, total, now
        current.save(update_fields=["text", "messages_covered", "updated_at"])
        return current


def spine_content(person: Person) -> dict:
    """Profile, people and open loops of the person, from their sessions and latest messages."""
    name, pronoun = _name_and_pronoun(person)
    texts = list(
        ChatMessage.objects.filter(person_id=person.id, role=ChatMessage.Role.USER)
        .order_by("-timestamp", "-sequence_number")
        .values_list("content", flat=True)[:SPINE_RECENT_MESSAGES]
    )[::-1]
    feelings = (
        Session.objects.filter(person_id=person.id, dominant_emotion__isnull=False)
        .values("dominant_emotion")
        .annotate(sessions=Count("id"))
        .order_by("-sessions", "dominant_emotion")
    )
    topics = (
        RepetitionRecord.objects.filter(person_id=person.id)
        .exclude(question_type=QuestionType.GENERAL)
        .values("question_type")
        .annotate(asked=Count("id"))
        .order_by("-asked", "question_type")[:3]
    )
    sessions = Session.objects.filter(person_id=person.id, message_count__gt=0).count()
    return {
        "profile": {
            "name": name,
            "sessions": sessions,
            "first_seen": person.created_at.isoformat(),
            "usual_feeling": feelings[0]["dominant_emotion"] if feelings else None,
            "common_topics": [TOPIC_WORDS[row["question_type"]] for row in topics],
            "known_topics": list(CaregiverContext.of(person).known_topics),
        },
        "people": people_mentioned(texts),
        # Most recent first: what is on the person's mind now.
        "open_loops": open_loops(texts[::-1], pronoun=pronoun, limit=MAX_SPINE_LOOPS),
    }


def summary_spine_update(
    *, person_id: uuid.UUID, persona: str = DEFAULT_PERSONA, now: datetime | None = None
) -> SummarySpine | None:
    """Add a new spine version once 20 or more messages came in since the last; else None."""
    now = now or timezone.now()
    last = SummarySpine.objects.filter(person_id=person_id, persona=persona).order_by("-version")
    last = last.first()
    total = _person_message_total(person_id)
    due = total - (last.message_count if last else 0) >= SPINE_EVERY_MESSAGES
    if not due and last is not None:
        return None  # the person exists (they have a spine); not read at all
    person = Person.objects.filter(id=person_id).first()
    if person is None:
        raise NotFound("No person with this id.", field="person_id")
    if not due:
        return None
    version = (last.version if last else 0) + 1
    try:
        with transaction.atomic():
            return SummarySpine.objects.create(
                person=person,
                persona=persona,
                version=version,
                content=spine_content(person),
                message_count=total,
                created_at=now,
            )
    except IntegrityError:
        # A concurrent run wrote this version first; it covers the same messages.
        return SummarySpine.objects.get(person_id=person_id, persona=persona, version=version)
