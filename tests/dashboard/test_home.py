"""The shift's home view (issue 18 item 6): everyone the login may see, who is upset now, open
alerts, who has not talked today where they live; sortable, stable, polled without renewing the
login, in a fixed number of queries."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.contrib.sessions.models import Session as StoredSession
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from dashboard import home
from dashboard.models import AuditEvent, CareRole, CareTeamMembership
from memory.models import Alert, ChatMessage, Person
from tests.dashboard.conftest import PASSWORD, client_for, converse, make_person
from tests.support.otp import pass_second_factor

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}
POLL = {"X-Clara-Poll": "1", "HX-Request": "true"}


def _home(sort: str | None = None) -> str:
    return reverse("dashboard:home") + (f"?sort={sort}" if sort else "")


def _join(user, *people):
    for someone in people:
        CareTeamMembership.objects.create(user=user, person=someone, role=CareRole.STAFF)


def _names(user, sort: str) -> list[str]:
    rows = home.shift_rows(user=user, now=timezone.now(), sort=sort)
    return [row.name for row in rows]


def _set_last_talk(person: Person, at: datetime) -> None:
    Person.objects.filter(id=person.id).update(last_active_at=at)


def test_who_is_upset_now_in_claras_words_without_their_sentences(person, alice, other_person):
    _join(alice, other_person)
    response = client_for(alice).get(_home())
    assert response.status_code == 200
    content = response.content.decode()
    # Peggy: 0.9 (frightened) two hours ago, mostly anxious; Arthur: nothing read.
    assert "Very upset · mostly anxious" in content
    assert "No feelings read in the last 3 hours" in content
    assert "1 upset in the last 3 hours" in content
    # Not even for a member with the transcript right: a shift overview quotes no one.
    for said in ChatMessage.objects.filter(role=ChatMessage.Role.USER).values_list(
        "content", flat=True
    ):
        assert said not in content


def test_open_alerts_with_the_newest_headline(person, alice, alert):
    row = home.shift_rows(user=alice, now=timezone.now())[0]
    assert row.open_alerts == 1 and row.alert_headline
    Alert.objects.filter(id=alert.id).update(status=Alert.Status.RESOLVED)
    row = home.shift_rows(user=alice, now=timezone.now())[0]
    assert (row.open_alerts, row.alert_headline) == (0, "")


def test_not_talked_today_is_counted_from_midnight_where_the_person_lives(alice):
    now = timezone.now()
    auckland, honolulu = ZoneInfo("Pacific/Auckland"), ZoneInfo("Pacific/Honolulu")
    ana = make_person("Ana", {"timezone": "Pacific/Auckland"})
    hal = make_person("Hal", {"timezone": "Pacific/Honolulu"})
    _join(alice, ana, hal)
    for someone, zone in ((ana, auckland), (hal, honolulu)):
        local = now.astimezone(zone)
        midnight = datetime.combine(local.date(), datetime.min.time(), tzinfo=zone)
        # A minute before their midnight: yesterday there, whatever the day is in UTC.
        _set_last_talk(someone, midnight - timedelta(minutes=1))
    _set_last_talk(hal, now - min(timedelta(minutes=1), (now - _midnight(now, honolulu)) / 2))
    rows = {row.name: row for row in home.shift_rows(user=alice, now=now)}
    assert rows["Ana"].talked_today is False
    assert rows["Hal"].talked_today is True


def _midnight(now, zone):
    return datetime.combine(now.astimezone(zone).date(), datetime.min.time(), tzinfo=zone)


def test_someone_made_today_who_never_talked_has_not_talked_today(alice):
    now = timezone.now()
    nel, tia = make_person("Nel"), make_person("Tia")
    _join(alice, nel, tia)
    # Both made a moment ago (last_active_at starts at creation); Tia talked in that instant.
    Person.objects.filter(id__in=[nel.id, tia.id]).update(created_at=now, last_active_at=now)
    converse(tia, now, [("Hello there", 0.1, "calm")])
    Person.objects.filter(id=tia.id).update(created_at=now, last_active_at=now)
    rows = {r.name: r for r in home.shift_rows(user=alice, now=now + timedelta(seconds=1))}
    assert (rows["Nel"].talked_today, rows["Nel"].last_talk) == (False, None)
    assert rows["Tia"].talked_today is True


@pytest.fixture
def ward(alice):
    """Four residents: two equally upset, one calm, one silent; alerts on two."""
    now = timezone.now()
    people = {}
    for name, distress in (("Dora", 0.7), ("Bea", 0.7), ("Cal", 0.1), ("Abe", None)):
        someone = make_person(name)
        if distress is not None:
            converse(someone, now - timedelta(hours=1), [("Hello there", distress, "anxious")])
        people[name] = someone
        _join(alice, someone)
    Alert.objects.filter(person__in=people.values()).delete()  # only the ones made here
    for name, count in (("Cal", 2), ("Dora", 1)):
        for index in range(count):
            Alert.objects.create(
                person=people[name],
                kind=Alert.Kind.DISTRESS_ABOVE_BASELINE,
                detail={},
                dedupe_key=f"ward-{name}-{index}",
                created_at=now - timedelta(minutes=index),
            )
    _set_last_talk(people["Abe"], now - timedelta(days=5))
    return people


def test_sorts_are_stable_and_most_pressing_first(alice, ward):
    assert _names(alice, "upset")[0] == "Peggy (Nana)"  # very upset two hours ago (0.9)
    CareTeamMembership.objects.filter(user=alice).exclude(person__in=ward.values()).delete()
    assert _names(alice, "name") == ["Abe", "Bea", "Cal", "Dora"]
    # Equally upset: in name order (stable), then calm, then nothing read.
    assert _names(alice, "upset") == ["Bea", "Dora", "Cal", "Abe"]
    assert _names(alice, "alerts") == ["Cal", "Dora", "Abe", "Bea"]
    assert _names(alice, "last_talk")[0] == "Abe"  # the longest without a talk


def test_the_sort_links_keep_the_sort_in_the_poll(alice, ward):
    content = client_for(alice).get(_home("alerts"), headers=HX).content.decode()
    assert f'hx-get="{_home("alerts")}" hx-trigger="every 60s"' in content
    assert 'href="/home/?sort=name"' in content or f'href="{_home("name")}"' in content
    assert content.index("Cal") < content.index("Dora") < content.index("Bea")


def test_an_unknown_sort_is_a_400_naming_the_parameter(alice):
    response = client_for(alice).get(_home("age; DROP TABLE"))
    assert response.status_code == 400
    assert response.content.decode().startswith("sort:")


def test_a_few_queries_however_many_residents(alice, ward, django_assert_max_num_queries):
    _join(alice, make_person("Zed"))  # never talked: the one extra query is already asked
    client = client_for(alice)
    client.get(_home())  # sessions, caches warm
    # 12 before issue 29; what needs a person (alerts not resolved, resolved this shift) adds 2.
    with django_assert_max_num_queries(14) as few:
        client.get(_home(), headers=POLL)
    for index in range(12):
        _join(alice, make_person(f"Extra {index}"))
    with django_assert_max_num_queries(len(few.captured_queries)):
        response = client.get(_home(), headers=POLL)
    assert response.content.decode().count('class="shift-row') == 18


def test_the_page_load_is_audited_once_per_organisation_and_the_poll_is_not(alice, person):
    client = client_for(alice)
    client.get(_home())
    rows = list(AuditEvent.objects.filter(action="view_home"))
    assert [(r.username, r.organisation_id, r.person_id) for r in rows] == [
        ("alice", person.organisation_id, None)
    ]
    client.get(_home(), headers=POLL)
    assert AuditEvent.objects.filter(action="view_home").count() == 1


def test_the_poll_does_not_renew_the_login(alice, person):
    start = datetime(2026, 3, 2, 9, 0, tzinfo=ZoneInfo("UTC"))
    with time_machine.travel(start, tick=False) as clock:
        client = Client()
        client.post(reverse("dashboard:login"), {"username": "alice", "password": PASSWORD})
        pass_second_factor(client, alice)  # a team admin
        key = client.cookies["sessionid"].value
        before = StoredSession.objects.get(session_key=key).expire_date
        clock.shift(timedelta(minutes=5))
        page = client.get(_home())
        assert 'hx-headers=\'{"X-Clara-Poll": "1"}\'' in page.content.decode()
        renewed = StoredSession.objects.get(session_key=key).expire_date
        assert renewed > before
        clock.shift(timedelta(minutes=5))
        assert client.get(_home(), headers=POLL).status_code == 200
        assert StoredSession.objects.get(session_key=key).expire_date == renewed


def test_the_people_list_links_to_the_shift_view(alice, person):
    content = client_for(alice).get(reverse("dashboard:people")).content.decode()
    assert f'href="{reverse("dashboard:home")}"' in content


def test_no_one_in_a_care_team_sees_an_empty_shift(db):
    from tests.dashboard.conftest import login

    content = client_for(login("newcomer")).get(_home()).content.decode()
    assert "not in anyone's care team yet" in content
