"""Which people the people list and the shift view show: a unit, a name search and the status.

A unit (`?unit=<id>`, a wing or floor of one of the login's organisations' homes) is filtered in
SQL, inside the login's own care teams (dashboard.access.care_memberships): it only ever narrows
what the login sees. The choice is remembered in the login's session (both pages share it, until
"Everyone" is chosen or the login ends); another organisation's unit, an unknown id and a
malformed one are one and the same 400 (`unit: choose a unit from the list`), naming nothing, and
a remembered unit that stopped being the login's is forgotten.

Names are encrypted at rest, so a search is read in Python over the names the list has already
decrypted (the login's own care teams: tens, at most a few hundred people), without case or
accents ("zoe" finds "Zoë"). Archived and inactive people (memory.retention) are marked, and by
default left out; the page says how many it leaves out and how to show them.
"""

import unicodedata
import uuid
from dataclasses import dataclass
from itertools import groupby
from operator import attrgetter
from typing import TypeVar

from django.http import HttpRequest

from dashboard.params import BadParameter
from dashboard.sessions import is_poll
from memory.models import Organisation, OrganisationMembership, Person, Unit

# Longer than any name a person is given (display_name holds 200 characters).
QUERY_MAX = 200
SHOW_CHOICES = ("active", "all")
# The login's last unit, shared by the people list and the shift view.
UNIT_SESSION_KEY = "clara_unit"

T = TypeVar("T")


@dataclass(frozen=True)
class PeopleFilter:
    query: str = ""
    show_all: bool = False
    unit: Unit | None = None

    def as_params(self) -> str:
        """The query string that asks for this filter again (the list's minute poll)."""
        from urllib.parse import urlencode

        wanted = {"q": self.query} if self.query else {}
        if self.show_all:
            wanted["show"] = "all"
        if self.unit is not None:
            wanted["unit"] = str(self.unit.pk)
        return urlencode(wanted)


def people_filter_of(request: HttpRequest) -> PeopleFilter:
    """The filter a request asks for; BadParameter (a 400 naming it) for what it cannot be."""
    query = " ".join(request.GET.get("q", "").split())
    if len(query) > QUERY_MAX:
        raise BadParameter("q", f"must be at most {QUERY_MAX} characters.")
    show = request.GET.get("show") or "active"
    if show not in SHOW_CHOICES:
        raise BadParameter("show", f"must be one of: {', '.join(SHOW_CHOICES)}.")
    return PeopleFilter(query=query, show_all=show == "all", unit=_unit_of(request))


def _own_unit(user, raw) -> Unit | None:
    """The unit of that id if it is of one of the login's organisations; None otherwise (an
    unknown id, a malformed one, another organisation's: the same one query, or none)."""
    try:
        unit_id = uuid.UUID(str(raw))
    except ValueError:
        return None
    return (
        Unit.objects.select_related("home")
        .filter(pk=unit_id, home__organisation__members__user_id=user.pk)
        .first()
    )


def _unit_of(request: HttpRequest) -> Unit | None:
    """The unit asked for (remembered), or the one remembered; `?unit=` (empty) is everyone."""
    remembered = request.session.get(UNIT_SESSION_KEY)
    if "unit" in request.GET:
        raw = request.GET["unit"]
        unit = _own_unit(request.user, raw) if raw else None
        if raw and unit is None:
            raise BadParameter("unit", "choose a unit from the list.")
        chosen = str(unit.pk) if unit is not None else None
    elif remembered:
        unit = _own_unit(request.user, remembered)
        chosen = str(unit.pk) if unit is not None else None
    else:
        return None
    # Only what the caregiver chose is kept: a background poll saves nothing (dashboard.sessions).
    if chosen != remembered and not is_poll(request):
        if chosen is None:
            request.session.pop(UNIT_SESSION_KEY, None)
        else:
            request.session[UNIT_SESSION_KEY] = chosen
    return unit


def _folded(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def name_matches(name: str, query: str) -> bool:
    """Every word of the query is in the name, ignoring case and accents."""
    folded = _folded(name)
    return all(word in folded for word in _folded(query).split())


def is_hidden_by_default(person: Person) -> bool:
    return person.status in (Person.Status.ARCHIVED, Person.Status.INACTIVE)


def apply(items: list[T], wanted: PeopleFilter, *, person, name) -> tuple[list[T], int]:
    """The items the filter keeps, and how many it leaves out for their status alone (archived
    or inactive people whose names match): the page offers to show those."""
    # No query: no name asked for (each is worked out from the decrypted profile; thousands on
    # a care group's list).
    matching = (
        [item for item in items if name_matches(name(item), wanted.query)]
        if wanted.query
        else list(items)
    )
    if wanted.show_all:
        return matching, 0
    kept = [item for item in matching if not is_hidden_by_default(person(item))]
    return kept, len(matching) - len(kept)


def unit_choices(user, wanted: PeopleFilter, *, everyone: bool) -> dict:
    """What both pages need about units: the login's organisations' units by home (the select;
    none: no select), whether the login cares for anyone at all (a unit where it cares for
    no one is not "in no care team"), and how many urgent alerts nobody has yet are about its
    people outside the unit (a page limited to a unit says so: an alert is never hidden without a
    word). Two queries, three when a unit is chosen (four when it holds no one of the login's).
    """
    from dashboard import access
    from dashboard.alerting import shift
    from memory.conversations import homes

    organisation_ids = list(
        OrganisationMembership.objects.filter(user_id=user.pk).values_list(
            "organisation_id", flat=True
        )
    )
    units = homes.units_of(organisation_ids=organisation_ids)
    several = len({unit.home.organisation_id for unit in units}) > 1
    if several:
        names = dict(Organisation.objects.filter(pk__in=organisation_ids).values_list("pk", "name"))
    groups = [
        (f"{home.name} ({names[home.organisation_id]})" if several else home.name, list(rows))
        for home, rows in groupby(units, key=attrgetter("home"))
    ]
    chosen = wanted.unit
    return {
        "unit_groups": groups,
        "anyone": everyone or (chosen is not None and access.care_memberships(user).exists()),
        "urgent_elsewhere": shift.urgent_elsewhere(user=user, unit=chosen) if chosen else 0,
    }
