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


def test_the_list_comes_a_page_at_a_time_counting_everyone(carol_client, monkeypatch):
    # A care group's admin is in thousands of care teams: a page of cards, today's mood read
    # for those alone; the count, the order and the search still cover everyone.
    from dashboard import views

    monkeypatch.setattr(views, "PEOPLE_PAGE", 2)
    url = reverse("dashboard:people")
    first = carol_client.get(url, {"show": "all"}).content.decode()
    second = carol_client.get(url, {"show": "all", "page": "2"}).content.decode()
    names = ("Zoë", "Arthur Smith", "Margaret Jones")
    shown = [[name for name in names if name in page] for page in (first, second)]
    assert sorted(shown[0] + shown[1]) == sorted(names)
    assert (len(shown[0]), len(shown[1])) == (2, 1)
    assert "3 people" in first and "People 1 to 2 of 3." in first
    assert "show=all&amp;page=2" in first and "Next 2" in first and "Previous" not in first
    assert "People 3 to 3 of 3." in second and "show=all&amp;page=1" in second
    assert "page=2" in second  # the minute's poll keeps the page
    bad = carol_client.get(url, {"page": "0"})
    assert bad.status_code == 400 and bad.content.decode().startswith("page:")


def test_one_page_of_people_has_no_pager(carol_client):
    content = carol_client.get(reverse("dashboard:people"), {"show": "all"}).content.decode()
    assert "More people" not in content and "page=" not in content


def test_with_no_name_searched_no_name_is_worked_out():
    from dashboard import people_filter

    def no_name(item):
        raise AssertionError("a name was worked out with nothing searched")

    people = [Person(status=Person.Status.ACTIVE), Person(status=Person.Status.ARCHIVED)]
    kept, hidden = people_filter.apply(
        people,
        people_filter.PeopleFilter(query="", show_all=False),
        person=lambda p: p,
        name=no_name,
    )
    assert (kept, hidden) == ([people[0]], 1)


def test_only_the_pages_people_are_read_whole(carol_client, monkeypatch):
    # A care group's admin is in thousands of care teams: the list orders, filters and counts
    # them from a few columns, and reads (and decrypts) the people of the page alone.
    from dashboard import views

    monkeypatch.setattr(views, "PEOPLE_PAGE", 2)
    carol = CareTeamMembership.objects.filter(user__username="carol").first().user
    for n in range(6):
        person = make_person(f"Resident {n}")
        CareTeamMembership.objects.create(user=carol, person=person, role=CareRole.STAFF)
    built = []
    original = Person.from_db.__func__

    def counting(cls, db, field_names, values):
        instance = original(cls, db, field_names, values)
        built.append(instance.pk)
        return instance

    monkeypatch.setattr(Person, "from_db", classmethod(counting))
    content = carol_client.get(reverse("dashboard:people"), {"show": "all"}).content.decode()
    assert "People 1 to 2 of 9." in content
    assert len(set(built)) == 2
    # A search reads every name (decrypted in Python), still not every person.
    built.clear()
    content = carol_client.get(reverse("dashboard:people"), {"q": "resident"}).content.decode()
    assert "6 people whose name has “resident”" in content
    assert len(set(built)) == 2
