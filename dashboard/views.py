"""The caregiver dashboard: thin views over dashboard.selectors, dashboard.charts and services.

Every view that touches a person calls dashboard.access.get_person_for first (404 outsider,
403 member without the right, an audit row either way). A panel of the person page is one URL:
a full page for a plain request, its `{% partialdef %}` fragment for htmx (HX-Request).
"""

import dataclasses
import json
import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import reswap

from dashboard import (
    audit_filter,
    charts,
    conversation_search,
    minimum,
    params,
    people_filter,
    selectors,
    services,
    words,
)
from dashboard.access import (
    MEMORY_ACTION_NEEDS,
    Access,
    Need,
    audit_record,
    care_memberships,
    get_organisation_for,
    get_person_for,
    may_change_rights,
    organisations_of,
    organisations_read_record,
    part_since,
    poll_since,
    recorded_since,
)
from dashboard.alerting import noise, respond, rights, shift
from dashboard.alerting import views as alerting_views
from dashboard.alerting.models import CareSetting
from dashboard.forms import (
    AlertActionForm,
    EraseForm,
    MemberAddForm,
    MemberUpdateForm,
    MemoryEditForm,
)
from dashboard.models import AuditAction, CareRole
from dashboard.notes import services as notes_services
from memory import privacy
from memory.companion import firewall
from memory.conversations.repetition import CHRONIC_AT
from memory.core.errors import DomainError
from memory.core.person import CaregiverContext, person_zone
from memory.facts import names, search, store
from memory.insights.alerts import OUTCOMES_OFFERED
from memory.models import Alert
from memory.webhooks import services as webhooks

TIMELINE_CHOICES = (7, 30, 90)


def _render(
    request: HttpRequest,
    template: str,
    access: Access | None,
    context: dict,
    *,
    partial: str | None = None,
    status: int = 200,
) -> HttpResponse:
    """Render in the person's time zone; the named partial only for htmx requests."""
    if partial and request.htmx:
        template = f"{template}#{partial}"
    if access is not None:
        about = CaregiverContext.of(access.person)
        short_name = _short_name(access)
        context = {
            "person": access.person,
            "access": access,
            "name": selectors.person_name(access.person),
            "short_name": short_name,
            "subject": about.subject,
            # Times are where the person lives only once the caregivers set the zone: until
            # then pages say UTC and ask for it (no silent fallback).
            "zone_set": about.zone_set,
            "zone_words": f"where {short_name} lives" if about.zone_set else "in UTC",
            **context,
        }
        with timezone.override(person_zone(access.person)):
            return render(request, template, context, status=status)
    return render(request, template, context, status=status)


def _short_name(access: Access) -> str:
    return CaregiverContext.of(access.person).name_or("them")


# --- People -------------------------------------------------------------------------------

# People on a page of the people list (the shift view, for a unit's few dozen, is not paged).
PEOPLE_PAGE = 100


@login_required
@require_GET
@vary_on_headers("HX-Request")
def people(request: HttpRequest) -> HttpResponse:
    """Everyone in the caregiver's care teams, with today's mood and alerts needing a look.

    A login of several organisations sees each one's people under its name.
    """
    try:
        wanted = people_filter.people_filter_of(request)
        page = params.page_number(request)
    except params.BadParameter as bad:
        return bad.response()
    now = timezone.now()
    # Everyone as rows (no profile decrypted but for a search's names): a care group's admin
    # is in thousands of care teams, and only a page of them is shown.
    everyone = selectors.people_rows_for_user(
        user=request.user, unit=wanted.unit, names=bool(wanted.query)
    )
    # What needs a person leads: people with an alert not resolved first (an urgent one, the
    # longest waiting first); the rest as before, most recently active first. It covers
    # everyone, whatever the search: an alert is never hidden by a filter. A unit limits it to
    # the unit's people, and the page counts the urgent alerts outside it (unit_choices).
    needs = shift.needs_a_person(
        user=request.user,
        now=now,
        person_ids=selectors.people_ids_for_user(user=request.user, unit=wanted.unit),
    )
    lead = shift.lead_order(needs)
    everyone.sort(key=lambda row: lead.get(row.person_id, (True, True, float("inf"))))
    rows, hidden = people_filter.apply(
        everyone, wanted, person=lambda row: row, name=lambda row: row.name
    )
    # A page of cards. The order, the search and the count cover everyone; the people, their
    # teams and today's mood are read for the page's people only.
    total = len(rows)
    cards = selectors.cards_of(
        rows[(page - 1) * PEOPLE_PAGE : page * PEOPLE_PAGE], user=request.user, now=now
    )
    organisations = organisations_of(request.user)
    # The organisations whose care teams the login admins (false alarms, inviting): from the
    # cards, or, when a unit hides some, asked of the database.
    admin_of = {row.organisation_id for row in everyone if row.role == CareRole.ADMIN}
    if wanted.unit is not None:
        admin_of = set(
            care_memberships(request.user)
            .filter(role=CareRole.ADMIN)
            .values_list("person__organisation_id", flat=True)
            .distinct()
        )
    for member in organisations:  # the organisation's admins see webhook deliveries that failed
        member.failed_webhooks = (
            webhooks.failed_deliveries(organisation_id=member.organisation_id)
            if member.is_admin
            else []
        )
        # ...and the people the bot made whom nobody looks after yet; its staff, its alerts
        # with no person yet.
        member.new_people = (
            selectors.people_without_a_team(organisation_id=member.organisation_id)
            if member.is_admin
            else []
        )
        member.staff = rights.organisation_staff(request.user, member.organisation_id)
        # Its admins and its team admins invite (dashboard.accounts.services.Inviter).
        member.may_invite = member.is_admin or member.organisation_id in admin_of
    groups = [
        (member, [card for card in cards if card.person.organisation_id == member.organisation_id])
        for member in organisations
    ]
    context = {
        **people_filter.unit_choices(request.user, wanted, everyone=bool(everyone)),
        "team_admin": bool(admin_of),
        "cards": cards,
        "total": total,
        "page": page,
        "more": total > page * PEOPLE_PAGE,
        "first_shown": (page - 1) * PEOPLE_PAGE + 1,
        "last_shown": (page - 1) * PEOPLE_PAGE + len(cards),
        "page_size": PEOPLE_PAGE,
        "groups": groups,
        "several": len(organisations) > 1,
        "needs": needs,
        "filter": wanted,
        "hidden": hidden,
    }
    # One read row per organisation shown, as on the home view; the list's minute poll, and a
    # search typed into the page (a part of it), repeat what the page load disclosed and
    # recorded, and are not written again.
    since = poll_since(request) or part_since(request)
    shown = {row.organisation_id for row in everyone}
    if shown and not (
        since and recorded_since(request.user, since, action=AuditAction.VIEW_PEOPLE)
    ):
        organisations_read_record(request.user, shown, AuditAction.VIEW_PEOPLE)
    # The list polls itself for alert badges (htmx): then only the list is sent.
    template = "dashboard/people.html" + ("#people-list" if request.htmx else "")
    return render(request, template, context)


@login_required
@require_GET
def organisation_audit(request: HttpRequest, slug: str) -> HttpResponse:
    """The organisation's audit, for its admins: who read or did what about whom, and when.

    Caregivers' reads on the dashboard, API keys' disclosures (REST and MCP) and operators'
    reading of messages in the admin, newest first.
    """
    org = get_organisation_for(request.user, slug, need=Need.ADMIN)
    try:
        page = params.page_number(request)
        where = audit_filter.audit_filter_of(request, org.organisation)
    except params.BadParameter as bad:
        return bad.response()
    rows, more = selectors.organisation_audit(organisation=org.organisation, page=page, where=where)
    # Reading the audit is itself recorded (after the page's rows: this read is on the next).
    organisations_read_record(request.user, [org.organisation.pk], AuditAction.VIEW_AUDIT)
    context = {
        "organisation": org.organisation,
        "rows": rows,
        "page": page,
        "more": more,
        "filter": where,
        "people": selectors.people_named(organisation_id=org.organisation.pk),
        "kinds": audit_filter.kind_choices(),
    }
    return render(request, "dashboard/audit.html", context)


@login_required
@require_GET
def person(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    """The person page: a header, then panels that htmx loads from their own URLs; family get
    the family page instead (dashboard/family/)."""
    access = get_person_for(request.user, person_id, action=AuditAction.VIEW_PERSON)
    if access.membership.role == CareRole.FAMILY:
        # Family get a page written for them (dashboard/family/): the one place the two meet.
        from dashboard.family import views as family  # family.views renders through this module

        return family.person_page(request, access)
    card = selectors.person_card(
        person=access.person, membership=access.membership, now=timezone.now()
    )
    languages = selectors.languages_heard(person=access.person, now=timezone.now())
    if languages == ["English"]:
        languages = []  # said only when it is news
    return _render(request, "dashboard/person.html", access, {"card": card, "languages": languages})


# --- Panels of the person page ---------------------------------------------------------------


@login_required
@require_GET
@vary_on_headers("HX-Request")
def person_emotions(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    access = get_person_for(
        request.user, person_id, action=AuditAction.VIEW_EMOTIONS, part_since=part_since(request)
    )
    try:
        days = int(request.GET.get("days", selectors.TIMELINE_DAYS))
    except ValueError:
        days = selectors.TIMELINE_DAYS
    if days not in TIMELINE_CHOICES:
        days = selectors.TIMELINE_DAYS
    timeline = selectors.emotion_timeline(person=access.person, now=timezone.now(), days=days)
    figure = charts.timeline_figure(timeline, name=_short_name(access))
    context = {
        "timeline": timeline,
        "chart": charts.to_json(figure),
        "choices": TIMELINE_CHOICES,
        "usual": words.upset_score(timeline.baseline),
        "usual_words": words.upset_words(timeline.baseline),
        "band": None if timeline.band is None else [words.upset_score(v) for v in timeline.band],
    }
    return _render(request, "dashboard/person_emotions.html", access, context, partial="emotions")


@login_required
@require_GET
@vary_on_headers("HX-Request")
def person_patterns(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    access = get_person_for(
        request.user, person_id, action=AuditAction.VIEW_PATTERNS, part_since=part_since(request)
    )
    now = timezone.now()
    name = _short_name(access)
    heatmap = selectors.distress_heatmap(person=access.person, now=now)
    weeks = selectors.weekly_distress(person=access.person, now=now)
    recent, before = selectors.last_7_days(person=access.person, now=now)
    hardest = heatmap.hardest_hours()
    context = {
        "heatmap": heatmap,
        "heatmap_chart": charts.to_json(charts.heatmap_figure(heatmap, name=name)),
        "weekly_chart": charts.to_json(charts.weekly_figure(weeks, name=name)),
        "hardest": None if hardest is None else [charts._hour_label(h) for h in hardest],
        "weeks": weeks,
        "stretches": [
            words.stretch_sentence(recent, label="The last 7 days"),
            words.stretch_sentence(before, label="The 7 days before"),
        ],
    }
    return _render(request, "dashboard/person_patterns.html", access, context, partial="patterns")


@login_required
@require_GET
@vary_on_headers("HX-Request")
def person_repetition(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    access = get_person_for(
        request.user, person_id, action=AuditAction.VIEW_REPETITION, part_since=part_since(request)
    )
    now = timezone.now()
    name = _short_name(access)
    subject = words.pronoun(access.person.caregiver_context)
    band = selectors.repetition_this_week(person=access.person, now=now)
    sentences = [
        words.week_question_sentence(question, subject=subject, band=band)
        for question in band.questions
    ]
    per_session = selectors.questions_per_session(person=access.person, now=now)
    by_hour = selectors.questions_by_hour(person=access.person, now=now)
    about = CaregiverContext.of(access.person)
    repeated = selectors.most_repeated_questions(person=access.person, now=now)
    # The person's own words only for members granted transcripts; Clara's words otherwise.
    with_words = access.can_see_transcripts
    chronic = selectors.chronic_conversations(person=access.person, now=now)
    context = {
        "band": band,
        "sentences": [s for s in sentences if s],
        "repeated": [
            (
                words.repeated_question_sentence(q, subject=subject, with_words=with_words),
                _agreed_answer_of(about, q),
                q.record_id,
            )
            for q in repeated
        ],
        "with_words": with_words,
        "chronic": words.chronic_sentence(
            chronic, name=name, days=selectors.REPETITION_DAYS, at=CHRONIC_AT
        ),
        "days": selectors.REPETITION_DAYS,
        "per_session_chart": charts.to_json(
            charts.questions_per_session_figure(per_session, name=name)
        )
        if per_session
        else None,
        "by_hour_chart": charts.to_json(
            charts.questions_by_hour_figure(by_hour, name=name, days=selectors.REPETITION_DAYS)
        )
        if by_hour
        else None,
    }
    return _render(
        request, "dashboard/person_repetition.html", access, context, partial="repetition"
    )


def _agreed_answer_of(about: CaregiverContext, question) -> str | None:
    """The answer agreed for this repeated question (picked from this panel: the same keyed
    words), else the one agreed for its kind of question."""
    for agreed in about.agreed_questions:
        if question.fingerprint and agreed.fingerprint == question.fingerprint:
            return agreed.answer
    return about.agreed_answers.get(question.question_type)


@login_required
@require_GET
@vary_on_headers("HX-Request")
def person_calming(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    access = get_person_for(
        request.user, person_id, action=AuditAction.VIEW_CALMING, part_since=part_since(request)
    )
    kinds, stories, conversations = selectors.what_calms(person=access.person, now=timezone.now())
    figure = charts.calming_figure(kinds, name=_short_name(access), conversations=conversations)
    context = {
        "kinds": kinds,
        "stories": stories[:10],
        "conversations": conversations,
        "chart": charts.to_json(figure) if any(k.enough for k in kinds) else None,
        "min_measured": selectors.CALMING_MIN_MEASURED,
    }
    return _render(request, "dashboard/person_calming.html", access, context, partial="calming")


@login_required
@require_GET
@vary_on_headers("HX-Request")
def person_sessions(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    access = get_person_for(
        request.user, person_id, action=AuditAction.VIEW_SESSIONS, part_since=part_since(request)
    )
    try:
        page = params.page_number(request)
    except params.BadParameter as bad:
        return bad.response()
    context, status = conversation_search.search_context(request, access, page=page)
    # htmx asking for page 2+ gets only the rows (and the next "more" button) to append.
    partial = "session-rows" if page > 1 else "sessions"
    return _render(
        request, "dashboard/person_sessions.html", access, context, partial=partial, status=status
    )


@login_required
@require_GET
def session(request: HttpRequest, person_id: uuid.UUID, session_id: uuid.UUID) -> HttpResponse:
    """One conversation: its summary for every member; the transcript loads for those allowed."""
    access = get_person_for(
        request.user, person_id, action=AuditAction.VIEW_SESSION, object_id=str(session_id)
    )
    row = selectors.session_for_person(person=access.person, session_id=session_id)
    if row is None:
        return _render(request, "dashboard/not_found.html", access, {}, status=404)
    alerts = [
        a for a in selectors.alerts_for_person(person=access.person) if a.session_id == row.id
    ]
    # The person's own words ("Said “…”") only for members granted transcripts.
    summary = minimum.summary_for(row.summary, with_words=access.can_see_transcripts)
    row = dataclasses.replace(row, summary=summary)  # its one-line summary too
    subject = words.pronoun(access.person.caregiver_context)
    arc = summary.get("emotional_arc") or ""
    context = {
        "session": row,
        "summary": summary,
        "alerts": alerts,
        "arc": " → ".join(words.feeling(part.strip()) for part in arc.split("→") if part.strip()),
        "topics": [
            f"{words.question_phrase(t['question_type'], subject)} ({words.times(t['count'])})"
            for t in summary.get("key_topics") or []
        ],
        "stories": selectors.story_titles(
            summary.get("narratives_used") or [], person=access.person
        ),
        "neighbours": conversation_search.neighbours(person=access.person, started=row.started),
    }
    return _render(request, "dashboard/session.html", access, context)


@login_required
@require_GET
@vary_on_headers("HX-Request")
def session_transcript(
    request: HttpRequest, person_id: uuid.UUID, session_id: uuid.UUID
) -> HttpResponse:
    access = get_person_for(
        request.user,
        person_id,
        need=Need.TRANSCRIPTS,
        action=AuditAction.VIEW_TRANSCRIPT,
        object_id=str(session_id),
    )
    row = selectors.session_for_person(person=access.person, session_id=session_id)
    if row is None:
        return _render(request, "dashboard/not_found.html", access, {}, status=404)
    lines = selectors.transcript(person=access.person, session_id=session_id)
    context = {"session": row, "lines": lines}
    return _render(
        request, "dashboard/session_transcript.html", access, context, partial="transcript"
    )


# --- Alerts ----------------------------------------------------------------------------------


def _alerts_context(access: Access) -> dict:
    alerts = selectors.alerts_for_person(person=access.person)
    return {
        "alerts": alerts,
        "open_count": sum(a.status != Alert.Status.RESOLVED for a in alerts),
        "may_act": rights.may_act(access.membership),
        # Team admins: the person's false alarms lately (dashboard/alerting/noise.py).
        "noise": noise.false_alarms_by_week(people=[access.person], now=timezone.now(), weeks=4)[0]
        if access.is_admin
        else None,
        "cannot_act_why": rights.why_not(access.membership),
        "outcomes": OUTCOMES_OFFERED,
        "now": timezone.now(),
        # Each alert's timeline, and the words that raised it for the transcript right.
        **alerting_views.panel_context(access, alerts),
    }


def alerts_panel(request: HttpRequest, access: Access, *, error: str = "", status: int = 200):
    """The alerts panel after an action (htmx), else the person page at the panel."""
    if request.htmx or status != 200:
        context = {**_alerts_context(access), "error": error}
        return _render(
            request,
            "dashboard/person_alerts.html",
            access,
            context,
            partial="alerts",
            status=status,
        )
    return redirect(reverse("dashboard:person", args=[access.person.id]) + "#alerts")


@login_required
@require_GET
@vary_on_headers("HX-Request")
def person_alerts(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    # The panel refreshes itself every minute (X-Clara-Poll): the read recorded when the page
    # opened the panel stands for the polls that follow it in this login.
    access = get_person_for(
        request.user,
        person_id,
        action=AuditAction.VIEW_ALERTS,
        poll_since=poll_since(request),
        part_since=part_since(request),
    )
    return _render(
        request, "dashboard/person_alerts.html", access, _alerts_context(access), partial="alerts"
    )


@login_required
@require_POST
def alert_status(request: HttpRequest, person_id: uuid.UUID, alert_id: int) -> HttpResponse:
    """'I'm dealing with it' (a claim, or taking over someone's) or resolved with what happened;
    then the alerts again. Someone whose role or care setting does not let them act is told so,
    kindly (403), and nothing changes; the audit keeps the refusal."""
    access = get_person_for(
        request.user,
        person_id,
        action=AuditAction.ALERT_STATUS,
        object_id=str(alert_id),
        audit_allowed=False,
    )
    allowed = rights.may_act(access.membership)
    audit_record(
        user=request.user,
        person_id=person_id,
        action=AuditAction.ALERT_STATUS,
        object_id=str(alert_id),
        allowed=allowed,
        organisation_id=access.person.organisation_id,
    )
    alert = selectors.alert_of_person(person=access.person, alert_id=alert_id)
    if alert is None:
        return _render(request, "dashboard/not_found.html", access, {}, status=404)
    if not allowed:
        return alerts_panel(request, access, error=rights.why_not(access.membership), status=403)
    form = AlertActionForm(request.POST)
    if not form.is_valid():
        return alerts_panel(request, access, error=form.problem(), status=400)
    try:
        if form.cleaned_data["action"] == "claim":
            respond.alert_claim_by(alert=alert, user=request.user, via="dashboard")
        else:
            respond.alert_resolve_by(
                alert=alert,
                user=request.user,
                outcome=form.cleaned_data["outcome"],
                note=form.cleaned_data["note"],
                via="dashboard",
            )
    except DomainError as error:
        return alerts_panel(request, access, error=str(error), status=400)
    except respond.NotAllowed:
        return alerts_panel(request, access, error=rights.why_not(access.membership), status=403)
    return alerts_panel(request, access)


# --- Care team -------------------------------------------------------------------------------


def _logins(access: Access):
    """Who may join this care team: the person's organisation's logins not in it yet."""
    return selectors.organisation_logins(
        organisation_id=access.person.organisation_id, exclude_person=access.person
    )


def _team_context(access: Access, **extra) -> dict:
    add_form = extra.pop("add_form", None) or MemberAddForm(logins=_logins(access))
    rules = rights.settings_for(access.person.organisation_id)
    return {
        "members": selectors.team_of(person=access.person),
        "roles": CareRole.choices,
        "care_home": rules.care_setting == CareSetting.CARE_HOME,
        "who_acts": rights.who_acts(rules),
        "add_form": add_form,
        "logins": list(add_form.fields["username"].queryset),
        **extra,
    }


@login_required
@require_GET
def team(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    """The care team (admin only): who is in it, their role, who may read full conversations."""
    access = get_person_for(request.user, person_id, need=Need.ADMIN, action=AuditAction.VIEW_TEAM)
    return _render(request, "dashboard/team.html", access, _team_context(access))


@login_required
@require_POST
def team_add(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    access = get_person_for(request.user, person_id, need=Need.ADMIN, action=AuditAction.EDIT_TEAM)
    form = MemberAddForm(request.POST, logins=_logins(access))
    if form.is_valid():
        error = services.member_add(
            person=access.person,
            user=form.cleaned_data["username"],
            role=form.cleaned_data["role"],
            can_see_transcripts=form.cleaned_data["can_see_transcripts"],
        )
        if error:
            form.add_error("username", error)
    if form.errors:
        context = _team_context(access, add_form=form)
        return _render(request, "dashboard/team.html", access, context, status=400)
    messages.success(request, "Added to the care team.")
    return redirect("dashboard:team", person_id=person_id)


@login_required
@require_POST
def team_member(request: HttpRequest, person_id: uuid.UUID, membership_id: int) -> HttpResponse:
    """Change a member's role and transcript right, or (with remove=1) take them off the team.

    Never one's own role or rights (403, audited as refused): another admin of the team
    changes them, so no one grants themselves a right. Leaving the team is one's own choice."""
    access = get_person_for(
        request.user,
        person_id,
        need=Need.ADMIN,
        action=AuditAction.EDIT_TEAM,
        object_id=str(membership_id),
        audit_allowed=False,
    )
    member = access.person.care_team.filter(id=membership_id).first()
    removing = bool(request.POST.get("remove"))
    allowed = member is None or removing or may_change_rights(access, member)
    audit_record(
        user=request.user,
        person_id=person_id,
        action=AuditAction.EDIT_TEAM,
        object_id=str(membership_id),
        allowed=allowed,
        organisation_id=access.person.organisation_id,
    )
    if not allowed:
        raise PermissionDenied("Another admin of the team changes your own role and rights.")
    if member is None:
        return _render(request, "dashboard/not_found.html", access, {}, status=404)
    if removing:
        error = services.member_remove(membership=member)
        done = "Taken off the care team."
    else:
        form = MemberUpdateForm(request.POST)
        if not form.is_valid():
            context = _team_context(access, error="Choose a role.")
            return _render(request, "dashboard/team.html", access, context, status=400)
        error = services.member_update(
            membership=member,
            role=form.cleaned_data["role"],
            can_see_transcripts=form.cleaned_data["can_see_transcripts"],
            named_carer=form.cleaned_data["named_carer"],
        )
        done = "Saved."
    if error:
        return _render(
            request, "dashboard/team.html", access, _team_context(access, error=error), status=400
        )
    messages.success(request, done)
    return redirect("dashboard:team", person_id=person_id)


# The person's profile: dashboard/profile.py.


# --- What Clara remembers: review, export, erase ------------------------------------------------


def _memories_context(access: Access) -> dict:
    return {
        "groups": selectors.memories_by_type(person=access.person, short_name=_short_name(access)),
        "sources": words.MEMORY_SOURCES,
        "suggestions": services.fact_suggestions_of(person=access.person),
        # Pinned facts past what one conversation holds: staff are told (they pin and unpin).
        "pinned_left_out": (
            search.pinned_beyond_prompt(person_id=access.person.id) if access.may_confirm else 0
        ),
        "pinned_limit": search.FOUNDATION_LIMIT,
        # What the prompt firewall keeps from Clara, for those who may say what is true.
        "held_back": firewall.held_back_for(access.person) if access.may_confirm else [],
    }


@login_required
@require_GET
def memories(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    """Everything Clara remembers about the person; unconfirmed memories clearly marked."""
    access = get_person_for(request.user, person_id, action=AuditAction.VIEW_MEMORIES)
    return _render(request, "dashboard/memories.html", access, _memories_context(access))


@login_required
@require_POST
@vary_on_headers("HX-Request")
def held_back_approve(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    """Let one item the prompt firewall holds back reach Clara as quoted data, as its text is
    now (team admins and care staff; 403 for family). Audited with the item, never its text;
    an item not held back for this person (another's, changed since, already approved) is 404.
    htmx gets the held-back panel back; a plain form post goes back to the page."""
    digest = request.POST.get("item", "")[:64]
    access = get_person_for(
        request.user,
        person_id,
        need=Need.CONFIRM,
        action=AuditAction.APPROVE_HELD_BACK,
        object_id=digest,
        audit_allowed=False,
    )
    item = firewall.held_back_approve(person=access.person, digest=digest) if digest else None
    audit_record(
        user=request.user,
        person_id=person_id,
        action=AuditAction.APPROVE_HELD_BACK,
        object_id=str(item.memory_id or item.digest) if item else digest,
        allowed=item is not None,
        organisation_id=access.person.organisation_id,
    )
    if item is None:
        return _render(request, "dashboard/not_found.html", access, {}, status=404)
    if not request.htmx:
        messages.success(request, "Clara will hear it from now on, as a quoted note.")
        return redirect("dashboard:memories", person_id=person_id)
    context = {"held_back": firewall.held_back_for(access.person), "approved": item}
    return _render(request, "dashboard/memories.html", access, context, partial="held-back")


MEMORY_ACTIONS = tuple(MEMORY_ACTION_NEEDS)


@login_required
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def memory_action(
    request: HttpRequest, person_id: uuid.UUID, memory_id: uuid.UUID, action: str
) -> HttpResponse:
    """Confirm, pin, unpin, edit (GET: the form) or forget one memory; htmx gets the item back.

    Family's edit is a suggestion that care staff accept or decline; confirming, pinning,
    forgetting and deciding on suggestions are for team admins and care staff (403 for family,
    audited): dashboard.access.MEMORY_ACTION_NEEDS, the profile's rule too.
    """
    if action not in MEMORY_ACTIONS or (request.method == "GET" and action != "edit"):
        raise Http404("No such action.")
    if request.method == "GET":
        audited = AuditAction.VIEW_MEMORIES
    else:
        audited = AuditAction.FORGET_MEMORY if action == "forget" else AuditAction.EDIT_MEMORY
    need = MEMORY_ACTION_NEEDS[action]
    access = get_person_for(
        request.user, person_id, need=need, action=audited, object_id=str(memory_id)
    )
    memory = selectors.memory_of_person(person=access.person, memory_id=memory_id)
    if memory is None:
        return _render(request, "dashboard/not_found.html", access, {}, status=404)
    context = {"memory": memory, "sources": words.MEMORY_SOURCES}
    if request.method == "GET":
        context["form"] = MemoryEditForm(initial={"content": memory.content})
        return _render(
            request, "dashboard/memory_edit.html", access, context, partial="memory-edit"
        )
    status = 200
    if action == "confirm":
        memory = store.memory_confirm(memory.id, user=request.user)
    elif action in ("pin", "unpin"):
        memory = store.memory_pin(memory.id, pinned=action == "pin")
    elif action in ("same_person", "other_person"):
        memory = names.decide(memory, same=action == "same_person")
    elif action == "forget":
        store.memory_forget(memory.id)
        memory = None
    elif action == "accept":
        memory = (
            services.fact_suggestion_accept(person=access.person, memory=memory, user=request.user)
            or memory
        )
    elif action == "decline":
        services.fact_suggestion_decline(person=access.person, memory=memory)
    elif not access.may_confirm:
        form = MemoryEditForm(request.POST)
        if form.is_valid():
            services.fact_suggest(
                person=access.person,
                memory=memory,
                content=form.cleaned_data["content"],
                user=request.user,
            )
        else:
            context["form"] = form
            return _render(
                request,
                "dashboard/memory_edit.html",
                access,
                context,
                partial="memory-edit",
                status=400,
            )
    else:
        form = MemoryEditForm(request.POST)
        if form.is_valid():
            try:
                memory = store.memory_edit(
                    memory.id, content=form.cleaned_data["content"], user=request.user
                )
            except DomainError as exc:
                form.add_error("content", str(exc))
        if form.errors:
            context["form"] = form
            return _render(
                request,
                "dashboard/memory_edit.html",
                access,
                context,
                partial="memory-edit",
                status=400,
            )
    if not request.htmx:
        return redirect(reverse("dashboard:memories", args=[person_id]))
    if memory is None:
        # The item disappears from the list: htmx's own "delete" swap, which does not depend on
        # swapping an empty body over an element htmx may still be settling.
        return reswap(HttpResponse("", status=status), "delete")
    context["memory"] = memory
    context["suggestions"] = services.fact_suggestions_of(person=access.person)
    return _render(request, "dashboard/memory_edit.html", access, context, partial="memory-item")


def _download(content: str | bytes, *, filename: str, content_type: str) -> HttpResponse:
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_GET
def export_json(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    """Everything stored about the person, as one JSON file (a team admin with the transcript
    right: it holds every conversation)."""
    access = get_person_for(
        request.user, person_id, need=Need.EXPORT_ALL, action=AuditAction.EXPORT_JSON
    )
    data = privacy.person_export(access.person.id)
    data.update(notes_services.export_rows(access.person.id))  # the caregivers' notes
    return _download(
        json.dumps(data, ensure_ascii=False, indent=2, default=str),
        filename=f"clara-{access.person.id}.json",
        content_type="application/json",
    )


@login_required
@require_GET
def export_csv(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    """What Clara remembers about the person, as a spreadsheet (team admin only)."""
    access = get_person_for(request.user, person_id, need=Need.ADMIN, action=AuditAction.EXPORT_CSV)
    return _download(
        privacy.person_export_csv(access.person.id),
        filename=f"clara-memories-{access.person.id}.csv",
        content_type="text/csv; charset=utf-8",
    )


def _erase_name(access: Access) -> str:
    return access.person.display_name.strip() or _short_name(access)


@login_required
@require_http_methods(["GET", "POST"])
def erase(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    """Erase the person and everything about them, once the admin types their name."""
    posting = request.method == "POST"
    access = get_person_for(
        request.user,
        person_id,
        need=Need.ADMIN,
        action=AuditAction.ERASE if posting else AuditAction.VIEW_ERASE,
        # A POST's row is written below, with its outcome.
        audit_allowed=not posting,
    )
    form = EraseForm(request.POST if posting else None)
    expected = _erase_name(access)
    if posting:
        if form.is_valid() and form.cleaned_data["confirm_name"].casefold() == expected.casefold():
            services.person_erase_audited(access=access, user=request.user)
            messages.success(
                request, f"{expected} and everything Clara knew about them are erased."
            )
            return redirect("dashboard:people")
        services.erase_refused_audit(access=access, user=request.user)
        form.add_error("confirm_name", f"Type {expected} exactly to erase.")
    status = 400 if posting else 200
    return _render(
        request, "dashboard/erase.html", access, {"form": form, "expected": expected}, status=status
    )
