"""Long-term memory per organisation: the namespaces a caller names, and the ones stored.

A person's memories live under `("memories", "<person id>", ...)`; the person must be the
caller's, or the namespace is answered as unknown (404). Every other namespace is the
organisation's own and is stored as `("org", "<organisation id>", *namespace)`: two
organisations' agents can use the same names and never meet, and a one-label namespace (a
LangGraph store's `("users",)`) is still two parts deep when stored. Callers never see the
stored form: `shown` turns it back.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from memory.conversations import tenancy
from memory.conversations.tenancy import Caller
from memory.core.errors import NotFound
from memory.facts.namespaces import PERSON_ROOT, SEP

ORG_ROOT = "org"


def _person_id(part: str, field: str) -> uuid.UUID:
    try:
        return uuid.UUID(part)
    except ValueError:
        raise NotFound("No such namespace.", field=field) from None


def _check_person(caller: Caller, part: str, field: str) -> None:
    try:
        tenancy.person_check(caller, _person_id(part, field), field=field)
    except NotFound:
        raise NotFound("No such namespace.", field=field) from None


def stored(caller: Caller, namespace: Sequence[str], *, field: str = "namespace") -> tuple:
    """The stored form of a namespace the caller names (404 for another organisation's person)."""
    namespace = tuple(namespace)
    if namespace and namespace[0] == PERSON_ROOT:
        if len(namespace) < 2:
            return namespace  # the validator refuses it with its own message
        _check_person(caller, namespace[1], field)
        return namespace
    return (ORG_ROOT, str(caller.organisation_id), *namespace)


def person_id_of(namespace: Sequence[str]) -> uuid.UUID | None:
    """The person a (checked) namespace or prefix belongs to; None for the organisation's own."""
    namespace = tuple(namespace)
    if len(namespace) >= 2 and namespace[0] == PERSON_ROOT:
        try:
            return uuid.UUID(namespace[1])
        except ValueError:
            return None
    return None


def shown(namespace: Sequence[str]) -> tuple[str, ...]:
    """The namespace as its organisation named it."""
    namespace = tuple(namespace)
    if len(namespace) >= 2 and namespace[0] == ORG_ROOT:
        return namespace[2:]
    return namespace


def scopes(caller: Caller, prefix: Sequence[str], *, field: str = "prefix") -> tuple[tuple, list]:
    """(stored prefix, the scopes it may reach) for a search or a listing under `prefix`.

    A prefix naming a scope reaches that one; a wider one (nothing, or just "memories") reaches
    only the caller's own scopes: their organisation's, and those of their people.
    """
    prefix = tuple(prefix)
    own = SEP.join((ORG_ROOT, str(caller.organisation_id)))
    if prefix and prefix[0] == PERSON_ROOT:
        if len(prefix) >= 2:
            _check_person(caller, prefix[1], field)
            return prefix, [SEP.join(prefix[:2])]
        people = [
            SEP.join((PERSON_ROOT, str(person_id)))
            for person_id in tenancy.people(caller)
            .filter(memories__isnull=False)
            .values_list("id", flat=True)
            .distinct()
        ]
        return prefix, sorted(people)
    if not prefix:
        _, people = scopes(caller, (PERSON_ROOT,))
        return (), sorted([own, *people])
    return (ORG_ROOT, str(caller.organisation_id), *prefix), [own]
