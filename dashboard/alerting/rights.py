"""Who may act on an alert: claim it ("I'm dealing with it") and resolve it with its outcome.

Receiving an alert is not acting on it: a member chooses which alerts reach them
(AlertRouting), but only someone their organisation allows may claim or resolve, so an alert
always has an owner who can do something about it. Nobody grants themselves this right: it
follows from the role a team admin gave them.

- A care-team member acts on their person's alerts when their role allows it: team admins and
  care staff.
"""

from dashboard.models import CareRole, CareTeamMembership
from memory.models import Alert

ACTING_ROLES = (CareRole.ADMIN, CareRole.STAFF)


def may_act(membership: CareTeamMembership | None) -> bool:
    """Whether this care-team member may claim and resolve their person's alerts."""
    return membership is not None and membership.role in ACTING_ROLES


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


def why_not(membership: CareTeamMembership | None) -> str:
    """Why this member may not act, kindly, in a sentence (empty if they may)."""
    if may_act(membership):
        return ""
    return (
        "The care staff and the team's admins answer alerts, and they have been told. "
        "You can see here who is dealing with it."
    )
