"""Noise, measured: how many of each person's urgent alerts turned out to be false alarms, week
by week (from the outcomes people chose when they resolved them), for the team admins who look
after them. The signal the recognition of urgent moments needs, per person: a recogniser that
is too eager for one person shows as their false alarms climbing.

Weeks start on Monday where the person lives; an alert counts in the week it was raised. One
query whatever the number of people; the weeks are counted in Python (a few alerts a week).
"""

import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from dashboard import access, selectors
from dashboard.models import AuditAction, AuditEvent, CareRole
from memory.core.person import person_zone
from memory.models import Alert, Person

WEEKS = 8


@dataclass
class Week:
    start: date
    urgent: int = 0
    false_alarms: int = 0
    resolved: int = 0


@dataclass
class Noise:
    person: Person
    name: str
    weeks: list[Week] = field(default_factory=list)

    @property
    def false_alarms(self) -> int:
        return sum(w.false_alarms for w in self.weeks)

    @property
    def urgent(self) -> int:
        return sum(w.urgent for w in self.weeks)


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def false_alarms_by_week(*, people: list[Person], now: datetime, weeks: int = WEEKS) -> list[Noise]:
    """Each person's urgent alerts and false alarms in each of the last `weeks` weeks (this
    week last), most false alarms first."""
    if not people:
        return []
    starts = {}
    rows = {}
    earliest = now
    for person in people:
        this_week = _monday(now.astimezone(person_zone(person)).date())
        starts[person.id] = [this_week - timedelta(weeks=n) for n in range(weeks - 1, -1, -1)]
        rows[person.id] = Noise(
            person=person,
            name=selectors.person_name(person),
            weeks=[Week(start=s) for s in starts[person.id]],
        )
        first = datetime.combine(
            starts[person.id][0], datetime.min.time(), tzinfo=person_zone(person)
        )
        earliest = min(earliest, first)
    found = Alert.objects.filter(
        person_id__in=[p.id for p in people],
        kind=Alert.Kind.ESCALATION,
        created_at__gte=earliest,
        created_at__lte=now,
    ).values_list("person_id", "created_at", "status", "outcome")  # idx_alerts_person_created
    by_id: dict[uuid.UUID, Person] = {p.id: p for p in people}
    for person_id, created, status, outcome in found:
        week = _monday(created.astimezone(person_zone(by_id[person_id])).date())
        noise = rows[person_id]
        index = (week - noise.weeks[0].start).days // 7
        if not 0 <= index < len(noise.weeks):
            continue
        cell = noise.weeks[index]
        cell.urgent += 1
        if status == Alert.Status.RESOLVED:
            cell.resolved += 1
        if outcome == Alert.Outcome.FALSE_ALARM:
            cell.false_alarms += 1
    return sorted(rows.values(), key=lambda n: (-n.false_alarms, n.name.casefold()))


def admin_people(user) -> list[Person]:
    """The people whose care team the login is an admin of (its own organisations only)."""
    return [
        m.person
        for m in access.care_memberships(user)
        .filter(role=CareRole.ADMIN)
        .select_related("person__organisation")
    ]


@login_required
@require_GET
def false_alarms(request: HttpRequest) -> HttpResponse:
    """False alarms per person per week, for the team admins of those people; audited once per
    organisation shown (as the shift view is). Anyone who is no team admin sees no one."""
    people = admin_people(request.user)
    rows = false_alarms_by_week(people=people, now=timezone.now())
    AuditEvent.objects.bulk_create(
        AuditEvent(
            user=request.user,
            username=request.user.get_username(),
            organisation_id=organisation_id,
            action=AuditAction.VIEW_FALSE_ALARMS,
        )
        for organisation_id in sorted({p.organisation_id for p in people})
    )
    weeks = rows[0].weeks if rows else []
    return render(
        request, "alerting/false_alarms.html", {"rows": rows, "weeks": weeks, "count": WEEKS}
    )
