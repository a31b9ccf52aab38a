"""Emotional trends per person per day, computed in SQL."""

import uuid
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from memory import services, trends
from memory.emotion import EmotionReading
from memory.errors import NotFound
from memory.models import Person, PersonTrend

pytestmark = pytest.mark.django_db

# A Monday; the person lives in New York (UTC-5 in winter).
DAY = date(2026, 1, 12)
NEW_YORK = ZoneInfo("America/New_York")


def _local(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=NEW_YORK)


def _reading(distress: float, emotion: str = "anxious") -> EmotionReading:
    return EmotionReading(
        emotion=emotion, confidence=0.8, distress_score=distress, trajectory="stable"
    )


@pytest.fixture
def person():
    person_id = uuid.uuid4()
    services.session_resolve(user_id=person_id, display_name="Nana", at=_local(DAY, 0))
    person = Person.objects.get(id=person_id)
    person.caregiver_context = {"timezone": "America/New_York"}
    person.save()
    return person


def _session(person, at, exchanges, *, narrative_at=None):
    """One closed session; `exchanges` is a list of (message, distress)."""
    session, _ = services.session_resolve(user_id=person.id, at=at)
    for index, (message, distress) in enumerate(exchanges):
        narrative = None
        if narrative_at == index:
            narrative = services.NarrativeRef("garden-walk", "seed", "calming_story")
        services.exchange_record(
            session_id=session.id,
            user_message=message,
            assistant_message="I'm here with you.",
            emotion=_reading(distress),
            narrative=narrative,
            at=at + timedelta(minutes=index),
        )
    services.session_close(session_id=session.id, at=at + timedelta(minutes=len(exchanges)))
    return session


def _compute(person, day=DAY):
    return trends.person_trends_compute(person_id=person.id, day=day, now=_local(day, 23)).data


def test_baseline_is_the_average_distress_of_the_sessions(person):
    _session(person, _local(DAY, 9), [("Hello", 0.2), ("Hi there", 0.4)])
    _session(person, _local(DAY, 20), [("Hello", 0.6)])

    data = _compute(person)

    assert data["baseline_distress"] == 0.4
    assert data["readings"] == 3
    assert data["sessions_covered"] == 2


def test_baseline_covers_only_the_last_30_sessions(person):
    _session(person, _local(DAY - timedelta(days=20), 9), [("Hello", 1.0)])
    for day in range(30):
        _session(person, _local(DAY - timedelta(days=19), 10) + timedelta(hours=day), [("Hi", 0.2)])

    data = _compute(person)

    assert data["baseline_distress"] == 0.2
    assert data["sessions_covered"] == 30


def test_morning_and_evening_use_the_persons_time_zone(person):
    # 07:00 and 19:00 in New York are 12:00 and 00:00 UTC.
    _session(person, _local(DAY, 7), [("Good morning", 0.1)])
    _session(person, _local(DAY, 19), [("Good evening", 0.7)])
    _session(person, _local(DAY, 15), [("Good afternoon", 0.4)])

    data = _compute(person)

    assert data["timezone"] == "America/New_York"
    assert data["morning_avg"] == 0.1
    assert data["evening_avg"] == 0.7
    assert data["morning_readings"] == 1
    assert data["evening_readings"] == 1


def test_noon_is_neither_morning_nor_evening(person):
    _session(person, _local(DAY, 12), [("Lunch time", 0.5)])

    data = _compute(person)

    assert data["morning_avg"] is None
    assert data["evening_avg"] is None


def test_hours_follow_daylight_saving_time(person):
    # New York moves from UTC-5 to UTC-4 on 8 March 2026: one fixed offset would put either
    # 06:15 after the change or 11:30 before it outside the morning.
    summer_day = date(2026, 3, 10)
    _session(person, _local(date(2026, 3, 5), 6, 15), [("Before, early", 0.2)])
    _session(person, _local(date(2026, 3, 5), 11, 30), [("Before, late", 0.2)])
    _session(person, _local(summer_day, 6, 15), [("After, early", 0.5)])

    data = _compute(person, day=summer_day)

    assert data["morning_readings"] == 3
    assert data["morning_avg"] == 0.3


def test_a_missing_time_zone_means_utc(person):
    person.caregiver_context = {}
    person.save()
    _session(person, datetime(2026, 1, 12, 7, 0, tzinfo=UTC), [("Morning", 0.3)])

    data = _compute(person)

    assert data["timezone"] == "UTC"
    assert data["morning_avg"] == 0.3


def test_weekly_averages_are_the_last_four_weeks_oldest_first(person):
    _session(person, _local(DAY - timedelta(weeks=3), 10), [("Hello", 0.8)])
    _session(person, _local(DAY - timedelta(weeks=1), 10), [("Hello", 0.6)])
    _session(person, _local(DAY, 10), [("Hello", 0.2), ("Hello", 0.4)])
    _session(person, _local(DAY - timedelta(weeks=5), 10), [("Too old", 1.0)])

    weekly = _compute(person)["weekly"]

    assert weekly == [
        {"week_start": "2025-12-22", "avg": 0.8, "readings": 1},
        {"week_start": "2025-12-29", "avg": None, "readings": 0},
        {"week_start": "2026-01-05", "avg": 0.6, "readings": 1},
        {"week_start": "2026-01-12", "avg": 0.3, "readings": 2},
    ]


def test_top_question_types_leave_out_general_chat(person):
    _session(
        person,
        _local(DAY, 10),
        [("Where am I?", 0.5), ("What is this place?", 0.5), ("What day is it?", 0.5), ("Hi", 0.1)],
    )

    data = _compute(person)

    assert data["top_question_types"] == [
        {"question_type": "location", "count": 2},
        {"question_type": "time", "count": 1},
    ]


def test_repeated_questions_per_session_by_type_and_local_hour(person):
    _session(person, _local(DAY, 8), [("Where am I?", 0.5), ("Where am I?", 0.5)])
    _session(person, _local(DAY, 20), [("What day is it?", 0.5), ("What day is it?", 0.5)])

    repeats = _compute(person)["repeats"]

    assert repeats["sessions"] == 2
    assert repeats["total"] == 2
    assert repeats["per_session"] == 1.0
    assert repeats["by_type"] == [
        {"question_type": "location", "repeats": 1, "per_session": 0.5},
        {"question_type": "time", "repeats": 1, "per_session": 0.5},
    ]
    assert repeats["by_hour"] == [
        {"hour": 8, "repeats": 1, "per_session": 0.5},
        {"hour": 20, "repeats": 1, "per_session": 0.5},
    ]


def test_narrative_effect_is_the_change_to_the_persons_next_message(person):
    _session(person, _local(DAY, 10), [("Scared", 0.8), ("Better", 0.5)], narrative_at=0)
    _session(person, _local(DAY, 11), [("Scared", 0.6), ("Fine", 0.5)], narrative_at=0)

    effect = _compute(person)["narrative_effectiveness"]

    assert effect["by_category"] == [
        {"category": "calming_story", "uses": 2, "measured": 2, "avg_change": -0.2}
    ]
    assert effect["by_narrative"] == [
        {
            "narrative_id": "garden-walk",
            "category": "calming_story",
            "uses": 2,
            "measured": 2,
            "avg_change": -0.2,
        }
    ]


def test_a_story_at_the_end_of_a_session_is_a_use_without_a_change(person):
    _session(person, _local(DAY, 10), [("Hello", 0.2), ("Scared", 0.8)], narrative_at=1)

    effect = _compute(person)["narrative_effectiveness"]

    assert effect["by_category"] == [
        {"category": "calming_story", "uses": 1, "measured": 0, "avg_change": None}
    ]


def test_trends_are_one_row_per_person_per_day(person):
    _session(person, _local(DAY, 10), [("Hello", 0.2)])

    _compute(person, day=DAY)
    _compute(person, day=DAY + timedelta(days=1))
    _compute(person, day=DAY)

    assert PersonTrend.objects.filter(person=person).count() == 2


def test_computing_twice_leaves_the_row_as_computing_once(person):
    _session(person, _local(DAY, 10), [("Hello", 0.2)])
    first = trends.person_trends_compute(person_id=person.id, day=DAY, now=_local(DAY, 22))

    second = trends.person_trends_compute(person_id=person.id, day=DAY, now=_local(DAY, 23))

    assert second.data == first.data
    assert PersonTrend.objects.get(person=person).computed_at == _local(DAY, 22)


def test_new_data_updates_the_days_row(person):
    _session(person, _local(DAY, 10), [("Hello", 0.2)])
    _compute(person)
    _session(person, _local(DAY, 11), [("Hello", 0.4)])

    data = _compute(person)

    assert data["readings"] == 2
    assert PersonTrend.objects.get(person=person).data["baseline_distress"] == 0.3


def test_the_day_defaults_to_today_where_the_person_lives(person):
    # 03:00 UTC on the 13th is still the 12th in New York.
    trend = trends.person_trends_compute(
        person_id=person.id, now=datetime(2026, 1, 13, 3, 0, tzinfo=UTC)
    )

    assert trend.day == DAY


def test_a_person_with_no_sessions_gets_empty_trends(person):
    data = _compute(person)

    assert data["baseline_distress"] is None
    assert data["top_question_types"] == []
    assert data["repeats"]["per_session"] is None


def test_an_unknown_person_is_not_found():
    with pytest.raises(NotFound):
        trends.person_trends_compute(person_id=uuid.uuid4(), day=DAY)


def test_people_due_are_those_active_in_the_last_30_days(person):
    now = _local(DAY, 12)
    Person.objects.filter(id=person.id).update(last_active_at=now - timedelta(days=3))
    stale = Person.objects.create(
        created_at=now, last_active_at=now - timedelta(days=40), display_name="Stale"
    )
    archived = Person.objects.create(
        created_at=now, last_active_at=now, display_name="Gone", status=Person.Status.ARCHIVED
    )

    due = trends.people_due_for_trends(now=now)

    assert person.id in due
    assert stale.id not in due
    assert archived.id not in due
