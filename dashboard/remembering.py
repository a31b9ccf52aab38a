"""Remembering, on the profile: switch it off and on, and forget everything about one person the
person mentioned or of one kind (issue 32 item 5).

The same services as the bot API's `PUT /people/{id}/memory-settings` and `POST
/people/{id}/memories/forget` (memory.facts.store), through dashboard.services, which audit each
change (the kind of thing forgotten, never its name). For team admins and care staff
(Need.CONFIRM, as forgetting one memory is); family read whether Clara remembers. Forgetting
asks first: the confirmation says what goes and how much, and only its button forgets.
A thing is chosen from what Clara remembers now: anything else is a 400 naming `thing`.
"""

import uuid
from collections import Counter
from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django.views.decorators.vary import vary_on_headers

from dashboard import services, words
from dashboard.access import Access, Need, get_person_for
from dashboard.models import AuditAction
from dashboard.views import _render
from memory.core.person import CaregiverContext
from memory.facts import store

PERSON_KIND = "person"


@dataclass(frozen=True)
class Thing:
    """Something Clara remembers a group of facts about: a person mentioned, or a kind of fact."""

    value: str  # "entity:person:sarah" or "type:preference": what the form sends
    label: str  # "Sarah", "Likes and dislikes"
    count: int  # live facts

    @property
    def entity(self) -> str | None:
        return self.value.removeprefix("entity:") if self.value.startswith("entity:") else None

    @property
    def type(self) -> str | None:
        return self.value.removeprefix("type:") if self.value.startswith("type:") else None


def _entity_label(ref: str, labels: dict[str, str]) -> str:
    """The name as Clara heard it (the memory's label, encrypted at rest), else from the ref."""
    kind, slug = ref.split(":", 1)
    label = labels.get(ref) or slug.replace("_", " ").title()
    return label if kind == PERSON_KIND else f"{label} ({kind.replace('_', ' ')})"


def remembered_things(access: Access) -> tuple[list[Thing], list[Thing]]:
    """The people the person mentioned, and the kinds of things, Clara remembers now: one read
    of the person's live memories."""
    name = CaregiverContext.of(access.person).name_or("them")
    live = store.memory_list_for_person(access.person.id)
    entities = Counter(ref for memory in live for ref in set(memory.entity_refs))
    labels = {ref: label for memory in live for ref, label in memory.entity_labels.items()}
    types = Counter(memory.type for memory in live)
    people = sorted(
        (Thing(f"entity:{ref}", _entity_label(ref, labels), n) for ref, n in entities.items()),
        key=lambda thing: (not thing.entity.startswith(f"{PERSON_KIND}:"), thing.label),
    )
    kinds = [
        Thing(f"type:{kind}", heading.format(name=name), types[kind])
        for kind, heading in words.MEMORY_TYPES.items()
        if types.get(kind)
    ]
    return people, kinds


def context(
    access: Access,
    *,
    things: tuple[list[Thing], list[Thing]] | None = None,
    confirming: Thing | None = None,
    error: str = "",
    done: str = "",
) -> dict:
    """What the profile's remembering section shows (`things`: remembered_things, when the
    caller has read them already)."""
    may_curate = access.may_forget
    if not may_curate:
        things = ([], [])
    people, kinds = things if things is not None else remembered_things(access)
    return {
        "remembering": {
            "enabled": access.person.memory_enabled,
            "may_curate": may_curate,
            "people": people,
            "kinds": kinds,
            "confirming": confirming,
            "error": error,
            "done": done,
        }
    }


def _section(request: HttpRequest, access: Access, *, status: int = 200, **extra) -> HttpResponse:
    """The section for htmx; the whole profile otherwise (the confirmation in place)."""
    from dashboard import profile  # profile's page context (profile imports this module)

    data = context(access, **extra)
    if not request.htmx:
        data = {**profile._context(access, with_remembering=False), **data}
    return _render(
        request,
        "dashboard/profile.html",
        access,
        data,
        partial="remembering-section",
        status=status,
    )


def _done(request: HttpRequest, access: Access, done: str) -> HttpResponse:
    """After a change: the section saying what happened (htmx), else the profile at it."""
    if request.htmx:
        return _section(request, access, done=done)
    messages.success(request, done)
    url = reverse("dashboard:profile", args=[access.person.id])
    return redirect(f"{url}#profile-remembering")


@login_required
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def remembering_section(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    """GET: the section (every member). POST: switch remembering off or on (`enabled` = "off"
    or "on"), for those who curate; audited by the service."""
    if request.method == "GET":
        access = get_person_for(
            request.user, person_id, action=AuditAction.VIEW_PROFILE, object_id="remembering"
        )
        return _section(request, access)
    access = get_person_for(
        request.user,
        person_id,
        need=Need.CONFIRM,
        action=AuditAction.EDIT_REMEMBERING,
        audit_allowed=False,
    )
    enabled = request.POST.get("enabled")
    if enabled not in ("on", "off"):
        return _section(request, access, status=400, error="enabled: must be on or off.")
    services.remembering_set(person=access.person, enabled=enabled == "on", user=request.user)
    access.person.memory_enabled = enabled == "on"
    short = CaregiverContext.of(access.person).name_or("them")
    if enabled == "on":
        return _done(request, access, f"Clara remembers new things about {short} again.")
    return _done(request, access, f"Clara no longer remembers anything new about {short}.")


@login_required
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def forget_about(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    """GET: the confirmation (what goes, how many facts). POST with `confirm=yes`: forget it."""
    posting = request.method == "POST"
    access = get_person_for(
        request.user,
        person_id,
        need=Need.CONFIRM,
        action=AuditAction.FORGET_ABOUT if posting else AuditAction.VIEW_PROFILE,
        object_id="" if posting else "remembering",
        audit_allowed=not posting,
    )
    source = request.POST if posting else request.GET
    if not posting and not source.get("thing"):
        return _section(request, access)  # nothing chosen yet: the section as it is
    things = remembered_things(access)
    people, kinds = things
    chosen = next((t for t in people + kinds if t.value == source.get("thing")), None)
    if chosen is None:
        return _section(
            request,
            access,
            things=things,
            status=400,
            error="thing: choose someone or something from the list.",
        )
    if not posting:
        return _section(request, access, things=things, confirming=chosen)
    if source.get("confirm") != "yes":
        return _section(
            request,
            access,
            things=things,
            status=400,
            confirming=chosen,
            error="confirm: say yes to forget.",
        )
    services.memories_forget_about(
        person=access.person, user=request.user, entity=chosen.entity, type=chosen.type
    )
    return _done(
        request,
        access,
        f"Clara has forgotten everything about {chosen.label} "
        f"({chosen.count} thing{'s' if chosen.count != 1 else ''}).",
    )
