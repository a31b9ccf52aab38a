"""An organisation's own alert pages: who answers its alerts, its care setting and its on-call
list (its admins), and its alerts that have no person yet (its staff and admins).

Every view goes through dashboard.access.get_organisation_for: a login outside the
organisation gets 404 (as an unknown organisation), a member without the right 403.
"""

from datetime import timedelta
from zoneinfo import ZoneInfo

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from dashboard import selectors, words
from dashboard.access import Need, audit_record, get_organisation_for
from dashboard.alerting import delivery, respond, rights, shift
from dashboard.alerting.models import CareSetting, OnCall, OrganisationAlerting
from dashboard.forms import AlertActionForm
from dashboard.models import AuditAction, CareRole
from memory.core.errors import DomainError
from memory.core.person import zone_exists
from memory.insights.alerts import OUTCOMES_OFFERED
from memory.models import Alert, OrganisationMembership, Person


class AlertingForm(forms.Form):
    care_setting = forms.ChoiceField(
        choices=CareSetting.choices,
        widget=forms.RadioSelect,
        label="Where you care for people",
        error_messages={
            "required": "Choose your care setting.",
            "invalid_choice": "Choose your care setting.",
        },
    )
    acting_roles = forms.MultipleChoiceField(
        choices=CareRole.choices,
        widget=forms.CheckboxSelectMultiple,
        required=False,
        label="Who may say “I'm dealing with it” and resolve an alert",
        error_messages={"invalid_choice": "Choose roles from the list."},
    )

    time_zone = forms.CharField(
        max_length=64,
        label="The on-call hours are in this time zone",
        error_messages={
            "required": "Give the time zone of the on-call hours (e.g. Europe/London)."
        },
    )

    def clean_time_zone(self) -> str:
        zone = self.cleaned_data["time_zone"].strip()
        if not zone_exists(zone):
            raise forms.ValidationError(
                f"“{zone}” is not a time zone we know (e.g. Europe/London)."
            )
        return zone

    def clean_acting_roles(self) -> list[str]:
        roles = self.cleaned_data.get("acting_roles") or []
        if not {CareRole.ADMIN, CareRole.STAFF} & set(roles):
            raise forms.ValidationError(
                "Team admins or care staff must be able to answer: otherwise an alert could "
                "be left with nobody to deal with it."
            )
        return [role for role in (CareRole.ADMIN, CareRole.STAFF, CareRole.FAMILY) if role in roles]


def alerting_set(
    *, organisation, user, care_setting: str, acting_roles: list[str], time_zone: str = "UTC"
):
    """Save the organisation's rules for its alerts; audited (who, which organisation)."""
    with transaction.atomic():
        row, _ = OrganisationAlerting.objects.select_for_update().get_or_create(
            organisation=organisation
        )
        row.care_setting, row.acting_roles = care_setting, acting_roles
        row.time_zone = time_zone
        row.updated_at = timezone.now()
        row.save(update_fields=["care_setting", "acting_roles", "time_zone", "updated_at"])
        audit_record(
            user=user,
            person_id=None,
            action=AuditAction.EDIT_ALERTING,
            object_id=str(organisation.pk),
            organisation_id=organisation.pk,
        )
    return row


@login_required
@require_http_methods(["GET", "POST"])
def alert_settings(request: HttpRequest, slug: str) -> HttpResponse:
    """Who answers the organisation's alerts, and its care setting (its admins only)."""
    org = get_organisation_for(request.user, slug, need=Need.ADMIN)
    rules = rights.settings_for(org.organisation.pk)
    form = AlertingForm(
        request.POST or None,
        initial={
            "care_setting": rules.care_setting,
            "acting_roles": rules.acting_roles,
            "time_zone": rules.time_zone,
        },
    )
    status = 200
    if request.method == "POST":
        if form.is_valid():
            alerting_set(
                organisation=org.organisation,
                user=request.user,
                care_setting=form.cleaned_data["care_setting"],
                acting_roles=form.cleaned_data["acting_roles"],
                time_zone=form.cleaned_data["time_zone"],
            )
            messages.success(request, "Saved.")
            return redirect("dashboard:organisation_alert_settings", slug=slug)
        status = 400
    return _settings_page(request, org, form=form, status=status)


def _settings_page(request, org, *, form=None, on_call_form=None, status: int = 200):
    rules = rights.settings_for(org.organisation.pk)
    form = form or AlertingForm(
        initial={
            "care_setting": rules.care_setting,
            "acting_roles": rules.acting_roles,
            "time_zone": rules.time_zone,
        }
    )
    context = {
        "organisation": org.organisation,
        "form": form,
        "who_acts": rights.who_acts(rules),
        "rules": rules,
        "on_call": OnCall.objects.filter(organisation=org.organisation)
        .select_related("user")
        .order_by("created_at", "id"),
        "on_call_form": on_call_form or OnCallForm(organisation=org.organisation),
        "contact": org.organisation.contact_email,
    }
    return render(request, "alerting/organisation_settings.html", context, status=status)


class OnCallForm(forms.Form):
    """Put a login of the organisation on its on-call list, with hours (none: at any hour)."""

    login = forms.ModelChoiceField(
        queryset=None,
        to_field_name="username",
        error_messages={
            "required": "Choose who is on call.",
            "invalid_choice": "Choose someone with a login in this organisation.",
        },
    )
    hours_start = forms.TimeField(required=False, widget=forms.TimeInput(attrs={"type": "time"}))
    hours_end = forms.TimeField(required=False, widget=forms.TimeInput(attrs={"type": "time"}))

    def __init__(self, *args, organisation, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["login"].queryset = (
            get_user_model()
            .objects.filter(organisation_memberships__organisation_id=organisation.pk)
            .exclude(id__in=OnCall.objects.filter(organisation=organisation).values("user_id"))
            .order_by("first_name", "last_name", "username")
        )

    def clean(self):
        data = super().clean()
        if (data.get("hours_start") is None) != (data.get("hours_end") is None):
            self.add_error("hours_end", "Give both times, or neither (at any hour).")
        return data


@login_required
@require_POST
def on_call_edit(request: HttpRequest, slug: str) -> HttpResponse:
    """Add someone to the on-call list, or take them off it (its admins only); audited."""
    org = get_organisation_for(request.user, slug, need=Need.ADMIN)
    remove = request.POST.get("remove")
    if remove is not None:
        gone = (
            remove.isdigit()
            and OnCall.objects.filter(organisation=org.organisation, id=int(remove)).delete()[0]
        )
        if not gone:  # not on this organisation's list (or never was): nothing to take off
            return _settings_page(request, org, status=400)
    else:
        form = OnCallForm(request.POST, organisation=org.organisation)
        if not form.is_valid():
            return _settings_page(request, org, on_call_form=form, status=400)
        OnCall.objects.create(
            organisation=org.organisation,
            user=form.cleaned_data["login"],
            hours_start=form.cleaned_data["hours_start"],
            hours_end=form.cleaned_data["hours_end"],
        )
    audit_record(
        user=request.user,
        person_id=None,
        action=AuditAction.EDIT_ALERTING,
        object_id=str(org.organisation.pk),
        organisation_id=org.organisation.pk,
    )
    messages.success(request, "Saved.")
    return redirect(reverse("dashboard:organisation_alert_settings", args=[slug]) + "#on-call")


# --- The organisation's alerts with no person yet ------------------------------------------------


def _unowned(organisation, *, now):
    """The organisation's alerts that have no person: not resolved (oldest first), then those
    resolved this shift (newest first)."""
    rows = list(
        Alert.objects.filter(person__isnull=True, session__organisation_id=organisation.pk)
        .filter(
            Q(status__in=[Alert.Status.OPEN, Alert.Status.CLAIMED])
            | Q(resolved_at__gte=now - timedelta(hours=shift.SHIFT_HOURS))
        )
        .select_related("claimed_by", "resolved_by")
        .order_by("created_at", "id")
    )
    waiting = [a for a in rows if a.status != Alert.Status.RESOLVED]
    resolved = sorted(
        (a for a in rows if a.status == Alert.Status.RESOLVED),
        key=lambda a: a.resolved_at,
        reverse=True,
    )
    timelines = delivery.timeline(alert_ids=[a.id for a in rows])
    for alert in rows:
        alert.headline = words.alert_headline(alert.kind, alert.detail)
        alert.timeline = timelines.get(alert.id, [])
        alert.claimer = words.caregiver_name(alert.claimed_by) if alert.claimed_by_id else ""
        alert.resolver = words.caregiver_name(alert.resolved_by) if alert.resolved_by_id else ""
        alert.outcome_said = (
            words.outcome_words(alert.outcome, alert.outcome_note) if alert.outcome else ""
        )
    return waiting, resolved


def attachable_people(user, organisation) -> list:
    """Whom the login may say an alert was about: the people it cares for in the organisation;
    the organisation's admins, anyone of it (they see them all on the invitation page)."""
    if OrganisationMembership.objects.filter(
        user_id=user.pk, organisation_id=organisation.pk, is_admin=True
    ).exists():
        people = Person.objects.filter(organisation_id=organisation.pk)
    else:
        people = Person.objects.filter(
            organisation_id=organisation.pk,
            care_team__user_id=user.pk,
            care_team__role__in=[CareRole.ADMIN, CareRole.STAFF],
        )
    people = people.exclude(status=Person.Status.ARCHIVED).distinct()
    return sorted(people, key=lambda p: selectors.person_name(p).casefold())


def _staff_of(request: HttpRequest, slug: str):
    """The organisation, for its staff (rights.organisation_staff): 404 outside it, 403 for a
    member who is not (family)."""
    org = get_organisation_for(request.user, slug, need=Need.VIEW)
    if not rights.organisation_staff(request.user, org.organisation.pk):
        raise PermissionDenied("The organisation's staff and admins answer these alerts.")
    return org


def _alerts_page(request, org, *, status: int = 200, error: str = "", done: str = ""):
    now = timezone.now()
    waiting, resolved = _unowned(org.organisation, now=now)
    context = {
        "organisation": org.organisation,
        "waiting": waiting,
        "resolved": resolved,
        # Whom a waiting alert may be said to be about: asked only when one waits (every name
        # of a large organisation is decrypted and sorted for it).
        "people": attachable_people(request.user, org.organisation) if waiting else [],
        "outcomes": OUTCOMES_OFFERED,
        "shift_hours": shift.SHIFT_HOURS,
        "on_call": rights.on_call_now(org.organisation.pk, now=now),
        "error": error,
        "done": done,
    }
    with timezone.override(ZoneInfo("UTC")):
        return render(request, "alerting/organisation_alerts.html", context, status=status)


@login_required
@require_GET
def organisation_alerts(request: HttpRequest, slug: str) -> HttpResponse:
    """The organisation's alerts that have no person yet (an anonymous session's urgent moment),
    for its staff and admins: claim, resolve, and say whom it was about. Audited."""
    org = _staff_of(request, slug)
    audit_record(
        user=request.user,
        person_id=None,
        action=AuditAction.VIEW_ORG_ALERTS,
        organisation_id=org.organisation.pk,
    )
    return _alerts_page(request, org)


class AttachForm(forms.Form):
    person = forms.UUIDField(
        error_messages={
            "required": "Choose whom it was about.",
            "invalid": "Choose whom it was about.",
        }
    )


@login_required
@require_POST
def organisation_alert_act(request: HttpRequest, slug: str, alert_id: int) -> HttpResponse:
    """Claim, resolve (with what happened) or say whom an alert with no person was about."""
    org = _staff_of(request, slug)
    alert = Alert.objects.filter(
        id=alert_id, person__isnull=True, session__organisation_id=org.organisation.pk
    ).first()
    audit_record(
        user=request.user,
        person_id=None,
        action=AuditAction.ALERT_STATUS
        if request.POST.get("action") != "attach"
        else AuditAction.ALERT_ATTACH,
        object_id=str(alert_id),
        allowed=alert is not None,
        organisation_id=org.organisation.pk,
    )
    if alert is None:  # another organisation's, an unknown one, or one attached meanwhile
        raise Http404("No such alert.")
    action = request.POST.get("action")
    try:
        if action == "attach":
            form = AttachForm(request.POST)
            if not form.is_valid():
                return _alerts_page(request, org, status=400, error=form.errors["person"][0])
            person = next(
                (
                    p
                    for p in attachable_people(request.user, org.organisation)
                    if p.id == form.cleaned_data["person"]
                ),
                None,
            )
            if person is None:
                return _alerts_page(request, org, status=400, error="Choose whom it was about.")
            respond.alert_attach_by(alert=alert, user=request.user, person=person)
            messages.success(
                request, f"The alert is now on {selectors.person_name(person)}'s page."
            )
            return redirect("dashboard:organisation_alerts", slug=slug)
        form = AlertActionForm(request.POST)
        if not form.is_valid():
            return _alerts_page(request, org, status=400, error=form.problem())
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
    except respond.NotAllowed:
        return _alerts_page(request, org, status=403, error="You cannot answer this alert.")
    except DomainError as error:
        return _alerts_page(request, org, status=400, error=str(error))
    return redirect(reverse("dashboard:organisation_alerts", args=[slug]) + f"#alert-{alert.id}")
