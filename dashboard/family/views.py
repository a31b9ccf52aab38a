"""The family page of a person, and its weekly-summary switch.

dashboard.views.person hands a family member's request here (the only place the family page
and the staff page meet). Access, audit and time zone as on every person page.
"""

import uuid

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from dashboard import params, views
from dashboard.access import Access, get_person_for
from dashboard.alerting import delivery, rights
from dashboard.family import selectors
from dashboard.models import AuditAction
from dashboard.notes import services as notes
from dashboard.notes.models import NOTE_MAX_CHARS

TEMPLATE = "dashboard/family/person.html"
DIGEST_CHOICES = {"on": True, "off": False}


def _digest_context(access: Access, *, saved: bool = False) -> dict:
    return {"digest_on": delivery.routing_of(access.membership).weekly_digest, "saved": saved}


def person_page(request: HttpRequest, access: Access) -> HttpResponse:
    """The person page for family (already allowed and audited by dashboard.views.person)."""
    context = selectors.family_page(
        person=access.person, membership=access.membership, now=timezone.now()
    )
    context.update(_digest_context(access, saved=request.GET.get("digest") == "saved"))
    context.update(
        {
            "note_max": NOTE_MAX_CHARS,
            "may_act": rights.may_act(access.membership),
            "seen_by": notes.seen_by(name=views._short_name(access), for_family=True),
        }
    )
    return views._render(request, TEMPLATE, access, context)


@login_required
@require_POST
@vary_on_headers("HX-Request")
def digest(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    """Switch the member's weekly summary e-mail on or off (`weekly_digest=on|off`); audited.
    Then the switch again (htmx) or the person page."""
    access = get_person_for(request.user, person_id, action=AuditAction.EDIT_DIGEST)
    choice = request.POST.get("weekly_digest", "")
    if choice not in DIGEST_CHOICES:
        return params.bad_input("weekly_digest", "weekly_digest must be on or off.")
    routing = delivery.routing_of(access.membership)
    routing.weekly_digest = DIGEST_CHOICES[choice]
    routing.save()
    if request.htmx:
        return views._render(
            request, TEMPLATE, access, _digest_context(access, saved=True), partial="digest"
        )
    return redirect(reverse("dashboard:person", args=[person_id]) + "?digest=saved#digest")
