"""Dementia-safe context assembly: exactly what the companion's LLM sees this turn.

`render` is a pure function of `ContextInputs`: same inputs, same text, so every rule below can
be tested once for every bot, and a change to the prompt shows up as a diff.

The rules live in what this module leaves out as much as in what it writes:
- nothing about repetition reaches the text: no counts, no hint that something was said
  before; when a repeat is detected the only traces are a directive to answer as if for the
  first time and, when Clara's answer to the question is helping, a request to give that same
  reassurance in warm words of her own; from three repeats on the window keeps just the newest
  telling of each question, however it was worded (by words or by meaning);
- warmth rises with repetition, tier by tier, and replies are never asked to be curt; from five
  repeats a chosen story becomes the heart of the reply;
- only this session's conversation appears, with no timestamps or sequence numbers;
- the last three feelings of this session set a steady tone;
- stories already told and things mentioned this session are offered for warm callbacks,
  so Clara does not contradict herself;
- the person is never quizzed, corrected or tested.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from memory.conversations import repeats
from memory.conversations.anchors import MAX_ANCHORS, find_anchors  # noqa: F401 - part of this API
from memory.conversations.models import ChatMessage, Trajectory
from memory.conversations.repetition import CHRONIC_AT  # noqa: F401 - part of this API
from memory.core.person import pronoun_forms

DEFAULT_MAX_TOKENS = 300
CHRONIC_MAX_TOKENS = 80
DEDUPLICATE_AT = 3
# From this many repeats a chosen story is the primary response, not just material.
STORY_FIRST_AT = CHRONIC_AT
CONTINUITY_RECORDS = 3
# Confirmed facts given to the LLM in one turn, at most.
MAX_FACTS = 8

# Directive tiers by repeat count: each tier keeps everything of the one below and adds to it.
# The person is written {name} (their name, else she/he/they: `Who`), {obj} (her, him, them),
# {poss} ("Nana's", else her/his/their) and {Name}/{Poss} at a sentence's start; a verb after
# {name} agrees with it ({feels}: "Nana feels", "they feel").
_BASE_WARMTH = (
    "Speak warmly and simply, in short, clear sentences. Be patient, kind and unhurried, "
    "and let {obj} feel safe and valued."
)
_WARMTH_TIERS: list[tuple[int, str]] = [
    (1, "Be especially gentle and patient."),
    (
        3,
        "Use your warmest, most comforting voice, as if you were holding {poss} hand. "
        "Keep the reply short and simple, and just as warm.",
    ),
    (
        CHRONIC_AT,
        "You have all the patience in the world. Every moment with {obj} matters; "
        "let your kindness be felt in every word.",
    ),
]
_FIRST_TIME = (
    "Treat what {name} {says} as new and welcome. Answer it fully and kindly, "
    "as if you were hearing it for the very first time."
)
_NEVER = (
    "Never quiz, test or correct {obj}, and never ask {pronoun} to recall anything. "
    "Do not mention dates, the clock or other conversations. If you are unsure of a fact about "
    "{poss} life, do not state it as true; talk about feelings and the present moment instead."
)
_STEADY = (
    "Keep your tone steady and gently matched to how {name} {feels}. "
    "Avoid sudden changes in warmth, energy or urgency."
)
_ESCALATION = (
    "{Name} may need a person's help right now. Stay calm and reassuring, keep {pronoun} "
    "company, and say that someone who cares about {pronoun} is being told. Do not give medical "
    "advice."
)
_TRAJECTORY_WORDS = {
    Trajectory.ESCALATING: "rising",
    Trajectory.STABLE: "steady",
    Trajectory.DE_ESCALATING: "easing",
}
_POSITION_WORDS = ["now", "a moment ago", "a little while ago"]


@dataclass(frozen=True)
class Who:
    """How the prompt names the person: by name when the bot or the caregivers gave one, else by
    the pronoun the caregivers chose ("they" when none), so every line reads as plain English."""

    name: str = ""
    pronoun: str = "they"  # "she", "he" or "they"

    def words(self) -> dict[str, str]:
        subject, object_, possessive = pronoun_forms(self.pronoun)
        name = self.name.strip()
        plural = not name and subject == "they"

        def agree(verb: str) -> str:
            return verb if plural else f"{verb}s"

        words = {
            "name": name or subject,
            "obj": name or object_,
            "poss": f"{name}'s" if name else possessive,
            "pronoun": object_,
            "says": "say" if plural else "says",
            "feels": agree("feel"),
            "enjoys": agree("enjoy"),
            "brings": agree("bring"),
            "has": "have" if plural else "has",
            "is": "are" if plural else "is",
        }
        words["Name"] = words["name"][:1].upper() + words["name"][1:]
        words["Poss"] = words["poss"][:1].upper() + words["poss"][1:]
        return words

    def say(self, template: str) -> str:
        return template.format(**self.words())


@dataclass(frozen=True)
class Turn:
    role: str
    content: str
    # The stored meaning of a person's message, when known: deduplication then also recognises
    # a question put in other words. Never rendered.
    meaning: repeats.MessageMeaning | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Feeling:
    emotion: str
    distress_score: float
    trajectory: str


@dataclass(frozen=True)
class NarrativeSeed:
    text: str
    theme_tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class ContextInputs:
    """Everything the prompt may be built from. All of it comes from the current session."""

    name: str
    message: str
    window: Sequence[Turn]
    # "she", "he" or "they", from the pronouns the caregivers chose.
    pronoun: str = "they"
    repeat_count: int = 0
    feelings: Sequence[Feeling] = ()  # oldest first; the last is the current message's
    narrative: NarrativeSeed | None = None
    told_themes: Sequence[str] = ()
    anchors: Sequence[str] = ()
    known_topics: Sequence[str] = ()
    avoid_topics: Sequence[str] = ()
    escalate: bool = False
    # The family's agreed answer to the kind of question just asked (the same answer each time).
    agreed_answer: str | None = None
    # Facts a caregiver confirmed (never unconfirmed ones), most relevant first. At most
    # MAX_FACTS of them are written.
    facts: Sequence[str] = ()
    # Confirmed facts the caregivers pinned: every one is written, before the others (how many
    # may be pinned and still reach the prompt: memory.facts.search.FOUNDATION_LIMIT).
    pinned_facts: Sequence[str] = ()
    # At a repeat: what Clara answered this question within this session, when it is helping
    # (consistency: the same reassurance, in warm words). Never said to be an earlier answer.
    reassurance: str | None = None


@dataclass(frozen=True)
class RenderedContext:
    system_prompt: str
    messages: list[dict[str, str]] = field(default_factory=list)
    max_tokens: int = DEFAULT_MAX_TOKENS


def warmth_directive(repeat_count: int, who: Who | str) -> str:
    """The warmth part of the prompt for this many repeats: each tier strictly adds to the last."""
    who = who if isinstance(who, Who) else Who(who)
    parts = [_BASE_WARMTH] + [text for at, text in _WARMTH_TIERS if repeat_count >= at]
    return who.say(" ".join(parts))


def max_tokens_for(repeat_count: int) -> int:
    return CHRONIC_MAX_TOKENS if repeat_count >= CHRONIC_AT else DEFAULT_MAX_TOKENS


def deduplicate(window: Sequence[Turn]) -> list[Turn]:
    """Keep only the newest telling of each repeated question, and the reply that followed it.

    Works on (question, reply) pairs from the newest backwards, so the history reads as a
    conversation that moves on, not a loop.
    """
    pairs: list[list[Turn]] = []
    for turn in window:
        if turn.role == ChatMessage.Role.USER or not pairs:
            pairs.append([turn])
        else:
            pairs[-1].append(turn)
    kept: list[list[Turn]] = []
    seen: list[Turn] = []
    for pair in reversed(pairs):
        first = pair[0]
        if first.role != ChatMessage.Role.USER:
            kept.append(pair)
            continue
        if any(
            repeats.says_again(first.content, later.content, first.meaning, later.meaning)
            for later in seen
        ):
            continue
        seen.append(first)
        kept.append(pair)
    return [turn for pair in reversed(kept) for turn in pair]


def _feelings_line(feelings: Sequence[Feeling], who: Who) -> str:
    recent = list(feelings)[-CONTINUITY_RECORDS:]
    described = [
        f"{_POSITION_WORDS[index]}: {feeling.emotion} (distress {feeling.distress_score:.1f})"
        for index, feeling in enumerate(reversed(recent))
    ]
    direction = _TRAJECTORY_WORDS.get(recent[-1].trajectory, "steady")
    return (
        who.say("How {name} {has} been feeling in this conversation — ")
        + "; ".join(described)
        + (f". Overall the feeling is {direction}.")
    )


def _topics(items: Sequence[str]) -> str:
    return ", ".join(item.strip() for item in items if item.strip())


def _facts_line(inputs: ContextInputs, who: Who) -> str | None:
    """Pinned facts all, then the others up to MAX_FACTS; each once."""
    pinned = [fact.strip().rstrip(".") for fact in inputs.pinned_facts if fact.strip()]
    others = [
        fact.strip().rstrip(".")
        for fact in inputs.facts
        if fact.strip() and fact.strip().rstrip(".") not in pinned
    ][:MAX_FACTS]
    facts = list(dict.fromkeys(pinned + others))
    if not facts:
        return None
    return (
        who.say(
            "What {poss} family has confirmed, to help you choose warm, familiar topics "
            "(never quiz {obj} on it or correct {obj} with it): "
        )
        + "; ".join(facts)
        + "."
    )


def render(inputs: ContextInputs) -> RenderedContext:
    """The system prompt and messages the LLM sees, and its token limit. Pure."""
    who = Who(inputs.name, inputs.pronoun)
    name = inputs.name.strip()
    sections = [
        (
            f"You are Clara, a caring companion talking with {name}, who is living with dementia."
            if name
            else "You are Clara, a caring companion talking with someone living with dementia."
        ),
        warmth_directive(inputs.repeat_count, who),
    ]
    if inputs.repeat_count > 0:
        sections.append(who.say(_FIRST_TIME))
    sections.append(who.say(_NEVER))
    if inputs.feelings:
        sections.append(_feelings_line(inputs.feelings, who) + " " + who.say(_STEADY))
    if inputs.escalate:
        sections.append(who.say(_ESCALATION))
    if inputs.narrative is not None:
        if inputs.repeat_count >= STORY_FIRST_AT:
            sections.append(
                f"Let this short story be the heart of your reply, told in your own words and "
                f'with all your warmth: "{inputs.narrative.text.strip()}"'
            )
        else:
            sections.append(
                "A short story you may draw on, in your own words, if it helps: "
                f'"{inputs.narrative.text.strip()}"'
            )
    if inputs.told_themes:
        sections.append(
            f"In this conversation you have told stories about {_topics(inputs.told_themes)}. "
            + who.say(
                "If {name} {brings} them up, welcome them warmly and keep your story the same."
            )
        )
    if inputs.anchors:
        sections.append(
            "Things you have talked about together in this conversation, for gentle callbacks: "
            f"{_topics(inputs.anchors)}."
        )
    if inputs.agreed_answer:
        sections.append(
            who.say(
                "{Poss} family asks that this question is always answered the same way. Give "
                "this answer, warmly and in your own words: "
            )
            + f'"{inputs.agreed_answer.strip()}"'
        )
    elif inputs.reassurance and inputs.reassurance.strip() and inputs.repeat_count > 0:
        sections.append(
            who.say("A reassurance that comforts {obj} here: ") + f'"{inputs.reassurance.strip()}" '
            "Keep to this same reassurance, in warm words of your own."
        )
    facts = _facts_line(inputs, who)
    if facts:
        sections.append(facts)
    if inputs.known_topics:
        sections.append(who.say("Topics {name} {enjoys}: ") + f"{_topics(inputs.known_topics)}.")
    if inputs.avoid_topics:
        sections.append(f"Steer kindly away from these topics: {_topics(inputs.avoid_topics)}.")

    window = list(inputs.window)
    if inputs.repeat_count >= DEDUPLICATE_AT:
        window = deduplicate(window)
    messages = [{"role": turn.role, "content": turn.content} for turn in window]
    messages.append({"role": ChatMessage.Role.USER.value, "content": inputs.message})
    return RenderedContext(
        system_prompt="\n\n".join(sections),
        messages=messages,
        max_tokens=max_tokens_for(inputs.repeat_count),
    )
