"""From what the person said to what Clara may remember: extraction into the fact store.

Runs after an exchange is stored (a background task), on the person's message only. Every fact
found is stored unconfirmed (source `conversation_extraction`, linked to the message), so it
waits for a caregiver before it can ever be used as true. Idempotent: a message that already
produced memories is not read again.
"""

import uuid
from dataclasses import dataclass

from memory.conversations.models import ChatMessage
from memory.core.errors import Conflict
from memory.core.person import CaregiverContext
from memory.facts import extraction, names, store, withhold
from memory.facts.models import Memory


@dataclass(frozen=True)
class RememberReport:
    stored: int = 0
    skipped: str = ""


def _already_read(message: ChatMessage) -> bool:
    """Whether facts were already taken from `message`: a memory it created, or one it
    reinforced (which then carries its id in the encrypted metadata and its time as updated_at,
    so only the person's rows changed at that moment are decrypted to look)."""
    if Memory.objects.filter(source_message_id=message.id).exists():
        return True
    touched = Memory.objects.filter(person_id=message.person_id, updated_at=message.timestamp).only(
        "metadata"
    )
    return any(m.metadata.get("from_message") == str(message.id) for m in touched)


def remember_from_message(message_id: uuid.UUID) -> RememberReport:
    """Extract candidate facts from one of the person's messages into their memories."""
    message = (
        ChatMessage.objects.filter(id=message_id, role=ChatMessage.Role.USER)
        .select_related("person")
        .first()
    )
    if message is None or message.person is None:
        return RememberReport(skipped="no message from a known person")
    if not message.person.memory_enabled:
        return RememberReport(skipped="memory is switched off")
    if _already_read(message):
        return RememberReport(skipped="already read")
    if withhold.withheld(message):
        return RememberReport(skipped="the person asked not to be remembered")
    stored = 0
    known = None
    for fact in extraction.extract_facts(message.content):
        if any(ref.startswith("person:") for ref in fact.entity_refs):
            # A name misheard by speech recognition is the person already known (names.py).
            if known is None:
                known = names.known_people(message.person_id, CaregiverContext.of(message.person))
            fact = names.resolve(fact, known)
        try:
            store.memory_upsert(
                namespace=store.person_namespace(message.person_id, fact.type),
                content=fact.content,
                type=fact.type,
                memory_key=fact.memory_key,
                metadata={**fact.metadata, "from_message": str(message.id)},
                entity_refs=fact.entity_refs,
                entity_labels=fact.entity_labels,
                subtype=fact.subtype,
                importance=fact.importance,
                source=Memory.Source.CONVERSATION_EXTRACTION,
                confirmed=False,
                confidence=fact.confidence,
                source_message_id=message.id,
                at=message.timestamp,
            )
            stored += 1
        except Conflict as exc:
            if exc.field == "namespace":
                break  # memory was switched off meanwhile
            # A caregiver confirmed otherwise: the confirmed fact stands.
            continue
    return RememberReport(stored=stored)
