"""Plain words for caregivers: feelings, how upset, question types, stories, alerts.

The dashboard never shows codes: everything a caregiver reads goes through these tables. Distress
is stored 0–1; people read it as "how upset", 0–100.
"""

from memory.conversations.urgency.language import NAMES as LANGUAGE_NAMES
from memory.core.person import CaregiverContext
from memory.models import Alert, Emotion, Memory, MemoryType, Narrative, QuestionType

FEELINGS = {
    Emotion.CALM: "calm",
    Emotion.NEUTRAL: "settled",
    Emotion.LONELY: "lonely",
    Emotion.SAD: "sad",
    Emotion.CONFUSED: "confused",
    Emotion.ANXIOUS: "anxious",
    Emotion.FEARFUL: "frightened",
}

# (upper bound of distress, words): the first bound above the value names it.
UPSET_LEVELS = [
    (0.2, "calm"),
    (0.4, "a little unsettled"),
    (0.6, "unsettled"),
    (0.8, "upset"),
    (1.01, "very upset"),
]

# How each question type reads after "asked ...", by pronoun ("she", "he", "they").
_QUESTION_PHRASES = {
    QuestionType.LOCATION: "where {subject} {be}",
    QuestionType.TIME: "what day or time it is",
    QuestionType.IDENTITY: "who people are",
    QuestionType.ACTIVITY: "what {subject} should be doing",
    QuestionType.PERSON: "about family and friends",
    QuestionType.GENERAL: "other things",
}
QUESTION_LABELS = {
    QuestionType.LOCATION: "Where am I?",
    QuestionType.TIME: "What day or time is it?",
    QuestionType.IDENTITY: "Who are you?",
    QuestionType.ACTIVITY: "What should I do?",
    QuestionType.PERSON: "Family and friends",
    QuestionType.GENERAL: "Other",
}

STORY_KINDS = {
    Narrative.Category.CALMING_STORY: "calming stories",
    Narrative.Category.GROUNDING: "gentle reminders of where and when",
    Narrative.Category.MEMORY_LOOP: "kind answers to a repeated question",
    Narrative.Category.REMINISCENCE: "stories from the past",
    Narrative.Category.GENTLE_REDIRECT: "a gentle change of subject",
}

ESCALATION_REASONS = {
    "self_harm": "said something about wanting to hurt themselves",
    "fall": "may have fallen",
    "pain": "mentioned pain or feeling unwell",
    "wants_to_leave": "wanted to leave",
    "asks_for_help": "asked for help",
    "severe_distress": "was very frightened",
    "danger_at_home": "may be in danger at home (smoke, gas, water or someone in the house)",
    "flagged_by_companion": "needed a person, said the companion",
}
# Short names of the reasons, for "what decided it".
REASON_NOUNS = {
    "self_harm": "wanting to hurt themselves",
    "fall": "a fall",
    "pain": "pain or feeling unwell",
    "wants_to_leave": "wanting to leave",
    "asks_for_help": "a call for help",
    "severe_distress": "great fear",
    "danger_at_home": "danger at home",
}

# Headings of the memory review, in the order shown ({name} is the person's name).
MEMORY_TYPES = {
    MemoryType.PROFILE: "About {name}",
    MemoryType.PEOPLE: "People in {name}'s life",
    MemoryType.ROUTINE: "Routines",
    MemoryType.PREFERENCE: "Likes and dislikes",
    MemoryType.LIFE_STORY: "Life story",
    MemoryType.EVENT: "Recent events",
    MemoryType.FEELING: "Feelings lately",
    MemoryType.OTHER: "Other things",
}

MEMORY_SOURCES = {
    Memory.Source.CONVERSATION_EXTRACTION: "heard in a conversation",
    Memory.Source.CAREGIVER: "added by the care team",
    Memory.Source.SEEDED_PROFILE: "from the first profile",
    Memory.Source.CURATED_FOLD: "Clara's tidy-up of similar memories",
    Memory.Source.TOOL: "noted by Clara",
}

ALERT_STATUS = {
    Alert.Status.OPEN: "nobody has it yet",
    Alert.Status.CLAIMED: "being handled",
    Alert.Status.RESOLVED: "resolved",
}


def pronoun(caregiver_context: dict | None) -> str:
    """'she', 'he' or 'they', from the pronouns the caregivers chose (e.g. "she/her")."""
    return CaregiverContext.from_blob(caregiver_context).subject


def feeling(emotion: str | None) -> str:
    return FEELINGS.get(emotion, "not known") if emotion else "not known"


def upset_words(distress: float | None) -> str:
    """'calm' … 'very upset' for a distress level 0–1; 'not known' without one."""
    if distress is None:
        return "not known"
    for bound, words in UPSET_LEVELS:
        if distress < bound:
            return words
    return UPSET_LEVELS[-1][1]


def upset_score(distress: float | None) -> int | None:
    """Distress 0–1 as the 0–100 'how upset' figure caregivers see."""
    return None if distress is None else round(distress * 100)


def question_phrase(question_type: str, subject: str = "they") -> str:
    template = _QUESTION_PHRASES.get(question_type, "other things")
    return template.format(subject=subject, be="are" if subject == "they" else "is")


def question_label(question_type: str) -> str:
    return QUESTION_LABELS.get(question_type, "Other")


def story_kind(category: str) -> str:
    return STORY_KINDS.get(category, category.replace("_", " "))


def times(count: float) -> str:
    """'once', 'twice', '8 times'; 'about twice', 'about 8 times' for an average."""
    rounded = max(round(count), 1)
    said = {1: "once", 2: "twice"}.get(rounded, f"{rounded} times")
    return f"about {said}" if abs(count - rounded) > 0.05 else said


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"


def duration(seconds: float | None) -> str:
    if not seconds:
        return "under a minute"
    minutes = round(seconds / 60)
    if minutes < 1:
        return "under a minute"
    if minutes < 90:
        return plural(minutes, "minute")
    hours, minutes = divmod(minutes, 60)
    return f"{plural(hours, 'hour')} {plural(minutes, 'minute')}"


def alert_headline(kind: str, detail: dict | None) -> str:
    """What an alert is about, in one plain sentence (no codes, no raw figures)."""
    detail = detail or {}
    if kind == Alert.Kind.ESCALATION:
        reason = ESCALATION_REASONS.get(detail.get("reason") or "", "needed a person's help")
        return f"Clara flagged a moment that needed a person: {reason}."
    if kind == Alert.Kind.DISTRESS_ABOVE_BASELINE:
        now, usual = upset_score(detail.get("session_average")), upset_score(detail.get("baseline"))
        if now is not None and usual is not None:
            return f"More upset than usual in one conversation ({now} out of 100; usually {usual})."
        return "More upset than usual in one conversation."
    if kind == Alert.Kind.CHRONIC_REPETITION:
        recent = detail.get("recent_repeats_per_session")
        usual = detail.get("usual_repeats_per_session")
        if recent is not None and usual is not None:
            return (
                "Asking the same things more often than usual "
                f"({times(recent)} a conversation lately; usually {times(usual)})."
            )
        return "Asking the same things more often than usual."
    return "Something to look at."


def alert_email_headline(kind: str, detail: dict | None, name: str) -> str:
    """What an alert's e-mail leads with, the person first: "Peggy may have fallen"."""
    detail = detail or {}
    if kind == Alert.Kind.ESCALATION:
        reason = ESCALATION_REASONS.get(detail.get("reason") or "", "needs a person now")
        return f"{name} {reason}"
    if kind == Alert.Kind.DISTRESS_ABOVE_BASELINE:
        return f"{name} was more upset than usual in a conversation"
    if kind == Alert.Kind.CHRONIC_REPETITION:
        return f"{name} is asking the same things more often than usual"
    return f"Something to look at for {name}"


def alert_why(detail: dict | None) -> str | None:
    """What decided an escalation, for caregivers and auditors: the language, and the kind of
    words ("words Clara knows for a fall") or the example it was closest to. Never the person's
    own words (those are shown apart, only to members with the transcript right)."""
    why = (detail or {}).get("why") or {}
    source = why.get("source")
    if not source:
        return None
    noun = REASON_NOUNS.get((detail or {}).get("reason") or "", "a moment that needs a person")
    language = LANGUAGE_NAMES.get(why.get("language") or "", "")
    said_in = f" Said in {language}." if language else ""
    if source == "phrase":
        return f"Recognised from words Clara knows for {noun}.{said_in}"
    if source == "meaning":
        example = why.get("example")
        closest = f" Closest to: “{example}”" if example else ""
        return f"Recognised by meaning as {noun}.{closest}{said_in}"
    if source == "companion":
        return "Flagged by the companion itself."
    return None


def week_question_sentence(question, *, subject: str, band) -> str | None:
    """'Asked where she is about 8 times a conversation, in 5 of 9 conversations in the last 7
    days (the 7 days before: about 6 times, in 4 of 8).' None when asked in neither.

    `question` is a selectors.WeekQuestion, `band` the selectors.WeekBand it belongs to.
    """
    phrase = question_phrase(question.question_type, subject)
    if question.asked:
        sentence = (
            f"Asked {phrase} {times(question.per_conversation)} a conversation, in "
            f"{question.conversations} of {plural(band.conversations, 'conversation')} in the last 7 days"
        )
    elif question.last_week_asked:
        sentence = f"Has not asked {phrase} in the last 7 days"
    else:
        return None
    if question.last_week_asked:
        sentence += (
            f" (the 7 days before: {times(question.last_week_per_conversation)}, in "
            f"{question.last_week_conversations} of {band.last_week_conversations})"
        )
    else:
        sentence += " (not asked the 7 days before)"
    return sentence + "."


def repeated_question_words(question, *, subject: str, with_words: bool) -> str:
    """What a repeated question was, for the repetition panel.

    Members who may read conversations see the person's own words (the most frequent wording,
    quoted); the others see Clara's words for its kind ("Asked where she is"), never a sentence
    the person said. `question` is a selectors.RepeatedQuestion.
    """
    if with_words:
        return f"“{question.example}”"
    if question.question_type == QuestionType.GENERAL:
        return "Said something else"
    return f"Asked {question_phrase(question.question_type, subject)}"


def repeated_question_sentence(question, *, subject: str, with_words: bool) -> str:
    """'Asked where she is, 6 times in 3 conversations, in different words'; with the person's
    own words for members who may read conversations: '“I want to go home.”, 6 times in 3
    conversations, in different words'. `question` is a selectors.RepeatedQuestion."""
    what = repeated_question_words(question, subject=subject, with_words=with_words)
    sentence = (
        f"{what}, {times(question.times)} in {plural(question.conversations, 'conversation')}"
    )
    if question.in_other_words:
        sentence += ", in different words"
    return sentence


def chronic_sentence(chronic, *, name: str, days: int, at: int) -> str | None:
    """'In 2 of 9 conversations in the last 30 days, Peggy asked one thing 5 times or more (in
    any words). Clara answered warmly each time.' None when no conversation did.

    `chronic` is a selectors.ChronicConversations; `at` the number of repeats that flags one.
    """
    if not chronic.chronic:
        return None
    return (
        f"In {chronic.chronic} of {plural(chronic.conversations, 'conversation')} in the last "
        f"{days} days, {name} asked one thing {at} times or more (in any words). Clara answered "
        "warmly each time."
    )


def stretch_sentence(stretch, *, label: str) -> str:
    """'The last 7 days: a little unsettled on average (31 out of 100), 9 conversations.'

    `stretch` is a selectors.Stretch.
    """
    if not stretch.readings:
        return f"{label}: no conversations."
    return (
        f"{label}: {upset_words(stretch.average)} on average ({upset_score(stretch.average)} out "
        f"of 100), {plural(stretch.conversations, 'conversation')}."
    )


def caregiver_name(user) -> str:
    """A caregiver as the timeline and e-mails name them: their full name, else the login."""
    if user is None:
        return ""
    return (user.get_full_name() or user.get_username())[:150]


def login_name(first: str | None, last: str | None, login: str | None) -> str | None:
    """`caregiver_name` from a login's columns (rows read with .values())."""
    full = f"{first or ''} {last or ''}".strip()
    return (full or login or "")[:150] or None


OUTCOME_WORDS = {
    Alert.Outcome.WELL: "checked and well",
    Alert.Outcome.HURT_CARED_FOR: "hurt, care given",
    Alert.Outcome.EMERGENCY: "emergency services called",
    Alert.Outcome.FALSE_ALARM: "false alarm",
    Alert.Outcome.OTHER: "other",
    Alert.Outcome.UNKNOWN: "outcome not recorded (resolved before outcomes were asked for)",
}


def outcome_words(outcome: str, note: str = "") -> str:
    """'checked and well'; 'other: her son took her to the GP'."""
    words = OUTCOME_WORDS.get(outcome, outcome)
    return f"{words}: {note}" if note else words


def age(seconds: float) -> str:
    """How long ago, short: 'just now', '4 min', '1 h 20 min', '2 days'."""
    minutes = int(max(seconds, 0) // 60)
    if minutes < 1:
        return "just now"
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days = hours // 24
    return plural(days, "day")
