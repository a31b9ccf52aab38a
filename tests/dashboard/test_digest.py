"""The weekly digest (dashboard/alerting/digest.py) over a real SMTP server."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from dashboard.alerting import digest
from dashboard.alerting.models import AlertRouting
from tests.support.smtp_server import SmtpServer

LONDON = ZoneInfo("Europe/London")


def _sunday_evening() -> datetime:
    day = datetime.now(LONDON).date()
    day += timedelta(days=(6 - day.weekday()) % 7)  # this or next Sunday
    return datetime(day.year, day.month, day.day, 18, 20, tzinfo=LONDON)


@pytest.fixture
def opted_in(alice, bob, person):
    alice.email, bob.email = "alice@care.example", "bob@family.example"
    alice.save()
    bob.save()
    AlertRouting.objects.create(
        membership=bob.care_memberships.get(), weekly_digest=True, time_zone="Europe/London"
    )
    return bob


def test_an_opted_in_member_gets_it_once_on_sunday_evening(opted_in, smtp_server):
    sunday = _sunday_evening()
    assert digest.digests_send(now=sunday - timedelta(hours=1)) == 0
    assert digest.digests_send(now=sunday) == 1
    assert digest.digests_send(now=sunday + timedelta(minutes=30)) == 0  # once a week
    assert smtp_server.recipients == [["bob@family.example"]]  # alice did not opt in
    assert digest.digests_send(now=sunday + timedelta(days=1)) == 0  # Monday


def test_it_says_how_the_week_went_without_anyones_words(opted_in, person, smtp_server):
    # The person fixture talked two days ago and two hours ago, with a fall.
    sunday = _sunday_evening()
    import time_machine

    with time_machine.travel(sunday - timedelta(hours=1)):
        from tests.dashboard.conftest import converse

        converse(
            person,
            sunday - timedelta(hours=3),
            [
                ("I fell and I can't get up, help me", 0.9, "fearful"),
                ("Where am I?", 0.5, "confused"),
            ],
        )
        digest.digests_send(now=sunday)
    (message,) = smtp_server.messages
    text, html = SmtpServer.text(message), SmtpServer.html(message)
    assert "Peggy" in message["Subject"]
    assert "talked with Clara" in text and "may have fallen" in text and "may have fallen" in html
    assert "where Peggy is" in text  # the kind of question, in plain words
    for part in (text, html):
        assert "can't get up" not in part and "can&#x27;t get up" not in part
        assert "Where am I?" not in part


def test_a_login_taken_out_of_the_organisation_gets_none(opted_in, smtp_server):
    opted_in.organisation_memberships.all().delete()
    assert digest.digests_send(now=_sunday_evening()) == 0


def test_a_mail_failure_leaves_it_for_the_next_hour(opted_in, smtp_server):
    smtp_server.refuse = True
    sunday = _sunday_evening().replace(minute=0)
    assert digest.digests_send(now=sunday) == 0
    smtp_server.refuse = False
    assert digest.digests_send(now=sunday + timedelta(minutes=10)) == 1
