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
"""

import uuid

from dashboard.alerting.models import CareSetting, OrganisationAlerting
from dashboard.models import CareRole, CareTeamMembership
from memory.models import Alert

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


def may_act_on(alert: Alert, user) -> bool:
    """Whether `user` may claim and resolve this alert."""
    return may_act(membership_of(user, alert))


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
