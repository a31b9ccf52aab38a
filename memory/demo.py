"""Demo data: a few people with weeks of realistic conversations with Clara.

`build_plan` is a pure function of the seed: the same seed gives the same people, session ids
and conversations (every id comes from `random.Random(seed)`). `now` only places the plan in
time: the days end today (or yesterday, if today's sessions would still be running), always on
whole-day shifts, so the hour of every exchange (calmer mornings, anxious evenings) is part of the
plan. `load` writes the plan through the same services the bot API uses.

Patterns the dashboard and the analytics should find in it:
  * sundowning: distress is lowest in the morning and highest 17:00–21:00, when sessions run
    longer and the person asks "Where am I?" or "When is Sarah coming?" more often;
  * repeated questions within a session, in the same or different words;
  * curated narratives (calming story, grounding, memory loop) that are followed by lower distress;
  * exactly one escalation: a frightened evening, followed by grounding.
"""

import random
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import transaction

from memory import services
from memory.emotion import BASE_DISTRESS, EmotionReading, analyse, trajectory_for
from memory.models import Emotion, Person, Session
from memory.services import NarrativeRef

# --- The plan ------------------------------------------------------------------------------


@dataclass(frozen=True)
class DemoPerson:
    id: uuid.UUID
    display_name: str
    caregiver_context: dict


@dataclass(frozen=True)
class DemoExchange:
    at: datetime
    user_message: str
    assistant_message: str
    # None: the bot sent no reading, so the built-in reader runs on the message.
    emotion: EmotionReading | None
    intent: str
    narrative: NarrativeRef | None
    escalation: bool
    processing_time_ms: int


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
    pronoun: str  # the relative's: "she" / "he"
    visit_day: str
    home: str
    lost_item: str
    topics: tuple[str, ...]
    avoid: tuple[str, ...]
    memories: tuple[str, ...]


PROFILES: tuple[_Profile, ...] = (
    _Profile(
        "Nana",
        "Peggy",
        "Sarah",
        "daughter",
        "she",
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
        "he",
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
        "she",
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
        "she",
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
        "she",
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
        "he",
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
TIME_HINTS = {
    "morning": "Breakfast is done, and the day is just getting going.",
    "afternoon": "Lunch is finished, and tea will be along in a while.",
    "evening": "Supper's done, and soon it'll be time to get cosy for the night.",
}
NO_READING_CHANCE = 0.15  # how often the bot sends no emotion reading of its own
EXPIRED_CHANCE = 0.08  # how often the bot never closes a session

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
# What the person says that is not a repeated question, by mood: each line with the replies that
# fit it (an empty tuple: the general replies of that mood, REPLIES[kind], fit).
Lines = tuple[tuple[str, tuple[str, ...]], ...]
GREETINGS_CALM: Lines = (
    ("Hello, dear.", ()),
    ("Hello, is that Clara?", ()),
    ("Oh, hello there.", ()),
    ("Hello again.", ()),
)
GREETINGS_UNSETTLED: Lines = (
    (
        "Hello? Is anyone there?",
        (
            "It's Clara, {name}. I'm right here with you.",
            "Hello {name}, it's only Clara. Everything's all right.",
        ),
    ),
    (
        "Hello? I don't know what's happening.",
        (
            "It's Clara, {name}. You're safe at {home}, and I'm here with you.",
            "Hello {name}. Nothing to worry about: you're at {home}, and it's a quiet {part}.",
        ),
    ),
    (
        "Who's that?",
        (
            "It's Clara, {name}, your friend for a chat.",
            "It's only me, Clara. I'm here to keep you company.",
        ),
    ),
)
CALM_LINES: Lines = (
    (
        "I've just had a lovely cup of tea.",
        ("Nothing like a good cup of tea, {name}.", "Lovely. Was it just how you like it?"),
    ),
    (
        "The sun's nice through the window today.",
        ("It is, isn't it? A lovely {part} for it.", "Lovely. It makes everything feel brighter."),
    ),
    (
        "I feel quite calm today, thank you.",
        (
            "I'm so glad to hear that, {name}.",
            "That's lovely. Shall we have a gentle chat about {topic}?",
        ),
    ),
    (
        "I've had a nice bit of cake.",
        ("Ooh, lovely! What kind was it?", "I'm so glad. A treat now and then does us good."),
    ),
)
MEMORY_REPLIES = (
    "That sounds wonderful, {name}. Tell me more?",
    "I love hearing about that. What was your favourite part?",
    "What a lovely memory, {name}.",
)
CHAT_LINES: Lines = (
    (
        "Is it raining outside?",
        (
            "It's dry at the moment, {name}, just a few clouds. Cosy weather for a chat.",
            "Not right now. Shall we look out of the window together later?",
        ),
    ),
    (
        "My knee is a bit stiff today.",
        (
            "Oh, I'm sorry, {name}. Let's mention it to the staff so they can make you comfortable.",
            "That's no fun. A bit of gentle rest might help, and I'll keep you company.",
        ),
    ),
    (
        "I've been sitting here a while.",
        (
            "You've earned a good sit down, {name}. Shall we talk about {topic}?",
            "It's a quiet sort of {part}. How about a chat about {topic}?",
        ),
    ),
    (
        "Tell me something.",
        (
            "Did you know robins sing all year round? Even in winter, {name}.",
            "I was thinking about {topic} earlier. Will you tell me about it?",
        ),
    ),
    (
        "What have you been up to?",
        (
            "Just looking forward to our chat, {name}. What about you?",
            "Thinking about {topic}, funnily enough. Tell me about it?",
        ),
    ),
    (
        "The television's too loud in the other room.",
        (
            "That can be tiring. Shall we have a quiet chat of our own?",
            "Let's let someone know, {name}. In the meantime, I'm here.",
        ),
    ),
)
SAD_LINES: Lines = (
    (
        "I miss my mum.",
        (
            "Your mum sounds like she was very special, {name}. Would you like to tell me about her?",
            "It's natural to miss her. I'm right here with you.",
        ),
    ),
    (
        "Nobody has visited me today.",
        (
            "{relative} is coming on {visit_day}, {name}, and I'm here to keep you company now.",
            "I'm here with you, {name}. You're not on your own.",
        ),
    ),
    (
        "I feel so alone here.",
        (
            "You're not alone, {name}. I'm right here, and the people here care about you.",
            "I'm here with you. Shall we have a chat about {topic}?",
        ),
    ),
    (
        "I'm a bit sad today.",
        (
            "I'm sorry you're feeling sad, {name}. I'd love to hear what's on your mind.",
            "That sounds hard. Let's sit together for a bit.",
        ),
    ),
    (
        "I miss {relative}.",
        (
            "{relative} misses you too, {name}. {Pronoun}'s coming on {visit_day}.",
            "Of course you do. {relative} thinks about you every day.",
        ),
    ),
)
ANXIOUS_LINES: Lines = (
    ("I need to go home now.", ()),
    ("I have to get home, they'll be worried about me.", ()),
    ("It's getting late, I need to go.", ()),
    ("I'm worried, something isn't right.", ()),
    ("I'm late, I have to go.", ()),
    (
        "I can't find my {lost_item}.",
        (
            "Your {lost_item} is safe, {name}. We'll find it together in a little while.",
            "Don't worry about your {lost_item}; it'll turn up, and you don't need it right now.",
        ),
    ),
    (
        "I need to pick the children up from school.",
        (
            "The children are all grown up and safe, {name}. You don't need to go anywhere.",
            "Everyone's safe and looked after, {name}. You can rest here.",
        ),
    ),
)
GOODBYES: Lines = (
    ("Thank you, dear. I might have a little rest now.", ()),
    ("That was nice. I'll close my eyes for a bit.", ()),
    ("Thank you for the chat.", ()),
)
MOOD_LINES: dict[str, Lines] = {
    "chat": CHAT_LINES,
    "sad": SAD_LINES,
    "anxious": ANXIOUS_LINES,
    "goodbye": GOODBYES,
}
FEARFUL_LINE = "There's someone outside the window! I'm scared, please help me!"
STILL_FEARFUL_LINE = "I'm still frightened. Don't go."

# Clara's replies by what the person said; a session never repeats one until all are used.
REPLIES: dict[str, tuple[str, ...]] = {
    "greeting": (
        "Hello {name}, it's Clara. How are you this {part}?",
        "Hello {name}! It's lovely to hear from you. How are you feeling?",
        "It's Clara, {name}. I'm here for a chat whenever you like.",
    ),
    "location": (
        "You're at {home}, {name}. This is your room, and you're safe here.",
        "We're at {home}. Your chair is by the window, just where you like it.",
        "This is {home}, {name}. The people here know you well, and I'm here too.",
        "You're somewhere safe, {name}: {home}. Shall we look out at the garden?",
    ),
    "person": (
        "{relative} is coming on {visit_day}, {name}. {Pronoun}'ll be so pleased to see you.",
        "{relative} rang to say {pronoun} loves you and will be here on {visit_day}.",
        "It sounds like you're missing {relative}. {Pronoun}'s coming on {visit_day}. "
        "Would you like to tell me about {relative}?",
        "{relative} is busy today but thinking of you. {visit_day} isn't far away.",
    ),
    "time": (
        "It's {part} now, {name}. A nice, quiet {part}.",
        "It's {part}. There's nothing you need to do right now, so we can just chat.",
        "We're in the {part}, {name}. {time_hint}",
    ),
    "identity": (
        "I'm Clara, {name}. I'm here to keep you company.",
        "It's Clara, your friend for a chat. It's lovely to talk with you.",
        "I'm Clara. We talk most days; you've told me all about {topic}.",
    ),
    "activity": (
        "Nothing you need to do right now, {name}. We can just sit and chat.",
        "How about we talk about {topic} for a little while?",
        "Right now it's time to take it easy. I'm here with you.",
    ),
    "anxious": (
        "You don't need to go anywhere, {name}. Everything is taken care of, and you're "
        "safe at {home}.",
        "I can hear that you're worried. You're safe, and {relative} knows where you are.",
        "It's all right, {name}. Let's stay here together for a bit. Everything is in hand.",
        "There's no rush at all, {name}. Everything that needs doing has been done.",
    ),
    "goodbye": (
        "You have a good rest, {name}. I'll be here whenever you fancy a chat.",
        "Thank you, {name}. It's always a pleasure talking with you.",
        "Take it easy, {name}. {relative} sends love.",
    ),
}
ESCALATION_REPLY = (
    "I'm right here with you, {name}, and you're safe. I've let {relative} know, and someone is "
    "coming to sit with you now."
)
INTENTS = {
    "greeting": "greeting",
    "location": "orientation",
    "time": "orientation",
    "identity": "orientation",
    "activity": "redirection",
    "person": "reassurance",
    "anxious": "reassurance",
    "sad": "comfort",
    "calm": "companionship",
    "chat": "companionship",
    "goodbye": "farewell",
}

# Curated stories: (id, text). A fallback delivers the text as is; a seed is told in Clara's words.
NARRATIVES: dict[str, tuple[tuple[str, str], ...]] = {
    "calming_story": (
        (
            "garden-walk-01",
            "Let's imagine a slow walk through a garden on a warm afternoon. The "
            "roses are out, the bees are humming, and there's a bench in the shade where we can sit "
            "as long as we like.",
        ),
        (
            "seaside-morning-02",
            "Picture a quiet morning by the sea. The tide is coming in gently, "
            "the gulls are calling, and there's a flask of hot tea beside you on the sand.",
        ),
        (
            "sunday-baking-03",
            "Think of a Sunday kitchen: flour on the table, the oven warming "
            "up, and the smell of scones filling the whole house.",
        ),
        (
            "rain-on-window-04",
            "Listen to the rain on the window. We're warm and dry inside, with "
            "a blanket and nowhere we need to be.",
        ),
    ),
    "grounding": (
        (
            "grounding-breath-01",
            "Let's take a slow breath together. In through the nose, and "
            "out, nice and slow. Feel your feet on the floor. You're safe, and I'm right here.",
        ),
        (
            "grounding-five-senses-02",
            "Let's notice what's around us. Can you feel the arm of "
            "your chair? The soft cushion? Listen: there's the clock ticking. You're here, and "
            "you're safe.",
        ),
        (
            "grounding-safe-room-03",
            "Look around your room with me: your chair, your blanket, "
            "your photos on the side. This is your place, and everything here is yours.",
        ),
    ),
    "memory_loop": (
        (
            "memory-loop-family-01",
            "Your family loves you very much. They talk about you all the "
            "time, and they'll be along to see you soon. Shall we look at your photos while we "
            "wait?",
        ),
        (
            "memory-loop-home-02",
            "You're at home here. The people looking after you know you "
            "well, and your things are all around you. There's nothing you need to do but rest.",
        ),
        (
            "memory-loop-day-03",
            "It's been a nice, gentle day. You've had your meals, you've had "
            "a chat with me, and now it's time to take things easy.",
        ),
    ),
}
# How Clara leads into a story she tells in her own words (mode "seed").
SEED_LEADS: dict[str, tuple[str, ...]] = {
    "calming_story": (
        "{name}, shall I tell you something nice?",
        "Here's something lovely to think about, {name}.",
    ),
    "grounding": ("{name}, let's try something together.", "Stay with me, {name}."),
    "memory_loop": ("I know, {name}, and that's all right.", "Don't you worry, {name}."),
}


def _uuid(rng: random.Random) -> uuid.UUID:
    return uuid.UUID(int=rng.getrandbits(128), version=4)


def _clip(value: float, low: float = 0.02, high: float = 0.97) -> float:
    return min(max(value, low), high)


class _SessionWriter:
    """Writes one session's exchanges, tracking the latent distress and what was already said."""

    def __init__(self, rng: random.Random, profile: _Profile, slot: str, person_offset: float):
        self.rng = rng
        self.profile = profile
        self.slot = slot
        self.base = SLOT_BASE_DISTRESS[slot] + person_offset
        self.distress = _clip(self.base + rng.gauss(0, 0.06))
        self.stored_distress: list[float] = []  # what the services will have stored, in order
        self.replies_used: dict[str, set[int]] = {}
        self.loop_asked: dict[str, list[str]] = {}
        self.narratives_used: set[str] = set()
        self.last_narrative_at = -10
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
        return template.format(
            name=p.preferred_name,
            relative=p.relative,
            relation=p.relation,
            home=p.home,
            pronoun=p.pronoun,
            Pronoun=p.pronoun.capitalize(),
            visit_day=p.visit_day,
            lost_item=p.lost_item,
            topic=self.rng.choice(p.topics),
            part=self.slot,
            time_hint=TIME_HINTS[self.slot],
        )

    def reply(self, key: str, options: tuple[str, ...]) -> str:
        """One of the replies to `key`, not repeating any until all have been said this session."""
        used = self.replies_used.setdefault(key, set())
        if len(used) == len(options):
            used.clear()
        index = self.rng.choice([i for i in range(len(options)) if i not in used])
        used.add(index)
        return self.fill(options[index])

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

    def user_line(self, kind: str) -> tuple[str, str, tuple[str, ...]]:
        """What the person says, and the key and templates of Clara's possible replies."""
        rng = self.rng
        if kind in LOOP_QUESTIONS:
            return self.loop_question(kind), kind, REPLIES[kind]
        if kind == "calm":
            memories = tuple((memory, MEMORY_REPLIES) for memory in self.profile.memories)
            line, replies = rng.choice(CALM_LINES + memories)
        elif kind == "greeting":
            line, replies = rng.choice(
                GREETINGS_CALM if self.distress < 0.45 else GREETINGS_UNSETTLED
            )
        else:
            line, replies = rng.choice(MOOD_LINES[kind])
        if not replies:
            return self.fill(line), kind, REPLIES[kind]
        return self.fill(line), line, replies

    def emotion_name(self, kind: str, line: str) -> str:
        d = self.distress
        if kind in ("location", "time", "identity", "activity"):
            return Emotion.ANXIOUS if d > 0.62 else Emotion.CONFUSED
        if kind == "person":
            return Emotion.ANXIOUS if d > 0.55 else Emotion.LONELY
        if kind == "greeting":
            return Emotion.CALM if d < 0.2 else Emotion.NEUTRAL if d < 0.45 else Emotion.CONFUSED
        if kind == "sad":
            return (
                Emotion.LONELY
                if ("alone" in line or "visit" in line or "miss" in line)
                else Emotion.SAD
            )
        return {
            "calm": Emotion.CALM,
            "chat": Emotion.NEUTRAL,
            "anxious": Emotion.ANXIOUS,
            "goodbye": Emotion.CALM,
        }[kind]

    def reading(
        self,
        user_message: str,
        emotion: str,
        distress: float | None = None,
        *,
        always: bool = False,
    ) -> EmotionReading | None:
        """The bot's reading of the message, or None (then the services' reader runs)."""
        recent = self.stored_distress[-3:]
        if not always and self.rng.random() < NO_READING_CHANCE:
            # Mirror what the built-in reader will store, so later trajectories line up.
            self.stored_distress.append(analyse(user_message, recent).distress_score)
            return None
        if distress is None:
            # The person's state, coloured by what this message shows.
            distress = 0.6 * self.distress + 0.4 * BASE_DISTRESS[emotion]
            distress += self.rng.gauss(0, 0.04)
        distress = round(_clip(distress, 0.01, 0.98), 3)
        self.stored_distress.append(distress)
        return EmotionReading(
            emotion=str(emotion),
            confidence=round(self.rng.uniform(0.6, 0.95), 2),
            distress_score=distress,
            trajectory=str(trajectory_for(distress, recent)),
        )

    def narrative(self, kind: str, index: int) -> tuple[NarrativeRef, str] | None:
        """Maybe tell a curated story instead of an ordinary reply."""
        rng = self.rng
        if self.distress <= 0.5 or index - self.last_narrative_at < 3 or rng.random() >= 0.4:
            return None
        if self.distress >= 0.66:
            category = "grounding"
        elif kind in LOOP_QUESTIONS and len(self.loop_asked.get(kind, [])) >= 2:
            category = "memory_loop"
        else:
            category = "calming_story"
        return self.story(category, index)

    def story(
        self, category: str, index: int, *, mode: str | None = None
    ) -> tuple[NarrativeRef, str]:
        rng = self.rng
        options = [n for n in NARRATIVES[category] if n[0] not in self.narratives_used]
        narrative_id, text = rng.choice(options or list(NARRATIVES[category]))
        mode = mode or ("seed" if rng.random() < 0.75 else "fallback")
        if mode == "seed":
            text = f"{self.fill(rng.choice(SEED_LEADS[category]))} {text}"
        self.narratives_used.add(narrative_id)
        self.last_narrative_at = index
        return NarrativeRef(id=narrative_id, mode=mode, category=category), text

    def exchange(self, index: int, count: int, escalation_at: int | None) -> dict:
        """One exchange's content (no timestamp); moves the person's distress on."""
        rng = self.rng
        if escalation_at is not None and index == escalation_at - 1:
            self.distress = max(self.distress, 0.7)  # the evening is already going badly
        if escalation_at is not None and index == escalation_at:
            self.distress = 0.9
            reading = self.reading(
                FEARFUL_LINE, Emotion.FEARFUL, rng.uniform(0.88, 0.93), always=True
            )
            return {
                "user_message": FEARFUL_LINE,
                "assistant_message": self.fill(ESCALATION_REPLY),
                "emotion": reading,
                "intent": "safety",
                "narrative": None,
                "escalation": True,
            }
        if escalation_at is not None and index == escalation_at + 1:
            reading = self.reading(
                STILL_FEARFUL_LINE, Emotion.FEARFUL, rng.uniform(0.74, 0.8), always=True
            )
            narrative, text = self.story("grounding", index, mode="seed")
            # Someone came to sit with them: the rest of the evening is calmer.
            self.distress, self.base = 0.42, self.base - 0.15
            return {
                "user_message": STILL_FEARFUL_LINE,
                "assistant_message": text,
                "emotion": reading,
                "intent": "narrative",
                "narrative": narrative,
                "escalation": False,
            }

        if index == 0:
            kind = "greeting"
        elif index == count - 1 and self.distress < 0.4:
            kind = "goodbye"
        else:
            loop_chance = SLOT_LOOP_CHANCE[self.slot] + (0.1 if self.distress > 0.6 else 0.0)
            kind = rng.choice(self.loops) if rng.random() < loop_chance else self.mood_kind()
        repeated = kind in LOOP_QUESTIONS and bool(self.loop_asked.get(kind))
        user_message, reply_key, replies = self.user_line(kind)
        reading = self.reading(user_message, self.emotion_name(kind, user_message))
        told = self.narrative(kind, index) if kind not in ("greeting", "goodbye") else None
        if told is not None:
            narrative, assistant_message = told
            intent = "narrative"
        else:
            narrative, assistant_message, intent = (
                None,
                self.reply(reply_key, replies),
                INTENTS[kind],
            )

        # How the person feels next: stories help, circling questions and evenings wind them up.
        if narrative is not None:
            self.distress -= rng.uniform(0.12, 0.25)
        else:
            self.distress += rng.gauss(SLOT_DRIFT[self.slot], 0.04) + (0.03 if repeated else 0.0)
            self.distress = 0.9 * self.distress + 0.1 * self.base
        self.distress = _clip(self.distress, 0.03, 0.95)
        return {
            "user_message": user_message,
            "assistant_message": assistant_message,
            "emotion": reading,
            "intent": intent,
            "narrative": narrative,
            "escalation": False,
        }


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
            "home": profile.home,
        }
        demo_people.append(
            DemoPerson(id=_uuid(rng), display_name=display_name, caregiver_context=context)
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
            content["processing_time_ms"] = rng.randint(350, 1900)
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


@transaction.atomic
def load(plan: DemoPlan) -> None:
    """Write the plan through the services the bot API uses, oldest session first."""
    people = {person.id: person for person in plan.people}
    introduced: set[uuid.UUID] = set()
    for session in plan.sessions:
        person = people[session.person_id]
        services.session_resolve(
            session_id=session.id,
            user_id=person.id,
            display_name=person.display_name,
            at=session.started_at,
        )
        if person.id not in introduced:
            # Caregivers fill this in (there is no service for it yet): as an operator would.
            Person.objects.filter(id=person.id).update(caregiver_context=person.caregiver_context)
            introduced.add(person.id)
        for exchange in session.exchanges:
            services.exchange_record(
                session_id=session.id,
                user_message=exchange.user_message,
                assistant_message=exchange.assistant_message,
                emotion=exchange.emotion,
                intent=exchange.intent,
                narrative=exchange.narrative,
                processing_time_ms=exchange.processing_time_ms,
                escalation=exchange.escalation,
                at=exchange.at,
            )
        if session.closed_at is not None:
            services.session_close(session_id=session.id, at=session.closed_at)
    # Sessions the bot never closed are expired by the idle sweep, as in production.
    services.sessions_expire_idle(now=plan.now)
