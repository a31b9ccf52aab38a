"""A person's data as a whole: export (the person's or family's copy) and erasure.

Above every subpackage, because both reach every table that refers to the person: the
conversation record, long-term memory, insights and the companion's rows.
"""

import uuid
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Q

from memory.companion.models import Narrative
from memory.conversations.models import (
    ChatMessage,
    DetectedEmotion,
    NarrativeUsage,
    Person,
    RepetitionRecord,
    Session,
)
from memory.core import spreadsheet
from memory.core.errors import NotFound
from memory.facts import store
from memory.facts.models import Commitment, Memory, PersonNotes
from memory.insights.models import Alert, PersonTrend, RollingSummary, SummarySpine


def _person_or_404(person_id: uuid.UUID) -> Person:
    person = Person.objects.filter(id=person_id).first()
    if person is None:
        raise NotFound("No such person.", field="person_id")
    return person


EXPORT_MEMORY_FIELDS = (
    "id",
    "namespace",
    "key",
    "type",
    "content",
    "status",
    "confirmed",
    "importance",
    "pinned",
    "source",
    "entity_refs",
    "memory_key",
    "confidence",
    "persona",
    "expires_at",
    "created_at",
    "updated_at",
)


def _iso(value):
    return value.isoformat() if isinstance(value, datetime) else value


def _memory_export_row(memory: Memory) -> dict[str, Any]:
    row = {name: _iso(getattr(memory, name)) for name in EXPORT_MEMORY_FIELDS}
    row["id"] = str(memory.id)
    row["namespace"] = list(memory.namespace_tuple)
    return row


def person_export(person_id: uuid.UUID) -> dict[str, Any]:
    """Everything stored about a person, as JSON-ready data (the person's or family's copy)."""
    person = _person_or_404(person_id)
    sessions = list(Session.objects.filter(person_id=person_id).order_by("created_at"))
    messages = ChatMessage.objects.filter(person_id=person_id).order_by(
        "session__created_at", "sequence_number"
    )
    emotions = {e.message_id: e for e in DetectedEmotion.objects.filter(person_id=person_id)}
    return {
        "person": {
            "id": str(person.id),
            "display_name": person.display_name,
            "full_name": person.full_name or "",
            "identifier": person.identifier or "",
            "created_at": _iso(person.created_at),
            "last_active_at": _iso(person.last_active_at),
            "status": person.status,
            "memory_enabled": person.memory_enabled,
            "caregiver_context": person.caregiver_context,
        },
        "memories": [
            _memory_export_row(m)
            for m in Memory.objects.filter(person_id=person_id)
            .defer("embedding")
            .order_by("created_at")
        ],
        "sessions": [
            {
                "id": str(s.id),
                "created_at": _iso(s.created_at),
                "ended_at": _iso(s.ended_at),
                "status": s.status,
                "message_count": s.message_count,
                "dominant_emotion": s.dominant_emotion,
                "escalation_triggered": s.escalation_triggered,
                "summary": s.session_summary,
            }
            for s in sessions
        ],
        "messages": [
            {
                "session_id": str(m.session_id),
                "sequence_number": m.sequence_number,
                "role": m.role,
                "content": m.content,
                "timestamp": _iso(m.timestamp),
                "emotion": emotions[m.id].emotion if m.id in emotions else None,
            }
            for m in messages
        ],
        "notes": [
            {"persona": n.persona, "fields": n.fields}
            for n in PersonNotes.objects.filter(person_id=person_id)
        ],
        # The stories caregivers wrote about the person's own life (the shared library's are
        # no one's), and what Clara undertook to do with them.
        "stories": [
            {
                "id": n.id,
                "title": n.title,
                "text": n.text,
                "category": n.category,
                "active": n.active,
                "created_at": _iso(n.created_at),
                "updated_at": _iso(n.updated_at),
            }
            for n in Narrative.objects.filter(person_id=person_id).order_by("created_at")
        ],
        "commitments": [
            {
                "kind": c.kind,
                "text": c.text,
                "status": c.status,
                "due_at": _iso(c.due_at),
                "created_at": _iso(c.created_at),
                "closed_at": _iso(c.closed_at),
            }
            for c in Commitment.objects.filter(person_id=person_id).order_by("created_at")
        ],
        "rolling_summaries": [
            {"persona": r.persona, "text": r.text, "updated_at": _iso(r.updated_at)}
            for r in RollingSummary.objects.filter(person_id=person_id)
        ],
        "alerts": [
            {
                "kind": a.kind,
                "status": a.status,
                "created_at": _iso(a.created_at),
                "detail": a.detail,
            }
            for a in Alert.objects.filter(person_id=person_id).order_by("created_at")
        ],
    }


def person_export_csv(person_id: uuid.UUID) -> str:
    """The person's memories as CSV (one row per memory, every version), for a spreadsheet.

    Every cell goes through memory.core.spreadsheet: text that would start a formula is kept
    as text (the dashboard's download and the API's `?format=csv` are this one function)."""
    _person_or_404(person_id)
    rows = []
    for memory in (
        Memory.objects.filter(person_id=person_id).defer("embedding").order_by("created_at")
    ):
        row = _memory_export_row(memory)
        row["namespace"] = "/".join(row["namespace"])
        row["entity_refs"] = " ".join(row["entity_refs"])
        rows.append([row[name] for name in EXPORT_MEMORY_FIELDS])
    return spreadsheet.csv_text(EXPORT_MEMORY_FIELDS, rows)


def person_erase(person_id: uuid.UUID) -> dict[str, int]:
    """Erase a person completely: every row that refers to them, in one transaction.

    Append-only tables protect their rows from accidental deletes, so they are emptied here
    explicitly, children first; the rest follows the person by cascade. Returns counts per table.
    """
    person = _person_or_404(person_id)
    counts: dict[str, int] = {}
    with transaction.atomic():
        session_ids = list(Session.objects.filter(person_id=person_id).values_list("id", flat=True))
        in_person = Q(person_id=person_id) | Q(session_id__in=session_ids)
        # Memories first: they point at messages.
        counts["memories"] = store.person_memories_erase(person_id)
        for model in (NarrativeUsage, RepetitionRecord, DetectedEmotion, Alert, ChatMessage):
            counts[model._meta.db_table] = model.objects.filter(in_person).delete()[0]
        counts["sessions"] = Session.objects.filter(id__in=session_ids).delete()[0]
        for model in (RollingSummary, SummarySpine, PersonTrend, PersonNotes, Narrative):
            counts[model._meta.db_table] = model.objects.filter(person_id=person_id).delete()[0]
        person.delete()
        counts["people"] = 1
    return counts
