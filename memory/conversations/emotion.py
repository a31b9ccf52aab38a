"""A small built-in emotion reader, used when the bot sends an exchange without its own result.

It is deliberately simple (keyword cues, fixed distress levels) so stored data is never missing;
a bot with a real classifier sends its own reading and this is not used.
"""

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from memory.conversations.models import Emotion, Trajectory
from memory.conversations.urgency import phrases
from memory.conversations.urgency.text import normalise

# Cues per emotion. The strongest-scoring emotion wins; ties go to the more distressing one.
_CUES: dict[str, list[str]] = {
    Emotion.FEARFUL: [
        "scared",
        "afraid",
        "frightened",
        "terrified",
        "fear",
        "help me",
        "panic",
        "someone is",
        "danger",
        "hurt me",
    ],
    Emotion.ANXIOUS: [
        "worried",
        "anxious",
        "nervous",
        "worry",
        "uneasy",
        "need to go",
        "have to go",
        "get home",
        "want to go home",
        "late",
        "hurry",
        "can't find",
        "cant find",
    ],
    Emotion.CONFUSED: [
        "confused",
        "don't understand",
        "dont understand",
        "don't know",
        "dont know",
        "where am i",
        "who are you",
        "what is this",
        "muddled",
        "lost",
        "what day",
        "what's happening",
        "what is happening",
    ],
    Emotion.SAD: [
        "sad",
        "cry",
        "crying",
        "upset",
        "unhappy",
        "died",
        "passed away",
        "gone",
        "heartbroken",
        "tears",
    ],
    Emotion.LONELY: ["lonely", "alone", "nobody", "no one", "by myself", "miss", "visit"],
    Emotion.CALM: [
        "thank",
        "lovely",
        "nice",
        "happy",
        "better",
        "calm",
        "relaxed",
        "wonderful",
        "glad",
        "beautiful",
        "that's good",
        "that sounds good",
    ],
}
_PRIORITY = [
    Emotion.FEARFUL,
    Emotion.ANXIOUS,
    Emotion.CONFUSED,
    Emotion.SAD,
    Emotion.LONELY,
    Emotion.CALM,
]
_COMPILED = {
    emotion: [re.compile(r"\b" + re.escape(cue) + r"\b") for cue in cues]
    for emotion, cues in _CUES.items()
}
# Any cue of each emotion, in one pattern: a message names few emotions, so only theirs are
# counted cue by cue (a turn reads every message it is given; ~55 searches became ~10).
_ANY_CUE = {
    emotion: re.compile("|".join(pattern.pattern for pattern in patterns))
    for emotion, patterns in _COMPILED.items()
}


@functools.cache
def _other_languages_cues() -> list[dict[str, re.Pattern]]:
    """Each other language's emotion cues, by the emotion they show."""
    known = set(_COMPILED)
    return [
        {
            Emotion(feeling): pattern
            for feeling, pattern in lexicon.emotion.items()
            if feeling in known
        }
        for code, lexicon in phrases.lexicons().items()
        if code != "en" and lexicon.emotion
    ]


# The distress each emotion stands for on its own, before recent history is blended in.
BASE_DISTRESS: dict[str, float] = {
    Emotion.FEARFUL: 0.85,
    Emotion.ANXIOUS: 0.7,
    Emotion.CONFUSED: 0.55,
    Emotion.SAD: 0.55,
    Emotion.LONELY: 0.5,
    Emotion.NEUTRAL: 0.2,
    Emotion.CALM: 0.05,
}
# A change in distress smaller than this reads as "stable".
TRAJECTORY_STEP = 0.1
# The trajectory compares with the mean of this many recent readings.
TRAJECTORY_READINGS = 3


@dataclass(frozen=True)
class EmotionReading:
    emotion: str
    confidence: float
    distress_score: float
    trajectory: str


def trajectory_for(
    distress: float, recent_distress: Sequence[float], baseline: float | None = None
) -> str:
    """Direction of change against the mean of the last few readings (oldest first).

    `baseline` is the person's usual distress (their readings in other sessions). While the
    session has fewer than TRAJECTORY_READINGS readings of its own, it stands in for the missing
    ones: someone usually anxious who starts calm and then sounds anxious is back to their usual,
    not escalating; someone usually calm who starts frightened is.
    """
    window = list(recent_distress[-TRAJECTORY_READINGS:])
    if baseline is not None and len(window) < TRAJECTORY_READINGS:
        window = [baseline] * (TRAJECTORY_READINGS - len(window)) + window
    if not window:
        return Trajectory.STABLE
    delta = distress - sum(window) / len(window)
    if delta > TRAJECTORY_STEP:
        return Trajectory.ESCALATING
    if delta < -TRAJECTORY_STEP:
        return Trajectory.DE_ESCALATING
    return Trajectory.STABLE


def analyse(
    message: str, recent_distress: Sequence[float] = (), baseline: float | None = None
) -> EmotionReading:
    """Read the emotion of one message; `recent_distress` is the session's last readings, oldest
    first, and `baseline` the person's usual distress (it calibrates the trajectory only)."""
    text = message.replace("\u2019", "'").lower()
    scores = {
        emotion: sum(1 for cue in cues if cue.search(text)) if _ANY_CUE[emotion].search(text) else 0
        for emotion, cues in _COMPILED.items()
    }
    if not any(scores.values()):
        # Not in English words: the cues of the other languages Clara knows (their phrase
        # lists, memory/data/urgent/<lang>.json), so distress is read in the person's own.
        folded = normalise(message)
        for cues in _other_languages_cues():
            for emotion, pattern in cues.items():
                scores[emotion] += len(pattern.findall(folded))
    best = max(_PRIORITY, key=lambda emotion: (scores[emotion], -_PRIORITY.index(emotion)))
    hits = scores[best]
    if hits == 0:
        emotion, confidence = Emotion.NEUTRAL, 0.5
    else:
        emotion, confidence = best, min(0.5 + 0.15 * hits, 0.95)
    distress = BASE_DISTRESS[emotion]
    if message.count("!") >= 2 and emotion not in (Emotion.CALM, Emotion.NEUTRAL):
        distress += 0.1
    if recent_distress:
        # Distress carries over: a calm word in an upset conversation is not instantly calm.
        window = recent_distress[-TRAJECTORY_READINGS:]
        distress = 0.75 * distress + 0.25 * (sum(window) / len(window))
    distress = round(min(max(distress, 0.0), 1.0), 3)
    return EmotionReading(
        emotion=str(emotion),
        confidence=round(confidence, 3),
        distress_score=distress,
        trajectory=str(trajectory_for(distress, recent_distress, baseline)),
    )
