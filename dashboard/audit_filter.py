"""The organisation audit's filters: by person, login, kind of action and days (issue 32 item 4).

Read from the page's query string strictly (a bad value is a 400 naming it, dashboard.params);
a person is one of the organisation's own (any other id, unknown or another organisation's, is
the same 400). Applied to both of the audit's sources: the dashboard's rows (AuditEvent) and
the bot API's, MCP's and operators' (AccessEvent). Days are UTC days, as the page shows times.
"""

import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from urllib.parse import urlencode

from django.db.models import Q, QuerySet
from django.http import HttpRequest

from dashboard.models import AuditAction
from dashboard.params import BadParameter, day
from memory.models import AccessAction, Organisation, Person

LOGIN_MAX = 160
DASHBOARD, ELSEWHERE = "dashboard", "api"


def kind_choices() -> list[tuple[str, list[tuple[str, str]]]]:
    """The kinds a filter offers, grouped by where they happen; values are "<source>:<code>"."""
    return [
        ("On the dashboard", [(f"{DASHBOARD}:{v}", label) for v, label in AuditAction.choices]),
        (
            "Bots, tools and operators",
            [(f"{ELSEWHERE}:{v}", label) for v, label in AccessAction.choices],
        ),
    ]


@dataclass(frozen=True)
class AuditFilter:
    person: Person | None = None
    login: str = ""
    kind: str = ""  # "<source>:<code>", or empty for every kind
    since: date | None = None
    until: date | None = None
    # What the query string said, to write back into the form and the page links.
    raw: dict = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return bool(self.person or self.login or self.kind or self.since or self.until)

    def query(self) -> str:
        return urlencode({k: v for k, v in self.raw.items() if v})

    def _window(self) -> Q:
        where = Q()
        if self.since:
            where &= Q(at__gte=datetime.combine(self.since, time.min, tzinfo=UTC))
        if self.until:
            where &= Q(
                at__lt=datetime.combine(self.until + timedelta(days=1), time.min, tzinfo=UTC)
            )
        if self.person:
            where &= Q(person_id=self.person.pk)
        return where

    def dashboard_rows(self, rows: QuerySet) -> QuerySet:
        if self.kind and not self.kind.startswith(f"{DASHBOARD}:"):
            return rows.none()
        rows = rows.filter(self._window())
        if self.kind:
            rows = rows.filter(action=self.kind.split(":", 1)[1])
        if self.login:
            rows = rows.filter(username__iexact=self.login)
        return rows

    def access_rows(self, rows: QuerySet) -> QuerySet:
        if self.kind and not self.kind.startswith(f"{ELSEWHERE}:"):
            return rows.none()
        rows = rows.filter(self._window())
        if self.kind:
            rows = rows.filter(action=self.kind.split(":", 1)[1])
        if self.login:
            # As the page shows them: an API key by its prefix, an operator by their login.
            rows = rows.filter(
                Q(actor__iexact=self.login)
                | Q(actor__iexact=f"key:{self.login}")
                | Q(actor__iexact=f"user:{self.login}")
            )
        return rows


def audit_filter_of(request: HttpRequest, organisation: Organisation) -> AuditFilter:
    """The filter the page asks for; BadParameter for anything it cannot be."""
    raw = {name: request.GET.get(name, "").strip() for name in ("person", "login", "kind")}
    raw |= {name: request.GET.get(name, "") for name in ("from", "to")}
    person = None
    if raw["person"]:
        try:
            person_id = uuid.UUID(raw["person"])
        except ValueError:
            person_id = None
        person = Person.objects.filter(pk=person_id, organisation=organisation).first()
        if person is None:
            raise BadParameter("person", "choose someone from the list.")
    if len(raw["login"]) > LOGIN_MAX:
        raise BadParameter("login", f"must be at most {LOGIN_MAX} characters.")
    kinds = {value for _group, options in kind_choices() for value, _label in options}
    if raw["kind"] and raw["kind"] not in kinds:
        raise BadParameter("kind", "choose a kind from the list.")
    since = day(request, "from", default=None)
    until = day(request, "to", default=None)
    if since and until and since > until:
        raise BadParameter("to", "must be the same day as 'from' or after it.")
    return AuditFilter(
        person=person, login=raw["login"], kind=raw["kind"], since=since, until=until, raw=raw
    )
