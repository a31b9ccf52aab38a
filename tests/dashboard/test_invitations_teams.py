"""Setting up an organisation (issue 32 item 4): team admins invite to the care teams they run,
an invitation covers several people and says which, the role starts at the least right, and
nobody invites to more than they hold."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from dashboard.accounts.models import Invitation
from dashboard.models import AuditAction, AuditEvent, CareRole, CareTeamMembership
from tests.dashboard.conftest import client_for, login, make_person
from tests.support.smtp_server import SmtpServer

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a-long-new-passphrase-for-clara"


@pytest.fixture
def arthur(person):
    """A second person alice runs the care team of."""
    arthur = make_person("Arthur", {"preferredName": "Arthur"})
    CareTeamMembership.objects.create(
        user=CareTeamMembership.objects.get(person=person, role=CareRole.ADMIN).user,
        person=arthur,
        role=CareRole.ADMIN,
    )
    return arthur


def invite(client, organisation, **data):
    return client.post(
        reverse("dashboard:invitations", args=[organisation.slug]),
        {"email": "new.carer@family.example", "role": CareRole.FAMILY, **data},
    )


def test_a_team_admin_invites_to_several_of_their_teams(
    alice, person, arthur, other_person, smtp_server
):
    client = client_for(alice)
    page = client.get(reverse("dashboard:invitations", args=[person.organisation.slug]))
    offered = page.context["form"].fields["people"].queryset
    assert set(offered) == {person, arthur}  # never a team they do not run
    response = invite(
        client, person.organisation, people=[str(person.id), str(arthur.id)], role=CareRole.STAFF
    )
    assert response.status_code == 302
    invitation = Invitation.objects.get()
    assert set(invitation.people.all()) == {person, arthur}
    # The list says which people, with the role.
    listed = client.get(reverse("dashboard:invitations", args=[person.organisation.slug]))
    row = re.search(
        r"<td>new\.carer@family\.example</td>\s*<td>(.*?)</td>", listed.content.decode()
    )
    assert "Peggy (Nana)" in row.group(1) and "Arthur" in row.group(1)
    assert "Care staff" in row.group(1)
    # The e-mail names neither; one audit row for each person.
    body = SmtpServer.text(smtp_server.wait_for(1)[0])
    assert "Peggy" not in body and "Arthur" not in body
    sent = AuditEvent.objects.filter(action=AuditAction.INVITATION_SENT)
    assert set(sent.values_list("person_id", flat=True)) == {person.id, arthur.id}
    # Accepting joins both care teams, in that role.
    link = re.search(r"https?://\S+", SmtpServer.text(smtp_server.messages[0])).group(0)
    path = "/" + link.split("/", 3)[3]
    Client().post(
        path,
        {
            "first_name": "Claire",
            "last_name": "Morgan",
            "username": "newcarer",
            "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD,
        },
    )
    joined = CareTeamMembership.objects.filter(user__username="newcarer")
    assert {(m.person_id, m.role) for m in joined} == {
        (person.id, CareRole.STAFF),
        (arthur.id, CareRole.STAFF),
    }


def test_a_team_admin_cannot_invite_to_a_team_they_do_not_run(
    alice, person, other_person, smtp_server
):
    client = client_for(alice)
    response = invite(client, person.organisation, people=[str(other_person.id)])
    assert response.status_code == 400
    assert "people" in response.context["form"].errors
    # Nor to the organisation alone: that is for its admins.
    response = invite(client, person.organisation, people=[])
    assert response.status_code == 400
    assert "people" in response.context["form"].errors
    assert not Invitation.objects.exists() and not smtp_server.messages


def test_the_form_starts_at_the_least_right(alice, person, smtp_server):
    url = reverse("dashboard:invitations", args=[person.organisation.slug])
    # Even from "Invite someone to look after them" (the person chosen).
    content = client_for(alice).get(url, {"person": str(person.id)}).content.decode()
    assert re.search(r'<option value="family" selected>Family</option>', content)
    assert content.index('value="family"') < content.index('value="staff"')
    assert re.search(rf'value="{person.id}"[^>]*checked', content)


def test_nobody_invites_above_their_own_right_or_themselves(alice, bob, person, smtp_server):
    # Care staff hold less than a team admin: they do not invite at all.
    staff = login("sam")
    CareTeamMembership.objects.create(user=staff, person=person, role=CareRole.STAFF)
    response = invite(client_for(staff), person.organisation, people=[str(person.id)])
    assert response.status_code == 403
    # A team admin does not invite their own address (no one grants themselves a right).
    alice.email = "alice@care.example"
    alice.save()
    response = invite(
        client_for(alice),
        person.organisation,
        people=[str(person.id)],
        email="Alice@care.example",
        role=CareRole.ADMIN,
    )
    assert response.status_code == 400
    assert "email" in response.context["form"].errors
    assert not Invitation.objects.exists()


def test_a_team_admin_sees_and_withdraws_only_their_own_invitations(alice, person, smtp_server):
    boss = login("olga", person.organisation, admin=True)
    invite(client_for(boss), person.organisation, people=[str(person.id)])
    theirs = Invitation.objects.get()
    client = client_for(alice)
    page = client.get(reverse("dashboard:invitations", args=[person.organisation.slug]))
    assert page.context["rows"] == []
    revoke = client.post(
        reverse("dashboard:invitation_revoke", args=[person.organisation.slug, theirs.id])
    )
    assert revoke.status_code == 404
    theirs.refresh_from_db()
    assert theirs.revoked_at is None
