"""Emotional trends per person per day, computed in SQL.

Each behaviour is checked on both paths: one person at a time (trends.person_trends_compute,
the on-demand recompute) and a batch of people at once (trends_batch, the nightly job).
"""

import uuid
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from memory.conversations import services
from memory.conversations.emotion import EmotionReading
from memory.core.errors import NotFound
from memory.insights import trends, trends_batch
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


class Paths:
    """Compute and store one person's trends on one of the two paths."""

    def __init__(self, path: str):
        self.path = path

    def row(self, person, *, day: date | None, now: datetime) -> PersonTrend:
        """The stored row; `day` None means the default (today where the person lives)."""
        if self.path == "per_person":
            trend = trends.person_trends_compute(person_id=person.id, day=day, now=now)
            return PersonTrend.objects.get(id=trend.id)
        done = trends_batch.people_trends_compute(person_ids=[person.id], day=day, now=now)
        assert done == [person.id]
        return PersonTrend.objects.filter(person=person).order_by("-computed_at", "-day").first()

    def __call__(self, person, day: date = DAY) -> dict:
        return self.row(person, day=day, now=_local(day, 23)).data


@pytest.fixture(params=["per_person", "batch"])
def compute(request) -> Paths:
    return Paths(request.param)


def test_baseline_is_the_average_distress_of_the_sessions(person, compute):
    _session(person, _local(DAY, 9), [("Hello", 0.2), ("Hi there", 0.4)])
    _session(person, _local(DAY, 20), [("Hello", 0.6)])

    data = compute(person)

    assert data["baseline_distress"] == 0.4
    assert data["readings"] == 3
    assert data["sessions_covered"] == 2


def test_baseline_covers_only_the_last_30_sessions(person, compute):
    _session(person, _local(DAY - timedelta(days=20), 9), [("Hello", 1.0)])
    for day in range(30):
        _session(person, _local(DAY - timedelta(days=19), 10) + timedelta(hours=day), [("Hi", 0.2)])

    data = compute(person)

    assert data["baseline_distress"] == 0.2
    assert data["sessions_covered"] == 30


def test_morning_and_evening_use_the_persons_time_zone(person, compute):
    # 07:00 and 19:00 in New York are 12:00 and 00:00 UTC.
    _session(person, _local(DAY, 7), [("Good morning", 0.1)])
    _session(person, _local(DAY, 19), [("Good evening", 0.7)])
    _session(person, _local(DAY, 15), [("Good afternoon", 0.4)])

    data = compute(person)

    assert data["timezone"] == "America/New_York"
    assert data["morning_avg"] == 0.1
    assert data["evening_avg"] == 0.7
    assert data["morning_readings"] == 1
    assert data["evening_readings"] == 1


def test_noon_is_neither_morning_nor_evening(person, compute):
    _session(person, _local(DAY, 12), [("Lunch time", 0.5)])

    data = compute(person)

    assert data["morning_avg"] is None
    assert data["evening_avg"] is None


def test_hours_follow_daylight_saving_time(person, compute):
    # New York moves from UTC-5 to UTC-4 on 8 March 2026: one fixed offset would put either
    # 06:15 after the change or 11:30 before it outside the morning.
    summer_day = date(2026, 3, 10)
    _session(person, _local(date(2026, 3, 5), 6, 15), [("Before, early", 0.2)])
    _session(person, _local(date(2026, 3, 5), 11, 30), [("Before, late", 0.2)])
    _session(person, _local(summer_day, 6, 15), [("After, early", 0.5)])

    data = compute(person, day=summer_day)

    assert data["morning_readings"] == 3
    assert data["morning_avg"] == 0.3


def test_a_missing_time_zone_means_utc(person, compute):
    person.caregiver_context = {}
    person.save()
    _session(person, datetime(2026, 1, 12, 7, 0, tzinfo=UTC), [("Morning", 0.3)])

    data = compute(person)

    assert data["timezone"] == "UTC"
    assert data["morning_avg"] == 0.3


def test_weekly_averages_are_the_last_four_weeks_oldest_first(person, compute):
    _session(person, _local(DAY - timedelta(weeks=3), 10), [("Hello", 0.8)])
    _session(person, _local(DAY - timedelta(weeks=1), 10), [("Hello", 0.6)])
    _session(person, _local(DAY, 10), [("Hello", 0.2), ("Hello", 0.4)])
    _session(person, _local(DAY - timedelta(weeks=5), 10), [("Too old", 1.0)])

    weekly = compute(person)["weekly"]

    assert weekly == [
        {"week_start": "2025-12-22", "avg": 0.8, "readings": 1},
        {"week_start": "2025-12-29", "avg": None, "readings": 0},
        {"week_start": "2026-01-05", "avg": 0.6, "readings": 1},
        {"week_start": "2026-01-12", "avg": 0.3, "readings": 2},
    ]


def test_top_question_types_leave_out_general_chat(person, compute):
    _session(
        person,
        _local(DAY, 10),
        [("Where am I?", 0.5), ("What is this place?", 0.5), ("What day is it?", 0.5), ("Hi", 0.1)],
    )

    data = compute(person)

    assert data["top_question_types"] == [
        {"question_type": "location", "count": 2},
        {"question_type": "time", "count": 1},
    ]


def test_repeated_questions_per_session_by_type_and_local_hour(person, compute):
    _session(person, _local(DAY, 8), [("Where am I?", 0.5), ("Where am I?", 0.5)])
    _session(person, _local(DAY, 20), [("What day is it?", 0.5), ("What day is it?", 0.5)])

    repeats = compute(person)["repeats"]

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


def test_narrative_effect_is_the_change_to_the_persons_next_message(person, compute):
    _session(person, _local(DAY, 10), [("Scared", 0.8), ("Better", 0.5)], narrative_at=0)
    _session(person, _local(DAY, 11), [("Scared", 0.6), ("Fine", 0.5)], narrative_at=0)

    effect = compute(person)["narrative_effectiveness"]

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


def test_a_story_at_the_end_of_a_session_is_a_use_without_a_change(person, compute):
    _session(person, _local(DAY, 10), [("Hello", 0.2), ("Scared", 0.8)], narrative_at=1)

    effect = compute(person)["narrative_effectiveness"]

    assert effect["by_category"] == [
        {"category": "calming_story", "uses": 1, "measured": 0, "avg_change": None}
    ]


def test_trends_are_one_row_per_person_per_day(person, compute):
    _session(person, _local(DAY, 10), [("Hello", 0.2)])

    compute(person, day=DAY)
    compute(person, day=DAY + timedelta(days=1))
    compute(person, day=DAY)

    assert PersonTrend.objects.filter(person=person).count() == 2


def test_computing_twice_leaves_the_row_as_computing_once(person, compute):
    _session(person, _local(DAY, 10), [("Hello", 0.2)])
    first = compute.row(person, day=DAY, now=_local(DAY, 22))

    second = compute.row(person, day=DAY, now=_local(DAY, 23))

    assert second.data == first.data
    assert PersonTrend.objects.get(person=person).computed_at == _local(DAY, 22)


def test_new_data_updates_the_days_row(person, compute):
    _session(person, _local(DAY, 10), [("Hello", 0.2)])
    compute(person)
    _session(person, _local(DAY, 11), [("Hello", 0.4)])

    data = compute(person)

    assert data["readings"] == 2
    assert PersonTrend.objects.get(person=person).data["baseline_distress"] == 0.3


def test_the_day_defaults_to_today_where_the_person_lives(person, compute):
    # 03:00 UTC on the 13th is still the 12th in New York.
    trend = compute.row(person, day=None, now=datetime(2026, 1, 13, 3, 0, tzinfo=UTC))

    assert trend.day == DAY


def test_a_person_with_no_sessions_gets_empty_trends(person, compute):
    data = compute(person)

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


# --- the batch path gives the per-person path's figures, to the digit ---------------------

QUESTIONS = [
    "Where am I?",
    "What day is it?",
    "Who are you?",
    "Where is my husband?",
    "What are we doing today?",
    "I like the garden.",
    "Where am I?",
    "What day is it?",
]
STORIES = [
    ("garden-walk", "calming_story"),
    ("seaside-1962", "reminiscence"),
    ("morning-tea", "orientation"),
]


def _varied_person(name: str, zone: str | None, rng, *, sessions: int, first: datetime):
    """A person in `zone` with `sessions` sessions from `first` on, at varied local hours."""
    person_id = uuid.uuid4()
    services.session_resolve(user_id=person_id, display_name=name, at=first)
    person = Person.objects.get(id=person_id)
    person.caregiver_context = {"timezone": zone} if zone is not None else {}
    person.save()
    at = first
    for _ in range(sessions):
        # 5 to 60 hours apart: sessions land at every local hour, across clock changes.
        at += timedelta(hours=rng.randint(5, 60), minutes=rng.randint(0, 59))
        session, _ = services.session_resolve(user_id=person_id, at=at)
        turns = rng.randint(1, 4)
        for turn in range(turns):
            story = None
            if rng.random() < 0.3:  # on a session's last turn, a use without a change
                story_id, category = rng.choice(STORIES)
                story = services.NarrativeRef(story_id, "seed", category)
            services.exchange_record(
                session_id=session.id,
                user_message=rng.choice(QUESTIONS),
                assistant_message="I'm here with you.",
                emotion=_reading(round(rng.random(), 2), rng.choice(["calm", "anxious", "sad"])),
                narrative=story,
                at=at + timedelta(minutes=turn * 7),
            )
        services.session_close(session_id=session.id, at=at + timedelta(minutes=turns * 7))
    return person


def test_the_batch_gives_each_person_exactly_the_per_person_figures():
    import random

    rng = random.Random(5)
    # Clock changes inside the covered range: New York and Paris (March), Sydney (April, the
    # southern one); fixed half and quarter hours (Kolkata, Kathmandu); no zone, a bad zone.
    start = datetime(2026, 2, 20, 0, 0, tzinfo=UTC)
    people = [
        _varied_person("NY", "America/New_York", rng, sessions=34, first=start),
        _varied_person("Paris", "Europe/Paris", rng, sessions=20, first=start),
        _varied_person("Sydney", "Australia/Sydney", rng, sessions=20, first=start),
        _varied_person("Kolkata", "Asia/Kolkata", rng, sessions=8, first=start),
        _varied_person("Kathmandu", "Asia/Kathmandu", rng, sessions=8, first=start),
        _varied_person("No zone", None, rng, sessions=6, first=start),
        _varied_person("Bad zone", "Mars/Olympus_Mons", rng, sessions=6, first=start),
    ]
    quiet = _varied_person("Quiet", "Europe/London", rng, sessions=0, first=start)
    people.append(quiet)
    # Sessions after the day are left out by both paths.
    for day in (date(2026, 3, 31), date(2026, 4, 9)):
        days = {person.id: day for person in people}

        batch = trends_batch.people_trends_data(people=people, days=days)

        for person in people:
            assert batch[person.id] == trends.trends_data(person=person, day=day), person
    covered = batch[people[0].id]
    # The data is varied enough to mean something: a full baseline window, both times of
    # day, repeats at several hours, stories with and without a next message.
    assert covered["sessions_covered"] == trends.BASELINE_SESSIONS
    assert covered["morning_readings"] and covered["evening_readings"]
    assert len(covered["repeats"]["by_hour"]) > 2
    uses = sum(s["uses"] for s in covered["narrative_effectiveness"]["by_category"])
    measured = sum(s["measured"] for s in covered["narrative_effectiveness"]["by_category"])
    assert 0 < measured < uses
    assert batch[quiet.id]["sessions_covered"] == 0
    assert batch[people[6].id]["timezone"] == "UTC"


def test_one_batch_stores_each_persons_row_for_their_own_day(person):
    sydney = Person.objects.create(
        created_at=_local(DAY, 0),
        last_active_at=_local(DAY, 0),
        caregiver_context={"timezone": "Australia/Sydney"},
    )
    _session(person, _local(DAY, 10), [("Where am I?", 0.4)])
    # 03:00 UTC on the 13th: the 12th in New York, already the 13th in Sydney.
    now = datetime(2026, 1, 13, 3, 0, tzinfo=UTC)

    done = trends_batch.people_trends_compute(
        person_ids=[person.id, sydney.id, uuid.uuid4()], now=now
    )

    assert set(done) == {person.id, sydney.id}  # an unknown id is skipped
    assert PersonTrend.objects.get(person=person).day == DAY
    assert PersonTrend.objects.get(person=sydney).day == date(2026, 1, 13)
    assert PersonTrend.objects.get(person=person).data["readings"] == 1


def test_a_batch_rerun_writes_only_the_rows_whose_figures_changed(person):
    other = Person.objects.create(
        created_at=_local(DAY, 0), last_active_at=_local(DAY, 0), caregiver_context={}
    )
    _session(person, _local(DAY, 10), [("Hello", 0.2)])
    both = [person.id, other.id]
    trends_batch.people_trends_compute(person_ids=both, day=DAY, now=_local(DAY, 21))
    _session(person, _local(DAY, 11), [("Hello", 0.4)])

    trends_batch.people_trends_compute(person_ids=both, day=DAY, now=_local(DAY, 22))

    assert PersonTrend.objects.count() == 2
    assert PersonTrend.objects.get(person=person).computed_at == _local(DAY, 22)
    assert PersonTrend.objects.get(person=person).data["readings"] == 2
    assert PersonTrend.objects.get(person=other).computed_at == _local(DAY, 21)
