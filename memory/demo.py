"""Demo data: a few people with weeks of realistic conversations with Clara.

`build_plan` is a pure function of the seed: the same seed gives the same people, session ids,
times, and the person's every message and emotion reading (every id comes from
`random.Random(seed)`). `now` only places the plan in time: the days end today (or yesterday, if
today's sessions would still be running), always on whole-day shifts, so the hour of every
exchange (calmer mornings, anxious evenings) is part of the plan.

`load` plays the plan with the reference companion, in process, through the services behind the
bot API's endpoints (not over HTTP, so no API key and no rate limit): the memory's context
builder chooses the stories and flags the escalation, the offline replier writes Clara's replies
(deterministic too), and every session and exchange is stored as a bot's would be. The jobs that
follow (summaries, facts, promises) run in process too; `load_demo` then computes trends and
alerts, so the demo is complete when it returns.

Patterns the dashboard and the analytics should find in it:
  * sundowning: distress is lowest in the morning and highest 17:00–21:00, when sessions run
    longer and the person asks "Where am I?" or "When is Sarah coming?" more often;
  * repeated questions within a session, in the same or different words;
  * curated stories, after which the person is calmer (a planned reading is eased after a story);
  * exactly one escalation: a frightened evening, after which someone comes to sit with them.
"""

import dataclasses
import logging
import random
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta

from celery import current_app
from django.conf import settings
from django.db import connection, transaction
from django.test.utils import override_settings

from memory.companion.bot import Companion, OfflineReplier
from memory.companion.client import Context, StoredExchange
from memory.companion.client import Emotion as Reading
from memory.companion.context import context_for_bot
from memory.conversations import homes, services
from memory.conversations.emotion import BASE_DISTRESS, EmotionReading, trajectory_for
from memory.conversations.models import default_organisation_id
from memory.core.progress import Progress
from memory.models import Emotion, Home, Person, Session, Unit

# --- The plan ------------------------------------------------------------------------------


@dataclass(frozen=True)
class DemoPerson:
    id: uuid.UUID
    display_name: str
    caregiver_context: dict
    # On record, as caregivers set them on the profile (the clinician report's heading).
    full_name: str = ""
    identifier: str = ""
    # The unit of DEMO_HOME they live in (its name), so the dashboard's unit filter shows.
    unit: str = ""


@dataclass(frozen=True)
class Feeling:
    """The bot's reading of a message; its trajectory follows the readings stored before it."""

    emotion: str
    confidence: float
    distress: float


@dataclass(frozen=True)
class DemoExchange:
    at: datetime
    person_message: str
    # None: the bot sends no reading, so the built-in reader runs on the message.
    feeling: Feeling | None
    # How much calmer the person is after Clara answers this message with a story.
    story_eases: float


@dataclass(frozen=True)
class DemoSession:
    id: uuid.UUID
    person_id: uuid.UUID
    started_at: datetime
    exchanges: tuple[DemoExchange, ...]
    # None: the bot never closed it; the idle sweep expires it after loading.
    closed_at: datetime | None


@dataclass(frozen=True)
class DemoPlan:
    seed: int
    now: datetime
    people: tuple[DemoPerson, ...]
    sessions: tuple[DemoSession, ...]

    @property
    def message_count(self) -> int:
        return sum(2 * len(session.exchanges) for session in self.sessions)


@dataclass(frozen=True)
class _Profile:
    display_name: str
    preferred_name: str
    relative: str
    relation: str
    visit_day: str
    home: str
    lost_item: str
    topics: tuple[str, ...]
    avoid: tuple[str, ...]
    memories: tuple[str, ...]


# The demo organisation's care home and its units (a wing and a floor): its people live there,
# in turn, so the people list and the shift view can be limited to a unit.
DEMO_HOME = "Rosewood House"
DEMO_UNITS = ("Garden Wing", "First Floor")
# Where the demo's people live, so its pages show their local times (no "time zone not set"
# warning), and who they are on record (preferred name: full name).
DEMO_TIME_ZONE = "Europe/London"
FULL_NAMES = {
    "Peggy": "Margaret Collins",
    "John": "John Whitaker",
    "Rose": "Rose Baxter",
    "Ted": "Edward Hughes",
    "Pat": "Patricia Moore",
    "Arthur": "Arthur Bennett",
}

PROFILES: tuple[_Profile, ...] = (
    _Profile(
        "Nana",
        "Peggy",
        "Sarah",
        "daughter",
        "Sunday",
        "Rosewood House",
        "handbag",
        ("the rose garden", "baking scones", "holidays in Blackpool", "Sarah"),
        ("her late husband Frank's illness", "hospitals"),
        (
            "I grew the best roses on our street, you know.",
            "Sarah used to help me bake scones on a Sunday.",
            "We went to Blackpool every summer when the children were small.",
        ),
    ),
    _Profile(
        "Dad",
        "John",
        "Michael",
        "son",
        "Saturday",
        "Oakfield Court",
        "glasses",
        ("the railway", "Leeds United", "the allotment", "big band music"),
        ("driving", "money worries"),
        (
            "I worked on the railway for forty years.",
            "I used to grow runner beans on my allotment.",
            "Leeds United were a proper team back then.",
        ),
    ),
    _Profile(
        "Grandma Rose",
        "Rose",
        "Anna",
        "granddaughter",
        "Wednesday",
        "Willow Lodge",
        "purse",
        ("knitting", "Whiskers the cat", "the church choir", "Anna"),
        ("the war", "her sister's death"),
        (
            "I knitted a jumper for every one of my grandchildren.",
            "Whiskers always slept at the end of my bed.",
            "I sang in the church choir for years and years.",
        ),
    ),
    _Profile(
        "Uncle Ted",
        "Ted",
        "Linda",
        "niece",
        "Friday",
        "Meadowbank",
        "wallet",
        ("fishing on the canal", "the navy", "crossword puzzles"),
        ("his time in hospital",),
        (
            "I caught a pike this big on the canal once.",
            "I was in the navy when I was young, you know.",
            "I used to finish the crossword before breakfast.",
        ),
    ),
    _Profile(
        "Mum",
        "Pat",
        "Claire",
        "daughter",
        "Thursday",
        "Beech House",
        "keys",
        ("dancing", "the garden birds", "Elvis records"),
        ("moving house",),
        (
            "I used to dance every Saturday night at the Palais.",
            "The blue tits came to my bird table every morning.",
            "I had every Elvis record going.",
        ),
    ),
    _Profile(
        "Grandad",
        "Arthur",
        "Paul",
        "son",
        "Tuesday",
        "Elm Tree House",
        "watch",
        ("woodwork", "Bess the dog", "cricket"),
        ("his brother",),
        (
            "I made that table in the hall myself.",
            "Bess was the best dog we ever had.",
            "I played cricket for the village on Saturdays.",
        ),
    ),
)

# Time slots (minutes after midnight, UTC): when a session may start, and how it tends to feel.
SLOTS: dict[str, tuple[int, int]] = {
    "morning": (8 * 60, 11 * 60),
    "afternoon": (13 * 60, 16 * 60),
    "evening": (17 * 60, 20 * 60 + 15),
}
SLOT_BASE_DISTRESS = {"morning": 0.18, "afternoon": 0.3, "evening": 0.52}
SLOT_DRIFT = {"morning": -0.015, "afternoon": 0.0, "evening": 0.02}
# Exchanges per session: (fewest, most, most usual). Evenings run longer.
SLOT_EXCHANGES = {"morning": (4, 12, 5), "afternoon": (4, 14, 6), "evening": (6, 20, 9)}
SLOT_LOOP_CHANCE = {"morning": 0.22, "afternoon": 0.3, "evening": 0.45}
SLOT_LOOP_WEIGHTS = {
    "morning": {"time": 3, "identity": 1, "activity": 1, "person": 1, "location": 1},
    "afternoon": {"person": 2, "activity": 2, "time": 1, "location": 1, "identity": 1},
    "evening": {"location": 3, "person": 3, "time": 1, "activity": 1},
}
NO_READING_CHANCE = 0.15  # how often the bot sends no emotion reading of its own
EXPIRED_CHANCE = 0.08  # how often the bot never closes a session
# How a story eases the readings that follow: by story_eases at once, fading by EASING_FADES a
# turn; stories in a row add up, to at most EASING_MOST. Fear is never eased.
STORY_EASES = (0.12, 0.25)
EASING_FADES = 0.5
EASING_MOST = 0.3

# The person's repeated questions, by question type; {relative} etc. come from the profile.
LOOP_QUESTIONS: dict[str, tuple[str, ...]] = {
    "location": (
        "Where am I?",
        "What is this place?",
        "Where are we?",
        "I don't recognise this room.",
        "Where am I? I don't know this place.",
    ),
    "person": (
        "When is {relative} coming?",
        "Where is {relative}?",
        "When is my {relation} coming?",
        "Have you seen my {relation}?",
    ),
    "time": (
        "What day is it?",
        "What time is it?",
        "Is it morning or night?",
        "What day is it today?",
        "How long have I been here?",
    ),
    "identity": ("Who are you?", "Are you my nurse?", "Who are you again?"),
    "activity": ("What am I supposed to do now?", "What happens now?", "What should I do?"),
}
# What the person says that is not a repeated question, by mood. None of it may trip the
# escalation detector (memory/conversations/escalation.py): only the one frightened evening does.
GREETINGS_CALM = ("Hello, dear.", "Hello, is that Clara?", "Oh, hello there.", "Hello again.")
GREETINGS_UNSETTLED = (
    "Hello? Is anyone there?",
    "Hello? I don't know what's happening.",
    "Who's that?",
)
MOOD_LINES: dict[str, tuple[str, ...]] = {
    "calm": (
        "I've just had a lovely cup of tea.",
        "The sun's nice through the window today.",
        "I feel quite calm today, thank you.",
        "I've had a nice bit of cake.",
    ),
    "chat": (
        "Is it raining outside?",
        "My knee is a bit stiff today.",
        "I've been sitting here a while.",
        "Tell me something.",
        "What have you been up to?",
        "The television's too loud in the other room.",
    ),
    "sad": (
        "I miss my mum.",
        "Nobody has visited me today.",
        "I feel so alone here.",
        "I'm a bit sad today.",
        "I miss {relative}.",
    ),
    "anxious": (
        "I need to go home now.",
        "I have to get home, they'll be worried about me.",
        "It's getting late, I need to go.",
        "I'm worried, something isn't right.",
        "I'm late, I have to go.",
        "I can't find my {lost_item}.",
        "I need to pick the children up from school.",
    ),
    "goodbye": (
        "Thank you, dear. I might have a little rest now.",
        "That was nice. I'll close my eyes for a bit.",
        "Thank you for the chat.",
    ),
}
FEARFUL_LINE = "There's someone outside the window! I'm scared, please help me!"
STILL_FEARFUL_LINE = "I'm still frightened. Don't go."


def _uuid(rng: random.Random) -> uuid.UUID:
    return uuid.UUID(int=rng.getrandbits(128), version=4)


def _clip(value: float, low: float = 0.02, high: float = 0.97) -> float:
    return min(max(value, low), high)


class _SessionWriter:
    """Writes what the person says in one session, tracking their (latent) distress."""

    def __init__(self, rng: random.Random, profile: _Profile, slot: str, person_offset: float):
        self.rng = rng
        self.profile = profile
        self.slot = slot
        self.base = SLOT_BASE_DISTRESS[slot] + person_offset
        self.distress = _clip(self.base + rng.gauss(0, 0.06))
        self.loop_asked: dict[str, list[str]] = {}
        weights = SLOT_LOOP_WEIGHTS[slot]
        loop_count = 1 if rng.random() < 0.6 else 2
        kinds = list(weights)
        self.loops: list[str] = []
        while len(self.loops) < loop_count:
            kind = rng.choices(kinds, weights=[weights[k] for k in kinds])[0]
            if kind not in self.loops:
                self.loops.append(kind)

    def fill(self, template: str) -> str:
        p = self.profile
        return template.format(relative=p.relative, relation=p.relation, lost_item=p.lost_item)

    def loop_question(self, kind: str) -> str:
        asked = self.loop_asked.setdefault(kind, [])
        if asked and self.rng.random() < 0.6:
            text = asked[-1]  # the very same words again, as people often do
        else:
            text = self.fill(self.rng.choice(LOOP_QUESTIONS[kind]))
        asked.append(text)
        return text

    def mood_kind(self) -> str:
        d, rng = self.distress, self.rng
        if d < 0.28:
            return rng.choices(["calm", "chat"], weights=[7, 3])[0]
        if d < 0.45:
            return rng.choices(["chat", "calm", "sad"], weights=[5, 2, 3])[0]
        if d < 0.62:
            return rng.choices(["sad", "anxious", "chat"], weights=[4, 4, 2])[0]
        return rng.choices(["anxious", "sad"], weights=[3, 1])[0]

    def line(self, kind: str) -> str:
        if kind in LOOP_QUESTIONS:
            return self.loop_question(kind)
        if kind == "greeting":
            lines = GREETINGS_CALM if self.distress < 0.45 else GREETINGS_UNSETTLED
        elif kind == "calm":
            lines = MOOD_LINES["calm"] + self.profile.memories
        else:
            lines = MOOD_LINES[kind]
        return self.fill(self.rng.choice(lines))

    def emotion_name(self, kind: str, line: str) -> str:
        d = self.distress
        if kind in ("location", "time", "identity", "activity"):
            return Emotion.ANXIOUS if d > 0.62 else Emotion.CONFUSED
        if kind == "person":
            return Emotion.ANXIOUS if d > 0.55 else Emotion.LONELY
        if kind == "greeting":
            return Emotion.CALM if d < 0.2 else Emotion.NEUTRAL if d < 0.45 else Emotion.CONFUSED
        if kind == "sad":
            lonely = "alone" in line or "visit" in line or "miss" in line
            return Emotion.LONELY if lonely else Emotion.SAD
        return {
            "calm": Emotion.CALM,
            "chat": Emotion.NEUTRAL,
            "anxious": Emotion.ANXIOUS,
            "goodbye": Emotion.CALM,
        }[kind]

    def feeling(
        self, emotion: str, distress: float | None = None, *, always: bool = False
    ) -> Feeling | None:
        """The bot's reading of the message, or None (then the built-in reader runs)."""
        if not always and self.rng.random() < NO_READING_CHANCE:
            return None
        if distress is None:
            # The person's state, coloured by what this message shows.
            distress = 0.6 * self.distress + 0.4 * BASE_DISTRESS[emotion]
            distress += self.rng.gauss(0, 0.04)
        confidence = round(self.rng.uniform(0.6, 0.95), 2)
        return Feeling(str(emotion), confidence, round(_clip(distress, 0.01, 0.98), 3))

    def exchange(self, index: int, count: int, escalation_at: int | None) -> dict:
        """One exchange's content (no timestamp); moves the person's distress on."""
        rng = self.rng
        if escalation_at is not None and index == escalation_at - 1:
            self.distress = max(self.distress, 0.7)  # the evening is already going badly
        if escalation_at is not None and index == escalation_at:
            self.distress = 0.9
            feeling = self.feeling(Emotion.FEARFUL, rng.uniform(0.88, 0.93), always=True)
            return {"person_message": FEARFUL_LINE, "feeling": feeling}
        if escalation_at is not None and index == escalation_at + 1:
            feeling = self.feeling(Emotion.FEARFUL, rng.uniform(0.74, 0.8), always=True)
            # Someone came to sit with them: the rest of the evening is calmer.
            self.distress, self.base = 0.42, self.base - 0.15
            return {"person_message": STILL_FEARFUL_LINE, "feeling": feeling}

        if index == 0:
            kind = "greeting"
        elif index == count - 1 and self.distress < 0.4:
            kind = "goodbye"
        else:
            loop_chance = SLOT_LOOP_CHANCE[self.slot] + (0.1 if self.distress > 0.6 else 0.0)
            kind = rng.choice(self.loops) if rng.random() < loop_chance else self.mood_kind()
        repeated = kind in LOOP_QUESTIONS and bool(self.loop_asked.get(kind))
        message = self.line(kind)
        feeling = self.feeling(self.emotion_name(kind, message))

        # How the person feels next: circling questions and evenings wind them up.
        self.distress += rng.gauss(SLOT_DRIFT[self.slot], 0.04) + (0.03 if repeated else 0.0)
        self.distress = _clip(0.9 * self.distress + 0.1 * self.base, 0.03, 0.95)
        return {"person_message": message, "feeling": feeling}


def build_plan(
    *, seed: int = 7, people: int = 4, days: int = 28, now: datetime | None = None
) -> DemoPlan:
    """The demo: `people` people talking with Clara 1–3 times a day for the last `days` days."""
    if people < 1 or days < 1:
        raise ValueError("people and days must be at least 1")
    now = now or datetime.now(UTC)
    rng = random.Random(seed)

    # 1. Who, and when: people, then every session's day, slot, start minute and length.
    order = list(range(len(PROFILES)))
    rng.shuffle(order)
    demo_people: list[DemoPerson] = []
    profiles: list[_Profile] = []
    offsets: list[float] = []
    for n in range(people):
        profile = PROFILES[order[n % len(PROFILES)]]
        display_name = profile.display_name
        if n >= len(PROFILES):
            display_name = f"{display_name} ({n // len(PROFILES) + 1})"
        context = {
            "preferredName": profile.preferred_name,
            "knownTopics": list(profile.topics),
            "avoidTopics": list(profile.avoid),
            "familyContacts": [
                {
                    "name": profile.relative,
                    "relation": profile.relation,
                    "usualVisitDay": profile.visit_day,
                }
            ],
            "home": DEMO_HOME,
            "timezone": DEMO_TIME_ZONE,
        }
        initials = "".join(word[0] for word in profile.home.split())
        demo_people.append(
            DemoPerson(
                id=_uuid(rng),
                display_name=display_name,
                caregiver_context=context,
                full_name=FULL_NAMES.get(profile.preferred_name, ""),
                identifier=f"{initials}-{1001 + n:04d}",
                unit=DEMO_UNITS[n % len(DEMO_UNITS)],
            )
        )
        profiles.append(profile)
        offsets.append(rng.uniform(-0.06, 0.08))

    schedule: list[dict] = []
    for day in range(days):
        for p in range(people):
            sessions_today = rng.choices([1, 2, 3], weights=[3.5, 4.5, 2])[0]
            slots: set[str] = set()
            while len(slots) < sessions_today:
                slots.add(rng.choices(list(SLOTS), weights=[3, 3, 4])[0])
            for slot in sorted(slots, key=list(SLOTS).index):
                low, high = SLOTS[slot]
                schedule.append(
                    {
                        "person": p,
                        "day": day,
                        "slot": slot,
                        "id": _uuid(rng),
                        "start": timedelta(
                            days=day, minutes=rng.randint(low, high), seconds=rng.randint(0, 59)
                        ),
                        "count": round(rng.triangular(*SLOT_EXCHANGES[slot])),
                    }
                )

    # 2. The one escalation: an evening session if there is one.
    evenings = [s for s in schedule if s["slot"] == "evening"] or schedule
    escalated = rng.choice(evenings)
    escalated["count"] = max(escalated["count"], 8)
    escalated["escalation_at"] = rng.randint(3, escalated["count"] - 4)

    # 3. What was said, and when within each session.
    planned: list[tuple[dict, list[tuple[timedelta, dict]], timedelta | None]] = []
    for item in schedule:
        writer = _SessionWriter(
            rng, profiles[item["person"]], item["slot"], offsets[item["person"]]
        )
        at = item["start"] + timedelta(seconds=rng.randint(5, 30))
        exchanges = []
        for index in range(item["count"]):
            content = writer.exchange(index, item["count"], item.get("escalation_at"))
            content["story_eases"] = round(rng.uniform(*STORY_EASES), 3)
            exchanges.append((at, content))
            at += timedelta(seconds=rng.randint(25, 100))
        expired = rng.random() < EXPIRED_CHANCE and "escalation_at" not in item
        closed = None if expired else exchanges[-1][0] + timedelta(seconds=rng.randint(20, 180))
        planned.append((item, exchanges, closed))

    # 4. Place it in time: whole days back from today, so that everything is over by `now`.
    latest = max((closed or exchanges[-1][0]) for _, exchanges, closed in planned)
    margin = timedelta(minutes=settings.CLARA_SESSION_IDLE_MINUTES + 1)
    anchor = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    anchor -= timedelta(days=days - 1)
    while anchor + latest + margin > now:
        anchor -= timedelta(days=1)

    sessions = []
    for item, exchanges, closed in sorted(planned, key=lambda p: p[0]["start"]):
        sessions.append(
            DemoSession(
                id=item["id"],
                person_id=demo_people[item["person"]].id,
                started_at=anchor + item["start"],
                exchanges=tuple(
                    DemoExchange(at=anchor + at, **content) for at, content in exchanges
                ),
                closed_at=None if closed is None else anchor + closed,
            )
        )
    return DemoPlan(seed=seed, now=now, people=tuple(demo_people), sessions=tuple(sessions))


# --- Loading -------------------------------------------------------------------------------


def database_is_empty() -> bool:
    """The demo only goes into a database with no people and no sessions."""
    return not (Person.objects.exists() or Session.objects.exists())


class _ServiceClient:
    """The bot API's calls, made straight to what its endpoints call: no HTTP, no API key.

    `/sessions`, `/context`, `/exchanges` and `/close` each hand their input to one service
    (the context to `memory.companion.context.context_for_bot`, shared with the agent tools); this client
    hands the demo's to the same ones. Loading the demo is not a bot calling from outside, so
    the per-key rate limit does not apply to it, and nor does it depend on the machine's speed.
    """

    def resolve_session(
        self,
        session_id: uuid.UUID,
        user_id: uuid.UUID | None = None,
        display_name: str | None = None,
        started_at: datetime | None = None,
    ) -> Session:
        session, _ = services.session_resolve(
            session_id=session_id, user_id=user_id, display_name=display_name, at=started_at
        )
        return session

    def context(
        self,
        session_id: uuid.UUID,
        message: str,
        emotion: Reading | None = None,
        *,
        occurred_at: datetime | None = None,
    ) -> Context:
        reading = None if emotion is None else EmotionReading(**asdict(emotion))
        return Context.from_json(
            context_for_bot(
                session_id=session_id, message=message, emotion=reading, occurred_at=occurred_at
            )
        )

    def store_exchange(
        self,
        session_id: uuid.UUID,
        user_message: str,
        assistant_message: str,
        *,
        idempotency_key: str,
        emotion: Reading | None = None,
        intent: str | None = None,
        narrative=None,
        processing_time_ms: int | None = None,
        escalation: bool = False,
        occurred_at: datetime | None = None,
    ) -> StoredExchange:
        result = services.exchange_submit(
            session_id=session_id,
            user_message=user_message,
            assistant_message=assistant_message,
            idempotency_key=idempotency_key,
            emotion=None if emotion is None else EmotionReading(**asdict(emotion)),
            intent=intent,
            narrative=None if narrative is None else services.NarrativeRef(**asdict(narrative)),
            processing_time_ms=processing_time_ms,
            escalation=escalation,
            at=occurred_at,
        )
        if isinstance(result, services.PendingExchange):
            return StoredExchange(idempotency_key=idempotency_key, pending=True, created=False)
        return StoredExchange(
            idempotency_key=idempotency_key,
            pending=False,
            created=result.created,
            user_message_id=result.user_message_id,
            user_sequence_number=result.user_sequence_number,
            assistant_message_id=result.assistant_message_id,
            assistant_sequence_number=result.assistant_sequence_number,
        )

    def close_session(self, session_id: uuid.UUID, ended_at: datetime | None = None) -> Session:
        return services.session_close(session_id=session_id, at=ended_at)


@contextmanager
def jobs_run_here() -> Iterator[None]:
    """The jobs the services queue (summaries, facts, promises) run in this process as they are
    queued, instead of going to the worker: the demo is complete when loading returns, whatever
    the machine's speed, and the worker has no backlog to race the dashboard with.

    The very tasks the worker would run, with the same arguments; an error in one is raised.
    """
    # The app the services' tasks are sent with (shared tasks follow the current app).
    app = current_app._get_current_object()
    # Quiet: one INFO line per task, and a warning about the broker's host name that only
    # concerns sending (nothing is sent).
    logs = [logging.getLogger(name) for name in ("celery.app.trace", "kombu.connection")]
    saved = app.conf.task_always_eager, app.conf.task_eager_propagates, [x.level for x in logs]
    app.conf.task_always_eager = app.conf.task_eager_propagates = True
    for log in logs:
        log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        app.conf.task_always_eager, app.conf.task_eager_propagates = saved[:2]
        for log, level in zip(logs, saved[2], strict=True):
            log.setLevel(level)


def load(plan: DemoPlan, *, progress: Progress | None = None) -> None:
    """Play the plan with the reference companion, oldest session first; then the jobs.

    On SQLite the conversations go in as one transaction (one writer at a time anyway); on
    PostgreSQL each person's go in as a transaction of their own, all at once (`_converse_each`),
    unless the caller holds a transaction.
    Once a transaction commits, the jobs it queued (each session's summary, the rolling summary,
    facts and promises) run here in the order queued, as the worker would run them, before this
    returns. Today's trends and their alerts are the scheduler's (`load_demo` computes them).
    `progress` counts the exchanges played.
    """
    if progress is not None:
        progress.add_total(sum(len(session.exchanges) for session in plan.sessions))
    # With DEBUG on, Django keeps the SQL of every query (on SQLite it runs one more query per
    # query to quote the parameters): over the ~60,000 queries of loading, that alone is about
    # an eighth of the time, for a log nobody reads.
    # The home and its units first, once (the threads below each place their own person).
    _demo_units()
    with override_settings(DEBUG=False), jobs_run_here():
        # In turn on SQLite, and inside a caller's transaction (other threads can't join it).
        if connection.vendor == "sqlite" or connection.in_atomic_block or len(plan.people) == 1:
            _converse_all(plan, progress)
        else:
            _converse_each(plan, progress)


def _converse_each(plan: DemoPlan, progress: Progress | None) -> None:
    """Each person's conversations in a thread and a transaction of their own, all at once.

    Loading spends most of its time waiting for the database (a round trip per query, about
    60,000 of them); threads overlap the waits. People share no rows, as the conversations of
    concurrent bots don't, and each person's plan is played in the same order as on its own.
    """

    # Celery's current app is per thread: each thread sends with the caller's (eager) one.
    app = current_app._get_current_object()

    def converse(person: DemoPerson) -> None:
        app.set_current()
        sessions = tuple(s for s in plan.sessions if s.person_id == person.id)
        try:
            _converse_all(dataclasses.replace(plan, people=(person,), sessions=sessions), progress)
        finally:
            connection.close()  # this thread's own

    with ThreadPoolExecutor(max_workers=len(plan.people)) as pool:
        for done in [pool.submit(converse, person) for person in plan.people]:
            done.result()  # raises what the thread raised


def _demo_units() -> dict[str, Unit]:
    """DEMO_HOME and its DEMO_UNITS in the default organisation (the demo's), by unit name."""
    organisation_id = default_organisation_id()
    home, _ = Home.objects.get_or_create(organisation_id=organisation_id, name=DEMO_HOME)
    return {name: Unit.objects.get_or_create(home=home, name=name)[0] for name in DEMO_UNITS}


@transaction.atomic
def _converse_all(plan: DemoPlan, progress: Progress | None = None) -> None:
    people = {person.id: person for person in plan.people}
    introduced: set[uuid.UUID] = set()
    client = _ServiceClient()
    companions = {
        person.id: Companion(client, OfflineReplier(person.caregiver_context["preferredName"]))
        for person in plan.people
    }
    for session in plan.sessions:
        person = people[session.person_id]
        client.resolve_session(
            session.id, person.id, person.display_name, started_at=session.started_at
        )
        if person.id not in introduced:
            # Caregivers fill this in (there is no API for it yet): as an operator would.
            # Through the instance, so the encrypted value is bound to its row (fields.py).
            row = Person.objects.get(id=person.id)
            row.caregiver_context = person.caregiver_context
            row.full_name = person.full_name or None
            row.identifier = person.identifier or None
            row.save(update_fields=["caregiver_context", "full_name", "identifier"])
            if person.unit:
                homes.person_move(person=row, unit=_demo_units()[person.unit])
            introduced.add(person.id)
        _converse(companions[person.id], session)
        if progress is not None:
            progress.update(len(session.exchanges))
        if session.closed_at is not None:
            client.close_session(session.id, ended_at=session.closed_at)
    # Sessions the bot never closed are expired by the idle sweep, as in production.
    services.sessions_expire_idle(now=plan.now)


def _converse(companion: Companion, session: DemoSession) -> None:
    """The session's turns; a story told eases the readings that follow."""
    stored: list[float] = []  # the distress stored for each message so far
    eased = 0.0
    for exchange in session.exchanges:
        reading = None
        if exchange.feeling is not None:
            feeling = exchange.feeling
            ease = 0.0 if feeling.emotion == Emotion.FEARFUL else eased
            distress = round(max(feeling.distress - ease, 0.01), 3)
            trajectory = str(trajectory_for(distress, stored))
            reading = Reading(feeling.emotion, feeling.confidence, distress, trajectory)
        result = companion.turn(
            session.id, exchange.person_message, reading, occurred_at=exchange.at
        )
        if result.stored.pending:
            raise RuntimeError(f"the memory could not store an exchange of session {session.id}")
        stored.append(result.context.analysis.distress_score)
        eased *= EASING_FADES
        if result.context.narrative is not None:
            eased = min(eased + exchange.story_eases, EASING_MOST)
