"""The organisation's "Homes and units" page, for its admins (403 for its other members, 404 for
anyone else): add and rename homes and their units, move a person to a unit, and give a login a
role for a whole unit (dashboard/units/services.py). Plain forms, each posting to the page (it
works without JavaScript); every change is audited, and so is reading the page (it names the
organisation's people and where they live).
"""

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from dashboard.access import (
    Need,
    OrganisationAccess,
    audit_record,
    get_organisation_for,
    organisations_read_record,
)
from dashboard.models import AuditAction, UnitTeamMembership
from dashboard.selectors import person_name
from dashboard.units import services
from memory.conversations import homes
from memory.core.errors import DomainError
from memory.models import Home, Person, Unit

CHOOSE = "Choose from the list."


class NameForm(forms.Form):
    name = forms.CharField(max_length=homes.NAME_MAX, strip=True)


class MoveForm(forms.Form):
    """A person of the organisation to one of its units (or to none): another organisation's
    person or unit is answered like an unknown one."""

    person = forms.ModelChoiceField(queryset=None, error_messages={"invalid_choice": CHOOSE})
    unit = forms.ModelChoiceField(
        queryset=None, required=False, error_messages={"invalid_choice": CHOOSE}
    )

    def __init__(self, *args, organisation, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["person"].queryset = Person.objects.filter(organisation=organisation)
        self.fields["unit"].queryset = Unit.objects.filter(home__organisation=organisation)


class UnitTeamForm(forms.Form):
    """A login of the organisation (never the admin filling it in: rule 8) with a role for a
    whole unit."""

    unit = forms.ModelChoiceField(queryset=None, error_messages={"invalid_choice": CHOOSE})
    login = forms.ModelChoiceField(
        queryset=None,
        to_field_name="username",
        error_messages={"invalid_choice": "Choose someone from the list."},
    )
    role = forms.ChoiceField(choices=[(r.value, r.label) for r in services.UNIT_ROLES])
    can_see_transcripts = forms.BooleanField(required=False)

    def __init__(self, *args, organisation, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["unit"].queryset = Unit.objects.filter(home__organisation=organisation)
        self.fields["login"].queryset = (
            get_user_model()
            .objects.filter(organisation_memberships__organisation=organisation)
            .exclude(pk=user.pk)
            .order_by("username")
        )


def _home(org: OrganisationAccess, raw) -> Home | None:
    try:
        return Home.objects.filter(organisation=org.organisation, pk=raw).first()
    except (ValueError, forms.ValidationError):
        return None


def _unit(org: OrganisationAccess, raw) -> Unit | None:
    try:
        return homes.unit_of_organisation(organisation_id=org.organisation.pk, unit_id=raw)
    except DomainError:
        return None


@login_required
@require_http_methods(["GET", "POST"])
def homes_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The homes, their units and their teams; a POST makes one change (its `action`)."""
    org = get_organisation_for(request.user, slug, need=Need.ADMIN)
    if request.method == "POST":
        error = _change(request, org)
        if error is None:
            return redirect("dashboard:organisation_homes", slug=slug)
        return _page(request, org, error=error, status=400)
    return _page(request, org)


def _change(request: HttpRequest, org: OrganisationAccess) -> tuple[str, str] | None:
    """Make the change the form asks for; (where, sentence) when it cannot be made."""
    action = request.POST.get("action", "")
    organisation = org.organisation
    try:
        if action in ("home_add", "home_rename", "unit_add", "unit_rename"):
            form = NameForm(request.POST)
            if not form.is_valid():
                return action, "Give it a name of at most 100 characters."
            name = form.cleaned_data["name"]
            if action == "home_add":
                changed = homes.home_add(organisation=organisation, name=name)
            elif action == "home_rename" or action == "unit_add":
                home = _home(org, request.POST.get("home"))
                if home is None:
                    return action, "Choose a home from the list."
                if action == "home_rename":
                    changed = homes.home_rename(home=home, name=name)
                else:
                    changed = homes.unit_add(home=home, name=name)
            else:
                unit = _unit(org, request.POST.get("unit"))
                if unit is None:
                    return action, "Choose a unit from the list."
                changed = homes.unit_rename(unit=unit, name=name)
            audit_record(
                user=request.user,
                person_id=None,
                action=AuditAction.EDIT_HOMES,
                object_id=str(changed.pk),
                organisation_id=organisation.pk,
            )
            messages.success(request, "Saved.")
        elif action == "move":
            form = MoveForm(request.POST, organisation=organisation)
            if not form.is_valid():
                return action, "Choose someone and a unit from the lists."
            person, unit = form.cleaned_data["person"], form.cleaned_data["unit"]
            homes.person_move(person=person, unit=unit)
            audit_record(
                user=request.user,
                person_id=person.pk,
                action=AuditAction.MOVE_PERSON,
                object_id=str(unit.pk) if unit else "",
                organisation_id=organisation.pk,
            )
            where = f"{unit.home.name} · {unit.name}" if unit else "no unit"
            messages.success(request, f"{person_name(person)} is now in {where}.")
        elif action == "team_set":
            form = UnitTeamForm(request.POST, organisation=organisation, user=request.user)
            if not form.is_valid():
                first = next(iter(form.errors.values()))[0]
                return action, first
            data = form.cleaned_data
            services.unit_team_set(
                unit=data["unit"],
                user=data["login"],
                role=data["role"],
                can_see_transcripts=data["can_see_transcripts"],
                by=request.user,
            )
            messages.success(request, "Saved.")
        elif action == "team_remove":
            team = (
                UnitTeamMembership.objects.select_related("unit__home")
                .filter(unit__home__organisation=organisation, pk=_int(request.POST.get("team")))
                .first()
            )
            if team is None:
                return action, "Choose someone from the list."
            services.unit_team_remove(team=team, by=request.user)
            messages.success(request, "Taken off the unit's team.")
        else:
            return "page", "Choose what to change."
    except DomainError as refused:
        return action, refused.detail
    except services.NotAllowed as refused:
        return action, str(refused)
    return None


def _int(raw) -> int | None:
    return int(raw) if isinstance(raw, str) and raw.isascii() and raw.isdigit() else None


def _page(request, org: OrganisationAccess, *, error=None, status: int = 200) -> HttpResponse:
    organisation = org.organisation
    units = homes.units_of(organisation_ids=[organisation.pk])
    by_home: dict = {home: [] for home in Home.objects.filter(organisation=organisation)}
    for unit in units:
        by_home.setdefault(unit.home, []).append(unit)
    teams: dict = {}
    for team in (
        UnitTeamMembership.objects.filter(unit__home__organisation=organisation)
        .select_related("user")
        .order_by("user__username")
    ):
        teams.setdefault(team.unit_id, []).append(team)
    people = sorted(
        (
            (person, person_name(person))
            for person in Person.objects.filter(organisation=organisation)
            .exclude(status=Person.Status.ARCHIVED)
            .select_related("unit__home")
        ),
        key=lambda named: (named[1].casefold(), str(named[0].pk)),
    )
    counts: dict = {}
    for person, _name in people:
        counts[person.unit_id] = counts.get(person.unit_id, 0) + 1
    homes_shown = [
        (home, [(unit, counts.get(unit.pk, 0), teams.get(unit.pk, [])) for unit in rows])
        for home, rows in by_home.items()
    ]
    # The page names the organisation's people and where they live: a read, recorded.
    organisations_read_record(request.user, [organisation.pk], AuditAction.VIEW_HOMES)
    context = {
        "organisation": organisation,
        "homes": homes_shown,
        "units": units,
        "people": people,
        "unplaced": counts.get(None, 0),
        "logins": UnitTeamForm(organisation=organisation, user=request.user)
        .fields["login"]
        .queryset,
        "roles": services.UNIT_ROLES,
        "error": error,
    }
    return render(request, "dashboard/homes.html", context, status=status)
