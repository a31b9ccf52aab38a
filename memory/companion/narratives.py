"""Choosing a narrative for this turn: the story or grounding text Clara leans on (and never a hint of repetition).

`narrative_choose` runs every turn. It makes at most three small indexed reads:

1. the candidates: active narratives of the library (person is null) and of this person
   (index `idx_narratives_active_person`; the library is a few dozen rows);
2. the narratives already told in this session, which are never told twice in one session
   (index `idx_narrative_session`);
3. for a known person only, what they heard lately: their latest 200 narrative usages within
   14 days (through their index on person), grouped in SQL by narrative so at most one row per
   narrative comes back, each usage with the distress of the person's message of that exchange
   and of their next message (unique (session, sequence_number) index of chat_messages, then
   the one-to-one emotion row). Hand-written SQL, see `_HEARD_SQL`.

Everything else happens in `rank_narratives`, a pure function over plain data so the rules can
be tested without a database:

- Hard rules (a narrative is dropped): another person's narrative, one already used in this
  session, one whose tags, title or text mention a topic the caregivers asked to avoid.
- Soft rules (points, see the weights below): fit to the question type and to the emotion,
  calming and short texts when distress is high, short memory-loop answers when the person
  repeats themselves (repeat count 3 and up in this session, or a question they asked 3 times
  or more in their other sessions of the last 7 days), a small preference for the person's
  own stories, a penalty for stories this person heard in the last 14 days (more for recent and
  frequent ones), a small bonus for stories after which their distress went down, and, at a
  repeat, consistency with what Clara answered the question last: a story on the same theme
  when that answer is helping (distress not rising), another theme when it is not.
- Ties go to the smallest id, so the same inputs always give the same choice.

Nothing here ever reaches the companion's prompt as "you heard this before" (nothing the LLM sees may reveal repetition):
the history is used only to pick a different, or a proven, text.
"""

import re
import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Protocol

from django.db import connection
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from memory.companion import prompt
from memory.companion.models import Narrative
from memory.conversations.models import NarrativeUsage
from memory.conversations.sql import db_uuid, fetch, fetch_together, from_db_json_value
from memory.core import crypto
from memory.core.fields import row_text
from memory.core.screening import NO_APPROVALS, Approvals

# --- Weights -----------------------------------------------------------------------------------

# Question type: listed in question_types, empty list (fits any question), listed but other types.
QUESTION_MATCH = 3.0
QUESTION_ANY = 0.0
QUESTION_MISMATCH = -1.5
# The current emotion is one of target_emotions.
EMOTION_MATCH = 1.5
# Distress: no effect up to DISTRESS_FROM, full effect at 1.0 (linear in between).
DISTRESS_FROM = 0.4
DISTRESS_SOOTHING = 3.0  # grounding and calming stories
DISTRESS_SHORT = 1.0  # short texts
DISTRESS_LONG = -1.5  # long texts
DISTRESS_REMINISCENCE = -1.5  # an era picture asks more of someone who is very upset
SOOTHING_CATEGORIES = frozenset({Narrative.Category.GROUNDING, Narrative.Category.CALMING_STORY})
# Chronic repetition (repeat count 3 and up): the memory-loop pool, short texts first.
CHRONIC_REPEAT_AT = 3
CHRONIC_MEMORY_LOOP = 3.0
CHRONIC_SHORT = 1.0
CHRONIC_LONG = -1.5
# The same pool for a question the person keeps asking across sessions (this many times in their
# other sessions of the last 7 days), even the first time it comes up in this one.
CROSS_SESSION_LOOP_AT = 3
# At a repeat: a story sharing a theme with Clara's last answer to the question, when that answer
# is helping (+), or when it is not (-).
CONSISTENT = 1.0
# A story about the person's own life, when it does not answer a different question type.
PERSONAL = 0.75
# Heard by this person in another session within RECENT_DAYS (their latest RECENT_USAGE_LIMIT
# usages): RECENT_PENALTY when last heard just now, fading linearly to nothing at RECENT_DAYS,
# and RECENT_PER_REPEAT more of that for each further hearing in the window; capped.
RECENT_DAYS = 14
RECENT_USAGE_LIMIT = 200
RECENT_PENALTY = 2.0
RECENT_PER_REPEAT = 0.5
RECENT_CAP = 5.0
# What has calmed this person before: the mean fall in distress from their message of the
# exchange that carried the story to their next message (-1..1), times this weight, shrunk
# towards zero while it was heard only a few times (n / (n + 1)).
CALMING = 1.5


class NarrativeLike(Protocol):
    """What ranking reads of a narrative: a `Narrative` row, or any object with these fields."""

    id: str
    title: str
    category: str
    target_emotions: Sequence[str]
    question_types: Sequence[str]
    theme_tags: Sequence[str]
    length: str
    text: str
    person_id: uuid.UUID | None


@dataclass(frozen=True)
class Heard:
    """How this person heard one narrative lately (their latest usages within RECENT_DAYS).

    `distress_drop` is the mean fall in distress from the person's message answered with the
    narrative to their next message in the same session (positive: calmer afterwards), over the
    usages that had a next message; None when none had.
    """

    times: int
    last_heard: datetime
    distress_drop: float | None = None


@dataclass(frozen=True)
class Ranked:
    narrative: NarrativeLike
    score: float


# --- Avoided topics ----------------------------------------------------------------------------

_WORD = re.compile(r"\w+")
_SUFFIX = r"(?:s|es|'s|\u2019s)?"
# Between the words of a phrase: any run of non-word characters ("ice cream", "ice-cream"), but
# never a line break, which separates the fields of a narrative's haystack.
_GAP = r"[^\w\n]+"


def _word_variants(word: str) -> set[str]:
    """A topic word and its likely singular, so "dogs", "dog's" and "dog" all meet "dog"."""
    variants = {word}
    if len(word) > 3 and word.endswith("ies"):
        variants.add(word[:-3] + "y")
    if len(word) > 4 and word.endswith("es"):
        variants.add(word[:-2])
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        variants.add(word[:-1])
    if len(word) > 2 and word.endswith("y"):
        variants.add(word[:-1] + "ies")
    return variants


def _topic_regex(topic: str) -> str | None:
    """A whole-word (or whole-phrase) regex for an avoided topic; plural and possessive forms of
    each word match too. None for a topic with no word in it."""
    words = _WORD.findall(topic.lower())
    if not words:
        return None
    parts = [
        "(?:"
        + "|".join(re.escape(v) for v in sorted(_word_variants(w), reverse=True))
        + ")"
        + _SUFFIX
        for w in words
    ]
    return _GAP.join(parts)


@lru_cache(maxsize=1024)
def _topics_pattern(topics: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern for all of a turn's avoided topics (one search per narrative), or None."""
    regexes = [regex for regex in map(_topic_regex, topics) if regex is not None]
    if not regexes:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(regexes) + r")(?!\w)", re.IGNORECASE)


def _haystack(narrative: NarrativeLike) -> str:
    """Tags, title and text, one per line, so a phrase never runs from one into the next."""
    return _joined_fields(tuple(narrative.theme_tags), narrative.title, narrative.text)


@lru_cache(maxsize=4096)
def _joined_fields(tags: tuple[str, ...], title: str, text: str) -> str:
    # Cached: the same library narratives are searched on every turn.
    return "\n".join(" ".join(field.splitlines()) for field in (*tags, title, text))


def mentions_topic(narrative: NarrativeLike, topic: str) -> bool:
    """Whether the narrative's tags, title or text mention `topic` (case-insensitive, whole word)."""
    pattern = _topics_pattern((topic,))
    return pattern is not None and pattern.search(_haystack(narrative)) is not None


# --- Ranking -------------------------------------------------------------------------------------


def _recency_penalty(heard: Heard, now: datetime) -> float:
    window = timedelta(days=RECENT_DAYS)
    age = max(now - heard.last_heard, timedelta(0))  # clock skew: "in the future" is just now
    if age >= window:
        return 0.0
    fading = 1 - age / window
    penalty = RECENT_PENALTY * fading * (1 + RECENT_PER_REPEAT * (heard.times - 1))
    return min(penalty, RECENT_CAP)


def _calming_bonus(heard: Heard) -> float:
    if heard.distress_drop is None:
        return 0.0
    # Shrunk by the number of hearings: an upper bound on the observations (counting exactly
    # those with a next message would double the subqueries of the history read).
    return CALMING * heard.distress_drop * (heard.times / (heard.times + 1))


def answer_words(text: str | None) -> frozenset[str]:
    """The content words of Clara's last answer, singular: what a story's themes are matched on."""
    if not text:
        return frozenset()
    words = set()
    for word in _WORD.findall(text.lower()):
        words |= _word_variants(word)
    return frozenset(words)


@lru_cache(maxsize=4096)
def _tag_words(tags: tuple[str, ...]) -> frozenset[str]:
    """Every word of these theme tags and its likely singular. Cached: the same library
    narratives are scored on every turn, and splitting their tags was a tenth of the ranking."""
    words: set[str] = set()
    for tag in tags:
        for word in _WORD.findall(tag.lower()):
            words |= _word_variants(word)
    return frozenset(words)


def _shares_theme(narrative: NarrativeLike, words: frozenset[str]) -> bool:
    return not words.isdisjoint(_tag_words(tuple(narrative.theme_tags)))


def _score(
    narrative: NarrativeLike,
    *,
    question_type: str,
    emotion: str,
    distress: float,
    repeat_count: int,
    heard: Heard | None,
    now: datetime,
    cross_session_repeats: int = 0,
    last_answer: frozenset[str] = frozenset(),
    answer_helped: bool = True,
) -> float:
    score = 0.0
    if not narrative.question_types:
        question_fit = QUESTION_ANY
    elif question_type in narrative.question_types:
        question_fit = QUESTION_MATCH
    else:
        question_fit = QUESTION_MISMATCH
    score += question_fit
    if emotion in narrative.target_emotions:
        score += EMOTION_MATCH

    need = min(max((distress - DISTRESS_FROM) / (1 - DISTRESS_FROM), 0.0), 1.0)
    if need:
        if narrative.category in SOOTHING_CATEGORIES:
            score += DISTRESS_SOOTHING * need
        elif narrative.category == Narrative.Category.REMINISCENCE:
            score += DISTRESS_REMINISCENCE * need
        if narrative.length == Narrative.Length.SHORT:
            score += DISTRESS_SHORT * need
        elif narrative.length == Narrative.Length.LONG:
            score += DISTRESS_LONG * need

    if repeat_count >= CHRONIC_REPEAT_AT or cross_session_repeats >= CROSS_SESSION_LOOP_AT:
        if narrative.category == Narrative.Category.MEMORY_LOOP:
            score += CHRONIC_MEMORY_LOOP
        if narrative.length == Narrative.Length.SHORT:
            score += CHRONIC_SHORT
        elif narrative.length == Narrative.Length.LONG:
            score += CHRONIC_LONG

    if narrative.person_id is not None and question_fit >= QUESTION_ANY:
        score += PERSONAL
    if heard is not None:
        score -= _recency_penalty(heard, now)
        score += _calming_bonus(heard)
    if repeat_count and last_answer and _shares_theme(narrative, last_answer):
        score += CONSISTENT if answer_helped else -CONSISTENT
    return score


def rank_narratives(
    candidates: Iterable[NarrativeLike],
    *,
    person_id: uuid.UUID | None,
    question_type: str,
    emotion: str,
    distress: float,
    repeat_count: int,
    avoid_topics: Collection[str] = (),
    used_in_session: Collection[str] = (),
    heard: Mapping[str, Heard] | None = None,
    now: datetime,
    cross_session_repeats: int = 0,
    last_answer: str | None = None,
    answer_helped: bool = True,
) -> list[Ranked]:
    """The narratives that may be told this turn, best first. Pure: no database, no clock.

    Drops another person's narratives, those in `used_in_session`, and those mentioning any of
    `avoid_topics`; scores the rest (see the module docstring and the weights above) and sorts
    by score, highest first, then by id. `heard` is what this person heard lately, by id.
    `cross_session_repeats` is how often they asked this in other sessions of the last 7 days;
    `last_answer`, at a repeat, what Clara answered the question last, and `answer_helped`
    whether it is helping.
    """
    used = set(used_in_session)
    # Caregiver settings are free-form JSON: anything but text is ignored, not an error.
    avoid = _topics_pattern(tuple(sorted({t for t in avoid_topics if isinstance(t, str)})))
    heard = heard or {}
    answered = answer_words(last_answer)

    ranked = []
    for narrative in candidates:
        if narrative.person_id is not None and narrative.person_id != person_id:
            continue
        if narrative.id in used:
            continue
        if avoid is not None and avoid.search(_haystack(narrative)):
            continue
        score = _score(
            narrative,
            question_type=question_type,
            emotion=emotion,
            distress=distress,
            repeat_count=repeat_count,
            heard=heard.get(narrative.id),
            now=now,
            cross_session_repeats=cross_session_repeats,
            last_answer=answered,
            answer_helped=answer_helped,
        )
        ranked.append(Ranked(narrative=narrative, score=round(score, 9)))
    ranked.sort(key=lambda item: (-item.score, item.narrative.id))
    return ranked


# --- Reads ---------------------------------------------------------------------------------------

# What ranking reads of a narrative, in this order. created_at and updated_at are left out:
# converting 100 timestamps a turn costs more than the rest of the candidate read.
_CANDIDATE_FIELDS = (
    "id",
    "title",
    "category",
    "target_emotions",
    "question_types",
    "theme_tags",
    "length",
    "text",
    "person_id",
)


@dataclass(frozen=True, slots=True)
class _Candidate:
    id: str
    title: str
    category: str
    target_emotions: list[str]
    question_types: list[str]
    theme_tags: list[str]
    length: str
    text: str
    person_id: uuid.UUID | None


# The shared library changes rarely and is read every turn: it is kept in memory and read
# again when this fingerprint of it changes (rows, active rows, latest edit), or after a minute
# at most, for edits that bypass `save()`.
_LIBRARY_VERSION = """
    SELECT COUNT(*), SUM(CASE WHEN active THEN 1 ELSE 0 END), MAX(updated_at)
    FROM narratives WHERE person_id IS NULL"""
_LIBRARY_MAX_AGE = timedelta(minutes=1)
_library_cache: dict = {}


def _library_entry(version_row: tuple | None = None) -> tuple[list[_Candidate], list[_Candidate]]:
    """The active shared narratives, and those of them the firewall lets through, from memory
    while the library is unchanged. The screen is pure (cached by text), so a story's verdict
    holds as long as the story: deciding it once per library, not for every story on every
    turn, saved about a millisecond of each /context that offers a story (docs/benchmarks.md,
    "Capacity of one machine"). `version_row`: `_LIBRARY_VERSION`'s row, when the caller read
    it with its own reads."""
    if version_row is None:
        (version_row,) = fetch((_LIBRARY_VERSION, []))
    version = (connection.alias, *version_row)
    now = timezone.now()
    cached = _library_cache.get("entry")
    if cached and cached[0] == version and now - cached[1] < _LIBRARY_MAX_AGE:
        return cached[2], cached[3]
    rows = Narrative.objects.filter(person__isnull=True, active=True).values_list(
        *_CANDIDATE_FIELDS
    )
    library = [_Candidate(*row) for row in rows]
    told = [c for c in library if tellable(c.text, c.theme_tags)]
    _library_cache["entry"] = (version, now, library, told)
    return library, told


def _library() -> list[_Candidate]:
    """The active shared narratives, from memory while they are unchanged."""
    return _library_entry()[0]


def theme_tags_of(
    narrative_ids: Collection[str], *, person_id: uuid.UUID | None
) -> dict[str, list[str]]:
    """The theme tags of these narratives, by id: the shared library's from memory (`_library`),
    only the others (the person's own, retired ones) read from the database. Ids come from the
    bot (the exchanges it stored): another person's story (another organisation's) is left out,
    as an unknown id is."""
    if not narrative_ids:
        return {}
    wanted = set(narrative_ids)
    found = {c.id: c.theme_tags for c in _library() if c.id in wanted}
    missing = sorted(wanted - found.keys())
    if missing:
        placeholders = ", ".join(["%s"] * len(missing))
        whose, params = "person_id IS NULL", list(missing)
        if person_id is not None:
            whose, params = "(person_id IS NULL OR person_id = %s)", [*missing, db_uuid(person_id)]
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id, theme_tags FROM narratives WHERE id IN ({placeholders}) AND {whose}",  # noqa: S608 - placeholders only
                params,
            )
            found.update((row[0], _json_list(row[1])) for row in cursor.fetchall())
    return found


def _json_list(value) -> list:
    return from_db_json_value(value) or []


# A person's own active narratives, read on every turn that may tell a story. Hand-written: for
# the (usually empty) answer, building the ORM query cost more than the rest of the choice.
# [encrypted] title, text: bound to the row (the narrative's id), decrypted by `_opened`.
_PERSON_CANDIDATES_SQL = """
    SELECT id, title, category, target_emotions, question_types, theme_tags, length, text
    FROM narratives WHERE person_id = %s AND active = %s"""


def _person_stories(
    person_id: uuid.UUID, now: datetime
) -> tuple[tuple, list["_Candidate"], dict[str, "Heard"]]:
    """What a turn that may tell a story reads about the person, together (one round trip on
    PostgreSQL): the shared library's version row (`_library_entry`), the person's own active
    stories, and what they heard lately (`_heard_read`)."""
    with connection.cursor() as cursor:
        version, own, heard = fetch_together(
            cursor,
            [
                (_LIBRARY_VERSION, []),
                (_PERSON_CANDIDATES_SQL, [db_uuid(person_id), True]),
                _heard_read(person_id, now),
            ],
        )
    return version[0], _candidates_from(person_id, own), _heard_from(heard)


def _candidates_from(person_id: uuid.UUID, rows) -> list["_Candidate"]:
    return [
        _Candidate(
            id=id_,
            title=_opened(title, NARRATIVE_TITLE, id_),
            category=category,
            target_emotions=_json_list(emotions),
            question_types=_json_list(questions),
            theme_tags=_json_list(tags),
            length=length,
            text=_opened(text, NARRATIVE_TEXT, id_),
            person_id=person_id,
        )
        for id_, title, category, emotions, questions, tags, length, text in rows
    ]


# What a narrative's encrypted columns are bound to (memory/core/fields.py `context_of`).
NARRATIVE_TITLE = "narratives.title"
NARRATIVE_TEXT = "narratives.text"


def _opened(value: str | None, context: str, narrative_id: str) -> str:
    """A narrative's title or text as selected, decrypted; one moved from another narrative
    (bound to another id) raises DecryptionError."""
    if value is None:
        return ""
    plain, bound = crypto.keyring().decrypt_bound(value, context=context)
    crypto.check_row(bound, row_text(narrative_id), context=context)
    return plain


# Hand-written because the ORM took longer to build and read this query than the database took
# to run it. Plain SQL that SQLite and PostgreSQL both run; table and column names are the
# models' db_table and columns. The inner SELECT takes the person's latest usages through their
# index on person. For each usage, two scalar subqueries find the distress of the person's
# message of that exchange (sequence - 1) and of their next message (sequence + 1) through the
# unique (session_id, sequence_number) index and the unique emotion.message_id. AVG skips the
# usages with no next message. (Scalar subqueries rather than four LEFT JOINs: PostgreSQL plans
# a seven-table join several times slower than it runs this query.)
_DISTRESS_AT = """(
        SELECT e.distress_score FROM chat_messages c JOIN detected_emotions e ON e.message_id = c.id
        WHERE c.session_id = u.session_id AND c.sequence_number = m.sequence_number {offset}
    )"""
_HEARD_SQL = f"""
SELECT u.narrative_id, COUNT(*), MAX(u.timestamp), AVG(
    {_DISTRESS_AT.format(offset="- 1")}
    - {_DISTRESS_AT.format(offset="+ 1")}
)
FROM narrative_usage u
JOIN chat_messages m ON m.id = u.message_id
WHERE u.id IN (
    SELECT latest.id FROM narrative_usage latest
    WHERE latest.person_id = %s AND latest.timestamp >= %s
    ORDER BY latest.timestamp DESC, latest.id DESC
    LIMIT %s
)
GROUP BY u.narrative_id
"""


def _db_datetime(value) -> datetime:
    """A timestamp as the database returned it (SQLite: text in UTC), as an aware datetime."""
    if isinstance(value, str):
        value = parse_datetime(value)
    if timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    return value


def _heard_read(person_id: uuid.UUID, now: datetime) -> tuple[str, list]:
    """The read of what this person heard lately, by narrative id (`_heard_from`).

    Looks at their latest RECENT_USAGE_LIMIT usages within RECENT_DAYS and groups them by
    narrative in SQL: how often, when last, and the mean fall in distress from their message of
    that exchange to their next message in the same session, where there was one.
    """
    params = [
        NarrativeUsage._meta.get_field("person").target_field.get_db_prep_value(
            person_id, connection
        ),
        connection.ops.adapt_datetimefield_value(now - timedelta(days=RECENT_DAYS)),
        RECENT_USAGE_LIMIT,
    ]
    return _HEARD_SQL, params


def _heard_from(rows) -> dict[str, Heard]:
    return {
        narrative_id: Heard(
            times=times,
            last_heard=_db_datetime(last),
            distress_drop=None if drop is None else float(drop),
        )
        for narrative_id, times, last, drop in rows
    }


def tellable(
    text: str, theme_tags: Sequence[str] = (), approvals: Approvals = NO_APPROVALS
) -> bool:
    """Whether a story may reach the prompt: neither it nor its themes held back by the
    firewall (memory.core.screening: cached by text, so cheap every turn), or staff approved
    what was."""
    return not prompt.STORY.withheld(text, approvals) and not any(
        prompt.STORY_TOLD.withheld(str(tag), approvals) for tag in theme_tags or ()
    )


def narrative_choose(
    *,
    person_id: uuid.UUID | None,
    session_id: uuid.UUID,
    question_type: str,
    emotion: str,
    distress: float,
    repeat_count: int,
    avoid_topics: list[str],
    now: datetime | None = None,
    used_in_session: Collection[str] | None = None,
    cross_session_repeats: int = 0,
    last_answer: str | None = None,
    answer_helped: bool = True,
    approvals: Approvals = NO_APPROVALS,
) -> Narrative | None:
    """The narrative to seed (or deliver) this turn, or None when every candidate is ruled out.

    `avoid_topics` are the caregivers' topics to stay away from (caregiver_context
    "avoidTopics"); the caller passes them in, so this makes no extra read for the person.
    The caller records the choice with the exchange (`services.NarrativeRef`), which is what
    keeps it from being told twice in the session; a caller that already read the session's
    narratives passes them as `used_in_session` to save the read. The returned narrative's created_at and
    updated_at are not loaded (reading them costs one query).
    """
    now = now or timezone.now()
    # A story the firewall holds back is never offered (staff see it on the memories page):
    # the library's verdicts are kept with it (it is about no one, so no person's approval lets
    # one through), the person's own stories are screened here, with what staff approved.
    heard: dict[str, Heard] = {}
    if person_id is None:
        candidates = list(_library_entry()[1])
    else:
        version, own, heard = _person_stories(person_id, now)
        candidates = list(_library_entry(version)[1]) + [
            c for c in own if tellable(c.text, c.theme_tags, approvals)
        ]
    if not candidates:
        return None
    if used_in_session is None:
        used_in_session = NarrativeUsage.objects.filter(session_id=session_id).values_list(
            "narrative_id", flat=True
        )
    used = set(used_in_session)
    ranked = rank_narratives(
        candidates,
        person_id=person_id,
        question_type=question_type,
        emotion=emotion,
        distress=distress,
        repeat_count=repeat_count,
        avoid_topics=avoid_topics,
        used_in_session=used,
        heard=heard,
        now=now,
        cross_session_repeats=cross_session_repeats,
        last_answer=last_answer,
        answer_helped=answer_helped,
    )
    if not ranked:
        return None
    best = ranked[0].narrative
    values = [getattr(best, name) for name in _CANDIDATE_FIELDS]
    return Narrative.from_db(connection.alias, list(_CANDIDATE_FIELDS), values)
