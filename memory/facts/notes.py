"""Status notes an agent keeps about a person (the `update_status` tool): each field keeps its time."""

import uuid
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from memory.conversations.models import DEFAULT_PERSONA, Person
from memory.core.errors import Invalid, NotFound
from memory.facts.models import PersonNotes
from memory.facts.namespaces import clean_text

MAX_NOTE_FIELDS = 50
MAX_NOTE_VALUE = 2000


def notes_update(
    *,
    person_id: uuid.UUID,
    fields: dict[str, Any],
    persona: str | None = None,
    at: datetime | None = None,
    organisation_id: uuid.UUID | None = None,
) -> PersonNotes:
    """Set some fields of the person's status notes; each records when it was last set.

    A value of None removes the field. With `organisation_id`, another organisation's person is
    NotFound like an unknown one.
    """

    at = at or timezone.now()
    if not isinstance(fields, dict) or not fields:
        raise Invalid("Give at least one field to update.", field="fields")
    for name, value in fields.items():
        if not isinstance(name, str) or not name.strip() or len(name) > 64:
            raise Invalid(
                "Field names are non-empty strings of up to 64 characters.", field="fields"
            )
        if value is not None and len(str(value)) > MAX_NOTE_VALUE:
            raise Invalid(f"Field {name!r} is too long.", field=f"fields.{name}")
    people = Person.objects.filter(id=person_id)
    if organisation_id is not None:
        people = people.filter(organisation_id=organisation_id)
    if not people.exists():
        raise NotFound("No such person.", field="person_id")
    with transaction.atomic():
        notes, _ = PersonNotes.objects.select_for_update().get_or_create(
            person_id=person_id, persona=persona or DEFAULT_PERSONA, defaults={"updated_at": at}
        )
        current = dict(notes.fields)
        for name, value in fields.items():
            if value is None:
                current.pop(name, None)
            else:
                clean = clean_text(value) if isinstance(value, str) else value
                current[name] = {"value": clean, "updated_at": at.isoformat()}
        if len(current) > MAX_NOTE_FIELDS:
            raise Invalid(f"At most {MAX_NOTE_FIELDS} fields.", field="fields")
        notes.fields = current
        notes.updated_at = at
        notes.save()
    return notes
