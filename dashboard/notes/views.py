"""The notes panel of the person page: read the notes, add one (htmx, no page reload).

Through dashboard.access like every panel (404 outsiders, audited: reading as view_notes,
writing as add_note). Every member of the care team may read and write; what each reads is
dashboard.notes.services' rule.
"""

import uuid

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django.views.decorators.vary import vary_on_headers

from dashboard import views
from dashboard.access import Access, get_person_for, part_since
from dashboard.models import AuditAction
from dashboard.notes import services
from dashboard.notes.models import NOTE_MAX_CHARS, NoteVisibility


class NoteForm(forms.Form):
    text = forms.CharField(max_length=NOTE_MAX_CHARS, strip=True)
    visibility = forms.ChoiceField(
        choices=NoteVisibility.choices, required=False, initial=NoteVisibility.STAFF
    )


def _panel(request: HttpRequest, access: Access, *, form=None, error="", status=200, added=False):
    context = {
        "notes": services.notes_for(person=access.person, membership=access.membership),
        "staff_notes": services.sees_staff_notes(access.membership),
        "note_max": NOTE_MAX_CHARS,
        **services.seen_by_choices(access.person),
        "form": form,
        "error": error,
        "added": added,
    }
    return views._render(
        request, "dashboard/person_notes.html", access, context, partial="notes", status=status
    )


@login_required
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def person_notes(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    """The notes (GET); add a note (POST), then the panel again (htmx) or the person page."""
    posting = request.method == "POST"
    access = get_person_for(
        request.user,
        person_id,
        action=AuditAction.ADD_NOTE if posting else AuditAction.VIEW_NOTES,
        part_since=part_since(request),
    )
    if not posting:
        return _panel(request, access)
    form = NoteForm(request.POST)
    if not form.is_valid():
        field = next(iter(form.errors))
        error = (
            f"Write a note of 1 to {NOTE_MAX_CHARS} characters."
            if field == "text"
            else "Choose who may read the note."
        )
        return _panel(request, access, form=form, error=error, status=400)
    services.note_add(
        person=access.person,
        membership=access.membership,
        text=form.cleaned_data["text"],
        visibility=form.cleaned_data["visibility"] or NoteVisibility.STAFF,
    )
    if request.htmx:
        return _panel(request, access, added=True)
    return redirect(reverse("dashboard:person", args=[person_id]) + "#notes")
