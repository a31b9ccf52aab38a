"""An organisation's homes and their units (wings, floors), and moving a person between units.

Names are the organisation's structure, not personal data, and are unique within their parent
(a second "Rose House" in one organisation, or a second "First floor" in one home, is refused
in words naming the field). A person's unit is always one of their own organisation's: another
organisation's unit is refused exactly like an unknown one.

Moving a person announces it (`signals.person_moved`, inside the move's transaction): the
dashboard keeps the care teams a unit gives in step (dashboard/units/services.py), in the same
transaction, so a person never sits in a unit without its team or keeps a team they left.
"""

import uuid

from django.db import IntegrityError, transaction

from memory.conversations import signals
from memory.conversations.models import Home, Organisation, Person, Unit
from memory.core.errors import Conflict, Invalid, NotFound

NAME_MAX = 100


def _name(name: str) -> str:
    cleaned = " ".join((name or "").split())
    if not cleaned:
        raise Invalid("Give it a name.", field="name")
    if len(cleaned) > NAME_MAX:
        raise Invalid(f"At most {NAME_MAX} characters.", field="name")
    return cleaned


HOME_TAKEN = "This organisation has a home of that name."
UNIT_TAKEN = "This home has a unit of that name."


def _saved(row: Home | Unit, taken: str, **save) -> Home | Unit:
    """Save a home or unit whose name is unique within its parent; Conflict (field "name") when
    the parent already has one of that name."""
    try:
        with transaction.atomic():
            row.save(**save)
    except IntegrityError as clash:
        raise Conflict(taken, field="name") from clash
    return row


def home_add(*, organisation: Organisation, name: str) -> Home:
    """A new home of the organisation; Conflict (field "name") if it has one of that name."""
    return _saved(Home(organisation=organisation, name=_name(name)), HOME_TAKEN)


def home_rename(*, home: Home, name: str) -> Home:
    """Rename a home; Conflict (field "name") if another home of the organisation has the name."""
    home.name = _name(name)
    return _saved(home, HOME_TAKEN, update_fields=["name"])


def unit_add(*, home: Home, name: str) -> Unit:
    """A new unit (wing, floor) of the home; Conflict (field "name") if it has one of that name."""
    return _saved(Unit(home=home, name=_name(name)), UNIT_TAKEN)


def unit_rename(*, unit: Unit, name: str) -> Unit:
    """Rename a unit; Conflict (field "name") if another unit of its home has the name."""
    unit.name = _name(name)
    return _saved(unit, UNIT_TAKEN, update_fields=["name"])


def units_of(*, organisation_ids) -> list[Unit]:
    """The units of these organisations with their homes, by home then unit name (one query)."""
    return list(
        Unit.objects.filter(home__organisation_id__in=list(organisation_ids))
        .select_related("home")
        .order_by("home__name", "home_id", "name")
    )


def unit_of_organisation(*, organisation_id: uuid.UUID, unit_id) -> Unit:
    """The organisation's unit of that id; NotFound (field "unit") for an unknown id, a malformed
    one and another organisation's alike."""
    try:
        unit_id = uuid.UUID(str(unit_id))
    except ValueError as bad:
        raise NotFound("Choose a unit from the list.", field="unit") from bad
    unit = (
        Unit.objects.select_related("home")
        .filter(pk=unit_id, home__organisation_id=organisation_id)
        .first()
    )
    if unit is None:
        raise NotFound("Choose a unit from the list.", field="unit")
    return unit


def person_move(*, person: Person, unit: Unit | None) -> Person:
    """Put the person in `unit` (None: in no unit, at home or not yet placed).

    NotFound (field "unit") for another organisation's unit, in the words for an unknown one.
    Announces `person_moved` inside the transaction (the unit's care team follows the person);
    moving someone where they already are changes and announces nothing.
    """
    with transaction.atomic():
        locked = Person.objects.select_for_update().get(pk=person.pk)
        if unit is not None:
            own = Unit.objects.filter(
                pk=unit.pk, home__organisation_id=locked.organisation_id
            ).exists()
            if not own:
                raise NotFound("Choose a unit from the list.", field="unit")
        to_unit_id = unit.pk if unit is not None else None
        if locked.unit_id == to_unit_id:
            person.unit = unit
            return person
        from_unit_id = locked.unit_id
        Person.objects.filter(pk=person.pk).update(unit_id=to_unit_id)
        person.unit = unit
        signals.person_moved.send(
            sender=Person,
            event=signals.PersonMoved(
                person_id=person.pk,
                organisation_id=locked.organisation_id,
                from_unit_id=from_unit_id,
                to_unit_id=to_unit_id,
            ),
        )
    return person
