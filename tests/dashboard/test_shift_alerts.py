"""The shift view and the people list lead with what needs a person (issue 29): alerts not
resolved first, nobody-has-it before someone-has-it, the longest waiting first, with their age
and who has them since when; what was resolved this shift stays, with its outcome."""

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from dashboard.alerting import shift
from dashboard.models import CareRole, CareTeamMembership
from memory.models import Alert, Person
from tests.dashboard.conftest import client_for, login, make_person

pytestmark = pytest.mark.django_db


@pytest.fixture
def ward(alice):
    """Three residents; the staff's names; alerts of different ages and states."""
    now = timezone.now().replace(microsecond=0)
    carol = login("carol")
    carol.first_name, carol.last_name = "Carol", "Diaz"
    carol.save()
    people = {}
    for name in ("Dora", "Bea", "Cal"):
        people[name] = make_person(name, {"preferredName": name, "timezone": "Europe/London"})
        CareTeamMembership.objects.create(user=alice, person=people[name], role=CareRole.ADMIN)
    Alert.objects.filter(person__in=people.values()).delete()

    def alert(name, minutes, status="open", kind=Alert.Kind.ESCALATION, **fields):
        return Alert.objects.create(
            person=people[name],
            kind=kind,
            detail={"reason": "fall"} if kind == Alert.Kind.ESCALATION else {},
            dedupe_key=f"w:{name}:{minutes}:{kind}",
            created_at=now - timedelta(minutes=minutes),
            status=status,
            **fields,
        )

    made = {
        "dora_new": alert("Dora", 5),
        "bea_old": alert("Bea", 40),
        "cal_claimed": alert(
            "Cal", 90, "claimed", claimed_by=carol, claimed_at=now - timedelta(minutes=80)
        ),
        "cal_worry": alert("Cal", 300, kind=Alert.Kind.DISTRESS_ABOVE_BASELINE),
        "dora_done": alert(
            "Dora",
            200,
            "resolved",
            claimed_by=carol,
            claimed_at=now - timedelta(minutes=190),
            resolved_by=carol,
            resolved_at=now - timedelta(minutes=150),
            outcome="false_alarm",
        ),
        "bea_yesterday": alert(
            "Bea",
            60 * 14,
            "resolved",
            resolved_by=carol,
            resolved_at=now - timedelta(hours=13),
            outcome="well",
        ),
    }
    # Dora talked most recently, Cal least: the old order would list Cal last.
    for index, name in enumerate(("Dora", "Bea", "Cal")):
        Person.objects.filter(id=people[name].id).update(
            last_active_at=now - timedelta(hours=index)
        )
    CareTeamMembership.objects.filter(user=alice).exclude(person__in=people.values()).delete()
    return people, made, now


def test_alerts_not_resolved_lead_nobody_has_first_then_the_longest_waiting(alice, ward):
    people, made, now = ward
    needs = shift.needs_a_person(user=alice, now=now)
    assert [a.id for a in needs.waiting] == [
        made["bea_old"].id,  # urgent, nobody has it, 40 min
        made["dora_new"].id,  # urgent, nobody has it, 5 min
        made["cal_claimed"].id,  # urgent, Carol has it
        made["cal_worry"].id,  # can wait
    ]
    claimed = needs.waiting[2]
    assert (claimed.claimed_by, claimed.claimed_at) == ("Carol Diaz", now - timedelta(minutes=80))
    assert needs.nobody_has == 3
    assert [(a.id, a.outcome, a.resolved_by) for a in needs.resolved] == [
        (made["dora_done"].id, "false alarm", "Carol Diaz")
    ]  # yesterday's is past this shift


def test_the_shift_view_shows_age_who_has_it_since_when_and_the_outcome(alice, ward):
    people, made, now = ward
    with time_machine.travel(now, tick=False):
        content = client_for(alice).get(reverse("dashboard:home")).content.decode()
    needs = content[
        content.index('id="needs-a-person"') : content.index('class="lede shift-summary"')
    ]
    assert needs.index(">Bea</a>: Clara flagged") < needs.index(">Dora</a>: Clara flagged")
    assert "40 min ago" in needs and "5 min ago" in needs
    assert "Nobody has it yet" in needs
    since = (now - timedelta(minutes=80)).astimezone(ZoneInfo("Europe/London"))  # Cal's zone
    assert f"<strong>Carol Diaz</strong> has it since {since:%H:%M} (1 h 20 min)" in needs
    assert "Resolved this shift" in needs and "false alarm" in needs
    assert "3 with alerts to look at" in content  # a claimed alert still needs a person


def test_the_people_list_lists_those_with_alerts_first(alice, ward):
    people, made, now = ward
    content = client_for(alice).get(reverse("dashboard:people")).content.decode()
    cards = content[content.index('<ul class="cards">') :]
    order = [cards.index(f">{name}<") for name in ("Bea", "Dora", "Cal")]
    assert order == sorted(order)  # Bea waited longest; Cal (claimed, then worry) after Dora
    assert 'id="needs-a-person"' in content and "Nobody has it yet" in content


def test_only_the_logins_own_people_and_never_another_organisations(alice, ward, other_person):
    from memory.conversations import tenancy

    people, made, now = ward
    Alert.objects.create(
        person=other_person, kind="escalation", detail={}, dedupe_key="x", created_at=now
    )
    elsewhere = make_person("Zoe", organisation=tenancy.organisation_get_or_create("elsewhere"))
    Alert.objects.create(
        person=elsewhere, kind="escalation", detail={}, dedupe_key="y", created_at=now
    )
    # Even a care-team row pointing at another organisation's person shows nothing of them.
    CareTeamMembership.objects.create(user=alice, person=elsewhere, role=CareRole.ADMIN)
    needs = shift.needs_a_person(user=alice, now=now)
    shown = {a.person.id for a in needs.waiting + needs.resolved}
    assert shown == {people["Dora"].id, people["Bea"].id, people["Cal"].id}
