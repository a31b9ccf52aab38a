"""The alert e-mail (issue 29): the headline first ("Peggy may have fallen", in the subject,
the text part's first line and the top of the HTML), where (home and room from the profile),
when in the person's time zone (UTC said only when none is set), who else was told, one claim
button for those who may act; laid out for a phone and for dark mail clients. Sent through a
real SMTP server."""

import os
import re
import subprocess
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from dashboard.alerting import ladder
from dashboard.alerting.models import AlertRouting
from dashboard.models import CareTeamMembership
from tests.dashboard.conftest import login
from tests.support.smtp_server import SmtpServer

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def team(alice, bob, person):
    alice.first_name, alice.last_name, alice.email = "Alice", "Smith", "alice@care.example"
    alice.save()
    carol = login("carol")
    carol.first_name, carol.last_name, carol.email = "Carol", "Diaz", "carol@care.example"
    carol.save()
    CareTeamMembership.objects.create(user=carol, person=person, role="staff")
    bob.first_name, bob.last_name, bob.email = "Bob", "Jones", "bob@family.example"
    bob.save()
    AlertRouting.objects.create(membership=bob.care_memberships.get(), receives="urgent")
    return alice, bob, carol


def _to(smtp_server, address):
    return smtp_server.messages[smtp_server.recipients.index([address])]


def _profile(person, **changes):
    person.caregiver_context = {**person.caregiver_context, **changes}
    person.save()


def test_the_headline_comes_first_everywhere(team, alert, person, smtp_server):
    ladder.alert_deliver(alert_id=alert.id)
    message = _to(smtp_server, "carol@care.example")
    assert message["Subject"] == "Peggy may have fallen"
    assert SmtpServer.text(message).splitlines()[0] == "Peggy may have fallen"
    html = SmtpServer.html(message)
    body = html[html.index("<body") :]
    first_cell = re.search(r'<td class="headline[^"]*"[^>]*>(.*?)</td>', body, re.S).group(1)
    assert first_cell == "Peggy may have fallen"
    # Nothing but the hidden preview line (which starts with it too) comes before it.
    before = body[: body.index('<td class="headline')]
    preview = re.search(r'<div style="display: none;[^"]*">(.*?)</div>', before, re.S)
    assert preview.group(1).startswith("Peggy may have fallen")
    assert re.sub(r"<[^>]+>", "", before.replace(preview.group(0), "")).split() == []


def test_where_is_the_home_and_room_from_the_profile(team, alert, person, smtp_server):
    _profile(person, home="Beech House", room="Room 12")
    ladder.alert_deliver(alert_id=alert.id)
    message = _to(smtp_server, "carol@care.example")
    assert SmtpServer.text(message).splitlines()[1] == "Where: Beech House, Room 12"
    assert "<strong>Where:</strong> Beech House, Room 12" in SmtpServer.html(message)


def test_no_where_line_without_a_home(team, alert, person, smtp_server):
    ladder.alert_deliver(alert_id=alert.id)
    assert "Where:" not in SmtpServer.text(_to(smtp_server, "carol@care.example"))


def test_when_is_in_the_persons_time_zone_and_utc_is_said_only_without_one(
    team, alert, person, smtp_server
):
    local = alert.created_at.astimezone(ZoneInfo("Europe/London"))
    ladder.alert_deliver(alert_id=alert.id)
    text = SmtpServer.text(_to(smtp_server, "carol@care.example"))
    assert f"When: {local:%A} {local.day} {local:%B, %H:%M}" in text.splitlines()
    assert "UTC" not in text


def test_without_a_time_zone_the_email_says_utc(team, person, smtp_server):
    from memory.models import Alert

    _profile(person, timezone="")
    alert = Alert.objects.get(person=person, kind="escalation")
    ladder.alert_deliver(alert_id=alert.id)
    text = SmtpServer.text(_to(smtp_server, "carol@care.example"))
    utc = alert.created_at
    assert f"When: {utc:%A} {utc.day} {utc:%B, %H:%M} UTC" in text


def test_who_else_was_told_by_name_and_one_claim_button(team, alert, person, smtp_server):
    ladder.alert_deliver(alert_id=alert.id)
    html = SmtpServer.html(_to(smtp_server, "carol@care.example"))
    assert "Also told: Alice Smith, Bob Jones." in html
    assert html.count('class="button"') == 1 and "I'm dealing with it" in html
    family = SmtpServer.html(_to(smtp_server, "bob@family.example"))
    assert 'class="button"' not in family and "/alerts/ack/" not in family
    assert "Also told: Alice Smith, Carol Diaz." in family


def test_laid_out_for_a_phone_and_dark_mail_clients(team, alert, person, smtp_server):
    ladder.alert_deliver(alert_id=alert.id)
    html = SmtpServer.html(_to(smtp_server, "carol@care.example"))
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    assert '<meta name="color-scheme" content="light dark">' in html
    assert "max-width: 480px" in html and "@media (prefers-color-scheme: dark)" in html
    # Every element that sets a text colour sets its background too, or sits on one that does:
    # the headline's pair survives a client that darkens the page.
    headline = re.search(r'<td class="headline[^"]*" style="([^"]*)"', html).group(1)
    assert "background: #a50e0e" in headline and "color: #ffffff" in headline


def test_make_run_points_the_links_at_the_port_it_serves():
    def site_url(env):
        done = subprocess.run(
            [
                "make",
                "-n",
                "--no-print-directory",
                "--eval",
                "run: site-url",
                "--eval",
                "site-url: ; @echo SITE=$(CLARA_SITE_URL)",
                "run",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return re.search(r"SITE=(\S+)", done.stdout).group(1)

    env = {k: v for k, v in os.environ.items() if k not in ("CLARA_SITE_URL", "PORT")}
    assert site_url(env) == "http://127.0.0.1:8000"
    assert site_url({**env, "PORT": "8123"}) == "http://127.0.0.1:8123"
    assert site_url({**env, "PORT": "8123", "CLARA_SITE_URL": "https://clara.example.org"}) == (
        "https://clara.example.org"
    )


def test_the_room_is_kept_with_the_home_on_the_profile(team, person):
    from memory.core.person import CaregiverContext
    from tests.dashboard.conftest import client_for

    alice, _, _ = team
    response = client_for(alice).post(
        f"/people/{person.id}/profile/home/",
        {"home": "Beech House", "room": "Room 12", "time_zone": "Europe/London"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    person.refresh_from_db()
    about = CaregiverContext.of(person)
    assert (about.home, about.room) == ("Beech House", "Room 12")
    assert "Beech House</strong>, <strong>Room 12" in response.content.decode()
