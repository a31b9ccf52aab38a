"""What needs a person now, for the shift view and the people list: every alert not resolved
about the people a login may see, and, for an organisation's staff and admins, its alerts that
have no person yet (an anonymous session's); those nobody has yet first, then those someone has;
urgent before the rest; the longest waiting first; with how long each has waited and who has it
since when. Then what was resolved this shift (the last SHIFT_HOURS), with its outcome.

Two queries whatever the number of people: the alerts not resolved, and those resolved lately
(three when only the people's ids are given: the people with such an alert are then read).
Names of people are read in Python (encrypted); caregivers' names are their logins' names.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from django.db.models import F, Q, QuerySet
from django.urls import reverse

from dashboard import access, selectors, words
from dashboard.alerting.models import OnCall
from dashboard.models import CareRole
from memory.core.person import person_zone
from memory.models import Alert, OrganisationMembership, Person

SHIFT_HOURS = 12
# Alerts that can wait (more upset than usual, more questions) beyond this many are counted,
# not listed: urgent ones are always listed.
OTHERS_SHOWN = 10
_PEOPLE = (
    "claimed_by__username",
    "claimed_by__first_name",
    "claimed_by__last_name",
    "resolved_by__username",
    "resolved_by__first_name",
    "resolved_by__last_name",
)


@dataclass
class ShiftAlert:
    id: int
    person: Person | None
    person_name: str
    headline: str
    urgent: bool
    status: str
    created: datetime
    zone: ZoneInfo
    claimed_by: str = ""
    claimed_at: datetime | None = None
    resolved_by: str = ""
    resolved_at: datetime | None = None
    outcome: str = ""
    url: str = ""

    @property
    def waiting(self) -> bool:
        """Nobody has it yet."""
        return self.status == Alert.Status.OPEN


@dataclass
class NeedsAPerson:
    waiting: list[ShiftAlert]
    resolved: list[ShiftAlert]
    more: int  # alerts that can wait, not listed
    every_open: list[ShiftAlert]  # listed or not (people lists lead with them)
    shift_hours: int = SHIFT_HOURS

    @property
    def nobody_has(self) -> int:
        return sum(a.waiting for a in self.waiting)

    @property
    def total(self) -> int:
        return len(self.waiting) + self.more


def _name(row: dict, who: str) -> str:
    full = f"{row[f'{who}__first_name'] or ''} {row[f'{who}__last_name'] or ''}".strip()
    return full or row[f"{who}__username"] or ""


def _row(row: dict, people: dict[uuid.UUID, Person]) -> ShiftAlert:
    person = people.get(row["person_id"])
    zone = person_zone(person) if person else ZoneInfo("UTC")
    if person is not None:
        url = reverse("dashboard:person", args=[person.id]) + f"#alert-{row['id']}"
    else:
        url = (
            reverse("dashboard:organisation_alerts", args=[row["session__organisation__slug"]])
            + f"#alert-{row['id']}"
        )
    return ShiftAlert(
        id=row["id"],
        person=person,
        person_name=selectors.person_name(person) if person else "Someone not yet known",
        headline=words.alert_headline(row["kind"], row["detail"]),
        urgent=row["kind"] == Alert.Kind.ESCALATION,
        status=row["status"],
        created=row["created_at"],
        zone=zone,
        claimed_by=_name(row, "claimed_by") if row["claimed_at"] else "",
        claimed_at=row["claimed_at"],
        resolved_by=_name(row, "resolved_by") if row["resolved_at"] else "",
        resolved_at=row["resolved_at"],
        outcome=words.outcome_words(row["outcome"], row["outcome_note"]) if row["outcome"] else "",
        url=url,
    )


def _no_person_yet(user) -> Q:
    """The alerts with no person of the organisations whose staff the login is (its admins, its
    on-call list, its care staff and team admins: rights.organisation_staff), as one filter."""
    admin_of = OrganisationMembership.objects.filter(user_id=user.pk, is_admin=True)
    on_call_for = OnCall.objects.filter(
        user_id=user.pk, user__organisation_memberships__organisation_id=F("organisation_id")
    )
    staff_of = access.care_memberships(user).filter(role__in=[CareRole.ADMIN, CareRole.STAFF])
    return Q(person__isnull=True) & (
        Q(session__organisation_id__in=admin_of.values("organisation_id"))
        | Q(session__organisation_id__in=on_call_for.values("organisation_id"))
        | Q(session__organisation_id__in=staff_of.values("person__organisation_id"))
    )


def needs_a_person(
    *,
    user,
    now: datetime,
    people: list[Person] | None = None,
    person_ids: QuerySet | None = None,
) -> NeedsAPerson:
    """The alerts about the login's people that are not resolved, and those resolved this
    shift. `people`: the login's people when the caller has read them already (one query less);
    `person_ids`: a subquery of their ids when it has not (a care group's thousands): then only
    the people with such an alert are read (one query more)."""
    if people is None and person_ids is None:
        people = [m.person for m in access.care_memberships(user).select_related("person")]
    known = {person.id: person for person in people} if people is not None else None
    allowed = list(known) if known is not None else person_ids
    fields = (
        "id",
        "person_id",
        "kind",
        "detail",
        "status",
        "created_at",
        "claimed_at",
        "resolved_at",
        "outcome",
        "outcome_note",
        "session__organisation__slug",
        *_PEOPLE,
    )
    mine = Q(person_id__in=allowed) | _no_person_yet(user)
    open_found = list(
        Alert.objects.filter(mine, status__in=selectors.NOT_ACKNOWLEDGED).values(*fields)
    )  # idx_alerts_person_created; the alerts with no person are few
    resolved_found = list(
        Alert.objects.filter(
            mine, status=Alert.Status.RESOLVED, resolved_at__gte=now - timedelta(hours=SHIFT_HOURS)
        ).values(*fields)  # idx_alerts_person_resolved
    )
    if known is None:
        known = Person.objects.in_bulk(
            {row["person_id"] for row in open_found + resolved_found if row["person_id"]}
        )
    open_rows = [_row(row, known) for row in open_found]
    # Nobody has it before someone has it; urgent before what can wait; the longest waiting first.
    open_rows.sort(key=lambda a: (not a.urgent, not a.waiting, a.created, a.id))
    urgent = [a for a in open_rows if a.urgent]
    others = [a for a in open_rows if not a.urgent]
    resolved = sorted(
        (_row(row, known) for row in resolved_found), key=lambda a: a.resolved_at, reverse=True
    )
    return NeedsAPerson(
        waiting=urgent + others[:OTHERS_SHOWN],
        resolved=resolved,
        more=max(len(others) - OTHERS_SHOWN, 0),
        every_open=open_rows,
    )


def lead_order(needs: NeedsAPerson) -> dict[uuid.UUID, tuple]:
    """Where each person with an alert not resolved goes in a list that leads with them, in the
    order of the alerts themselves (urgent first, nobody-has-it first, the longest waiting
    first). People without one are not in it."""
    order: dict[uuid.UUID, tuple] = {}
    for alert in needs.every_open:
        if alert.person is not None:
            key = (not alert.urgent, not alert.waiting, alert.created.timestamp())
            order[alert.person.id] = min(order.get(alert.person.id, key), key)
    return order


def urgent_elsewhere(*, user, unit) -> int:
    """How many urgent alerts nobody has yet are about the login's people outside `unit` (people
    in no unit included): a page limited to a unit says so. One COUNT query."""
    outside = access.care_memberships(user).exclude(person__unit_id=unit.pk).values("person_id")
    return Alert.objects.filter(
        person_id__in=outside, kind=Alert.Kind.ESCALATION, status=Alert.Status.OPEN
    ).count()
