"""The alert pages of the dashboard: claiming and resolving from an e-mail's link, handover notes, and
what the alerts panel shows beside each alert (its timeline; the words that raised it for those
with the transcript right, Clara's description for everyone else).

Every view goes through dashboard.access (404 for outsiders, audited), like every other page.
"""

import uuid
from zoneinfo import ZoneInfo

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from dashboard import params, pdf, words
from dashboard.access import Access, audit_record, care_memberships, get_person_for
from dashboard.alerting import delivery, report, respond, rights
from dashboard.alerting.models import AlertRouting
from dashboard.forms import AlertActionForm
from dashboard.models import AuditAction, CareRole
from dashboard.notes import services as notes_services
from memory.conversations import urgency
from memory.core.errors import DomainError
from memory.core.person import person_zone
from memory.insights.alerts import OUTCOMES_OFFERED, Claimed
from memory.models import Alert, ChatMessage, OrganisationMembership

NOTE_MAX_CHARS = 500


class NoteForm(forms.Form):
    note = forms.CharField(max_length=NOTE_MAX_CHARS, strip=True)
    # Unticked (the default): for the care staff and team admins only.
    for_family = forms.BooleanField(required=False)


def _raising_words(alert_rows, person_id: uuid.UUID) -> dict[int, str]:
    """The person's message that raised each escalation alert (the last one at or before it)."""
    found = {}
    for row in alert_rows:
        if row.kind != Alert.Kind.ESCALATION or row.session_id is None:
            continue
        raised_at = Alert.objects.filter(id=row.id).values_list("created_at", flat=True).first()
        message = (
            ChatMessage.objects.filter(
                session_id=row.session_id,
                person_id=person_id,
                role=ChatMessage.Role.USER,
                timestamp__lte=raised_at,
            )
            .order_by("-timestamp", "-sequence_number")
            .only("content")
            .first()
        )
        if message is not None:
            found[row.id] = message.content
    return found


def panel_context(access: Access, alert_rows) -> dict:
    """Adds each alert's timeline and, to members with the transcript right, the words."""
    # Handover notes for staff stay out of family's timelines (dashboard.notes.services).
    timelines = notes_services.timeline_for(
        membership=access.membership,
        timelines=delivery.timeline(alert_ids=[row.id for row in alert_rows]),
    )
    said = _raising_words(alert_rows, access.person.id) if access.can_see_transcripts else {}
    for row in alert_rows:
        row.timeline = timelines.get(row.id, [])
        row.words = said.get(row.id)
        # The words of theirs that decided it: the verdict is deterministic, so it is read
        # again from the stored message rather than stored beside it.
        row.deciding_words = None
        if row.words and row.kind == Alert.Kind.ESCALATION:
            verdict = urgency.recognise(row.words)
            if verdict.urgent and verdict.source == "phrase":
                row.deciding_words = verdict.words
    return {
        "note_max": NOTE_MAX_CHARS,
        "staff_notes": notes_services.sees_staff_notes(access.membership),
        **notes_services.seen_by_choices(access.person),
    }


def _ack_page(request, notice, *, status: int = 200, **extra) -> HttpResponse:
    alert = notice.alert
    alert.refresh_from_db()
    person = alert.person
    zone = person_zone(person) if person else ZoneInfo("UTC")
    membership = rights.membership_of(request.user, alert)
    context = {
        "alert": alert,
        "person": person if membership is not None else None,
        "org_alerts_url": delivery.alerts_path(alert) if person is None else "",
        "name": delivery.first_name(person),
        "headline": words.alert_headline(alert.kind, alert.detail),
        "when": alert.created_at.astimezone(zone),
        "claimer": words.caregiver_name(alert.claimed_by) if alert.claimed_by_id else "",
        "claimed_at": alert.claimed_at.astimezone(zone) if alert.claimed_at else None,
        "resolver": words.caregiver_name(alert.resolved_by) if alert.resolved_by_id else "",
        "resolved_at": alert.resolved_at.astimezone(zone) if alert.resolved_at else None,
        "outcome": words.outcome_words(alert.outcome, alert.outcome_note) if alert.outcome else "",
        "mine": alert.claimed_by_id == request.user.pk,
        "can_act": rights.may_act_on(alert, request.user),
        "why_not": rights.why_not(membership),
        "outcomes": OUTCOMES_OFFERED,
        **extra,
    }
    return render(request, "alerting/ack.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def alert_ack(request: HttpRequest, token: str) -> HttpResponse:
    """The e-mail's link. Its recipient sees the alert and who has it; if allowed to act, claims
    it ("I'm dealing with it"), then resolves it with what happened. GET records that it was
    opened and claims nothing (a mail scanner following links claims nothing).

    The link works only for the person it was sent to: another login of the organisation gets a
    clear refusal (403) and nothing is recorded on the alert (the audit keeps the refusal);
    anyone outside the organisation gets what an unknown link gets (404).
    """
    notice = delivery.notice_from_token(token)
    if notice is None:
        raise Http404("No such alert.")
    alert = notice.alert
    organisation_id = delivery.organisation_id_of(alert)
    if not OrganisationMembership.objects.filter(
        user_id=request.user.pk, organisation_id=organisation_id
    ).exists():
        raise Http404("No such alert.")
    action = AuditAction.ALERT_STATUS if request.method == "POST" else AuditAction.VIEW_ALERTS
    mine = respond.link_is_for(notice, request.user)
    # A member taken off the care team (or the on-call list) since the e-mail went loses it.
    if mine and notice.user_id is not None and not rights.may_see(alert, request.user):
        raise Http404("No such alert.")
    audit_record(
        user=request.user,
        person_id=alert.person_id,
        action=action,
        object_id=str(alert.id),
        allowed=mine,
        organisation_id=organisation_id,
    )
    if not mine:
        return render(request, "alerting/ack.html", {"not_yours": True}, status=403)
    if request.method == "GET":
        respond.link_opened(notice=notice, user=request.user)
        return _ack_page(request, notice)
    form = AlertActionForm(request.POST)
    if not form.is_valid():
        return _ack_page(request, notice, status=400, error=form.problem())
    try:
        if form.cleaned_data["action"] == "claim":
            what = respond.link_claim(notice=notice, user=request.user)
            if what == Claimed.RESOLVED:
                return _ack_page(request, notice, status=410, over=True)
            return _ack_page(request, notice, claimed=what)
        done = respond.alert_resolve_by(
            alert=alert,
            user=request.user,
            outcome=form.cleaned_data["outcome"],
            note=form.cleaned_data["note"],
            via="email",
        )
    except respond.NotAllowed:
        return _ack_page(request, notice, status=403, refused=True)
    except DomainError as error:
        return _ack_page(request, notice, status=400, error=str(error))
    if not done:
        return _ack_page(request, notice, status=410, over=True)
    return _ack_page(request, notice, resolved_now=True)


@login_required
@require_POST
def alert_note(request: HttpRequest, person_id: uuid.UUID, alert_id: int) -> HttpResponse:
    """Add a short handover note to an alert (for staff, or marked for family too); then shows
    the alerts panel again. Handover notes are for those who answer alerts: care staff, team
    admins, and family who act on alerts (a named carer at home), whose notes are for everyone;
    other family are refused (403, audited) and write on the notes panel instead."""
    from dashboard import views  # the panel's renderer; views imports this module

    access = get_person_for(
        request.user,
        person_id,
        action=AuditAction.ALERT_STATUS,
        object_id=str(alert_id),
        audit_allowed=False,
    )
    staff = notes_services.sees_staff_notes(access.membership)
    allowed = staff or rights.may_act(access.membership)
    audit_record(
        user=request.user,
        person_id=person_id,
        action=AuditAction.ALERT_STATUS,
        object_id=str(alert_id),
        allowed=allowed,
        organisation_id=access.person.organisation_id,
    )
    if not allowed:
        raise PermissionDenied("Handover notes are for those who answer alerts.")
    alert = Alert.objects.filter(id=alert_id, person_id=access.person.id).first()
    if alert is None:
        raise Http404("No such alert.")
    form = NoteForm(request.POST)
    if not form.is_valid():
        return views.alerts_panel(
            request,
            access,
            error=f"Write a note of at most {NOTE_MAX_CHARS} characters.",
            status=400,
        )
    delivery.note_add(
        alert=alert,
        user=request.user,
        text=form.cleaned_data["note"],
        # Family read what they wrote: their notes are for everyone.
        for_family=form.cleaned_data["for_family"] or not staff,
    )
    return views.alerts_panel(request, access)


class RoutingForm(forms.ModelForm):
    class Meta:
        model = AlertRouting
        fields = ("receives", "by_email", "hours_start", "hours_end", "time_zone", "weekly_digest")
        widgets = {
            "receives": forms.RadioSelect,
            "hours_start": forms.TimeInput(attrs={"type": "time"}),
            "hours_end": forms.TimeInput(attrs={"type": "time"}),
        }
        labels = {
            "receives": "Which alerts reach me",
            "by_email": "By e-mail",
            "hours_start": "Not urgent ones only from",
            "hours_end": "until",
            "time_zone": "My time zone (blank: the person's)",
            "weekly_digest": "A weekly summary on Sunday evening",
        }

    def clean_time_zone(self):
        zone = (self.cleaned_data.get("time_zone") or "").strip()
        if zone:
            try:
                ZoneInfo(zone)
            except (KeyError, ValueError) as exc:
                raise forms.ValidationError("Unknown time zone (e.g. Europe/London).") from exc
        return zone

    def clean(self):
        data = super().clean()
        if (data.get("hours_start") is None) != (data.get("hours_end") is None):
            self.add_error("hours_end", "Give both times, or neither.")
        return data


@login_required
@require_http_methods(["GET", "POST"])
def alert_routing(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    """The member's own choice of which alerts about this person reach them, how and when."""
    access = get_person_for(request.user, person_id, action=AuditAction.VIEW_ALERTS)
    routing = delivery.routing_of(access.membership)
    form = RoutingForm(request.POST or None, instance=routing)
    saved = request.GET.get("saved") == "1"
    if request.method == "POST":
        if form.is_valid():
            form.instance.membership = access.membership
            form.save()
            return redirect(reverse("dashboard:alert_routing", args=[person_id]) + "?saved=1")
        else:
            return render(
                request,
                "alerting/routing.html",
                {
                    "form": form,
                    "person": access.person,
                    "name": delivery.first_name(access.person),
                    "opt_in": rights.family_opt_in(access.membership),
                    "may_act": rights.may_act(access.membership),
                },
                status=400,
            )
    context = {
        "form": form,
        "saved": saved,
        "person": access.person,
        "name": delivery.first_name(access.person),
        "opt_in": rights.family_opt_in(access.membership),
        "may_act": rights.may_act(access.membership),
    }
    return render(request, "alerting/routing.html", context)


REPORT_ROLES = (CareRole.ADMIN, CareRole.STAFF)


@login_required
@require_GET
def clinician_report(request: HttpRequest, person_id: uuid.UUID) -> HttpResponse:
    """The clinician report PDF for ?from=YYYY-MM-DD&to=YYYY-MM-DD (default: the last 30 days);
    team admins and care staff only (family: 403, audited as refused)."""
    membership = care_memberships(request.user).filter(person_id=person_id).first()
    if membership is not None and membership.role not in REPORT_ROLES:
        audit_record(
            user=request.user,
            person_id=person_id,
            action=AuditAction.REPORT_PDF,
            allowed=False,
            organisation_id=membership.person.organisation_id,
        )
        raise PermissionDenied("Only the team's admins and care staff download the report.")
    # Audited below, once the PDF is counted against the login's limit (or refused by it).
    access = get_person_for(
        request.user, person_id, action=AuditAction.REPORT_PDF, audit_allowed=False
    )
    today = timezone.now().astimezone(person_zone(access.person)).date()
    try:
        period = report.period_asked(
            start=params.day(request, "from", default=None),
            end=params.day(request, "to", default=None),
            today=today,
        )
    except params.BadParameter as bad:
        return params.bad_input(bad.name, f"{bad.name} {bad.detail}")
    except report.BadPeriod as bad:
        return params.bad_input(bad.field, bad.detail)
    start, end = period.start, period.end
    try:
        with pdf.render_slot():
            refusal = pdf.limit_refusal(request, access=access, action=AuditAction.REPORT_PDF)
            if refusal is not None:
                return refusal
            content = report.report_pdf(person=access.person, period=period, now=timezone.now())
    except pdf.Busy:
        return pdf.busy_page(request)
    response = HttpResponse(content, content_type="application/pdf")
    response["Content-Disposition"] = (
        f'attachment; filename="clinician-report-{start.isoformat()}-{end.isoformat()}.pdf"'
    )
    response["Cache-Control"] = "no-store"
    return response
