"""Every erasure attempt on the dashboard is audited with its outcome: done, refused (a member
who is not the team admin), or the wrong name typed (nothing erased, not recorded as allowed)."""

import pytest
from django.urls import reverse

from dashboard.models import AuditEvent
from memory.models import Person

pytestmark = pytest.mark.django_db


def _erase(client, person, name):
    return client.post(reverse("dashboard:erase", args=[person.id]), {"confirm_name": name})


def _erase_rows():
    return list(
        AuditEvent.objects.filter(action__startswith="erase").values_list(
            "action", "allowed", "person_id"
        )
    )


def test_a_wrong_name_is_audited_as_a_refused_attempt(alice_client, person):
    response = _erase(alice_client, person, "Somebody else")
    assert response.status_code == 400
    assert Person.objects.filter(id=person.id).exists()
    assert _erase_rows() == [("erase_unconfirmed", False, person.id)]


def test_a_member_without_the_right_is_audited_as_refused(bob_client, person):
    assert _erase(bob_client, person, "Nana").status_code == 403
    assert Person.objects.filter(id=person.id).exists()
    assert _erase_rows() == [("erase", False, person.id)]


def test_a_done_erasure_is_audited_once_as_allowed(alice_client, person):
    assert _erase(alice_client, person, "Nana").status_code == 302
    assert not Person.objects.filter(id=person.id).exists()
    # The row stays, pointing at no one.
    assert _erase_rows() == [("erase", True, None)]


def test_the_organisation_audit_says_what_happened(alice_client, person):
    _erase(alice_client, person, "wrong")
    row = AuditEvent.objects.get(action="erase_unconfirmed")
    assert row.get_action_display() == "tried to erase, wrong confirmation"
