"""Which people the people list and the shift view show: a name search and the person's status.

Names are encrypted at rest, so a search is read in Python over the names the list has already
decrypted (the login's own care teams: tens, at most a few hundred people), without case or
accents ("zoe" finds "Zoë"). Archived and inactive people (memory.retention) are marked, and by
default left out; the page says how many it leaves out and how to show them.
"""

import unicodedata
from dataclasses import dataclass
from typing import TypeVar

from django.http import HttpRequest

from dashboard.params import BadParameter
from memory.models import Person

# Longer than any name a person is given (display_name holds 200 characters).
QUERY_MAX = 200
SHOW_CHOICES = ("active", "all")

T = TypeVar("T")


@dataclass(frozen=True)
class PeopleFilter:
    query: str = ""
    show_all: bool = False

    def as_params(self) -> str:
        """The query string that asks for this filter again (the list's minute poll)."""
        from urllib.parse import urlencode

        wanted = {"q": self.query} if self.query else {}
        if self.show_all:
            wanted["show"] = "all"
        return urlencode(wanted)


def people_filter_of(request: HttpRequest) -> PeopleFilter:
    """The filter a request asks for; BadParameter (a 400 naming it) for what it cannot be."""
    query = " ".join(request.GET.get("q", "").split())
    if len(query) > QUERY_MAX:
        raise BadParameter("q", f"must be at most {QUERY_MAX} characters.")
    show = request.GET.get("show") or "active"
    if show not in SHOW_CHOICES:
        raise BadParameter("show", f"must be one of: {', '.join(SHOW_CHOICES)}.")
    return PeopleFilter(query=query, show_all=show == "all")


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
