"""The person's record in a form a family can read: an HTML page and the same as a PDF.

Beside the machine-readable JSON (views.export_json): who the person is as the profile has it,
what Clara remembers (unconfirmed memories marked as such), the conversations with their
summaries, and the alerts. Minimum necessary as everywhere: the person's own words (whole
conversations, and summary lines that quote them) only for a member with the transcript right.
Memories that are no longer current (superseded or archived) only on request (`?archived=1`).
For the team admin, like the other exports; every download is audited.
"""

import uuid
from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone
from django.views.decorators.http import require_GET

from dashboard import minimum, pdf, selectors, words
from dashboard.access import Access, Need, get_person_for
from dashboard.models import AuditAction
from memory.core.person import CaregiverContext, person_zone
from memory.models import Alert, ChatMessage, Memory, Session


@dataclass
class Conversation:
    row: selectors.SessionRow
    summary: dict
    feeling: str
    lines: list  # TranscriptLine, only with the transcript right


def _archived(request: HttpRequest) -> bool:
    return request.GET.get("archived") in ("1", "on", "true", "yes")


def record_context(*, access: Access, archived: bool, user) -> dict:
    """Everything the readable record shows, as this member may see it."""
    person = access.person
    zone = person_zone(person)
    with_words = access.can_see_transcripts
    context = CaregiverContext.of(person)
    memories = Memory.objects.filter(person_id=person.id).defer("embedding")
    current = [
        m for m in memories.filter(status=Memory.Status.ACTIVE).order_by("type", "created_at")
    ]
    older = []
    if archived:
        older = list(memories.exclude(status=Memory.Status.ACTIVE).order_by("created_at"))
    sessions = list(
        Session.objects.filter(person_id=person.id, message_count__gt=0)
        .order_by("created_at")
        .values(*selectors._SESSION_FIELDS)
    )
    conversations = []
    for row in sessions:
        session_row = selectors._session_row(row, zone)
        conversations.append(
            Conversation(
                row=session_row,
                summary=minimum.summary_for(session_row.summary, with_words=with_words),
                feeling=words.feeling(session_row.dominant_emotion)
                if session_row.dominant_emotion
                else "",
                lines=selectors.transcript(person=person, session_id=session_row.id)
                if with_words
                else [],
            )
        )
    alerts = [
        {
            "at": alert.created_at.astimezone(zone),
            "headline": words.alert_headline(alert.kind, alert.detail),
            "status": words.ALERT_STATUS.get(alert.status, alert.status),
        }
        for alert in Alert.objects.filter(person_id=person.id).order_by("created_at")
    ]
    return {
        "profile": context,
        "memories": current,
        "older_memories": older,
        "archived": archived,
        "conversations": conversations,
        "alerts": alerts,
        "with_words": with_words,
        "made_at": timezone.now().astimezone(zone),
        "made_by": user.get_full_name() or user.get_username(),
        "user_role": ChatMessage.Role.USER,
        "memory_types": words.MEMORY_TYPES,
    }


def _object_id(request: HttpRequest, kind: str) -> str:
    return f"{kind}+archived" if _archived(request) else kind


def _access(
    request: HttpRequest, person_id: uuid.UUID, kind: str, *, audit_allowed: bool = True
) -> Access:
    return get_person_for(
        request.user,
        person_id,
        need=Need.ADMIN,
        action=AuditAction.EXPORT_READABLE,
        object_id=_object_id(request, kind),
        audit_allowed=audit_allowed,
    )


def _context(request: HttpRequest, access: Access) -> dict:
    return {
        "person": access.person,
        "access": access,
        "name": selectors.person_name(access.person),
        "short_name": CaregiverContext.of(access.person).name_or(
            selectors.person_name(access.person)
        ),
        **record_context(access=access, archived=_archived(request), user=request.user),
    }


@login_required
@require_GET
def readable_html(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    """The readable record as a page (print it, or download the PDF from it); audited."""
    access = _access(request, person_id, "html")
    context = _context(request, access)
    with timezone.override(person_zone(access.person)):
        response = render(request, "dashboard/record.html", context)
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_GET
def readable_pdf(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    """The readable record as a PDF (WeasyPrint, in dashboard.pdf's renderer processes);
    limited per login, audited."""
    access = _access(request, person_id, "pdf", audit_allowed=False)
    try:
        with pdf.render_slot():
            refusal = pdf.limit_refusal(
                request,
                access=access,
                action=AuditAction.EXPORT_READABLE,
                object_id=_object_id(request, "pdf"),
            )
            if refusal is not None:
                return refusal
            context = _context(request, access)
            with timezone.override(person_zone(access.person)):
                html = render_to_string("dashboard/record_pdf.html", context)
            content = pdf.html_to_pdf(html)
    except pdf.Busy:
        return pdf.busy_page(request)
    response = HttpResponse(content, content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="clara-record-{access.person.id}.pdf"'
    response["Cache-Control"] = "no-store"
    return response
