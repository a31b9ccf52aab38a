"""Whose rows a caller may touch: the caller's organisation and scopes, and the scoped lookups.

Every bot API call, agent tool and MCP call acts as a `Caller` (from its API key). Ids that name
rows (a session, a person, a persona) are resolved here and only here, through the caller's
organisation: another organisation's id is answered exactly like an unknown one (404), so a
caller learns nothing about rows that are not theirs. Listings and searches filter by the same
organisation (long-term memory does it in memory/facts/tenancy.py, on top of this).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db.models import QuerySet

from memory.conversations.models import (
    DEFAULT_ORGANISATION,
    ApiKey,
    Organisation,
    OrganisationMembership,
    Person,
    Scope,
    Session,
)
from memory.core.errors import InsufficientScope, NotFound

ALL_SCOPES = frozenset(Scope.values)


@dataclass(frozen=True)
class Caller:
    """Who is asking: an organisation, what they may do, and how to name them in the audit."""

    organisation_id: uuid.UUID
    scopes: frozenset[str] = ALL_SCOPES
    # "key:<prefix>" for an API key; the audit's "who".
    label: str = ""

    def require(self, scope: str) -> None:
        """InsufficientScope (403) unless the caller holds `scope`."""
        scope = str(scope)
        if scope not in self.scopes:
            raise InsufficientScope(f"This API key lacks the '{scope}' scope.", field=scope)


def caller_for_key(key: ApiKey) -> Caller:
    return Caller(
        organisation_id=key.organisation_id,
        scopes=frozenset(key.scopes or ()),
        label=f"key:{key.prefix}",
    )


def organisation_get_or_create(slug: str | None = None, *, name: str | None = None) -> Organisation:
    """The organisation with this slug (the default one without), created if new."""
    slug = (slug or DEFAULT_ORGANISATION).strip()
    organisation, _ = Organisation.objects.get_or_create(
        slug=slug, defaults={"name": name or slug.replace("-", " ").title()}
    )
    return organisation


def default_caller() -> Caller:
    """Everything, in the default organisation: for commands and the demo, never for a request."""
    return Caller(organisation_id=organisation_get_or_create().pk, label="system")


def user_organisation_ids(user) -> list[uuid.UUID]:
    """The organisations a login (a Django user) belongs to; none for an anonymous visitor."""
    if user is None or not user.is_authenticated:
        return []
    return list(
        OrganisationMembership.objects.filter(user_id=user.pk).values_list(
            "organisation_id", flat=True
        )
    )


def people(caller: Caller) -> QuerySet[Person]:
    return Person.objects.filter(organisation_id=caller.organisation_id)


def sessions(caller: Caller) -> QuerySet[Session]:
    return Session.objects.filter(organisation_id=caller.organisation_id)


def person_of(caller: Caller, person_id: uuid.UUID, *, field: str = "person_id") -> Person:
    """The caller's person with this id; NotFound for an unknown id or another organisation's."""
    person = people(caller).filter(id=person_id).first()
    if person is None:
        raise NotFound("No such person.", field=field)
    return person


def session_of(caller: Caller, session_id: uuid.UUID) -> Session:
    """The caller's session with this id; NotFound for an unknown id or another organisation's."""
    session = sessions(caller).filter(id=session_id).first()
    if session is None:
        raise NotFound("No such session.", field="session_id")
    return session


def session_check(caller: Caller, session_id: uuid.UUID) -> None:
    """NotFound unless the session is the caller's (one indexed read, nothing loaded)."""
    if not sessions(caller).filter(id=session_id).exists():
        raise NotFound("No such session.", field="session_id")


def person_check(caller: Caller, person_id: uuid.UUID, *, field: str = "person_id") -> None:
    if not people(caller).filter(id=person_id).exists():
        raise NotFound("No such person.", field=field)


def request_caller(request, scope: str) -> Caller:
    """The API caller of `request` (its key, set by the API's authentication), holding `scope`.

    Raises InsufficientScope (403, naming the scope) when the key lacks it.
    """
    caller = caller_for_key(request.auth)
    caller.require(scope)
    return caller
