"""Every date a dashboard page takes is a day between params.FIRST_DAY and params.LAST_DAY:
`report.pdf?to=9999-12-31` and `conversations/?end=9999-12-31` were a 500 (a day or a time zone
added to the last date there is)."""

import pytest

from dashboard.models import CareRole, CareTeamMembership
from tests.dashboard.conftest import client_for, login

pytestmark = pytest.mark.django_db

EDGES = ["9999-12-31", "0001-01-01", "3000-01-01", "1999-12-31"]


@pytest.fixture
def staff(person):
    user = login("sam")
    CareTeamMembership.objects.create(user=user, person=person, role=CareRole.STAFF)
    return user


@pytest.mark.parametrize("field", ["to", "from"])
@pytest.mark.parametrize("value", EDGES)
def test_the_reports_days_out_of_range_are_a_400_naming_the_field(staff, person, field, value):
    response = client_for(staff).get(f"/people/{person.id}/report.pdf", {field: value})
    assert response.status_code == 400
    assert response.json()["field"] == field and "2999-12-31" in response.json()["detail"]


@pytest.mark.parametrize("field", ["end", "start"])
@pytest.mark.parametrize("value", EDGES)
def test_the_conversation_lists_days_out_of_range_are_a_400_naming_the_field(
    alice_client, person, field, value
):
    response = alice_client.get(f"/people/{person.id}/conversations/", {field: value})
    assert response.status_code == 400
    assert b"2999-12-31" in response.content


def test_the_last_allowed_day_is_answered(alice_client, person):
    response = alice_client.get(f"/people/{person.id}/conversations/", {"end": "2999-12-31"})
    assert response.status_code == 200
