"""Homes and their units (issue 34, item 4): names unique within their parent, and a person's
unit always one of their own organisation's (memory/conversations/homes.py)."""

import uuid

import pytest
from django.db.models import ProtectedError

from memory.conversations import homes, signals, tenancy
from memory.core.errors import Conflict, Invalid, NotFound
from memory.models import Home, Person, Unit
from tests.dashboard.conftest import make_person

pytestmark = pytest.mark.django_db


@pytest.fixture
def here():
    return tenancy.organisation_get_or_create()


@pytest.fixture
def elsewhere():
    return tenancy.organisation_get_or_create("riverside")


@pytest.fixture
def wing(here):
    return homes.unit_add(home=homes.home_add(organisation=here, name="Rose House"), name="Wing A")


def test_a_home_s_name_is_unique_in_its_organisation_not_everywhere(here, elsewhere):
    homes.home_add(organisation=here, name="Rose House")
    with pytest.raises(Conflict) as taken:
        homes.home_add(organisation=here, name="  Rose   House ")
    assert taken.value.field == "name"
    homes.home_add(organisation=elsewhere, name="Rose House")
    assert Home.objects.filter(name="Rose House").count() == 2


def test_a_unit_s_name_is_unique_in_its_home(here, wing):
    with pytest.raises(Conflict):
        homes.unit_add(home=wing.home, name="Wing A")
    other_home = homes.home_add(organisation=here, name="Oak Court")
    homes.unit_add(home=other_home, name="Wing A")
    # Renaming onto a sibling's name is refused too, and leaves the name as it was.
    second = homes.unit_add(home=wing.home, name="Wing B")
    with pytest.raises(Conflict):
        homes.unit_rename(unit=second, name="Wing A")
    assert Unit.objects.get(pk=second.pk).name == "Wing B"


def test_a_name_must_be_given_and_not_too_long(here):
    for bad in ("", "   ", "x" * 101):
        with pytest.raises(Invalid) as refused:
            homes.home_add(organisation=here, name=bad)
        assert refused.value.field == "name"
    assert not Home.objects.exists()


def test_a_person_moves_into_a_unit_and_out_of_every_unit(wing):
    person = make_person("Nana")
    assert person.unit_id is None  # new people are in no unit
    homes.person_move(person=person, unit=wing)
    assert Person.objects.get(pk=person.pk).unit_id == wing.pk
    homes.person_move(person=person, unit=None)
    assert Person.objects.get(pk=person.pk).unit_id is None


def test_another_organisation_s_unit_is_refused_like_an_unknown_one(elsewhere, wing):
    theirs = homes.unit_add(
        home=homes.home_add(organisation=elsewhere, name="River Court"), name="Floor 1"
    )
    person = make_person("Nana")
    with pytest.raises(NotFound) as refused:
        homes.person_move(person=person, unit=theirs)
    assert refused.value.field == "unit"
    assert Person.objects.get(pk=person.pk).unit_id is None
    answers = set()
    for unit_id in (theirs.pk, uuid.uuid4(), "not-an-id"):
        with pytest.raises(NotFound) as unknown:
            homes.unit_of_organisation(organisation_id=person.organisation_id, unit_id=unit_id)
        answers.add((unknown.value.detail, unknown.value.field))
    assert answers == {("Choose a unit from the list.", "unit")}
    assert homes.unit_of_organisation(organisation_id=person.organisation_id, unit_id=wing.pk)


def test_a_move_is_announced_once_and_staying_put_announces_nothing(wing):
    person = make_person("Nana")
    heard = []

    def listen(sender, event, **kwargs):
        heard.append(event)

    signals.person_moved.connect(listen)
    try:
        homes.person_move(person=person, unit=wing)
        homes.person_move(person=person, unit=wing)
        homes.person_move(person=person, unit=None)
    finally:
        signals.person_moved.disconnect(listen)
    assert [(e.from_unit_id, e.to_unit_id) for e in heard] == [(None, wing.pk), (wing.pk, None)]
    assert {e.organisation_id for e in heard} == {person.organisation_id}


def test_a_unit_with_people_in_it_is_not_deleted(wing):
    person = make_person("Nana")
    homes.person_move(person=person, unit=wing)
    with pytest.raises(ProtectedError):
        wing.delete()
    homes.person_move(person=person, unit=None)
    wing.delete()
    assert Person.objects.filter(pk=person.pk).exists()
