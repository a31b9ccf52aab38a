"""The people list and the shift view: a name search, and archived or inactive people marked and
left out by default (issue 32 items 4 and 8)."""

import pytest
from django.urls import reverse

from dashboard.models import CareRole, CareTeamMembership
from dashboard.people_filter import name_matches
from memory.models import Organisation, Person
from tests.dashboard.conftest import client_for, login, make_person

pytestmark = pytest.mark.django_db


@pytest.fixture
def residents():
    """Zoë, Arthur (archived) and Margaret (inactive), all in carol's care."""
    people = {
        "zoe": make_person("Zoë Brown", {"preferredName": "Zoë"}),
        "arthur": make_person("Arthur Smith"),
        "margaret": make_person("Margaret Jones"),
    }
    Person.objects.filter(pk=people["arthur"].pk).update(status=Person.Status.ARCHIVED)
    Person.objects.filter(pk=people["margaret"].pk).update(status=Person.Status.INACTIVE)
    return people


@pytest.fixture
def carol_client(residents):
    carol = login("carol")
    for person in residents.values():
        CareTeamMembership.objects.create(user=carol, person=person, role=CareRole.STAFF)
    return client_for(carol)


def test_a_name_matches_without_case_or_accents():
    assert name_matches("Zoë (Zoë Brown)", "zoe")
    assert name_matches("Zoë (Zoë Brown)", "BROWN zo")
    assert not name_matches("Zoë (Zoë Brown)", "zoe smith")


def test_archived_and_inactive_people_are_left_out_and_counted(carol_client):
    content = carol_client.get(reverse("dashboard:people")).content.decode()
    assert "Zoë" in content
    assert "Arthur Smith" not in content and "Margaret Jones" not in content
    assert "2 archived or inactive not shown" in content


def test_shown_on_request_and_marked(carol_client):
    content = carol_client.get(reverse("dashboard:people"), {"show": "all"}).content.decode()
    assert '<span class="badge status">Archived</span>' in content
    assert '<span class="badge status">Inactive</span>' in content
    assert "not shown" not in content


def test_the_search_finds_by_name_and_htmx_gets_the_list_alone(carol_client):
    response = carol_client.get(
        reverse("dashboard:people"), {"q": "zoe"}, headers={"HX-Request": "true"}
    )
    content = response.content.decode()
    assert response.status_code == 200
    assert content.lstrip().startswith('<div id="people-list"')
    assert "Zoë" in content
    assert "1 person whose name has “zoe”" in content
    # The list's minute poll asks for the same search.
    assert 'hx-get="/?q=zoe"' in content


def test_the_search_counts_only_hidden_people_whose_name_matches(carol_client):
    content = carol_client.get(reverse("dashboard:people"), {"q": "arthur"}).content.decode()
    assert "0 people whose name has “arthur”; 1 archived or inactive not shown" in content


def test_the_search_never_reaches_another_organisations_people(carol_client):
    elsewhere = Organisation.objects.create(name="Elsewhere", slug="elsewhere")
    make_person("Zoë Elsewhere", organisation=elsewhere)
    content = carol_client.get(reverse("dashboard:people"), {"q": "zoe"}).content.decode()
    assert "Zoë Elsewhere" not in content


@pytest.mark.parametrize(
    ("params", "field"), [({"q": "x" * 201}, "q"), ({"show": "everyone"}, "show")]
)
def test_bad_filters_are_a_400_naming_the_field(carol_client, params, field):
    for page in ("dashboard:people", "dashboard:home"):
        response = carol_client.get(reverse(page), params)
        assert response.status_code == 400
        assert response.content.decode().startswith(f"{field}:")


def test_the_shift_view_leaves_out_and_marks_alike(carol_client):
    content = carol_client.get(reverse("dashboard:home")).content.decode()
    assert "Zoë" in content and "Arthur Smith" not in content
    assert "2 archived or inactive people not shown" in content
    content = carol_client.get(reverse("dashboard:home"), {"show": "all"}).content.decode()
    assert "Arthur Smith" in content
    assert '<span class="badge status">Archived</span>' in content
