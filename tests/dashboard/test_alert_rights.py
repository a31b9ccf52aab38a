"""Who may act on an alert (dashboard/alerting/rights.py): the organisation's roles and care
setting. In a care home family hear about urgent alerts only if they opt in, see who has them,
and cannot claim or resolve; at home, the named carer can. The organisation's admins set it."""

import pytest

from dashboard.alerting import ladder, rights
from dashboard.alerting.models import AlertRouting, OrganisationAlerting
from dashboard.models import AuditEvent, CareTeamMembership
from memory.conversations import tenancy
from tests.dashboard.conftest import client_for, login
from tests.support.smtp_server import SmtpServer

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(alice, bob, person):
    """alice (team admin), bob (family) and carol (care staff), with addresses and names."""
    carol = login("carol")
    CareTeamMembership.objects.create(user=carol, person=person, role="staff")
    for user, first, last in (
        (alice, "Alice", "Smith"),
        (bob, "Bob", "Jones"),
        (carol, "Carol", "Diaz"),
    ):
        user.first_name, user.last_name = first, last
        user.email = f"{user.username}@example.org"
        user.save()
    return alice, bob, carol


def _setting(person, care_setting, roles=("admin", "staff")):
    OrganisationAlerting.objects.update_or_create(
        organisation=person.organisation,
        defaults={"care_setting": care_setting, "acting_roles": list(roles)},
    )


def _membership(user):
    return CareTeamMembership.objects.select_related("person").get(user=user)


def _claim(user, person, alert):
    return client_for(user).post(f"/people/{person.id}/alerts/{alert.id}/", {"action": "claim"})


def test_by_default_team_admins_and_care_staff_act_and_family_do_not(team):
    alice, bob, carol = team
    assert rights.may_act(_membership(alice)) and rights.may_act(_membership(carol))
    assert not rights.may_act(_membership(bob))
    assert "care home" in rights.why_not(_membership(bob))


def test_in_a_care_home_family_hear_of_urgent_alerts_only_if_they_opt_in(
    team, person, alert, smtp_server
):
    ladder.alert_deliver(alert_id=alert.id)
    assert ["bob@example.org"] not in smtp_server.recipients
    assert ["carol@example.org"] in smtp_server.recipients


def test_family_who_opted_in_get_the_email_without_a_claim_button(team, person, alert, smtp_server):
    _, bob, _ = team
    AlertRouting.objects.create(membership=_membership(bob), receives="urgent")
    ladder.alert_deliver(alert_id=alert.id)
    index = smtp_server.recipients.index(["bob@example.org"])
    text = SmtpServer.text(smtp_server.messages[index])
    assert "The people who answer alerts have been told" in text and "/alerts/ack/" not in text


def test_in_a_care_home_family_pressing_the_button_changes_nothing_and_are_told_kindly(
    team, person, alert
):
    _, bob, _ = team
    response = _claim(bob, person, alert)
    assert response.status_code == 403
    assert "In a care home the staff on shift answer alerts" in response.content.decode()
    alert.refresh_from_db()
    assert (alert.status, alert.claimed_by_id) == ("open", None)
    # The panel shows them who has it, and no button.
    _claim(team[2], person, alert)
    panel = client_for(bob).get(f"/people/{person.id}/alerts/", headers={"HX-Request": "true"})
    content = panel.content.decode()
    assert "Carol Diaz is dealing with it" in content
    assert "I&#x27;m dealing with it" not in content and 'value="claim"' not in content


def test_at_home_the_named_carer_claims_and_resolves(team, person, alert):
    _, bob, _ = team
    _setting(person, "family_at_home")
    assert _claim(bob, person, alert).status_code == 403  # not the named carer yet
    CareTeamMembership.objects.filter(user=bob).update(named_carer=True)
    assert _claim(bob, person, alert).status_code == 302
    done = client_for(bob).post(
        f"/people/{person.id}/alerts/{alert.id}/", {"action": "resolve", "outcome": "well"}
    )
    assert done.status_code == 302
    alert.refresh_from_db()
    assert (alert.status, alert.claimed_by_id, alert.resolved_by_id) == ("resolved", bob.id, bob.id)


def test_a_named_carer_in_a_care_home_still_does_not_act(team, person):
    _, bob, _ = team
    CareTeamMembership.objects.filter(user=bob).update(named_carer=True)
    assert not rights.may_act(_membership(bob))


def test_an_organisation_may_let_all_family_act_at_home_but_never_in_a_care_home(team, person):
    _, bob, _ = team
    _setting(person, "care_at_home", ["admin", "staff", "family"])
    assert rights.may_act(_membership(bob))
    _setting(person, "care_home", ["admin", "staff", "family"])
    assert not rights.may_act(_membership(bob))


def test_an_organisation_may_keep_care_staff_from_acting(team, person, alert):
    alice, _, carol = team
    _setting(person, "care_home", ["admin"])
    assert _claim(carol, person, alert).status_code == 403
    assert "team admins answer alerts" in rights.why_not(_membership(carol))
    assert _claim(alice, person, alert).status_code == 302


@pytest.fixture
def orgadmin(person):
    return login("olga", person.organisation, admin=True)


def _settings_url(person):
    return f"/organisations/{person.organisation.slug}/alerts/settings/"


def test_the_organisations_admin_sets_its_care_setting_and_who_acts_audited(team, person, orgadmin):
    client = client_for(orgadmin)
    assert client.get(_settings_url(person)).status_code == 200
    response = client.post(
        _settings_url(person),
        {
            "care_setting": "family_at_home",
            "acting_roles": ["admin", "staff", "family"],
            "time_zone": "Europe/London",
        },
    )
    assert response.status_code == 302
    rules = rights.settings_for(person.organisation_id)
    assert (rules.care_setting, rules.acting_roles) == (
        "family_at_home",
        ["admin", "staff", "family"],
    )
    assert AuditEvent.objects.filter(
        user=orgadmin, action="edit_alerting", organisation=person.organisation
    ).exists()
    assert "family" in client.get(_settings_url(person)).content.decode()


@pytest.mark.parametrize(
    "data",
    [
        {"care_setting": "care_home", "acting_roles": ["family"]},
        {"care_setting": "care_home"},
        {"care_setting": "moon_base", "acting_roles": ["admin"]},
        {"care_setting": "care_home", "acting_roles": ["owner"]},
        {"care_setting": "care_home", "acting_roles": ["admin"], "time_zone": "Mars/Base"},
        {"care_setting": "care_home", "acting_roles": ["admin"], "time_zone": ""},
    ],
)
def test_a_setting_that_would_leave_alerts_without_an_owner_is_a_400(person, orgadmin, data):
    response = client_for(orgadmin).post(_settings_url(person), data)
    assert response.status_code == 400
    assert not OrganisationAlerting.objects.exists()


def test_only_the_organisations_admins_set_it_and_outsiders_see_no_such_organisation(team, person):
    alice, bob, _ = team
    for member in (alice, bob):  # a team admin is not the organisation's admin
        assert client_for(member).get(_settings_url(person)).status_code == 403
        assert (
            client_for(member)
            .post(
                _settings_url(person),
                {"care_setting": "family_at_home", "acting_roles": ["family", "admin"]},
            )
            .status_code
            == 403
        )
    elsewhere = tenancy.organisation_get_or_create("elsewhere")
    outsider = login("mallory", elsewhere, admin=True)
    assert client_for(outsider).get(_settings_url(person)).status_code == 404
    assert (
        client_for(outsider).get("/organisations/no-such-org/alerts/settings/").status_code == 404
    )
    assert not OrganisationAlerting.objects.exists()


def test_a_team_admin_names_the_carer_at_home_on_the_team_page(team, person):
    alice, bob, _ = team
    member = _membership(bob)
    page = client_for(alice).get(f"/people/{person.id}/team/").content.decode()
    assert "Named carer at home" not in page  # a care home: family do not answer
    _setting(person, "family_at_home")
    page = client_for(alice).get(f"/people/{person.id}/team/").content.decode()
    assert "Named carer at home" in page
    response = client_for(alice).post(
        f"/people/{person.id}/team/{member.id}/", {"role": "family", "named_carer": "on"}
    )
    assert response.status_code == 302
    assert CareTeamMembership.objects.get(id=member.id).named_carer
    # Family cannot name themselves: the team page is the team admin's.
    assert (
        client_for(bob)
        .post(f"/people/{person.id}/team/{member.id}/", {"role": "family", "named_carer": "on"})
        .status_code
        == 403
    )


def test_the_family_routing_page_says_they_hear_only_if_they_choose(team, person):
    _, bob, _ = team
    page = client_for(bob).get(f"/people/{person.id}/alerts/mine/").content.decode()
    assert "only if you choose to" in page
    import re

    checked = re.findall(r'<input type="radio" name="receives" value="(\w+)"[^>]*checked', page)
    assert checked == ["none"]
