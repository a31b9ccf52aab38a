"""No one grants themselves a right (issue 30, step 2).

dora is a team admin of Peggy's care team without the transcript right; alice, another admin of
the same team, has it. dora editing her own row (to read every transcript and download the full
JSON export) is refused on the care-team page and in the admin, and nothing changes; alice
grants it; each change and each refusal is audited with who did it.
"""

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from dashboard.models import AuditEvent, CareRole, CareTeamMembership
from memory.models import AccessEvent
from tests.dashboard.conftest import client_for, login
from tests.support.otp import verified_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def dora(person):
    user = login("dora")
    CareTeamMembership.objects.create(
        user=user, person=person, role=CareRole.ADMIN, can_see_transcripts=False
    )
    return user


def _row(user, person):
    return CareTeamMembership.objects.get(user=user, person=person)


def _edit(client, person, member, **form):
    return client.post(reverse("dashboard:team_member", args=[person.id, member.id]), form)


# --- The dashboard's care-team page ------------------------------------------------------------


def test_a_team_admin_cannot_grant_itself_the_transcript_right(dora, alice, person):
    own = _row(dora, person)
    response = _edit(client_for(dora), person, own, role="admin", can_see_transcripts="on")
    assert response.status_code == 403
    own.refresh_from_db()
    assert own.can_see_transcripts is False
    # She still cannot read a transcript or download everything.
    session = person.sessions.first()
    transcript = reverse("dashboard:session_transcript", args=[person.id, session.id])
    assert client_for(dora).get(transcript).status_code == 403
    refused = AuditEvent.objects.filter(action="edit_team", object_id=str(own.id), allowed=False)
    assert refused.get().username == "dora"
    assert not AuditEvent.objects.filter(
        action="edit_team", object_id=str(own.id), allowed=True
    ).exists()


def test_a_member_does_not_change_its_own_role_either(bob, alice, person):
    # bob is family: he cannot reach the page at all (403); alice cannot demote or promote
    # herself: another admin does it.
    own = _row(alice, person)
    response = _edit(client_for(alice), person, own, role="staff")
    assert response.status_code == 403
    own.refresh_from_db()
    assert own.role == CareRole.ADMIN


def test_another_admin_of_the_team_grants_it_audited_with_who(dora, alice, person):
    own = _row(dora, person)
    response = _edit(client_for(alice), person, own, role="admin", can_see_transcripts="on")
    assert response.status_code == 302
    own.refresh_from_db()
    assert own.can_see_transcripts is True
    row = AuditEvent.objects.get(action="edit_team", object_id=str(own.id), allowed=True)
    assert row.username == "alice"
    assert row.person_id == person.id


def test_a_team_admin_may_still_leave_the_team(dora, alice, person):
    own = _row(dora, person)
    response = _edit(client_for(dora), person, own, remove="1")
    assert response.status_code == 302
    assert not CareTeamMembership.objects.filter(id=own.id).exists()


def test_the_team_page_offers_no_form_for_ones_own_row(dora, alice, person):
    response = client_for(dora).get(reverse("dashboard:team", args=[person.id]))
    content = response.content.decode()
    own_url = reverse("dashboard:team_member", args=[person.id, _row(dora, person).id])
    others_url = reverse("dashboard:team_member", args=[person.id, _row(alice, person).id])
    assert 'name="role"' in content.split(others_url)[1][:600]
    assert 'name="role"' not in content.split(own_url)[1][:600]
    assert "Another admin of the team changes your own role and rights." in content


# --- The admin ---------------------------------------------------------------------------------


def _operator(username, person):
    user = login(username)
    user.is_staff = True
    user.save()
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="dashboard"))
    return verified_client(user), user


def _admin_url(view, *args):
    return reverse(f"admin:dashboard_careteammembership_{view}", args=args)


def _admin_form(member, **changes):
    data = {
        "user": member.user_id,
        "person": member.person_id,
        "role": member.role,
        "can_see_transcripts": "on" if member.can_see_transcripts else "",
    }
    return {**data, **changes}


def test_an_operator_cannot_grant_itself_a_right_in_the_admin(person, alice):
    client, olivia = _operator("olivia", person)
    own = CareTeamMembership.objects.create(user=olivia, person=person, role=CareRole.STAFF)
    response = client.post(
        _admin_url("change", own.pk), _admin_form(own, role="admin", can_see_transcripts="on")
    )
    assert response.status_code == 403
    own.refresh_from_db()
    assert (own.role, own.can_see_transcripts) == (CareRole.STAFF, False)


def test_an_operator_cannot_put_itself_in_a_care_team_in_the_admin(person, alice):
    client, olivia = _operator("olivia", person)
    response = client.post(
        _admin_url("add"),
        {"user": olivia.pk, "person": person.pk, "role": "admin", "can_see_transcripts": "on"},
    )
    assert response.status_code == 200  # the form again, with the reason
    assert b"Another admin must put you in a care team" in response.content
    assert not CareTeamMembership.objects.filter(user=olivia).exists()


def test_an_operator_cannot_move_a_row_to_itself_in_the_admin(person, bob):
    client, olivia = _operator("olivia", person)
    member = _row(bob, person)
    client.post(_admin_url("change", member.pk), _admin_form(member, user=olivia.pk))
    member.refresh_from_db()
    assert member.user_id == bob.pk


def test_another_operator_grants_it_in_the_admin_audited_with_who(person, dora):
    client, _ = _operator("oscar", person)
    own = _row(dora, person)
    response = client.post(_admin_url("change", own.pk), _admin_form(own, can_see_transcripts="on"))
    assert response.status_code == 302, response.content
    own.refresh_from_db()
    assert own.can_see_transcripts is True
    row = AccessEvent.objects.get(action="admin_team_changed", object_id=str(own.pk))
    assert (row.actor, row.channel, row.outcome) == ("user:oscar", "admin", "allowed")
    assert row.organisation_id == person.organisation_id
    assert row.person_id == person.id
