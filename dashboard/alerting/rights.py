"""Who may act on an alert: claim it ("I'm dealing with it") and resolve it with its outcome.

Receiving an alert is not acting on it: a member chooses which alerts reach them
(AlertRouting), but only someone their organisation allows may claim or resolve, so an alert
always has an owner who can do something about it. Nobody grants themselves this right: it
follows from the role a team admin gave them and the rules their organisation's admins set
(OrganisationAlerting).

- The organisation says which care-team roles act (default: team admins and care staff).
- In a care home, family never act: they hear about urgent alerts only if they chose to, and
  see who is dealing with them.
- Outside a care home (care at home, family carers at home), a family member whom a team admin
  marked as the person's named carer acts; family act too where the organisation lets them.
- The organisation's duty people (its admins and its on-call list) act on any of its alerts,
  so an alert about someone with no care team yet still has an owner; an alert with no person
  at all (an anonymous session's) is answered by them and by its care staff and team admins
  (a role the organisation lets act, in any of its care teams): its "staff".
"""

import uuid
from datetime import datetime, time
from zoneinfo import ZoneInfo

from dashboard.alerting.models import CareSetting, OnCall, OrganisationAlerting
from dashboard.models import CareRole, CareTeamMembership
from memory.models import Alert, OrganisationMembership, Session

DEFAULT_ACTING_ROLES = (CareRole.ADMIN, CareRole.STAFF)
ROLE_WORDS = {
    CareRole.ADMIN: "team admins",
    CareRole.STAFF: "care staff",
    CareRole.FAMILY: "family",
}


def settings_for(organisation_id: uuid.UUID | None) -> OrganisationAlerting:
    """The organisation's rules for alerts (unsaved defaults when it has set none)."""
    found = (
        OrganisationAlerting.objects.filter(organisation_id=organisation_id).first()
        if organisation_id
        else None
    )
    return found or OrganisationAlerting(organisation_id=organisation_id)


def _rules(membership: CareTeamMembership, rules: OrganisationAlerting | None):
    return rules or settings_for(membership.person.organisation_id)


def may_act(
    membership: CareTeamMembership | None, rules: OrganisationAlerting | None = None
) -> bool:
    """Whether this care-team member may claim and resolve their person's alerts."""
    if membership is None:
        return False
    rules = _rules(membership, rules)
    if membership.role == CareRole.FAMILY:
        if rules.care_setting == CareSetting.CARE_HOME:
            return False
        return membership.named_carer or CareRole.FAMILY in rules.acting_roles
    return membership.role in rules.acting_roles


def family_opt_in(membership: CareTeamMembership, rules: OrganisationAlerting | None = None):
    """Whether this member hears about urgent alerts only if they choose to (family in a care
    home: the staff on shift answer them)."""
    return (
        membership.role == CareRole.FAMILY
        and _rules(membership, rules).care_setting == CareSetting.CARE_HOME
    )


def membership_of(user, alert: Alert) -> CareTeamMembership | None:
    """The login's membership of the alert's person's care team, within the person's
    organisation (as dashboard.access counts it); None for anyone else."""
    if alert.person_id is None or user is None or not user.is_authenticated:
        return None
    return (
        CareTeamMembership.objects.filter(
            person_id=alert.person_id,
            user_id=user.pk,
            person__organisation__members__user_id=user.pk,
        )
        .select_related("person__organisation")
        .first()
    )


def organisation_of(alert: Alert) -> uuid.UUID | None:
    """The alert's organisation: its person's, or (no person yet) its session's."""
    if alert.person_id:
        return alert.person.organisation_id
    if alert.session_id:
        return (
            Session.objects.filter(id=alert.session_id)
            .values_list("organisation_id", flat=True)
            .first()
        )
    return None


def on_duty(user, organisation_id: uuid.UUID | None) -> bool:
    """The organisation's admin, or on its on-call list (whatever the hour)."""
    if organisation_id is None or user is None or not user.is_authenticated:
        return False
    return (
        OrganisationMembership.objects.filter(
            user_id=user.pk, organisation_id=organisation_id, is_admin=True
        ).exists()
        or OnCall.objects.filter(
            user_id=user.pk,
            organisation_id=organisation_id,
            user__organisation_memberships__organisation_id=organisation_id,
        ).exists()
    )


def organisation_staff(user, organisation_id: uuid.UUID | None) -> bool:
    """Who answers (and sees) the organisation's alerts that have no person: its duty people,
    and logins in a role it lets act in any of its care teams (never family)."""
    if organisation_id is None or user is None or not user.is_authenticated:
        return False
    if not OrganisationMembership.objects.filter(
        user_id=user.pk, organisation_id=organisation_id
    ).exists():
        return False
    if on_duty(user, organisation_id):
        return True
    roles = [r for r in settings_for(organisation_id).acting_roles if r != CareRole.FAMILY]
    return CareTeamMembership.objects.filter(
        user_id=user.pk, person__organisation_id=organisation_id, role__in=roles
    ).exists()


def may_act_on(alert: Alert, user) -> bool:
    """Whether `user` may claim and resolve this alert."""
    if alert.person_id is None:
        return organisation_staff(user, organisation_of(alert))
    membership = membership_of(user, alert)
    if membership is not None:
        return may_act(membership)
    return on_duty(user, alert.person.organisation_id)


def may_see(alert: Alert, user) -> bool:
    """Whether `user` may see this alert now: the person's care team or the organisation's duty
    people; with no person, the organisation's staff."""
    if alert.person_id is None:
        return organisation_staff(user, organisation_of(alert))
    return membership_of(user, alert) is not None or on_duty(user, alert.person.organisation_id)


def _within(now_local: time, start: time | None, end: time | None) -> bool:
    if start is None or end is None or start == end:
        return True
    return start <= now_local < end if start < end else (now_local >= start or now_local < end)


def on_call_now(organisation_id: uuid.UUID, *, now: datetime) -> list:
    """The logins on the organisation's on-call list whose hours hold `now` (its zone), in the
    order they were put on it; only logins still in the organisation."""
    rules = settings_for(organisation_id)
    try:
        zone = ZoneInfo(rules.time_zone or "UTC")
    except (KeyError, ValueError):
        zone = ZoneInfo("UTC")
    local = now.astimezone(zone).time()
    entries = (
        OnCall.objects.filter(
            organisation_id=organisation_id,
            user__organisation_memberships__organisation_id=organisation_id,
        )
        .select_related("user")
        .order_by("created_at", "id")
    )
    return [e.user for e in entries if _within(local, e.hours_start, e.hours_end)]


def organisation_admins(organisation_id: uuid.UUID) -> list:
    return [
        m.user
        for m in OrganisationMembership.objects.filter(
            organisation_id=organisation_id, is_admin=True
        )
        .select_related("user")
        .order_by("created_at", "id")
    ]


def who_acts(rules: OrganisationAlerting) -> str:
    """'team admins and care staff' (and the named carer, outside a care home)."""
    roles = [
        ROLE_WORDS[role]
        for role in (CareRole.ADMIN, CareRole.STAFF, CareRole.FAMILY)
        if role in rules.acting_roles
        and not (role == CareRole.FAMILY and rules.care_setting == CareSetting.CARE_HOME)
    ]
    if rules.care_setting != CareSetting.CARE_HOME and CareRole.FAMILY not in rules.acting_roles:
        roles.append("the named carer")
    return " and ".join([", ".join(roles[:-1]), roles[-1]] if len(roles) > 1 else roles)


def why_not(
    membership: CareTeamMembership | None, rules: OrganisationAlerting | None = None
) -> str:
    """Why this member may not act, kindly, in a sentence or two (empty if they may)."""
    if membership is None or may_act(membership, rules):
        return ""
    rules = _rules(membership, rules)
    if membership.role == CareRole.FAMILY and rules.care_setting == CareSetting.CARE_HOME:
        return (
            "In a care home the staff on shift answer alerts, and they have been told. "
            "You can see here who is dealing with it, and since when."
        )
    return (
        f"Here the {who_acts(rules)} answer alerts, and they have been told. "
        "You can see here who is dealing with it, and since when."
    )
