"""Issue 30: an alert e-mail's one-time link works only for the person it was sent to. Issue 29
made it so (dashboard/alerting/respond.link_is_for); these check it for every other kind of
login that could hold the link: each role of the care team, the organisation's admin, and for
the link sent to the organisation's contact address."""

import pytest
from django.utils import timezone

from dashboard.alerting import delivery, ladder
from dashboard.alerting.models import AlertNotice, AlertStep
from dashboard.models import CareTeamMembership
from memory.models import Alert, OrganisationMembership
from tests.dashboard.conftest import client_for, login
from tests.dashboard.test_alert_delivery import _ack_path, _message_to, carol, team  # noqa: F401

pytestmark = pytest.mark.django_db


def _refused_and_nothing_changed(user, path, alert):
    before = AlertStep.objects.filter(alert=alert).count()
    client = client_for(user)
    assert client.get(path).status_code == 403
    assert client.post(path, {"action": "claim"}).status_code == 403
    assert client.post(path, {"action": "resolve", "outcome": "false_alarm"}).status_code == 403
    alert.refresh_from_db()
    assert (alert.status, alert.claimed_by_id) == (Alert.Status.OPEN, None)
    assert AlertStep.objects.filter(alert=alert).count() == before


def test_carols_link_is_refused_to_every_other_login_of_the_organisation(
    team,  # noqa: F811
    carol,  # noqa: F811
    alert,
    person,
    smtp_server,
):
    alice, bob = team
    dave = login("dave")
    CareTeamMembership.objects.create(user=dave, person=person, role="staff")
    boss = login("boss", person.organisation, admin=True)
    ladder.alert_deliver(alert_id=alert.id)
    path = _ack_path(smtp_server, _message_to(smtp_server, "carol@care.example"))
    for other in (alice, bob, dave, boss):
        _refused_and_nothing_changed(other, path, alert)
    assert AlertNotice.objects.get(alert=alert, user=carol).opened_at is None
    # Carol herself may.
    assert client_for(carol).post(path, {"action": "claim"}).status_code == 200
    assert Alert.objects.get(id=alert.id).claimed_by_id == carol.id


def test_the_contacts_link_works_only_for_the_login_with_the_contacts_address(
    team,  # noqa: F811
    carol,  # noqa: F811
    alert,
    person,
):
    alice, _ = team
    notice = AlertNotice.objects.create(
        alert=alert,
        user=None,
        level=3,
        dedupe_key=f"test-contact-{alert.id}",
        due_at=timezone.now(),
    )
    path = f"/alerts/ack/{delivery.ack_token(notice)}/"
    for other in (alice, carol):
        _refused_and_nothing_changed(other, path, alert)
    duty = login("duty")
    duty.email = "OnCall@care.example"
    duty.save()
    OrganisationMembership.objects.filter(user=duty).update(is_admin=True)
    assert client_for(duty).get(path).status_code == 200
