"""Care teams given per unit: a login with a role for a whole unit of a home (UnitTeamMembership)
is in the care team of every person who lives in it.

One rule keeps the per-person rows (CareTeamMembership.granted_by_unit) in step, in the
transaction of the change that moves them: when a unit's team changes (`unit_team_set`,
`unit_team_remove`) and when a person moves (`on_person_moved`, subscribed to memory's
`person_moved` in DashboardConfig.ready). A membership given to a person alone (granted_by_unit
null) is never created, changed or removed here: it wins over the unit's (one row per person and
login), and survives every move. The access check (dashboard.access) reads care teams only, so it
is unchanged, and so are the roles that act on urgent alerts (dashboard/alerting/rights.py).

Only an organisation's admins change units' teams, never their own role in one (rule 8: nobody
grants themselves a right; another admin does it). Each change is audited (EDIT_UNIT_TEAM). No
change here leaves a person who had a care-team admin without one (a move, a login taken off a
unit's team, a unit's admin made staff): it is refused, as a member's own change is.
"""

import uuid

from django.db import transaction

from dashboard.access import audit_record
from dashboard.models import AuditAction, CareRole, CareTeamMembership, UnitTeamMembership
from memory.conversations.signals import PersonMoved
from memory.models import OrganisationMembership, Person, Unit

# A unit's team takes staff and team admins; family belong to one person's care team.
UNIT_ROLES = (CareRole.STAFF, CareRole.ADMIN)
_LAST_ADMIN = (
    "That would leave someone in the unit with nobody to run their care team: give the unit "
    "another team admin, or make someone in their care team admin first."
)


class NotAllowed(Exception):
    """The change is refused; `field` names the form field to show it on."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _grant(*, unit_id: uuid.UUID, person_ids=None, teams=None) -> None:
    """Give the unit's team (or `teams` of it) a membership of each person in the unit (or of
    `person_ids`) who has none yet with that login; existing rows, a person's own above all,
    are left as they are (ON CONFLICT DO NOTHING on uniq_care_team_person_user)."""
    if teams is None:
        teams = list(UnitTeamMembership.objects.filter(unit_id=unit_id))
    if not teams:
        return
    if person_ids is None:
        person_ids = list(Person.objects.filter(unit_id=unit_id).values_list("pk", flat=True))
    CareTeamMembership.objects.bulk_create(
        [
            CareTeamMembership(
                person_id=person_id,
                user_id=team.user_id,
                role=team.role,
                can_see_transcripts=team.can_see_transcripts,
                granted_by_unit_id=unit_id,
            )
            for person_id in person_ids
            for team in teams
        ],
        ignore_conflicts=True,
        batch_size=500,
    )


def _admins_of(person_ids) -> set:
    """Which of these people have a care-team admin."""
    return set(
        CareTeamMembership.objects.filter(
            person_id__in=person_ids, role=CareRole.ADMIN
        ).values_list("person_id", flat=True)
    )


def _keep_an_admin(person_ids, had_admin: set, field: str, message: str) -> None:
    """NotAllowed (the change's transaction then rolls back) when someone who had a care-team
    admin before it has none after: as a member's own change never takes a team's last admin
    (dashboard.services), a unit's change does not either."""
    if had_admin - _admins_of(person_ids):
        raise NotAllowed(field, message)


def on_person_moved(sender, event: PersonMoved, **kwargs) -> None:
    """A person moved: what their old unit gave goes, what their new unit gives comes (in the
    move's transaction). Refused (NotAllowed) when it would leave their care team without an
    admin."""
    had_admin = _admins_of([event.person_id])
    if event.from_unit_id is not None:
        CareTeamMembership.objects.filter(
            person_id=event.person_id, granted_by_unit_id=event.from_unit_id
        ).delete()
    if event.to_unit_id is not None:
        _grant(unit_id=event.to_unit_id, person_ids=[event.person_id])
    _keep_an_admin(
        [event.person_id],
        had_admin,
        "unit",
        "That move would leave nobody to run their care team: give the unit a team admin, or "
        "make someone in their care team admin first.",
    )


def unit_team_set(
    *, unit: Unit, user, role: str, can_see_transcripts: bool, by
) -> UnitTeamMembership:
    """Give `user` this role (and transcript right) for everyone in the unit, now and later;
    a login already in the unit's team gets the new role in every row the unit gave.

    NotAllowed: `by` changing their own role (rule 8), a login not of the unit's organisation
    (the words for an unknown one), a role a unit does not give. Audited (EDIT_UNIT_TEAM).
    """
    organisation_id = unit.home.organisation_id
    if role not in UNIT_ROLES:
        raise NotAllowed("role", "Choose care staff or team admin.")
    if user.pk == by.pk:
        raise NotAllowed("login", "Another admin of the organisation gives you a unit's role.")
    if not OrganisationMembership.objects.filter(
        user_id=user.pk, organisation_id=organisation_id
    ).exists():
        raise NotAllowed("login", "Choose someone with a login in this organisation.")
    with transaction.atomic():
        people = list(Person.objects.filter(unit_id=unit.pk).values_list("pk", flat=True))
        had_admin = _admins_of(people)
        team, _ = UnitTeamMembership.objects.update_or_create(
            unit=unit,
            user=user,
            defaults={"role": role, "can_see_transcripts": can_see_transcripts},
        )
        CareTeamMembership.objects.filter(granted_by_unit=unit, user_id=user.pk).update(
            role=role, can_see_transcripts=can_see_transcripts
        )
        _grant(unit_id=unit.pk, teams=[team])
        _keep_an_admin(people, had_admin, "role", _LAST_ADMIN)
        audit_record(
            user=by,
            person_id=None,
            action=AuditAction.EDIT_UNIT_TEAM,
            object_id=str(unit.pk),
            organisation_id=organisation_id,
        )
    return team


def unit_team_remove(*, team: UnitTeamMembership, by) -> None:
    """Take a login out of the unit's team, and out of every care team the unit gave it (never
    one given to a person alone). Audited (EDIT_UNIT_TEAM)."""
    with transaction.atomic():
        people = list(Person.objects.filter(unit_id=team.unit_id).values_list("pk", flat=True))
        had_admin = _admins_of(people)
        CareTeamMembership.objects.filter(
            granted_by_unit_id=team.unit_id, user_id=team.user_id
        ).delete()
        team.delete()
        _keep_an_admin(people, had_admin, "team", _LAST_ADMIN)
        audit_record(
            user=by,
            person_id=None,
            action=AuditAction.EDIT_UNIT_TEAM,
            object_id=str(team.unit_id),
            organisation_id=team.unit.home.organisation_id,
        )
