"""Finding conversations: by feeling, by alert, by date and, for members who may read whole
conversations, by words.

Message text is encrypted at rest, so the database cannot match words: the person's messages
are decrypted here and matched in Python, newest first, at most SEARCH_MESSAGES of them (about
a year of a person who talks with Clara every day). Only one person's conversations are ever
read, and only after dashboard.access allowed it.
"""

import uuid
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.db.models import Exists, OuterRef

from dashboard import minimum, selectors, words
from dashboard.access import Need, get_person_for
from dashboard.forms import ConversationFilterForm
from dashboard.models import AuditAction
from dashboard.selectors import _SESSION_FIELDS, SessionRow, _local_midnight, _session_row
from memory.core.person import CaregiverContext, person_zone
from memory.models import Alert, ChatMessage, Person, Session

SEARCH_MESSAGES = 20_000
SNIPPET = 90  # characters around the first match


@dataclass
class Filters:
    words: str = ""
    feeling: str = ""
    alert: bool = False
    start: date | None = None
    end: date | None = None

    @property
    def any(self) -> bool:
        return bool(self.words or self.feeling or self.alert or self.start or self.end)


@dataclass
class Found:
    sessions: list[SessionRow]
    more: bool
    snippets: dict[uuid.UUID, str]  # the first matching line of each, for a words search
    # Words were matched in only the newest SEARCH_MESSAGES messages: older ones were not read.
    partial: bool = False


def _snippet(text: str, at: int, length: int) -> str:
    start = max(at - SNIPPET // 2, 0)
    end = min(at + length + SNIPPET // 2, len(text))
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def conversations_find(
    *, person: Person, filters: Filters, page: int = 1, per_page: int = 20
) -> Found:
    """The person's conversations matching every filter, newest first, one page of them."""
    zone = person_zone(person)
    about = CaregiverContext.of(person)
    sessions = Session.objects.filter(person_id=person.id, message_count__gt=0)
    if filters.feeling:
        sessions = sessions.filter(dominant_emotion=filters.feeling)
    if filters.alert:
        sessions = sessions.filter(Exists(Alert.objects.filter(session_id=OuterRef("id"))))
    if filters.start:
        sessions = sessions.filter(created_at__gte=_local_midnight(filters.start, zone))
    if filters.end:
        sessions = sessions.filter(
            created_at__lt=_local_midnight(filters.end + timedelta(days=1), zone)
        )
    offset = (max(page, 1) - 1) * per_page
    if not filters.words.strip():
        rows = list(
            sessions.order_by("-created_at").values(*_SESSION_FIELDS)[
                offset : offset + per_page + 1
            ]
        )  # idx_sessions_person_created
        return Found(
            [_session_row(r, zone, about) for r in rows[:per_page]], len(rows) > per_page, {}
        )
    wanted = filters.words.casefold().split()
    messages = (
        ChatMessage.objects.filter(person_id=person.id, session_id__in=sessions.values("id"))
        .order_by("-timestamp")
        .values_list("session_id", "content")[: SEARCH_MESSAGES + 1]
    )
    order: list[uuid.UUID] = []
    snippets: dict[uuid.UUID, str] = {}
    read = 0
    for session_id, content in messages.iterator(chunk_size=2000):
        read += 1
        if read > SEARCH_MESSAGES:
            break
        if session_id in snippets:
            continue
        folded = (content or "").casefold()
        if all(word in folded for word in wanted):
            at = folded.find(wanted[0])
            snippets[session_id] = _snippet(content, at, len(wanted[0]))
            order.append(session_id)
    chosen = order[offset : offset + per_page]
    by_id = {
        row["id"]: row for row in Session.objects.filter(id__in=chosen).values(*_SESSION_FIELDS)
    }
    return Found(
        [_session_row(by_id[i], zone, about) for i in chosen],
        len(order) > offset + per_page,
        snippets,
        partial=read > SEARCH_MESSAGES,
    )


def neighbours(*, person: Person, started: datetime) -> tuple[uuid.UUID | None, uuid.UUID | None]:
    """The person's conversations just before and just after one started at `started`."""
    sessions = Session.objects.filter(person_id=person.id, message_count__gt=0)
    before = (
        sessions.filter(created_at__lt=started).order_by("-created_at").values_list("id", flat=True)
    ).first()
    after = (
        sessions.filter(created_at__gt=started).order_by("created_at").values_list("id", flat=True)
    ).first()
    return before, after


def search_context(request, access, *, page: int) -> tuple[dict, int]:
    """The conversations panel's context for a request's filters, and its status (400 when a
    filter is invalid: the form says which). A words search needs the transcript right: it is
    checked, and audited as reading conversations, here."""
    feelings = list(words.FEELINGS.items())
    asked = any(request.GET.get(key) for key in ("q", "feeling", "alert", "start", "end"))
    form = ConversationFilterForm(request.GET if asked else None, feelings=feelings)
    if asked and not form.is_valid():
        return {"form": form, "sessions": [], "more": False, "filtered": True}, 400
    data = form.cleaned_data if asked else {}
    filters = Filters(
        words=data.get("q") or "",
        feeling=data.get("feeling") or "",
        alert=bool(data.get("alert")),
        start=data.get("start"),
        end=data.get("end"),
    )
    if filters.words:
        get_person_for(
            request.user,
            access.person.id,
            need=Need.TRANSCRIPTS,
            action=AuditAction.VIEW_TRANSCRIPT,
            object_id="search",
        )
    found = conversations_find(
        person=access.person,
        filters=filters,
        page=page,
        per_page=selectors.SESSIONS_PER_PAGE,  # read at call time: tests and settings change it
    )
    query = request.GET.copy()
    query["page"] = page + 1
    return {
        "form": form,
        "filtered": filters.any,
        "sessions": [
            minimum.row_for(row, with_words=access.can_see_transcripts) for row in found.sessions
        ],
        "snippets": found.snippets,
        "partial_search": found.partial,
        "more": found.more,
        "page": page,
        "next_query": query.urlencode(),
        "can_search_words": access.can_see_transcripts,
    }, 200
