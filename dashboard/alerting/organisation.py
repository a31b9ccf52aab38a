"""An organisation's own alert pages: who answers its alerts and its care setting (its admins).

Every view goes through dashboard.access.get_organisation_for: a login outside the
organisation gets 404 (as an unknown organisation), a member without the right 403.
"""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from dashboard.access import Need, audit_record, get_organisation_for
from dashboard.alerting import rights
from dashboard.alerting.models import CareSetting, OrganisationAlerting
from dashboard.models import AuditAction, CareRole


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

    def clean_acting_roles(self) -> list[str]:
        roles = self.cleaned_data.get("acting_roles") or []
        if not {CareRole.ADMIN, CareRole.STAFF} & set(roles):
            raise forms.ValidationError(
                "Team admins or care staff must be able to answer: otherwise an alert could "
                "be left with nobody to deal with it."
            )
        return [role for role in (CareRole.ADMIN, CareRole.STAFF, CareRole.FAMILY) if role in roles]


def alerting_set(*, organisation, user, care_setting: str, acting_roles: list[str]):
    """Save the organisation's rules for its alerts; audited (who, which organisation)."""
    with transaction.atomic():
        row, _ = OrganisationAlerting.objects.select_for_update().get_or_create(
            organisation=organisation
        )
        row.care_setting, row.acting_roles = care_setting, acting_roles
        row.updated_at = timezone.now()
        row.save(update_fields=["care_setting", "acting_roles", "updated_at"])
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
        initial={"care_setting": rules.care_setting, "acting_roles": rules.acting_roles},
    )
    status = 200
    if request.method == "POST":
        if form.is_valid():
            alerting_set(
                organisation=org.organisation,
                user=request.user,
                care_setting=form.cleaned_data["care_setting"],
                acting_roles=form.cleaned_data["acting_roles"],
            )
            messages.success(request, "Saved.")
            return redirect("dashboard:organisation_alert_settings", slug=slug)
        status = 400
    context = {
        "organisation": org.organisation,
        "form": form,
        "who_acts": rights.who_acts(rules),
        "rules": rules,
    }
    return render(request, "alerting/organisation_settings.html", context, status=status)
