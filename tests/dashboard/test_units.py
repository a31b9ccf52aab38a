"""Care teams per unit and the "Homes and units" page (issue 34, item 4).

A login given a role for a unit is in the care team of everyone living there, people moved in
later too; moving out takes away what the unit gave, never a membership given to the person
alone. Only the organisation's admins change homes, units and units' teams, never their own
role (rule 8); every change is audited.
"""

import uuid

import pytest
from django.urls import reverse

from dashboard import services as team_services
from dashboard.models import (
    AuditAction,
    AuditEvent,
    CareRole,
    CareTeamMembership,
    UnitTeamMembership,
)
from dashboard.units import services as units
from memory.conversations import homes, tenancy
from memory.models import Home, Person, Unit
from tests.dashboard.conftest import client_for, login, make_person

pytestmark = pytest.mark.django_db


@pytest.fixture
def org():
    return tenancy.organisation_get_or_create()


@pytest.fixture
def house(org):
    return homes.home_add(organisation=org, name="Rose House")


@pytest.fixture
def wing_a(house):
    return homes.unit_add(home=house, name="Wing A")


@pytest.fixture
def wing_b(house):
    return homes.unit_add(home=house, name="Wing B")


@pytest.fixture
def admin(org):
    return login("priya", org, admin=True)


@pytest.fixture
def nurse(org):
    return login("jo", org)


def _in(person, unit):
    homes.person_move(person=person, unit=unit)
    return person


def _row(user, person):
    return CareTeamMembership.objects.filter(user=user, person=person).first()


def test_a_unit_role_puts_the_login_in_the_care_team_of_everyone_in_the_unit(
    wing_a, wing_b, admin, nurse
):
    peggy, arthur = _in(make_person("Nana"), wing_a), _in(make_person("Grandad"), wing_a)
    ivy = _in(make_person("Ivy"), wing_b)
    units.unit_team_set(
        unit=wing_a, user=nurse, role=CareRole.STAFF, can_see_transcripts=True, by=admin
    )
    for person in (peggy, arthur):
        row = _row(nurse, person)
        assert (row.role, row.can_see_transcripts, row.granted_by_unit_id) == (
            "staff",
            True,
            wing_a.pk,
        )
    assert _row(nurse, ivy) is None
    # The one access check reads care teams: the nurse opens Peggy's page, not Ivy's.
    client = client_for(nurse)
    assert client.get(reverse("dashboard:person", args=[peggy.id])).status_code == 200
    assert client.get(reverse("dashboard:person", args=[ivy.id])).status_code == 404


def test_someone_moved_in_later_gets_the_unit_s_team_and_loses_it_on_moving_out(
    wing_a, wing_b, admin, nurse
):
    units.unit_team_set(
        unit=wing_a, user=nurse, role=CareRole.STAFF, can_see_transcripts=False, by=admin
    )
    peggy = make_person("Nana")
    assert _row(nurse, peggy) is None
    _in(peggy, wing_a)
    assert _row(nurse, peggy).granted_by_unit_id == wing_a.pk
    _in(peggy, wing_b)
    assert _row(nurse, peggy) is None
    page = client_for(nurse).get(reverse("dashboard:person", args=[peggy.id]))
    assert page.status_code == 404


def test_a_membership_given_to_the_person_alone_survives_moves_and_the_unit_team(
    wing_a, wing_b, admin, nurse
):
    peggy = make_person("Nana")
    own = CareTeamMembership.objects.create(
        user=nurse, person=peggy, role=CareRole.FAMILY, can_see_transcripts=False
    )
    _in(peggy, wing_a)
    team = units.unit_team_set(
        unit=wing_a, user=nurse, role=CareRole.ADMIN, can_see_transcripts=True, by=admin
    )
    # The person's own row wins (one row per person and login): untouched by the unit.
    row = _row(nurse, peggy)
    assert (row.pk, row.role, row.can_see_transcripts, row.granted_by_unit_id) == (
        own.pk,
        "family",
        False,
        None,
    )
    _in(peggy, wing_b)
    units.unit_team_remove(team=team, by=admin)
    assert _row(nurse, peggy).pk == own.pk


def test_changing_the_unit_role_changes_what_the_unit_gave_and_removing_it_takes_it_away(
    wing_a, admin, nurse
):
    peggy = _in(make_person("Nana"), wing_a)
    units.unit_team_set(
        unit=wing_a, user=nurse, role=CareRole.STAFF, can_see_transcripts=False, by=admin
    )
    team = units.unit_team_set(
        unit=wing_a, user=nurse, role=CareRole.ADMIN, can_see_transcripts=True, by=admin
    )
    assert (_row(nurse, peggy).role, _row(nurse, peggy).can_see_transcripts) == ("admin", True)
    CareTeamMembership.objects.create(user=admin, person=peggy, role=CareRole.ADMIN)
    units.unit_team_remove(team=team, by=admin)
    assert _row(nurse, peggy) is None


def test_no_unit_change_leaves_someone_without_a_care_team_admin(org, wing_a, wing_b, admin, nurse):
    # As a member's own change never takes a team's last admin, neither does a unit's: the
    # change is refused whole (nothing moved, nothing taken away) until someone else is admin.
    peggy = _in(make_person("Nana"), wing_a)
    team = units.unit_team_set(
        unit=wing_a, user=nurse, role=CareRole.ADMIN, can_see_transcripts=True, by=admin
    )
    team_id = team.pk  # a refused removal still clears the instance's pk
    for change, field in (
        (lambda: homes.person_move(person=peggy, unit=wing_b), "unit"),
        (lambda: homes.person_move(person=peggy, unit=None), "unit"),
        (
            lambda: units.unit_team_remove(
                team=UnitTeamMembership.objects.get(pk=team_id), by=admin
            ),
            "team",
        ),
        (
            lambda: units.unit_team_set(
                unit=wing_a, user=nurse, role=CareRole.STAFF, can_see_transcripts=True, by=admin
            ),
            "role",
        ),
    ):
        with pytest.raises(units.NotAllowed) as refused:
            change()
        assert refused.value.field == field
        peggy.refresh_from_db()
        assert peggy.unit_id == wing_a.pk
        assert _row(nurse, peggy).role == CareRole.ADMIN
        assert UnitTeamMembership.objects.get(pk=team_id).role == CareRole.ADMIN
    # With a team admin in the new unit, the move goes through, and the new unit's admin runs it.
    units.unit_team_set(
        unit=wing_b,
        user=admin,
        role=CareRole.ADMIN,
        can_see_transcripts=False,
        by=login("sam", org, admin=True),
    )
    homes.person_move(person=peggy, unit=wing_b)
    assert _row(nurse, peggy) is None and _row(admin, peggy).role == CareRole.ADMIN


def test_the_page_says_why_a_move_is_refused(wing_a, wing_b, admin, nurse):
    peggy = _in(make_person("Nana"), wing_a)
    units.unit_team_set(
        unit=wing_a, user=nurse, role=CareRole.ADMIN, can_see_transcripts=True, by=admin
    )
    response = client_for(admin).post(
        reverse("dashboard:organisation_homes", args=[wing_a.home.organisation.slug]),
        {"action": "move", "person": str(peggy.pk), "unit": str(wing_b.pk)},
    )
    assert response.status_code == 400
    assert "nobody to run their care team" in response.content.decode()
    peggy.refresh_from_db()
    assert peggy.unit_id == wing_a.pk


def test_a_row_changed_for_one_person_becomes_theirs_and_survives_a_move(
    wing_a, wing_b, admin, nurse
):
    peggy = _in(make_person("Nana"), wing_a)
    units.unit_team_set(
        unit=wing_a, user=nurse, role=CareRole.STAFF, can_see_transcripts=False, by=admin
    )
    team_services.member_update(
        membership=_row(nurse, peggy), role=CareRole.STAFF, can_see_transcripts=True
    )
    _in(peggy, wing_b)
    row = _row(nurse, peggy)
    assert row is not None and row.granted_by_unit_id is None and row.can_see_transcripts


def test_nobody_gives_themselves_a_unit_role(wing_a, admin):
    peggy = _in(make_person("Nana"), wing_a)
    with pytest.raises(units.NotAllowed) as refused:
        units.unit_team_set(
            unit=wing_a, user=admin, role=CareRole.ADMIN, can_see_transcripts=True, by=admin
        )
    assert refused.value.field == "login"
    # Nor through the page (the form does not even offer oneself).
    page = client_for(admin).post(
        reverse("dashboard:organisation_homes", args=["default"]),
        {"action": "team_set", "unit": wing_a.pk, "login": "priya", "role": "admin"},
    )
    assert page.status_code == 400
    assert _row(admin, peggy) is None


def test_a_unit_role_goes_only_to_the_organisation_s_staff_logins(wing_a, admin):
    outsider = login("olga", tenancy.organisation_get_or_create("riverside"))
    with pytest.raises(units.NotAllowed):
        units.unit_team_set(
            unit=wing_a, user=outsider, role=CareRole.STAFF, can_see_transcripts=False, by=admin
        )
    family = login("fred")
    with pytest.raises(units.NotAllowed) as refused:
        units.unit_team_set(
            unit=wing_a, user=family, role=CareRole.FAMILY, can_see_transcripts=False, by=admin
        )
    assert refused.value.field == "role"


# --- The page ---------------------------------------------------------------------------------


def _page(client, data=None):
    url = reverse("dashboard:organisation_homes", args=["default"])
    return client.post(url, data) if data is not None else client.get(url)


def test_only_the_organisation_s_admins_open_or_change_homes_and_units(
    alice_client, bob_client, house
):
    # alice is a team admin, bob family: members of the organisation, not its admins.
    for client in (alice_client, bob_client):
        assert _page(client).status_code == 403
        assert _page(client, {"action": "home_add", "name": "Oak Court"}).status_code == 403
        assert (
            _page(client, {"action": "unit_add", "home": house.pk, "name": "X"}).status_code == 403
        )
    outsider = client_for(login("olga", tenancy.organisation_get_or_create("riverside")))
    assert _page(outsider).status_code == 404
    assert list(Home.objects.values_list("name", flat=True)) == ["Rose House"]
    assert not Unit.objects.exists()


def test_the_admin_adds_and_renames_homes_and_units_audited(admin):
    client = client_for(admin)
    assert _page(client, {"action": "home_add", "name": "Rose House"}).status_code == 302
    house = Home.objects.get()
    assert (
        _page(client, {"action": "unit_add", "home": house.pk, "name": "Wing A"}).status_code == 302
    )
    unit = Unit.objects.get()
    _page(client, {"action": "unit_rename", "unit": unit.pk, "name": "Garden Wing"})
    _page(client, {"action": "home_rename", "home": house.pk, "name": "Rosewood House"})
    assert (Home.objects.get().name, Unit.objects.get().name) == ("Rosewood House", "Garden Wing")
    edits = AuditEvent.objects.filter(action=AuditAction.EDIT_HOMES, user=admin)
    assert sorted(edits.values_list("object_id", flat=True)) == sorted(
        [str(house.pk), str(house.pk), str(unit.pk), str(unit.pk)]
    )
    assert {e.organisation_id for e in edits} == {house.organisation_id}
    page = _page(client)
    assert page.status_code == 200 and "Garden Wing" in page.content.decode()
    assert AuditEvent.objects.filter(action=AuditAction.VIEW_HOMES, user=admin).exists()
    # A name taken in the home is a form error, not a 500.
    taken = _page(client, {"action": "unit_add", "home": house.pk, "name": "Garden Wing"})
    assert (
        taken.status_code == 400 and "This home has a unit of that name." in taken.content.decode()
    )


def test_the_admin_moves_someone_and_it_is_audited(admin, wing_a):
    peggy = make_person("Nana")
    page = _page(client_for(admin), {"action": "move", "person": peggy.pk, "unit": wing_a.pk})
    assert page.status_code == 302
    assert Person.objects.get(pk=peggy.pk).unit_id == wing_a.pk
    row = AuditEvent.objects.get(action=AuditAction.MOVE_PERSON)
    assert (row.person_id, row.object_id, row.user_id) == (peggy.pk, str(wing_a.pk), admin.pk)


def test_another_organisation_s_unit_or_person_is_a_form_error_like_an_unknown_one(admin, wing_a):
    elsewhere = tenancy.organisation_get_or_create("riverside")
    theirs = homes.unit_add(
        home=homes.home_add(organisation=elsewhere, name="River Court"), name="Secret Floor"
    )
    ivy = make_person("Ivy", organisation=elsewhere)
    peggy = make_person("Nana")
    client = client_for(admin)
    answers = set()
    for data in (
        {"action": "move", "person": peggy.pk, "unit": theirs.pk},
        {"action": "move", "person": peggy.pk, "unit": uuid.uuid4()},
        {"action": "move", "person": ivy.pk, "unit": wing_a.pk},
        {"action": "move", "person": uuid.uuid4(), "unit": wing_a.pk},
    ):
        page = client.post(reverse("dashboard:organisation_homes", args=["default"]), data)
        assert page.status_code == 400
        body = page.content.decode()
        assert "Secret Floor" not in body and "River Court" not in body
        answers.add(page.context["error"])
    assert len(answers) == 1
    assert Person.objects.get(pk=peggy.pk).unit_id is None
    assert Person.objects.get(pk=ivy.pk).unit_id is None
    assert not AuditEvent.objects.filter(action=AuditAction.MOVE_PERSON).exists()


def test_unit_team_changes_on_the_page_are_audited(admin, nurse, wing_a):
    peggy = _in(make_person("Nana"), wing_a)
    client = client_for(admin)
    page = _page(
        client,
        {"action": "team_set", "unit": wing_a.pk, "login": "jo", "role": "staff"},
    )
    assert page.status_code == 302
    assert _row(nurse, peggy).granted_by_unit_id == wing_a.pk
    team = nurse.unit_memberships.get()
    assert _page(client, {"action": "team_remove", "team": team.pk}).status_code == 302
    assert _row(nurse, peggy) is None
    rows = AuditEvent.objects.filter(action=AuditAction.EDIT_UNIT_TEAM, user=admin)
    assert list(rows.values_list("object_id", flat=True)) == [str(wing_a.pk)] * 2


def test_another_organisation_s_home_or_unit_is_not_renamed_or_added_to(admin, house, wing_a):
    elsewhere = tenancy.organisation_get_or_create("riverside")
    their_home = homes.home_add(organisation=elsewhere, name="River Court")
    their_unit = homes.unit_add(home=their_home, name="Secret Floor")
    client = client_for(admin)
    for data in (
        {"action": "unit_add", "home": their_home.pk, "name": "Mine now"},
        {"action": "unit_add", "home": "not-an-id", "name": "Mine now"},
        {"action": "home_rename", "home": their_home.pk, "name": "Mine now"},
        {"action": "unit_rename", "unit": their_unit.pk, "name": "Mine now"},
        {"action": "unit_rename", "unit": "not-an-id", "name": "Mine now"},
        {"action": "team_remove", "team": "999"},
    ):
        page = _page(client, data)
        assert page.status_code == 400, data
        assert b"Secret Floor" not in page.content and b"River Court" not in page.content
    assert (Home.objects.get(pk=their_home.pk).name, Unit.objects.get(pk=their_unit.pk).name) == (
        "River Court",
        "Secret Floor",
    )
    assert not Unit.objects.filter(name="Mine now").exists()
    assert not AuditEvent.objects.filter(action=AuditAction.EDIT_HOMES).exists()
