"""The person's profile: everything Clara uses about the person, shown and edited in one page.

Sections (each its own URL, a `{% partialdef %}` of templates/dashboard/profile.html for htmx):
the name and pronouns, home and time zone, topics, agreed answers, people in the person's life
(dashboard/profile_people.py) and routines. Every member of the care team reads the profile
and edits name, home, topics, people and routines (family's people and routines wait for staff
to confirm them); agreed answers, confirming and forgetting are for team admins and care staff
(Need.CONFIRM: what Clara may say as true). Every read and write is audited by
dashboard.access.get_person_for.
"""

import uuid
import zoneinfo
from functools import cache

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from dashboard import profile_people, remembering, selectors, services, words
from dashboard.access import MEMORY_ACTION_NEEDS, Access, Need, get_person_for
from dashboard.forms import (
    AgreedAnswerForm,
    AnswersForm,
    HomeForm,
    NameForm,
    PersonInLifeForm,
    RoutineForm,
    TopicsForm,
)
from dashboard.models import AuditAction
from dashboard.views import _render, _short_name
from memory.core.errors import DomainError
from memory.core.person import CaregiverContext
from memory.facts import store
from memory.models import MemoryType, QuestionType, RepetitionRecord

SECTIONS = ("name", "home", "topics", "answers", "people", "routines")
# Every kind of question a person repeats, except "other".
ANSWER_TYPES = [
    (value, words.question_label(value))
    for value, _ in QuestionType.choices
    if value != QuestionType.GENERAL
]
MEMORY_SECTIONS = {"people": MemoryType.PEOPLE, "routines": MemoryType.ROUTINE}
MEMORY_ACTIONS = ("confirm", "forget")


@cache
def time_zones() -> list[str]:
    """Every time zone name the system knows, for the form's list of suggestions."""
    return sorted(zoneinfo.available_timezones())


def asked_words(question_type: str, subject: str) -> str:
    """What a question asks, in Clara's words, after "When Pat asks": "where she is"."""
    if question_type == QuestionType.GENERAL or not question_type:
        return "something else"
    return words.question_phrase(question_type, subject)


def _question_label(agreed, *, access: Access) -> str:
    """The picked question as this member may see it: the person's words only with the
    transcript right, else the kind of question in Clara's words."""
    if access.can_see_transcripts:
        return f"“{agreed.question}”"
    return asked_words(agreed.question_type, CaregiverContext.of(access.person).subject)


def _form(section: str, access: Access, data=None):
    about = CaregiverContext.of(access.person)
    if section == "name":
        initial = {
            "preferred_name": about.preferred_name,
            "pronouns": about.pronouns,
            "full_name": access.person.full_name or "",
            "identifier": access.person.identifier or "",
        }
        return NameForm(data, initial=initial)
    if section == "home":
        return HomeForm(
            data, initial={"home": about.home, "room": about.room, "time_zone": about.time_zone}
        )
    if section == "topics":
        initial = {
            "known_topics": "\n".join(about.known_topics),
            "avoid_topics": "\n".join(about.avoid_topics),
        }
        return TopicsForm(data, initial=initial)
    if section == "answers":
        initial = {f"answer_{key}": value for key, value in about.agreed_answers.items()}
        agreed = [(_question_label(q, access=access), q.answer) for q in about.agreed_questions]
        return AnswersForm(data, initial=initial, question_types=ANSWER_TYPES, agreed=agreed)
    if section == "people":
        return PersonInLifeForm(data)
    return RoutineForm(data)


def _context(
    access: Access, *, editing: str | None = None, form=None, with_remembering: bool = True
) -> dict:
    about = CaregiverContext.of(access.person)
    agreed = about.agreed_answers
    forms = {section: _form(section, access) for section in SECTIONS}
    if editing and form is not None:
        forms[editing] = form
    short_name = _short_name(access)
    people = profile_people.people_in_life(person=access.person)
    return {
        "editing": editing,
        "forms": forms,
        "profile": {
            "preferred_name": about.preferred_name,
            "pronouns": about.pronouns,
            "full_name": access.person.full_name or "",
            # The identifier on record is for those who file reports: staff and team admins.
            "identifier": (access.person.identifier or "") if access.may_confirm else "",
            "home": about.home,
            "room": about.room,
            "time_zone": about.time_zone if about.zone_set else "",
            "known": list(about.known_topics),
            "avoid": list(about.avoid_topics),
            "answers": [(label, agreed.get(value, "")) for value, label in ANSWER_TYPES],
            "picked": [
                (_question_label(q, access=access), q.answer) for q in about.agreed_questions
            ],
        },
        "time_zones": time_zones() if editing == "home" else (),
        "people_in_life": [
            (life, profile_people.conflict_sentence(life, name=short_name) if life.conflict else "")
            for life in people
        ],
        "source_words": {
            key: text.format(name=short_name) for key, text in profile_people.SOURCE_WORDS.items()
        },
        "routines": store.memory_list_for_person(access.person.id, type=MemoryType.ROUTINE),
        # The remembering section reads every live memory: only where it is drawn.
        **(remembering.context(access) if with_remembering else {}),
    }


@login_required
@require_http_methods(["GET"])
def profile(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    """The person's profile: everything Clara uses about them."""
    access = get_person_for(request.user, person_id, action=AuditAction.VIEW_PROFILE)
    editing = request.GET.get("edit")
    if editing not in SECTIONS:
        editing = None
    return _render(request, "dashboard/profile.html", access, _context(access, editing=editing))


def _section_response(request, access: Access, section: str, *, status: int = 200, **context):
    return _render(
        request,
        "dashboard/profile.html",
        access,
        # htmx gets the section alone: the remembering section is drawn only in the whole page.
        _context(access, with_remembering=not request.htmx, **context),
        partial=f"{section}-section",
        status=status,
    )


def _saved(request, access: Access, section: str) -> HttpResponse:
    """After a write: the section again for htmx, else back to the page at the section."""
    if request.htmx:
        return _section_response(request, access, section)
    messages.success(request, "Saved.")
    return redirect(reverse("dashboard:profile", args=[access.person.id]) + f"#profile-{section}")


@login_required
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def profile_section(request: HttpRequest, person_id: uuid.UUID, section: str) -> HttpResponse:
    """One section of the profile: shown, as a form (?edit=1), or saved (POST)."""
    if section not in SECTIONS:
        raise Http404("No such section.")
    posting = request.method == "POST"
    access = get_person_for(
        request.user,
        person_id,
        # Agreed answers are what Clara tells the person as true: staff and admins set them.
        need=Need.CONFIRM if posting and section == "answers" else Need.VIEW,
        action=AuditAction.EDIT_PROFILE if posting else AuditAction.VIEW_PROFILE,
        object_id=section,
    )
    if not posting:
        editing = section if request.GET.get("edit") else None
        return _section_response(request, access, section, editing=editing)
    form = _form(section, access, request.POST)
    error = _save(section, form, access, request.user) if form.is_valid() else None
    if error:
        form.add_error(None, error)
    if form.errors:
        return _section_response(request, access, section, status=400, editing=section, form=form)
    return _saved(request, access, section)


def _save(section: str, form, access: Access, user) -> str | None:
    """Apply a valid form; returns a sentence for the caregiver if the memory refused."""
    data = form.cleaned_data
    person = access.person
    if section == "name":
        changes = {"preferred_name": data["preferred_name"], "pronouns": data["pronouns"]}
        services.profile_update(person=person, changes=changes)
        services.person_record_update(
            person=person,
            full_name=data["full_name"],
            identifier=data["identifier"] if access.may_confirm else None,
        )
    elif section == "home":
        changes = {"home": data["home"], "room": data["room"], "time_zone": data["time_zone"]}
        services.profile_update(person=person, changes=changes)
    elif section == "topics":
        changes = {"known_topics": data["known_topics"], "avoid_topics": data["avoid_topics"]}
        services.profile_update(person=person, changes=changes)
    elif section == "answers":
        services.profile_update(person=person, changes={"agreed_answers": form.answers()})
        services.agreed_questions_update(person=person, answers=form.picked_answers())
    else:
        try:
            if section == "people":
                services.person_in_life_add(
                    person=person,
                    name=data["name"],
                    relation=data["relation"],
                    note=data["note"],
                    user=user,
                    confirmed=access.may_confirm,
                )
            else:
                services.routine_add(
                    person=person, routine=data["routine"], user=user, confirmed=access.may_confirm
                )
        except DomainError as exc:
            return str(exc)
    return None


@login_required
@require_http_methods(["GET", "POST"])
def agreed_answer(request: HttpRequest, person_id: uuid.UUID, record_id: uuid.UUID):
    """Agree the answer to one question from the repeated-questions panel (GET: the form).

    Team admins and care staff only (Need.CONFIRM); the question is named by one of the
    person's repetition records, so another person's record is not found.
    """
    posting = request.method == "POST"
    access = get_person_for(
        request.user,
        person_id,
        need=Need.CONFIRM,
        action=AuditAction.EDIT_PROFILE if posting else AuditAction.VIEW_PROFILE,
        object_id="answers",
    )
    record = RepetitionRecord.objects.filter(id=record_id, person_id=access.person.id).first()
    if record is None:
        return _render(request, "dashboard/not_found.html", access, {}, status=404)
    about = CaregiverContext.of(access.person)
    current = next(
        (
            q.answer
            for q in about.agreed_questions
            if (q.fingerprint and q.fingerprint == record.fingerprint)
            or q.question == record.original_message
        ),
        about.agreed_answers.get(record.question_type, ""),
    )
    form = AgreedAnswerForm(request.POST if posting else None, initial={"answer": current})
    if posting and form.is_valid():
        services.agreed_question_set(
            person=access.person, record=record, answer=form.cleaned_data["answer"]
        )
        messages.success(request, "Saved.")
        return redirect(reverse("dashboard:profile", args=[person_id]) + "#profile-answers")
    question = (
        f"“{record.original_message}”"
        if access.can_see_transcripts
        else asked_words(record.question_type, about.subject)
    )
    context = {"form": form, "question": question, "record_id": record.id}
    return _render(
        request,
        "dashboard/agreed_answer.html",
        access,
        context,
        status=400 if posting else 200,
    )


@login_required
@require_POST
@vary_on_headers("HX-Request")
def profile_memory(
    request: HttpRequest, person_id: uuid.UUID, section: str, memory_id: uuid.UUID, action: str
) -> HttpResponse:
    """Confirm or forget a person in the person's life or a routine, from the profile.

    Saying what is true (and settling a disagreement) is for team admins and care staff; family
    suggest a correction on "What Clara remembers".
    """
    if section not in MEMORY_SECTIONS or action not in MEMORY_ACTIONS:
        raise Http404("No such action.")
    access = get_person_for(
        request.user,
        person_id,
        need=MEMORY_ACTION_NEEDS[action],
        action=AuditAction.FORGET_MEMORY if action == "forget" else AuditAction.EDIT_MEMORY,
        object_id=str(memory_id),
    )
    memory = selectors.memory_of_person(person=access.person, memory_id=memory_id)
    if memory is None or (section == "routines" and memory.type != MemoryType.ROUTINE):
        return _render(request, "dashboard/not_found.html", access, {}, status=404)
    if action == "confirm":
        store.memory_confirm(memory.id, user=request.user)
    else:
        store.memory_forget(memory.id)
    return _saved(request, access, section)


@login_required
@require_POST
@vary_on_headers("HX-Request")
def family_contact_remove(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    """Take someone off the list entered when the person was set up (staff: it is confirmed)."""
    access = get_person_for(
        request.user,
        person_id,
        need=Need.CONFIRM,
        action=AuditAction.EDIT_PROFILE,
        object_id="people",
    )
    name = request.POST.get("name", "").strip()
    about = CaregiverContext.of(access.person)
    if not any(c.name.casefold() == name.casefold() for c in about.family if name):
        return _render(request, "dashboard/not_found.html", access, {}, status=404)
    services.family_contact_remove(person=access.person, name=name)
    return _saved(request, access, "people")
