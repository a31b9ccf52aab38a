"""What the prompt firewall holds back for one person, for staff to review.

The prompt (memory/companion/prompt.py) quotes stored text as data and leaves out what
memory.core.screening flags; this reads everything stored that could reach the person's prompt
(confirmed facts, the profile, agreed answers, stories, the companion's notes) and lists the
items left out, with why, in the same sources and by the same rule as the prompt.

Staff may approve an item (`held_back_approve`): its text, as it is now, then reaches the
person's prompt and the agent tools as quoted data like any other. What is stored is a keyed
digest of the text (Person.approved_texts), so the approval says nothing of the text and lapses
when the text changes: an edit holds it back again until staff look at it once more.
"""

import uuid
from dataclasses import dataclass

from django.db import transaction

from memory.companion import narratives
from memory.companion import prompt as context
from memory.companion.context import contact_fact, home_fact
from memory.companion.models import Narrative
from memory.conversations.models import Person
from memory.core.person import CaregiverContext
from memory.core.screening import Approvals, approval_digest, reasons_in_words
from memory.facts.models import Memory, PersonNotes


@dataclass(frozen=True)
class HeldBackItem:
    """One stored item the companion does not hear, for staff: where it is and why."""

    where: str
    text: str
    reasons: list[str]
    memory_id: uuid.UUID | None = None
    # Names the item to approve it (a keyed digest of its text: no text in a form or an audit).
    digest: str = ""


class _Found(list):
    def __init__(self, person: Person) -> None:
        super().__init__()
        self.person_id = person.id
        self.approvals = Approvals.of(person.id, person.approved_texts)


def _check(found: _Found, where: str, source: context.Source, text: str, memory_id=None) -> None:
    text = (text or "").strip()
    if text:
        reasons = source.withheld(text, found.approvals)
        if reasons:
            digest = approval_digest(found.person_id, text)
            found.append(HeldBackItem(where, text, reasons_in_words(reasons), memory_id, digest))


def held_back_approve(*, person: Person, digest: str) -> HeldBackItem | None:
    """Let the held-back item named by `digest` reach the person's prompt as quoted data, as its
    text is now. None when no item of theirs is held back under that name (already approved,
    changed since the page was read, or never theirs). The caller audits it."""
    with transaction.atomic():
        locked = Person.objects.select_for_update().get(id=person.id)
        item = next((i for i in held_back_for(locked) if i.digest == digest), None)
        if item is not None:
            approved = " ".join([*(locked.approved_texts or "").split(), digest])
            Person.objects.filter(id=person.id).update(approved_texts=approved)
            person.approved_texts = approved
    return item


def held_back_for(person: Person) -> list[HeldBackItem]:
    """Every stored item about `person` the firewall keeps out of their prompt (staff approved
    texts are not: they reach it)."""
    found = _Found(person)
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
            if not narratives.tellable(story.text, story.theme_tags, found.approvals):
                _check(found, f"{where}: {story.title}", context.STORY, story.text)
                for tag in story.theme_tags or ():
                    _check(found, f"{where}: {story.title} (theme)", context.STORY_TOLD, str(tag))
    for notes in PersonNotes.objects.filter(person_id=person.id):
        for key, value in sorted((notes.fields or {}).items()):
            # The compaction note steers the summary; it never reaches the prompt itself.
            if isinstance(value, dict) and key != "compaction":
                source = context.Source("your note")
                _check(found, f"The companion's notes: {key}", source, str(value.get("value")))
    return list(found)
