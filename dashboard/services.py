"""Writes of the dashboard: the care team and what Clara remembers (alert states:
dashboard/alerting/respond.py). Each is one transaction.

Audit rows are written by dashboard.access before a view calls any of these, except an
erasure's, written here with its outcome.
"""

import uuid
from dataclasses import replace

from django.db import transaction

from dashboard.access import Access, audit_record
from dashboard.models import AuditAction, CareRole, CareTeamMembership, FactSuggestion
from memory import privacy
from memory.core.person import AgreedQuestion, CaregiverContext
from memory.facts import store
from memory.models import (
    Memory,
    MemoryType,
    OrganisationMembership,
    Person,
    RepetitionRecord,
)

# Keys of Person.caregiver_context the profile page edits (the companion and summaries read them).
PROFILE_FIELDS = (
    "preferred_name",
    "pronouns",
    "known_topics",
    "avoid_topics",
    "agreed_answers",
    "home",
    "room",
    "time_zone",
    "family",
    "agreed_questions",
)


def _other_admins(membership: CareTeamMembership) -> bool:
    return (
        CareTeamMembership.objects.filter(person_id=membership.person_id, role=CareRole.ADMIN)
        .exclude(id=membership.id)
        .exists()
    )


def member_add(*, person: Person, user, role: str, can_see_transcripts: bool) -> str | None:
    """Put `user` in the person's care team; returns an error sentence if already there.

    A care team is within the person's organisation: a login of another organisation is
    refused in the same words as an unknown one.
    """
    if not OrganisationMembership.objects.filter(
        user_id=user.pk, organisation_id=person.organisation_id
    ).exists():
        return "Choose someone from the list."
    with transaction.atomic():
        _, created = CareTeamMembership.objects.get_or_create(
            person=person,
            user=user,
            defaults={"role": role, "can_see_transcripts": can_see_transcripts},
        )
    return None if created else "Already in the care team."


def member_update(
    *,
    membership: CareTeamMembership,
    role: str,
    can_see_transcripts: bool,
    named_carer: bool = False,
) -> str | None:
    """Change a member's role, transcript right or (family) whether they are the named carer
    at home; the team always keeps one admin."""
    with transaction.atomic():
        locked = CareTeamMembership.objects.select_for_update().get(id=membership.id)
        if locked.role == CareRole.ADMIN and role != CareRole.ADMIN and not _other_admins(locked):
            return "The care team needs at least one admin: make someone else admin first."
        locked.role = role
        locked.can_see_transcripts = can_see_transcripts
        # Only family are a "named carer": staff and admins answer alerts by their role.
        locked.named_carer = named_carer and role == CareRole.FAMILY
        # Changed for this person alone: from now on theirs, not the unit's (a move out of the
        # unit, or a change of the unit's team, leaves it as the team admin set it).
        locked.granted_by_unit = None
        locked.save(update_fields=["role", "can_see_transcripts", "named_carer", "granted_by_unit"])
    return None


def member_remove(*, membership: CareTeamMembership) -> str | None:
    """Take a member off the care team; never the last admin."""
    with transaction.atomic():
        locked = CareTeamMembership.objects.select_for_update().get(id=membership.id)
        if locked.role == CareRole.ADMIN and not _other_admins(locked):
            return "The care team needs at least one admin: make someone else admin first."
        locked.delete()
    return None


# --- The person's profile ----------------------------------------------------------------------


def profile_update(*, person: Person, changes: dict) -> Person:
    """Merge caregiver edits into Person.caregiver_context under a row lock (other keys stay).

    `changes` are CaregiverContext fields. Empty values remove their key; agreed answers keep
    only the non-empty ones.
    """
    unknown = set(changes) - set(PROFILE_FIELDS)
    if unknown:
        raise ValueError(f"Not profile fields: {sorted(unknown)}")
    with transaction.atomic():
        locked = Person.objects.select_for_update().get(id=person.id)
        locked.caregiver_context = CaregiverContext.of(locked).updated(**changes)
        locked.save(update_fields=["caregiver_context"])
    person.caregiver_context = locked.caregiver_context
    return person


def person_record_update(
    *, person: Person, full_name: str, identifier: str | None = None
) -> Person:
    """Who the person is on record (the clinician report's heading): the full name and, when
    given (staff and team admins only: `None` leaves it), the identifier. Empty clears one."""
    fields = {"full_name": full_name or None}
    if identifier is not None:
        fields["identifier"] = identifier or None
    with transaction.atomic():
        locked = Person.objects.select_for_update().get(id=person.id)
        for name, value in fields.items():
            setattr(locked, name, value)
        locked.save(update_fields=list(fields))
    for name, value in fields.items():
        setattr(person, name, value)
    return person


def _profile_change(*, person: Person, change) -> Person:
    """Apply `change(about) -> changes` to the freshly locked profile (read, then write)."""
    with transaction.atomic():
        locked = Person.objects.select_for_update().get(id=person.id)
        about = CaregiverContext.of(locked)
        locked.caregiver_context = about.updated(**change(about))
        locked.save(update_fields=["caregiver_context"])
    person.caregiver_context = locked.caregiver_context
    return person


def agreed_question_set(*, person: Person, record: RepetitionRecord, answer: str) -> Person:
    """Agree the answer Clara gives when the person asks this question again (a repetition
    record of theirs names it). Replaces the answer already agreed for the same question (same
    keyed words); stored in the encrypted profile with the question in the person's words."""
    agreed = AgreedQuestion(
        question=record.original_message,
        answer=answer,
        question_type=record.question_type,
        fingerprint=record.fingerprint,
    )

    def change(about: CaregiverContext) -> dict:
        kept = [
            q
            for q in about.agreed_questions
            if not (
                (q.fingerprint and q.fingerprint == agreed.fingerprint)
                or q.question == agreed.question
            )
        ]
        return {"agreed_questions": [*kept, agreed]}

    return _profile_change(person=person, change=change)


def agreed_questions_update(*, person: Person, answers: list[str]) -> Person:
    """New answers to the picked questions, in their stored order; an empty one is removed."""

    def change(about: CaregiverContext) -> dict:
        kept = []
        for index, agreed in enumerate(about.agreed_questions):
            answer = answers[index] if index < len(answers) else agreed.answer
            if answer:
                kept.append(replace(agreed, answer=answer))
        return {"agreed_questions": kept}

    return _profile_change(person=person, change=change)


def family_contact_remove(*, person: Person, name: str) -> Person:
    """Take someone off the settings' list of people in the person's life (by name)."""

    def change(about: CaregiverContext) -> dict:
        return {"family": [c for c in about.family if c.name.casefold() != name.casefold()]}

    return _profile_change(person=person, change=change)


def person_in_life_add(
    *, person: Person, name: str, relation: str, note: str, user, confirmed: bool = True
) -> Memory:
    """Remember someone in the person's life, as caregivers said it: confirmed, from the team.

    Same identity as the fact extractor's ("people|person:<slug>|relationship"), so a later
    mention in conversation reinforces this memory instead of adding a second one.
    """
    ref = store.entity_ref("person", name)
    subject = CaregiverContext.of(person).preferred_name
    content = name
    if relation:
        whose = f"{subject}'s" if subject else "their"
        content += f" is {whose} {relation}"
    content += "."
    if note:
        content += f" {note}" + ("" if note[-1] in ".!?" else ".")
    return store.memory_upsert(
        namespace=store.person_namespace(person.id, MemoryType.PEOPLE),
        content=content,
        type=MemoryType.PEOPLE,
        memory_key=f"people|{ref}|relationship",
        entity_refs=[ref],
        entity_labels={ref: name},
        metadata={"value": relation, "entered_by": "caregiver"},
        source=Memory.Source.CAREGIVER,
        # Family's additions wait for care staff to confirm them (dashboard.access.Need.CONFIRM).
        confirmed=confirmed,
        confirmed_by=user if confirmed else None,
    ).memory


def routine_add(*, person: Person, routine: str, user, confirmed: bool = True) -> Memory:
    """Remember one of the person's routines, as caregivers said it (confirmed)."""
    slug = store.slugify(routine)[:48] or uuid.uuid4().hex[:8]
    return store.memory_upsert(
        namespace=store.person_namespace(person.id, MemoryType.ROUTINE),
        content=routine,
        type=MemoryType.ROUTINE,
        memory_key=f"routine|self|{slug}",
        metadata={"entered_by": "caregiver"},
        source=Memory.Source.CAREGIVER,
        # Family's additions wait for care staff to confirm them (dashboard.access.Need.CONFIRM).
        confirmed=confirmed,
        confirmed_by=user if confirmed else None,
    ).memory


def person_erase_audited(*, access: Access, user) -> None:
    """Erase the person, with its audit row, in one transaction: the row exists iff it happened.

    The row is written first, naming the person; erasure then sets its person to null (the row
    keeps who, what and when, and the organisation whose audit shows it).
    """
    with transaction.atomic():
        audit_record(
            user=user,
            person_id=access.person.id,
            action=AuditAction.ERASE,
            organisation_id=access.person.organisation_id,
        )
        privacy.person_erase(access.person.id)


def erase_refused_audit(*, access: Access, user) -> None:
    """An erasure the admin asked for with the wrong name typed: nothing erased, one row."""
    audit_record(
        user=user,
        person_id=access.person.id,
        action=AuditAction.ERASE_UNCONFIRMED,
        allowed=False,
        organisation_id=access.person.organisation_id,
    )


def fact_suggest(*, person: Person, memory: Memory, content: str, user) -> FactSuggestion:
    """Family suggest a correction; it replaces their earlier pending one for this memory."""
    suggestion, _ = FactSuggestion.objects.update_or_create(
        memory_id=memory.id,
        defaults={"person": person, "content": content, "suggested_by": user},
    )
    return suggestion


def fact_suggestion_accept(*, person: Person, memory: Memory, user) -> Memory | None:
    """Care staff accept the pending suggestion: a new confirmed version of the memory."""
    with transaction.atomic():
        suggestion = FactSuggestion.objects.filter(person=person, memory_id=memory.id).first()
        if suggestion is None:
            return None
        updated = store.memory_edit(memory.id, content=suggestion.content, user=user)
        suggestion.delete()
    return updated


def fact_suggestion_decline(*, person: Person, memory: Memory) -> None:
    FactSuggestion.objects.filter(person=person, memory_id=memory.id).delete()


def fact_suggestions_of(*, person: Person) -> dict[str, FactSuggestion]:
    """Pending suggestions by memory id (as text, for templates)."""
    return {str(s.memory_id): s for s in FactSuggestion.objects.filter(person=person)}


def remembering_set(*, person: Person, enabled: bool, user) -> Person:
    """Switch remembering off or on for the person (the bot API's memory-settings service);
    audited in the same transaction."""
    with transaction.atomic():
        person = store.person_memory_set_enabled(person_id=person.id, enabled=enabled)
        audit_record(
            user=user,
            person_id=person.id,
            action=AuditAction.EDIT_REMEMBERING,
            object_id="on" if enabled else "off",
            organisation_id=person.organisation_id,
        )
    return person


def memories_forget_about(
    *, person: Person, user, entity: str | None = None, type: str | None = None
) -> int:
    """Forget everything Clara remembers about one entity (`person:sarah`) or of one type, with
    its history (the bot API's forget service); audited with the kind only, never the name.
    Returns how many stored versions went."""
    with transaction.atomic():
        deleted = store.memories_forget(person_id=person.id, entity=entity, type=type)
        audit_record(
            user=user,
            person_id=person.id,
            action=AuditAction.FORGET_ABOUT,
            object_id=entity.split(":", 1)[0] if entity else f"type:{type}",
            organisation_id=person.organisation_id,
        )
    return deleted
