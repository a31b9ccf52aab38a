"""The shift's home view: everyone the caregiver may see, on one page (issue 18 item 6).

It leads with what needs a person (issue 29): every alert not resolved, the longest waiting
first, with who has it since when, and what was resolved this shift with its outcome
(dashboard/alerting/shift.py: two more queries).

Who is upset now (the most upset reading of the last UPSET_HOURS hours, in Clara's words:
a feeling and how upset, never what the person said), their open alerts, and who has not
talked with Clara today (midnight where the person lives). Sortable by name, last talk, upset
and open alerts; a sort is stable (ties stay in name order). Names are encrypted, so rows are
sorted in Python, as the people list does.

Four queries (five when someone may never have talked) whatever the number of residents: the memberships with their people and open-alert
counts, the recent readings grouped by person and feeling, the open alerts' newest headline,
and the audit rows. The table refreshes itself every 60 s with `X-Clara-Poll: 1`, so the poll
does not keep the login alive (dashboard/sessions.py); a poll is not audited again (it shows
what the page load disclosed and audited, refreshed: dashboard.access.poll_since).
"""

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from django.contrib.auth.decorators import login_required
from django.db.models import Count, Max
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from dashboard import access, params, people_filter, selectors, words
from dashboard.alerting import shift
from dashboard.models import AuditAction
from dashboard.people_filter import unit_choices
from memory.core.person import person_zone
from memory.models import Alert, DetectedEmotion, Person, Session

UPSET_HOURS = 3
# The most upset reading of the last hours at or above this reads as "upset now" (words.py:
# "unsettled" begins at 0.4, "upset" at 0.6).
UPSET_AT = 0.6
SORTS = {
    "name": "name",
    "last_talk": "last talk with Clara",
    "upset": "how upset now",
    "alerts": "open alerts",
}


@dataclass
class ShiftRow:
    person: Person
    name: str
    organisation: str
    zone: ZoneInfo
    last_talk: datetime | None  # None: never talked with Clara
    talked_today: bool
    open_alerts: int
    peak: float | None = None  # the most upset reading of the last hours, 0–1
    feeling: str | None = None  # the feeling most read in those hours
    peak_at: datetime | None = None
    alert_headline: str = ""
    alert_at: datetime | None = None
    url: str = ""  # the person page (reversed once for all rows: 200 reverses cost ~10 ms)

    @property
    def upset_now(self) -> bool:
        return self.peak is not None and self.peak >= UPSET_AT

    @property
    def upset_words(self) -> str:
        """'Upset · mostly anxious', in Clara's words (no quotation, no score)."""
        if self.peak is None:
            return ""
        upset = words.upset_words(self.peak)
        felt = words.feeling(self.feeling)
        return upset.capitalize() if felt == upset else f"{upset.capitalize()} · mostly {felt}"

    @property
    def level(self) -> str:
        if self.peak is None:
            return "unknown"
        if self.peak < 0.4:
            return "calm"
        return "unsettled" if self.peak < UPSET_AT else "upset"


def _sort_keys(rows: list[ShiftRow], sort: str) -> list[ShiftRow]:
    """Stable: by name first, then by the chosen column (most pressing first)."""
    rows = sorted(rows, key=lambda r: (r.name.casefold(), str(r.person.id)))
    if sort == "last_talk":  # longest without a talk first: who needs a visit
        rows.sort(key=lambda r: r.last_talk.timestamp() if r.last_talk else float("-inf"))
    elif sort == "upset":
        rows.sort(key=lambda r: -(r.peak if r.peak is not None else -1.0))
    elif sort == "alerts":
        rows.sort(key=lambda r: -r.open_alerts)
    return rows


def shift_rows(*, user, now: datetime, sort: str = "upset", unit=None) -> list[ShiftRow]:
    """Everyone in the login's care teams (its own organisations only), sorted; with `unit`,
    only those living in it (in SQL: a unit's 40 people cost what 40 people cost)."""
    memberships = access.care_memberships(user)
    if unit is not None:
        memberships = memberships.filter(person__unit_id=unit.pk)
    memberships = list(
        memberships.select_related("person__organisation", "person__unit__home").annotate(
            open_alerts=selectors._open_alerts_subquery()
        )
    )
    if not memberships:
        return []
    ids = [m.person_id for m in memberships]
    recent: dict[uuid.UUID, dict] = {}
    for row in (
        DetectedEmotion.objects.filter(
            person_id__in=ids, timestamp__gte=now - timedelta(hours=UPSET_HOURS), timestamp__lte=now
        )
        .values("person_id", "emotion")
        .annotate(readings=Count("id"), peak=Max("distress_score"), last=Max("timestamp"))
        .order_by()
    ):
        seen = recent.setdefault(row["person_id"], {"peak": 0.0, "readings": 0, "at": None})
        if row["peak"] is not None and row["peak"] >= seen["peak"]:
            seen["peak"], seen["at"] = row["peak"], row["last"]
        if row["readings"] > seen["readings"]:
            seen["readings"], seen["feeling"] = row["readings"], row["emotion"]
    # A person's last_active_at starts at their creation; equal to it, they may never have
    # talked (or talked in the very instant they were made): one query asks, for those only.
    unsure = [m.person_id for m in memberships if m.person.last_active_at == m.person.created_at]
    talked = set(
        Session.objects.filter(person_id__in=unsure, message_count__gt=0)
        .values_list("person_id", flat=True)
        .distinct()
        if unsure
        else ()
    )
    latest_alert: dict[uuid.UUID, dict] = {}
    for row in (
        Alert.objects.filter(person_id__in=ids, status__in=selectors.NOT_ACKNOWLEDGED)
        .order_by("-created_at")
        .values("person_id", "kind", "detail", "created_at")
    ):
        latest_alert.setdefault(row["person_id"], row)
    placeholder = uuid.UUID(int=0)
    person_url = reverse("dashboard:person", args=[placeholder])
    rows = []
    for m in memberships:
        person = m.person
        zone = person_zone(person)
        last = person.last_active_at
        if last == person.created_at and person.id not in talked:
            last = None
        midnight = datetime.combine(now.astimezone(zone).date(), datetime.min.time(), tzinfo=zone)
        seen = recent.get(person.id)
        alert = latest_alert.get(person.id)
        rows.append(
            ShiftRow(
                person=person,
                name=selectors.person_name(person),
                organisation=person.organisation.name,
                zone=zone,
                last_talk=last,
                talked_today=last is not None and last >= midnight,
                open_alerts=m.open_alerts,
                peak=seen["peak"] if seen else None,
                feeling=seen.get("feeling") if seen else None,
                peak_at=seen["at"] if seen else None,
                alert_headline=words.alert_headline(alert["kind"], alert["detail"])
                if alert
                else "",
                alert_at=alert["created_at"] if alert else None,
                url=person_url.replace(str(placeholder), str(person.id)),
            )
        )
    return _sort_keys(rows, sort)


def _sort_of(request: HttpRequest) -> str:
    sort = request.GET.get("sort") or "upset"
    if sort not in SORTS:
        raise params.BadParameter("sort", f"must be one of: {', '.join(SORTS)}.")
    return sort


@login_required
@require_GET
@vary_on_headers("HX-Request")
def home(request: HttpRequest) -> HttpResponse:
    """The shift at a glance; htmx (the minute's poll, a new sort) gets the table alone."""
    try:
        sort = _sort_of(request)
        wanted = people_filter.people_filter_of(request)
    except params.BadParameter as bad:
        return bad.response()
    now = timezone.now()
    everyone = shift_rows(user=request.user, now=now, sort=sort, unit=wanted.unit)
    # What needs a person covers everyone, archived and inactive people too.
    needs = shift.needs_a_person(
        user=request.user, now=now, people=[row.person for row in everyone]
    )
    rows, hidden = people_filter.apply(
        everyone, wanted, person=lambda row: row.person, name=lambda row: row.name
    )
    since = access.poll_since(request)
    if not (since and access.recorded_since(request.user, since, action=AuditAction.VIEW_HOME)):
        access.organisations_read_record(
            request.user, {row.person.organisation_id for row in everyone}, AuditAction.VIEW_HOME
        )
    context = {
        **unit_choices(request.user, wanted, everyone=bool(everyone)),
        "needs": needs,
        "rows": rows,
        "hidden": hidden,
        "filter": wanted,
        "sort": sort,
        "sorts": SORTS,
        "upset_hours": UPSET_HOURS,
        "upset_count": sum(row.upset_now for row in rows),
        "alert_people": sum(row.open_alerts > 0 for row in rows),
        "quiet_count": sum(not row.talked_today for row in rows),
        "several": len({row.person.organisation_id for row in rows}) > 1,
        "now": now,
    }
    template = "dashboard/home.html" + ("#shift-table" if request.htmx else "")
    return render(request, template, context)
