"""Alerts reach people: routing, e-mail over a real SMTP server, escalation, acknowledgement
and the alert's timeline (dashboard/alerting/delivery.py)."""

from datetime import time, timedelta

import pytest
from django.test import Client
from django.utils import timezone

from dashboard.alerting import delivery
from dashboard.alerting.models import AlertEscalation, AlertNotice, AlertRouting, AlertStep
from dashboard.models import CareTeamMembership
from memory.conversations import tenancy
from memory.models import Alert
from tests.dashboard.conftest import client_for, converse, login
from tests.support.smtp_server import SmtpServer

WORDS = "I fell and I can't get up"


@pytest.fixture
def team(alice, bob, person):
    """alice (team admin, transcripts) and bob (family) with e-mail addresses."""
    alice.email, bob.email = "alice@care.example", "bob@family.example"
    alice.save()
    bob.save()
    person.organisation.contact_email = "oncall@care.example"
    person.organisation.save()
    return alice, bob


def _steps(alert) -> list[tuple[str, str, int]]:
    return [
        (s.kind, s.who, s.level) for s in AlertStep.objects.filter(alert=alert).order_by("at", "id")
    ]


def test_urgent_alert_emails_the_team_at_once_without_their_words(team, alert, smtp_server):
    sent = delivery.alert_deliver(alert_id=alert.id)

    assert len(sent) == 2
    assert sorted(r[0] for r in smtp_server.recipients) == [
        "alice@care.example",
        "bob@family.example",
    ]
    message = smtp_server.messages[0]
    text, html = SmtpServer.text(message), SmtpServer.html(message)
    assert "Peggy" in message["Subject"] and "Peggy" in text and "Peggy" in html
    assert "may have fallen" in text and "may have fallen" in html
    for part in (text, html, message["Subject"]):
        assert "fell" not in part.replace("fallen", "") and "get up" not in part
    assert "/alerts/ack/" in text and "/alerts/ack/" in html
    assert [k for k, _, _ in _steps(alert)] == ["sent", "sent"]


def test_delivering_twice_sends_nothing_twice(team, alert, smtp_server):
    delivery.alert_deliver(alert_id=alert.id)
    delivery.alert_deliver(alert_id=alert.id)
    assert len(smtp_server.messages) == 2


def test_routing_none_and_no_email_reach_nobody(team, alert, smtp_server):
    alice, bob = team
    AlertRouting.objects.create(membership=alice.care_memberships.get(), receives="none")
    AlertRouting.objects.create(membership=bob.care_memberships.get(), by_email=False)
    assert delivery.alert_deliver(alert_id=alert.id) == []
    assert smtp_server.messages == []


def test_a_login_taken_out_of_the_organisation_gets_nothing(team, alert, smtp_server):
    alice, bob = team
    bob.organisation_memberships.all().delete()
    delivery.alert_deliver(alert_id=alert.id)
    assert [r[0] for r in smtp_server.recipients] == ["alice@care.example"]


def _distress_alert(person) -> Alert:
    return Alert.objects.create(
        person=person,
        kind=Alert.Kind.DISTRESS_ABOVE_BASELINE,
        detail={"session_average": 0.8, "baseline": 0.3},
        dedupe_key=f"test:{person.id}",
        created_at=timezone.now(),
    )


def test_non_urgent_alert_waits_for_the_members_hours(team, person, smtp_server):
    alice, bob = team
    AlertRouting.objects.create(
        membership=alice.care_memberships.get(),
        receives="all",
        hours_start=time(8),
        hours_end=time(20),
        time_zone="UTC",
    )  # bob keeps the default: urgent only
    alert = _distress_alert(person)
    night = timezone.now().replace(hour=23, minute=0, second=0, microsecond=0)

    assert delivery.alert_deliver(alert_id=alert.id, now=night) == []
    assert _steps(alert) == [("held", "alice", 0)]
    assert delivery.alerts_sweep(now=night + timedelta(hours=8, minutes=59))["sent"] == 0
    assert delivery.alerts_sweep(now=night + timedelta(hours=9))["sent"] == 1
    assert smtp_server.recipients == [["alice@care.example"]]
    assert "something to look at" in smtp_server.messages[0]["Subject"]
    assert not AlertEscalation.objects.filter(alert=alert).exists()  # not urgent


def test_urgent_alert_ignores_quiet_hours(team, alert, smtp_server):
    alice, _ = team
    AlertRouting.objects.create(
        membership=alice.care_memberships.get(), hours_start=time(8), hours_end=time(9)
    )
    night = timezone.now().replace(hour=3, minute=0)
    delivery.alert_deliver(alert_id=alert.id, now=night)
    assert len(smtp_server.messages) == 2


def test_unacknowledged_urgent_alert_escalates_to_admins_then_the_contact(
    team, alert, person, smtp_server
):
    alice, bob = team
    AlertRouting.objects.create(membership=alice.care_memberships.get(), receives="none")
    start = timezone.now()
    delivery.alert_deliver(alert_id=alert.id, now=start)
    assert smtp_server.recipients == [["bob@family.example"]]

    assert delivery.alerts_sweep(now=start + timedelta(minutes=9))["escalated"] == 0
    assert delivery.alerts_sweep(now=start + timedelta(minutes=10))["escalated"] == 1
    # The team's admin hears now, whatever her own choice was.
    assert smtp_server.recipients[-1] == ["alice@care.example"]
    assert "nobody has answered" in smtp_server.messages[-1]["Subject"]

    delivery.alerts_sweep(now=start + timedelta(minutes=20))
    assert smtp_server.recipients[-1] == ["oncall@care.example"]
    assert delivery.alerts_sweep(now=start + timedelta(minutes=60))["escalated"] == 0
    assert _steps(alert) == [
        ("sent", "bob", 0),
        ("escalated", "the team's admins", 1),
        ("sent", "alice", 1),
        ("escalated", "organisation contact", 2),
        ("sent", "organisation contact", 2),
    ]


def test_acknowledging_on_the_dashboard_stops_the_escalation(team, alert, person, smtp_server):
    alice, _ = team
    start = timezone.now()
    delivery.alert_deliver(alert_id=alert.id, now=start)
    response = client_for(alice).post(
        f"/people/{person.id}/alerts/{alert.id}/", {"status": "acknowledged"}
    )
    assert response.status_code == 302
    assert delivery.alerts_sweep(now=start + timedelta(minutes=30))["escalated"] == 0
    assert len(smtp_server.messages) == 2
    assert _steps(alert)[-1] == ("acknowledged", "alice", 0)
    assert AlertStep.objects.get(alert=alert, kind="acknowledged").via == "dashboard"


def test_looking_into_it_also_stops_the_escalation(team, alert, person, smtp_server):
    _, bob = team
    start = timezone.now()
    delivery.alert_deliver(alert_id=alert.id, now=start)
    client_for(bob).post(f"/people/{person.id}/alerts/{alert.id}/", {"status": "looking_into"})
    assert delivery.alerts_sweep(now=start + timedelta(minutes=30))["escalated"] == 0


def _ack_path(smtp_server, index: int = 0) -> str:
    text = SmtpServer.text(smtp_server.messages[index])
    url = next(line for line in text.splitlines() if "/alerts/ack/" in line).strip()
    return url.split("127.0.0.1:8000", 1)[1]


def test_the_emails_link_needs_a_login_then_acknowledges_once(team, alert, person, smtp_server):
    alice, bob = team
    delivery.alert_deliver(alert_id=alert.id)
    path = _ack_path(smtp_server)

    response = Client().get(path)
    assert response.status_code == 302 and "/login/" in response["Location"]

    client = client_for(bob if "bob" in smtp_server.recipients[0][0] else alice)
    opened = client.get(path)
    assert opened.status_code == 200 and b"dealing with it" in opened.content
    assert (
        Alert.objects.get(id=alert.id).status == Alert.Status.OPEN
    )  # opening acknowledges nothing

    assert client.post(path).status_code == 200
    assert Alert.objects.get(id=alert.id).status == Alert.Status.ACKNOWLEDGED
    assert client.post(path).status_code == 410  # one time only
    kinds = [k for k, _, _ in _steps(alert)]
    assert kinds[-2:] == ["opened", "acknowledged"]
    assert AlertStep.objects.get(alert=alert, kind="acknowledged").via == "email"


def test_the_link_answers_outsiders_and_forgeries_as_unknown(team, alert, person, smtp_server):
    delivery.alert_deliver(alert_id=alert.id)
    path = _ack_path(smtp_server)
    other_org = tenancy.organisation_get_or_create("elsewhere")
    outsider = client_for(login("mallory", other_org))
    assert outsider.get(path).status_code == 404
    assert outsider.post(path).status_code == 404
    forged = path[:-3] + ("xyz" if not path.endswith("xyz/") else "abc") + "/"
    assert client_for(team[0]).get(forged).status_code == 404
    assert Alert.objects.get(id=alert.id).status == Alert.Status.OPEN


def test_a_refused_email_is_recorded_and_sent_again_by_the_sweep(team, alert, smtp_server):
    smtp_server.refuse = True
    start = timezone.now()
    assert delivery.alert_deliver(alert_id=alert.id, now=start) == []
    assert {k for k, _, _ in _steps(alert)} == {"send_failed"}
    assert set(AlertNotice.objects.filter(alert=alert).values_list("status", flat=True)) == {
        "failed"
    }
    smtp_server.refuse = False
    assert delivery.alerts_sweep(now=start + timedelta(minutes=1))["sent"] == 2
    assert len(smtp_server.messages) == 2


def test_the_words_that_raised_it_only_for_the_transcript_right(team, alert, person):
    alice, bob = team
    shown = client_for(alice).get(f"/people/{person.id}/alerts/", headers={"HX-Request": "true"})
    hidden = client_for(bob).get(f"/people/{person.id}/alerts/", headers={"HX-Request": "true"})
    assert WORDS in shown.content.decode().replace("&#x27;", "'")
    body = hidden.content.decode().replace("&#x27;", "'")
    assert WORDS not in body and "may have fallen" in body


def test_a_handover_note_goes_on_the_timeline_encrypted(team, alert, person):
    _, bob = team
    note = "Called her daughter, she is fine"
    response = client_for(bob).post(
        f"/people/{person.id}/alerts/{alert.id}/note/",
        {"note": note},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200 and note in response.content.decode()
    step = AlertStep.objects.get(alert=alert, kind="note")
    assert step.note == note and step.who == "bob"
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT note FROM alert_steps WHERE id = %s", [step.id])
        assert note not in str(cursor.fetchone()[0])


def test_an_empty_or_long_note_is_a_400_and_outsiders_get_404(team, alert, person, charlie):
    _, bob = team
    url = f"/people/{person.id}/alerts/{alert.id}/note/"
    assert (
        client_for(bob).post(url, {"note": ""}, headers={"HX-Request": "true"}).status_code == 400
    )
    assert (
        client_for(bob).post(url, {"note": "x" * 501}, headers={"HX-Request": "true"}).status_code
        == 400
    )
    assert client_for(charlie).post(url, {"note": "hello"}).status_code == 404
    assert not AlertStep.objects.filter(kind="note").exists()


def test_the_people_list_polls_its_badges_as_a_background_request(team, person):
    alice, _ = team
    page = client_for(alice).get("/").content.decode()
    assert 'hx-trigger="every 60s"' in page and '"X-Clara-Poll": "1"' in page
    partial = client_for(alice).get("/", headers={"HX-Request": "true"}).content.decode()
    assert partial.lstrip().startswith('<div id="people-list"') and "alert" in partial


def test_an_exchange_with_a_fall_queues_delivery_after_commit(
    team, person, django_capture_on_commit_callbacks, monkeypatch
):
    queued = []
    from dashboard.alerting import tasks

    monkeypatch.setattr(tasks.deliver_alert, "delay", lambda alert_id: queued.append(alert_id))
    with django_capture_on_commit_callbacks(execute=True):
        converse(person, timezone.now(), [("Help me, I've fallen", 0.9, "fearful")])
    newest = Alert.objects.filter(person=person).order_by("-id").first()
    assert queued == [newest.id]
    assert CareTeamMembership.objects.filter(person=person).count() == 2


def test_failed_webhook_deliveries_show_to_the_organisations_admins_only(team, person):
    from memory.models import OrganisationMembership, WebhookDelivery
    from memory.webhooks import services as webhooks

    alice, bob = team
    webhook, _ = webhooks.webhook_create(
        organisation_id=person.organisation_id,
        url="https://nursecall.example/hook",
        events=["alert.raised"],
    )
    WebhookDelivery.objects.create(
        webhook=webhook,
        event="alert.raised",
        dedupe_key="x",
        status="failed",
        last_error="HTTP 503",
    )
    OrganisationMembership.objects.filter(user=alice).update(is_admin=True)
    assert "nursecall.example" in client_for(alice).get("/").content.decode()
    assert "nursecall.example" not in client_for(bob).get("/").content.decode()


def test_a_member_chooses_their_own_alerts(team, person):
    _, bob = team
    url = f"/people/{person.id}/alerts/mine/"
    client = client_for(bob)
    assert client.get(url).status_code == 200
    response = client.post(
        url,
        {
            "receives": "all",
            "by_email": "on",
            "hours_start": "08:00",
            "hours_end": "20:00",
            "time_zone": "Europe/London",
            "weekly_digest": "on",
        },
    )
    assert response.status_code == 302
    assert b"Saved." in client.get(response["Location"]).content
    routing = AlertRouting.objects.get(membership__user=bob)
    assert routing.receives == "all" and routing.weekly_digest and routing.hours_start == time(8)


@pytest.mark.parametrize(
    "bad",
    [
        {"receives": "loud"},
        {"receives": "all", "hours_start": "08:00"},
        {"receives": "all", "time_zone": "Mars/Base"},
    ],
)
def test_a_bad_choice_is_a_400_and_saves_nothing(team, person, bad):
    _, bob = team
    response = client_for(bob).post(f"/people/{person.id}/alerts/mine/", bad)
    assert response.status_code == 400
    assert not AlertRouting.objects.filter(membership__user=bob).exists()


def test_outsiders_cannot_see_or_set_anyones_alert_choice(team, person, charlie):
    url = f"/people/{person.id}/alerts/mine/"
    assert client_for(charlie).get(url).status_code == 404
    assert client_for(charlie).post(url, {"receives": "all"}).status_code == 404


def test_erasing_the_person_erases_the_alerts_timeline_and_notes(team, alert, person, smtp_server):
    from memory import privacy

    delivery.alert_deliver(alert_id=alert.id)
    delivery.note_add(alert=alert, user=team[1], text="Called her daughter, she is fine")
    privacy.person_erase(person.id)
    assert not AlertStep.objects.exists()
    assert not AlertNotice.objects.exists()
    assert not AlertEscalation.objects.exists()


def test_an_alert_about_a_moment_long_past_is_not_paged(team, alert, smtp_server):
    later = alert.created_at + timedelta(days=2)
    assert delivery.alert_deliver(alert_id=alert.id, now=later) == []
    assert smtp_server.messages == [] and not AlertEscalation.objects.exists()
