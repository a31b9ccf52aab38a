"""Noise, measured (issue 29): team admins see each person's false alarms per week, from the
outcomes people chose; nobody else does; weeks are the person's own (Monday, where they live)."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.urls import reverse

from dashboard.alerting import noise
from dashboard.models import AuditEvent, CareRole, CareTeamMembership
from memory.models import Alert
from tests.dashboard.conftest import client_for, make_person

pytestmark = pytest.mark.django_db

# A Wednesday afternoon in London.
NOW = datetime(2026, 3, 11, 15, 0, tzinfo=ZoneInfo("Europe/London"))


def _alert(person, at, outcome=""):
    return Alert.objects.create(
        person=person,
        kind=Alert.Kind.ESCALATION,
        detail={"reason": "fall"},
        dedupe_key=f"n:{person.id}:{at.isoformat()}:{outcome}",
        created_at=at,
        status="resolved" if outcome else "open",
        outcome=outcome,
        resolved_at=at + timedelta(minutes=5) if outcome else None,
    )


@pytest.fixture
def noisy(alice, person):
    Alert.objects.filter(person=person).delete()
    ivy = make_person("Ivy", {"preferredName": "Ivy", "timezone": "Pacific/Auckland"})
    CareTeamMembership.objects.create(user=alice, person=ivy, role=CareRole.ADMIN)
    _alert(person, NOW - timedelta(hours=2), "false_alarm")  # this week
    _alert(person, NOW - timedelta(days=1), "well")  # this week (Tuesday)
    _alert(person, NOW - timedelta(days=3), "false_alarm")  # Sunday: last week
    _alert(person, NOW - timedelta(days=8), "false_alarm")  # last week too
    _alert(person, NOW - timedelta(minutes=5))  # not resolved yet
    # Sunday 23:30 in London is Monday morning in Auckland: Ivy's this week.
    _alert(ivy, datetime(2026, 3, 8, 23, 30, tzinfo=ZoneInfo("Europe/London")), "false_alarm")
    Alert.objects.create(
        person=person,
        kind=Alert.Kind.DISTRESS_ABOVE_BASELINE,
        detail={},
        dedupe_key="not urgent",
        created_at=NOW,
        status="resolved",
        outcome="false_alarm",
    )  # not an urgent moment: not the recogniser's noise
    return person, ivy


def test_false_alarms_per_person_per_week_in_their_own_weeks(alice, noisy):
    peggy, ivy = noisy
    rows = {row.person.id: row for row in noise.false_alarms_by_week(people=[peggy, ivy], now=NOW)}
    weeks = [(w.false_alarms, w.urgent) for w in rows[peggy.id].weeks]
    assert weeks[-1] == (1, 3) and weeks[-2] == (2, 2) and sum(f for f, _ in weeks[:-2]) == 0
    assert rows[peggy.id].weeks[-1].start.isoformat() == "2026-03-09"  # Monday in London
    assert [(w.false_alarms, w.urgent) for w in rows[ivy.id].weeks][-1] == (1, 1)


def test_team_admins_see_the_page_audited_family_see_no_one(alice, bob, noisy):
    peggy, _ = noisy
    with time_machine.travel(NOW, tick=False):
        page = client_for(alice).get(reverse("dashboard:false_alarms")).content.decode()
        assert "Peggy (Nana)" in page and "Ivy" in page
        assert "<strong>3</strong> of 5" in page  # Peggy over eight weeks
        family = client_for(bob).get(reverse("dashboard:false_alarms")).content.decode()
    assert "Peggy" not in family and "not an admin of anyone" in family
    assert AuditEvent.objects.filter(user=alice, action="view_false_alarms").count() == 1
    assert not AuditEvent.objects.filter(user=bob, action="view_false_alarms").exists()


def test_the_alerts_panel_tells_team_admins_and_only_them(alice, bob, noisy):
    peggy, _ = noisy
    with time_machine.travel(NOW, tick=False):
        shown = client_for(alice).get(f"/people/{peggy.id}/alerts/").content.decode()
        hidden = client_for(bob).get(f"/people/{peggy.id}/alerts/").content.decode()
    assert "False alarms: <strong>3</strong> of 5 urgent alerts in the last 4 weeks" in shown
    assert "False alarms:" not in hidden
