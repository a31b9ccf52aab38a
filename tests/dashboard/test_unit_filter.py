"""The people list and the shift view limited to a unit (issue 34, item 4): `?unit=<id>`,
filtered in SQL inside the login's own care teams, remembered for the login, and another
organisation's unit answered exactly like an unknown one."""

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from dashboard.models import CareRole, CareTeamMembership
from memory.conversations import homes, tenancy
from memory.models import Alert
from tests.dashboard.conftest import client_for, login, make_person

pytestmark = pytest.mark.django_db

PAGES = ("dashboard:people", "dashboard:home")


@pytest.fixture
def place():
    org = tenancy.organisation_get_or_create()
    house = homes.home_add(organisation=org, name="Rose House")
    wing_a = homes.unit_add(home=house, name="Wing A")
    wing_b = homes.unit_add(home=house, name="Wing B")
    carer = login("carer")
    people = {}
    for name, unit in (("Peggy", wing_a), ("Arthur", wing_a), ("Ivy", wing_b), ("Ted", None)):
        person = make_person(name)
        homes.person_move(person=person, unit=unit)
        CareTeamMembership.objects.create(user=carer, person=person, role=CareRole.STAFF)
        people[name] = person
    # Someone in Wing A whose care team the carer is not in: a unit never widens what it sees.
    people["Zelda"] = make_person("Zelda")
    homes.person_move(person=people["Zelda"], unit=wing_a)
    return {"a": wing_a, "b": wing_b, "carer": carer, "client": client_for(carer), **people}


def _names(response) -> set[str]:
    body = response.content.decode()
    return {name for name in ("Peggy", "Arthur", "Ivy", "Ted", "Zelda") if name in body}


@pytest.mark.parametrize("page", PAGES)
def test_a_unit_shows_its_people_only_and_only_those_the_login_cares_for(place, page):
    client = place["client"]
    everyone = client.get(reverse(page))
    assert _names(everyone) == {"Peggy", "Arthur", "Ivy", "Ted"}
    wing_a = client.get(reverse(page), {"unit": place["a"].pk})
    assert wing_a.status_code == 200
    assert _names(wing_a) == {"Peggy", "Arthur"}
    assert "Showing Rose House · Wing A only" in wing_a.content.decode()


@pytest.mark.parametrize("page", PAGES)
def test_the_unit_is_filtered_in_sql(place, page):
    with CaptureQueriesContext(connection) as queries:
        place["client"].get(reverse(page), {"unit": place["a"].pk})
    care_team_reads = [
        q["sql"]
        for q in queries.captured_queries
        if 'FROM "care_team_memberships"' in q["sql"] and '"people"."unit_id" =' in q["sql"]
    ]
    assert care_team_reads


def test_the_choice_is_remembered_across_both_pages_until_everyone_is_chosen(place):
    client = place["client"]
    client.get(reverse("dashboard:home"), {"unit": place["b"].pk})
    assert _names(client.get(reverse("dashboard:people"))) == {"Ivy"}
    assert _names(client.get(reverse("dashboard:home"))) == {"Ivy"}
    client.get(reverse("dashboard:people"), {"unit": ""})
    assert _names(client.get(reverse("dashboard:home"))) == {"Peggy", "Arthur", "Ivy", "Ted"}


def test_a_background_poll_does_not_change_the_remembered_unit(place):
    client = place["client"]
    client.get(reverse("dashboard:people"), {"unit": place["a"].pk})
    client.get(reverse("dashboard:people"), {"unit": place["b"].pk}, headers={"X-Clara-Poll": "1"})
    assert _names(client.get(reverse("dashboard:people"))) == {"Peggy", "Arthur"}


@pytest.mark.parametrize("page", PAGES)
def test_another_organisation_s_unit_is_answered_like_an_unknown_one(place, page):
    elsewhere = tenancy.organisation_get_or_create("riverside")
    theirs = homes.unit_add(
        home=homes.home_add(organisation=elsewhere, name="River Court"), name="Secret Floor"
    )
    client = place["client"]
    answers = []
    for unit_id in (theirs.pk, uuid.uuid4(), "not-a-unit", "1"):
        response = client.get(reverse(page), {"unit": unit_id})
        answers.append((response.status_code, response.content))
        assert b"Secret Floor" not in response.content and b"River Court" not in response.content
    assert answers == [(400, b"unit: choose a unit from the list.")] * 4


def test_a_remembered_unit_that_is_no_longer_the_login_s_is_forgotten(place):
    client = place["client"]
    client.get(reverse("dashboard:people"), {"unit": place["a"].pk})
    # The carer leaves the organisation's units behind (another organisation's login now).
    session = client.session
    session["clara_unit"] = str(uuid.uuid4())
    session.save()
    response = client.get(reverse("dashboard:people"))
    assert response.status_code == 200
    assert _names(response) == {"Peggy", "Arthur", "Ivy", "Ted"}
    assert "clara_unit" not in client.session


def test_the_select_offers_only_the_login_s_organisations_units(place):
    elsewhere = tenancy.organisation_get_or_create("riverside")
    homes.unit_add(
        home=homes.home_add(organisation=elsewhere, name="River Court"), name="Secret Floor"
    )
    body = place["client"].get(reverse("dashboard:people")).content.decode()
    assert 'id="id_unit"' in body and "Wing B" in body and "Secret Floor" not in body


def test_an_empty_unit_is_not_read_as_being_in_no_care_team(place):
    empty = homes.unit_add(home=place["a"].home, name="Wing C")
    body = place["client"].get(reverse("dashboard:people"), {"unit": empty.pk}).content.decode()
    assert "No one you care for lives in Wing C." in body
    assert "not in anyone's care team" not in body


@pytest.mark.parametrize("page", PAGES)
def test_urgent_alerts_outside_the_unit_are_counted_not_hidden_without_a_word(place, page):
    from memory.models import Session

    session = Session.objects.create(
        person=place["Ivy"],
        organisation=place["Ivy"].organisation,
        created_at=place["Ivy"].created_at,
        last_activity_at=place["Ivy"].created_at,
    )
    Alert.objects.create(
        person=place["Ivy"],
        session=session,
        kind=Alert.Kind.ESCALATION,
        dedupe_key="test-escalation",
        created_at=timezone.now(),
    )
    body = place["client"].get(reverse(page), {"unit": place["a"].pk}).content.decode()
    assert "1 urgent alert nobody has yet is about people outside this unit." in body
    body = place["client"].get(reverse(page), {"unit": place["b"].pk}).content.decode()
    assert "outside this unit" not in body
