"""Alerts reach people: routing, e-mail over a real SMTP server, the ladder (escalation while
nobody has it, a reminder of a claim not resolved, escalation again), claims and resolutions
with their outcome, the e-mail's link (for its recipient only) and the alert's timeline
(dashboard/alerting/)."""

from datetime import time, timedelta

import pytest
from django.test import Client
from django.utils import timezone

from dashboard.alerting import delivery, ladder
from dashboard.alerting.models import AlertEscalation, AlertNotice, AlertRouting, AlertStep
from dashboard.models import CareTeamMembership
from memory.conversations import tenancy
from memory.models import Alert
from tests.dashboard.conftest import client_for, converse, login
from tests.support.smtp_server import SmtpServer

WORDS = "I fell and I can't get up"


@pytest.fixture
def team(alice, bob, person):
    """alice (team admin, transcripts) and bob (family) with e-mail addresses and names."""
    alice.email, bob.email = "alice@care.example", "bob@family.example"
    alice.first_name, alice.last_name = "Alice", "Smith"
    bob.first_name, bob.last_name = "Bob", "Jones"
    alice.save()
    bob.save()
    person.organisation.contact_email = "oncall@care.example"
    person.organisation.save()
    # A care home (the default): family hear of urgent alerts once they opt in; bob has.
    AlertRouting.objects.create(membership=bob.care_memberships.get(), receives="urgent")
    return alice, bob


def _steps(alert) -> list[tuple[str, str, int]]:
    return [
        (s.kind, s.who, s.level) for s in AlertStep.objects.filter(alert=alert).order_by("at", "id")
    ]


def test_urgent_alert_emails_the_team_at_once_without_their_words(team, alert, smtp_server):
    sent = ladder.alert_deliver(alert_id=alert.id)

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
    ladder.alert_deliver(alert_id=alert.id)
    ladder.alert_deliver(alert_id=alert.id)
    assert len(smtp_server.messages) == 2


def test_routing_none_and_no_email_reach_nobody_with_an_alert_that_can_wait(
    team, person, smtp_server
):
    alice, bob = team
    AlertRouting.objects.create(membership=alice.care_memberships.get(), receives="none")
    AlertRouting.objects.filter(membership__user=bob).update(by_email=False)
    assert ladder.alert_deliver(alert_id=_distress_alert(person).id) == []
    assert smtp_server.messages == []


def test_an_urgent_alert_nobody_asked_for_still_reaches_someone_who_may_act(
    team, alert, smtp_server
):
    alice, bob = team
    AlertRouting.objects.create(membership=alice.care_memberships.get(), receives="none")
    AlertRouting.objects.filter(membership__user=bob).update(by_email=False)
    ladder.alert_deliver(alert_id=alert.id)
    # Nobody's choice leaves it without an owner: the team's admins hear at once.
    assert smtp_server.recipients == [["alice@care.example"]]


def test_a_login_taken_out_of_the_organisation_gets_nothing(team, alert, smtp_server):
    alice, bob = team
    bob.organisation_memberships.all().delete()
    ladder.alert_deliver(alert_id=alert.id)
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

    assert ladder.alert_deliver(alert_id=alert.id, now=night) == []
    assert _steps(alert) == [("held", "Alice Smith", 0)]
    assert ladder.alerts_sweep(now=night + timedelta(hours=8, minutes=59))["sent"] == 0
    assert ladder.alerts_sweep(now=night + timedelta(hours=9))["sent"] == 1
    assert smtp_server.recipients == [["alice@care.example"]]
    assert smtp_server.messages[0]["Subject"] == "Peggy was more upset than usual in a conversation"
    assert not AlertEscalation.objects.filter(alert=alert).exists()  # not urgent


def test_urgent_alert_ignores_quiet_hours(team, alert, smtp_server):
    alice, _ = team
    AlertRouting.objects.create(
        membership=alice.care_memberships.get(), hours_start=time(8), hours_end=time(9)
    )
    night = timezone.now().replace(hour=3, minute=0)
    ladder.alert_deliver(alert_id=alert.id, now=night)
    assert len(smtp_server.messages) == 2


@pytest.fixture
def carol(team, person):
    """Care staff in the team: allowed to act, like the team's admins."""
    user = login("carol")
    user.first_name, user.last_name, user.email = "Carol", "Diaz", "carol@care.example"
    user.save()
    CareTeamMembership.objects.create(user=user, person=person, role="staff")
    return user


def _claim(user, person, alert, **headers):
    return client_for(user).post(
        f"/people/{person.id}/alerts/{alert.id}/", {"action": "claim"}, headers=headers
    )


def _resolve(user, person, alert, outcome="well", note="", **headers):
    return client_for(user).post(
        f"/people/{person.id}/alerts/{alert.id}/",
        {"action": "resolve", "outcome": outcome, "note": note},
        headers=headers,
    )


def test_an_alert_nobody_claims_climbs_to_the_admins_the_contact_then_everyone_again(
    team, alert, person, smtp_server
):
    alice, bob = team
    AlertRouting.objects.create(membership=alice.care_memberships.get(), receives="none")
    start = timezone.now()
    # Only bob (family, who may not act) hears at first: the first rung reaches nobody who
    # may act, so the alert goes on to the team's admins at once.
    ladder.alert_deliver(alert_id=alert.id, now=start)
    assert smtp_server.recipients == [["bob@family.example"], ["alice@care.example"]]
    assert smtp_server.messages[-1]["Subject"] == "Nobody has answered yet: Peggy may have fallen"

    assert ladder.alerts_sweep(now=start + timedelta(minutes=9))["escalated"] == 0
    assert ladder.alerts_sweep(now=start + timedelta(minutes=10))["escalated"] == 1
    assert smtp_server.recipients[-1] == ["oncall@care.example"]
    # Past the last rung: everyone who may act, and the contact, every claim timeout.
    assert ladder.alerts_sweep(now=start + timedelta(minutes=39))["escalated"] == 0
    assert ladder.alerts_sweep(now=start + timedelta(minutes=40))["escalated"] == 1
    assert sorted(r[0] for r in smtp_server.recipients[-2:]) == [
        "alice@care.example",
        "oncall@care.example",
    ]
    assert _steps(alert) == [
        ("sent", "Bob Jones", 0),
        ("escalated", "the team's admins: Alice Smith", 1),
        ("sent", "Alice Smith", 1),
        # Nobody is on the organisation's on-call list: that rung is passed at once.
        ("escalated", "nobody on call now", 2),
        ("escalated", "the organisation's contact", 3),
        ("sent", "the organisation's contact", 3),
        ("escalated", "everyone again: Alice Smith, the organisation's contact", 4),
        ("sent", "Alice Smith", 4),
        ("sent", "the organisation's contact", 4),
    ]


def test_family_in_the_team_cannot_claim_or_resolve_and_the_escalation_goes_on(
    team, alert, person, smtp_server
):
    _, bob = team
    start = timezone.now()
    ladder.alert_deliver(alert_id=alert.id, now=start)
    refused = _claim(bob, person, alert)
    assert refused.status_code == 403
    assert b"have been told" in refused.content
    assert _resolve(bob, person, alert, "false_alarm").status_code == 403
    alert.refresh_from_db()
    assert (alert.status, alert.claimed_by_id, alert.outcome) == ("open", None, "")
    assert not AlertStep.objects.filter(alert=alert, kind__in=["claimed", "resolved"]).exists()
    assert ladder.alerts_sweep(now=start + timedelta(minutes=10))["escalated"] == 1
    from dashboard.models import AuditEvent

    assert (
        AuditEvent.objects.filter(
            user=bob, action="alert_status", object_id=str(alert.id), allowed=False
        ).count()
        == 2
    )


def test_the_ladder_walked_in_time_claim_reminder_escalation_resolution(
    team, carol, alert, person, smtp_server
):
    """Time-machine walk: a claim stops the climb; not resolved in 30 minutes, the claimer is
    reminded; 10 minutes later it climbs again; a resolution stops everything."""
    import time_machine

    alice, _ = team
    start = timezone.now().replace(microsecond=0)
    with time_machine.travel(start, tick=False) as clock:
        ladder.alert_deliver(alert_id=alert.id)
        clock.shift(timedelta(minutes=3))
        assert _claim(carol, person, alert).status_code == 302
        clock.shift(timedelta(minutes=29))  # 29 min after the claim: nothing yet
        assert ladder.alerts_sweep() == {"escalated": 0, "reminded": 0, "sent": 0}
        clock.shift(timedelta(minutes=1))
        assert ladder.alerts_sweep()["reminded"] == 1
        assert smtp_server.recipients[-1] == ["carol@care.example"]
        assert smtp_server.messages[-1]["Subject"] == "Is it over? Peggy may have fallen"
        clock.shift(timedelta(minutes=9))
        assert ladder.alerts_sweep()["escalated"] == 0
        clock.shift(timedelta(minutes=1))
        assert ladder.alerts_sweep()["escalated"] == 1  # to the team's admins
        assert smtp_server.recipients[-1] == ["alice@care.example"]
        escalated = SmtpServer.text(smtp_server.messages[-1])
        assert "Carol Diaz said they are dealing with it" in escalated
        clock.shift(timedelta(minutes=2))
        assert _resolve(carol, person, alert, "hurt_cared_for").status_code == 302
        clock.shift(timedelta(hours=2))
        assert ladder.alerts_sweep() == {"escalated": 0, "reminded": 0, "sent": 0}
    alert.refresh_from_db()
    assert (alert.status, alert.claimed_by_id, alert.resolved_by_id, alert.outcome) == (
        "resolved",
        carol.id,
        carol.id,
        "hurt_cared_for",
    )
    assert alert.resolved_at == start + timedelta(minutes=45)
    steps = [(k, w) for k, w, _ in _steps(alert)]
    assert ("claimed", "Carol Diaz") in steps
    assert ("reminded", "Carol Diaz") in steps
    assert ("escalated", "the team's admins: Alice Smith") in steps
    assert steps[-1] == ("resolved", "Carol Diaz")
    assert AlertStep.objects.get(alert=alert, kind="resolved").note == "hurt, care given"


def test_a_take_over_restarts_the_claims_clock(team, carol, alert, person, smtp_server):
    import time_machine

    alice, _ = team
    start = timezone.now().replace(microsecond=0)
    with time_machine.travel(start, tick=False) as clock:
        ladder.alert_deliver(alert_id=alert.id)
        _claim(carol, person, alert)
        clock.shift(timedelta(minutes=20))
        assert _claim(alice, person, alert).status_code == 302
        clock.shift(timedelta(minutes=15))  # 35 min after Carol's claim, 15 after Alice's
        assert ladder.alerts_sweep()["reminded"] == 0
        clock.shift(timedelta(minutes=15))
        assert ladder.alerts_sweep()["reminded"] == 1
        assert smtp_server.recipients[-1] == ["alice@care.example"]
    alert.refresh_from_db()
    assert alert.claimed_by_id == alice.id
    assert ("took_over", "Alice Smith") in [(k, w) for k, w, _ in _steps(alert)]


def test_the_outcome_shows_on_the_panel_and_its_timeline(team, carol, alert, person):
    _claim(carol, person, alert)
    response = _resolve(carol, person, alert, "other", "Her son took her to the GP", **HX)
    assert response.status_code == 200
    content = response.content.decode()
    assert "Resolved</strong> by Carol Diaz" in content
    assert "other: Her son took her to the GP" in content
    assert "Carol Diaz resolved it" in content and "Carol Diaz is dealing with it" in content


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ({"action": "resolve"}, "Choose what happened."),
        ({"action": "resolve", "outcome": "other"}, "Say in a few words what happened."),
        ({"action": "resolve", "outcome": "unknown"}, "Choose what happened."),
        ({"action": "resolve", "outcome": "well", "note": "x" * 501}, "at most 500"),
        ({"action": "dismiss"}, "Choose what to do"),
        ({"status": "acknowledged"}, "Choose what to do"),
    ],
)
def test_a_resolution_without_what_happened_is_a_400_and_changes_nothing(
    team, carol, alert, person, data, said
):
    response = client_for(carol).post(f"/people/{person.id}/alerts/{alert.id}/", data, headers=HX)
    assert response.status_code == 400 and said in response.content.decode()
    alert.refresh_from_db()
    assert alert.status == "open"


HX = {"HX-Request": "true"}


def _ack_path(smtp_server, index: int = 0) -> str:
    text = SmtpServer.text(smtp_server.messages[index])
    url = next(line for line in text.splitlines() if "/alerts/ack/" in line).strip()
    return url.split("127.0.0.1:8000", 1)[1]


def _message_to(smtp_server, address: str) -> int:
    return next(i for i, r in enumerate(smtp_server.recipients) if r == [address])


def test_the_emails_link_needs_a_login_then_claims_and_resolves(
    team, carol, alert, person, smtp_server
):
    ladder.alert_deliver(alert_id=alert.id)
    path = _ack_path(smtp_server, _message_to(smtp_server, "carol@care.example"))

    response = Client().get(path)
    assert response.status_code == 302 and "/login/" in response["Location"]

    client = client_for(carol)
    opened = client.get(path)
    assert opened.status_code == 200 and b"dealing with it" in opened.content
    assert Alert.objects.get(id=alert.id).status == Alert.Status.OPEN  # opening claims nothing

    claimed = client.post(path, {"action": "claim"})
    assert claimed.status_code == 200 and b"You are dealing with it" in claimed.content
    assert Alert.objects.get(id=alert.id).claimed_by_id == carol.id
    assert client.post(path, {"action": "resolve"}).status_code == 400
    done = client.post(path, {"action": "resolve", "outcome": "false_alarm"})
    assert done.status_code == 200 and b"false alarm" in done.content
    assert client.post(path, {"action": "claim"}).status_code == 410  # it is over
    kinds = [k for k, _, _ in _steps(alert)]
    assert kinds[-3:] == ["opened", "claimed", "resolved"]
    assert {
        s.via for s in AlertStep.objects.filter(alert=alert, kind__in=["claimed", "resolved"])
    } == {"email"}


def test_the_link_works_only_for_the_person_it_was_sent_to(team, carol, alert, person, smtp_server):
    alice, _ = team
    ladder.alert_deliver(alert_id=alert.id)
    carols = _ack_path(smtp_server, _message_to(smtp_server, "carol@care.example"))
    before = AlertStep.objects.filter(alert=alert).count()
    for method in ("get", "post"):
        refused = getattr(client_for(alice), method)(carols, {"action": "claim"})
        assert refused.status_code == 403
        assert (
            b"sent to someone else" in refused.content and b"Nothing was changed" in refused.content
        )
    alert.refresh_from_db()
    assert (alert.status, alert.claimed_by_id) == ("open", None)
    assert AlertStep.objects.filter(alert=alert).count() == before  # not even "opened"
    assert AlertNotice.objects.get(alert=alert, user=carol).opened_at is None


def test_the_familys_email_has_no_claim_button_and_their_link_claims_nothing(
    team, carol, alert, person, smtp_server
):
    _, bob = team
    ladder.alert_deliver(alert_id=alert.id)
    index = _message_to(smtp_server, "bob@family.example")
    text = SmtpServer.text(smtp_server.messages[index])
    assert "/alerts/ack/" not in text and "The people who answer alerts have been told" in text
    notice = AlertNotice.objects.get(alert=alert, user=bob)
    path = f"/alerts/ack/{delivery.ack_token(notice)}/"
    response = client_for(bob).post(path, {"action": "claim"})
    assert response.status_code == 403 and b"Nothing was changed" in response.content
    assert Alert.objects.get(id=alert.id).status == "open"


def test_the_link_answers_outsiders_and_forgeries_as_unknown(team, alert, person, smtp_server):
    ladder.alert_deliver(alert_id=alert.id)
    path = _ack_path(smtp_server, _message_to(smtp_server, "alice@care.example"))
    other_org = tenancy.organisation_get_or_create("elsewhere")
    outsider = client_for(login("mallory", other_org))
    assert outsider.get(path).status_code == 404
    assert outsider.post(path, {"action": "claim"}).status_code == 404
    forged = path[:-3] + ("xyz" if not path.endswith("xyz/") else "abc") + "/"
    assert client_for(team[0]).get(forged).status_code == 404
    assert Alert.objects.get(id=alert.id).status == Alert.Status.OPEN


def test_a_refused_email_is_recorded_and_sent_again_by_the_sweep(team, alert, smtp_server):
    smtp_server.refuse = True
    start = timezone.now()
    assert ladder.alert_deliver(alert_id=alert.id, now=start) == []
    assert {k for k, _, _ in _steps(alert)} == {"send_failed"}
    assert set(AlertNotice.objects.filter(alert=alert).values_list("status", flat=True)) == {
        "failed"
    }
    smtp_server.refuse = False
    assert ladder.alerts_sweep(now=start + timedelta(minutes=1))["sent"] == 2
    assert len(smtp_server.messages) == 2


def test_the_words_that_raised_it_only_for_the_transcript_right(team, alert, person):
    alice, bob = team
    shown = client_for(alice).get(f"/people/{person.id}/alerts/", headers={"HX-Request": "true"})
    hidden = client_for(bob).get(f"/people/{person.id}/alerts/", headers={"HX-Request": "true"})
    assert WORDS in shown.content.decode().replace("&#x27;", "'")
    body = hidden.content.decode().replace("&#x27;", "'")
    assert WORDS not in body and "may have fallen" in body


def test_a_handover_note_goes_on_the_timeline_encrypted(team, alert, person):
    # Staff write handover notes (family in a care home are refused: test_family_view.py).
    alice, _ = team
    note = "Called her daughter, she is fine"
    response = client_for(alice).post(
        f"/people/{person.id}/alerts/{alert.id}/note/",
        {"note": note},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200 and note in response.content.decode()
    step = AlertStep.objects.get(alert=alert, kind="note")
    assert step.note == note and step.who == "Alice Smith"
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT note FROM alert_steps WHERE id = %s", [step.id])
        assert note not in str(cursor.fetchone()[0])


def test_an_empty_or_long_note_is_a_400_and_outsiders_get_404(team, alert, person, charlie):
    alice, _ = team
    url = f"/people/{person.id}/alerts/{alert.id}/note/"
    assert (
        client_for(alice).post(url, {"note": ""}, headers={"HX-Request": "true"}).status_code == 400
    )
    assert (
        client_for(alice).post(url, {"note": "x" * 501}, headers={"HX-Request": "true"}).status_code
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
    routing = AlertRouting.objects.get(membership__user=bob)  # as the fixture left it
    assert (routing.receives, routing.hours_start, routing.time_zone) == ("urgent", None, "")


def test_outsiders_cannot_see_or_set_anyones_alert_choice(team, person, charlie):
    url = f"/people/{person.id}/alerts/mine/"
    assert client_for(charlie).get(url).status_code == 404
    assert client_for(charlie).post(url, {"receives": "all"}).status_code == 404


def test_erasing_the_person_erases_the_alerts_timeline_and_notes(team, alert, person, smtp_server):
    from memory import privacy

    ladder.alert_deliver(alert_id=alert.id)
    delivery.note_add(alert=alert, user=team[1], text="Called her daughter, she is fine")
    privacy.person_erase(person.id)
    assert not AlertStep.objects.exists()
    assert not AlertNotice.objects.exists()
    assert not AlertEscalation.objects.exists()


def test_an_alert_about_a_moment_long_past_is_not_paged(team, alert, smtp_server):
    later = alert.created_at + timedelta(days=2)
    assert ladder.alert_deliver(alert_id=alert.id, now=later) == []
    assert smtp_server.messages == [] and not AlertEscalation.objects.exists()


def test_an_alert_nobody_may_act_on_climbs_every_rung_reading_the_ladder_once(
    alert, django_assert_max_num_queries
):
    # No care team, nobody on call, no contact: the first delivery climbs every rung at once.
    # The rungs are read once for the climb, not once per rung (41 statements before; under
    # load, a third of the worker's CPU was this climb: bench/load_test.py).
    with django_assert_max_num_queries(30):
        ladder.alert_deliver(alert_id=alert.id)
    assert [kind for kind, _who, _level in _steps(alert)].count("escalated") == 4
