"""What the prompt firewall holds back for one person, for staff to review.

The prompt (memory/companion/prompt.py) quotes stored text as data and leaves out what
memory.core.screening flags; this reads everything stored that could reach the person's prompt
(confirmed facts, the profile, agreed answers, stories, the companion's notes) and lists the
items left out, with why, in the same sources and by the same rule as the prompt.
"""

import uuid
from dataclasses import dataclass

from memory.companion import narratives
from memory.companion import prompt as context
from memory.companion.context import contact_fact, home_fact
from memory.companion.models import Narrative
from memory.conversations.models import Person
from memory.core.person import CaregiverContext
from memory.core.screening import reasons_in_words
from memory.facts.models import Memory, PersonNotes


@dataclass(frozen=True)
class HeldBackItem:
    """One stored item the companion does not hear, for staff: where it is and why."""

    where: str
    text: str
    reasons: list[str]
    memory_id: uuid.UUID | None = None


def _check(found: list, where: str, source: context.Source, text: str, memory_id=None) -> None:
    text = (text or "").strip()
    if text:
        reasons = source.withheld(text)
        if reasons:
            found.append(HeldBackItem(where, text, reasons_in_words(reasons), memory_id))


def held_back_for(person: Person) -> list[HeldBackItem]:
    """Every stored item about `person` the firewall keeps out of their prompt."""
    found: list[HeldBackItem] = []
    memories = Memory.objects.filter(
        person_id=person.id, status=Memory.Status.ACTIVE, confirmed=True
    ).only("id", "content")
    for memory in memories:
        _check(found, "A confirmed memory", context.CONFIRMED, memory.content, memory.id)
    about = CaregiverContext.of(person)
    for contact in about.family:
        _check(
            found, "Profile: people in their life", context.PROFILE, contact_fact(about, contact)
        )
    if about.home:
        _check(found, "Profile: home", context.PROFILE, home_fact(about))
    for topic in about.known_topics:
        _check(found, "Profile: topics they enjoy", context.ENJOYS, topic)
    for topic in about.avoid_topics:
        _check(found, "Profile: topics to avoid", context.AVOID, topic)
    answers = list(about.agreed_answers.values()) + [a.answer for a in about.agreed_questions]
    for answer in dict.fromkeys(answers):
        _check(found, "Profile: agreed answers", context.AGREED_ANSWER, answer)
    stories = Narrative.objects.filter(person_id=person.id, active=True)
    library = Narrative.objects.filter(person__isnull=True, active=True)
    for where, rows in (("Their stories", stories), ("The shared story library", library)):
        for story in rows:
            if not narratives.tellable(story.text, story.theme_tags):
                _check(found, f"{where}: {story.title}", context.STORY, story.text)
                for tag in story.theme_tags or ():
                    _check(found, f"{where}: {story.title} (theme)", context.STORY_TOLD, str(tag))
    for notes in PersonNotes.objects.filter(person_id=person.id):
        for key, value in sorted((notes.fields or {}).items()):
            # The compaction note steers the summary; it never reaches the prompt itself.
            if isinstance(value, dict) and key != "compaction":
                source = context.Source("your note")
                _check(found, f"The companion's notes: {key}", source, str(value.get("value")))
    return found
