"""Dashboard reads: local time zones (weekday, hour, week, today), grouping and ranking.

The person lives in New York; times are chosen around UTC midnight and the March clock change
so a reading falls on a different weekday or hour in UTC than where the person lives.
"""

from datetime import UTC, datetime, timedelta

import pytest

from dashboard import selectors, words
from tests.dashboard.conftest import converse, make_person

pytestmark = pytest.mark.django_db


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.fixture
def peggy():
    return make_person(
        "Nana", {"preferredName": "Peggy", "pronouns": "she/her", "timezone": "America/New_York"}
    )


def test_heatmap_puts_a_reading_on_the_local_weekday_and_hour(peggy):
    # Monday 03:30 UTC is Sunday 22:30 in New York.
    converse(peggy, utc(2026, 1, 12, 3, 30), [("Hello", 0.4, "anxious")])
    heatmap = selectors.distress_heatmap(person=peggy, now=utc(2026, 1, 20))
    assert heatmap.readings[6][22] == 1
    assert heatmap.averages[6][22] == pytest.approx(0.4)
    assert heatmap.total == 1


def test_heatmap_follows_the_clock_change(peggy):
    # Mondays 23:30 UTC: 18:30 before the clocks go forward (8 March), 19:30 after.
    converse(peggy, utc(2026, 3, 2, 23, 30), [("Hello", 0.2, "calm")])
    converse(peggy, utc(2026, 3, 9, 23, 30), [("Hello", 0.6, "anxious")])
    heatmap = selectors.distress_heatmap(person=peggy, now=utc(2026, 3, 12))
    assert heatmap.readings[0][18] == 1
    assert heatmap.readings[0][19] == 1


def test_heatmap_leaves_out_readings_older_than_its_window(peggy):
    converse(peggy, utc(2025, 9, 1, 12), [("Hello", 0.4, "anxious")])
    assert selectors.distress_heatmap(person=peggy, now=utc(2026, 1, 20)).total == 0


def test_weeks_start_on_the_local_monday(peggy):
    # Sunday 22:30 in New York belongs to the week that began on Monday 5 January.
    converse(peggy, utc(2026, 1, 12, 3, 30), [("Hello", 0.4, "anxious")])
    converse(peggy, utc(2026, 1, 12, 15, 0), [("Hello", 0.8, "anxious")])
    weeks = selectors.weekly_distress(person=peggy, now=utc(2026, 1, 13), weeks=2)
    assert [str(week.start) for week in weeks] == ["2026-01-05", "2026-01-12"]
    assert [week.average for week in weeks] == [pytest.approx(0.4), pytest.approx(0.8)]
    assert [week.conversations for week in weeks] == [1, 1]


def test_todays_mood_starts_at_the_persons_midnight(peggy):
    # 04:00 UTC on the 13th is still the 12th in New York: yesterday for her.
    converse(peggy, utc(2026, 1, 13, 4), [("Help", 0.9, "fearful")])
    converse(peggy, utc(2026, 1, 13, 14), [("Hello", 0.1, "calm"), ("Lovely", 0.15, "calm")])
    mood = selectors.moods_today([peggy], now=utc(2026, 1, 13, 16))[peggy.id]
    assert (mood.readings, mood.conversations, mood.feeling) == (2, 1, "calm")
    assert mood.words == "Mostly calm"
    assert mood.level == "calm"


def test_todays_moods_of_a_care_groups_people_in_two_queries():
    # One OR term per person made an expression SQLite refuses beyond ~1,000 people (the
    # people list of a group's admin was a 500); one term per midnight instead.
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memory.models import Person

    now = utc(2026, 1, 13, 16)
    zones = ["Europe/London", "America/New_York"]
    people = Person.objects.bulk_create(
        Person(
            display_name=f"Resident {n}",
            organisation_id=make_person("First").organisation_id,
            created_at=now - timedelta(days=30),
            last_active_at=now,
            caregiver_context={"timezone": zones[n % 2]},
        )
        for n in range(1200)
    )
    # 04:00 UTC is today in London, still yesterday in New York.
    converse(people[0], utc(2026, 1, 13, 4), [("Hello", 0.1, "calm")])
    converse(people[1], utc(2026, 1, 13, 4), [("Help", 0.9, "fearful")])
    converse(people[1], utc(2026, 1, 13, 14), [("Hello", 0.2, "calm")])
    with CaptureQueriesContext(connection) as queries:
        moods = selectors.moods_today(people, now=now)
    assert len(queries.captured_queries) == 2
    assert (moods[people[0].id].readings, moods[people[0].id].conversations) == (1, 1)
    assert (moods[people[1].id].readings, moods[people[1].id].feeling) == (1, "calm")
    assert moods[people[2].id].readings == 0


def test_no_conversation_today_says_so(peggy):
    mood = selectors.moods_today([peggy], now=utc(2026, 1, 13, 16))[peggy.id]
    assert mood.words == "No conversations yet today"


def test_this_weeks_questions_in_plain_words(peggy):
    monday = utc(2026, 1, 12, 15)
    converse(
        peggy,
        monday,
        [("Where am I?", 0.5, "confused"), ("Where am I?", 0.5, "confused"), ("Hi", 0.1, "calm")],
    )
    converse(peggy, monday + timedelta(days=1), [("Where am I now?", 0.5, "confused")])
    converse(peggy, monday - timedelta(days=6), [("Hello", 0.1, "calm")])  # the 7 days before
    band = selectors.repetition_this_week(person=peggy, now=monday + timedelta(days=2))
    assert (band.conversations, band.last_week_conversations) == (2, 1)
    (location,) = band.questions
    assert (location.question_type, location.asked, location.conversations) == ("location", 3, 2)
    sentence = words.week_question_sentence(location, subject="she", band=band)
    assert sentence == (
        "Asked where she is about twice a conversation, in 2 of 2 conversations in the last 7 "
        "days (not asked the 7 days before)."
    )


def test_most_repeated_keeps_short_questions_apart(peggy):
    converse(
        peggy,
        utc(2026, 1, 12, 15),
        [
            ("Where am I?", 0.5, "confused"),
            ("Who are you?", 0.5, "confused"),
            ("Where am I?", 0.5, "confused"),
            ("where am I?", 0.5, "confused"),
            ("Who are you?", 0.5, "confused"),
            ("Nice tea", 0.1, "calm"),
        ],
    )
    repeated = selectors.most_repeated_questions(person=peggy, now=utc(2026, 1, 13))
    assert [(q.example.lower(), q.times, q.conversations) for q in repeated] == [
        ("where am i?", 3, 1),
        ("who are you?", 2, 1),
    ]


def test_most_repeated_counts_a_question_put_in_other_words_as_one(peggy):
    converse(
        peggy,
        utc(2026, 1, 12, 15),
        [
            ("I want to go home.", 0.5, "anxious"),
            ("Where am I?", 0.5, "confused"),
            ("Take me home, please.", 0.5, "anxious"),
            ("I want to go home.", 0.5, "anxious"),
            ("Where am I?", 0.5, "confused"),
        ],
    )
    converse(peggy, utc(2026, 1, 12, 18), [("Can I go home now?", 0.5, "anxious")])
    repeated = selectors.most_repeated_questions(person=peggy, now=utc(2026, 1, 13))
    assert [(q.example, q.times, q.conversations, q.wordings) for q in repeated] == [
        ("I want to go home.", 4, 2, 3),
        ("Where am I?", 2, 1, 1),
    ]
    sentence = words.repeated_question_sentence(repeated[0], subject="she", with_words=False)
    assert sentence == "Said something else, 4 times in 2 conversations, in different words"
    where = words.repeated_question_sentence(repeated[1], subject="she", with_words=False)
    assert where == "Asked where she is, twice in 1 conversation"
    own = words.repeated_question_sentence(repeated[0], subject="she", with_words=True)
    assert own == "“I want to go home.”, 4 times in 2 conversations, in different words"


def test_most_repeated_keeps_opposites_and_other_questions_apart(peggy):
    converse(
        peggy,
        utc(2026, 1, 12, 15),
        [
            ("What day is it?", 0.5, "confused"),
            ("What time is it?", 0.5, "confused"),
            ("What day is it?", 0.5, "confused"),
            ("I don't want to go home.", 0.2, "calm"),
            ("I want to go home.", 0.5, "anxious"),
            ("I want to go home.", 0.5, "anxious"),
        ],
    )
    repeated = selectors.most_repeated_questions(person=peggy, now=utc(2026, 1, 13))
    assert [(q.example, q.times) for q in repeated] == [
        ("I want to go home.", 2),
        ("What day is it?", 2),
    ]


def test_rows_stored_without_a_meaning_are_grouped_by_their_words(peggy):
    from memory.models import RepetitionRecord

    converse(
        peggy,
        utc(2026, 1, 12, 15),
        [("I want to go home.", 0.5, "anxious"), ("Take me home, please.", 0.5, "anxious")] * 2,
    )
    RepetitionRecord.objects.filter(person=peggy).update(meaning=None)
    repeated = selectors.most_repeated_questions(person=peggy, now=utc(2026, 1, 13))
    assert sorted((q.example, q.times) for q in repeated) == [
        ("I want to go home.", 2),
        ("Take me home, please.", 2),
    ]


def test_conversations_that_went_round_in_circles_are_counted(peggy):
    converse(peggy, utc(2026, 1, 10, 15), [("Where am I?", 0.5, "confused")] * 6)
    converse(peggy, utc(2026, 1, 11, 15), [("Where am I?", 0.5, "confused")] * 2)
    chronic = selectors.chronic_conversations(person=peggy, now=utc(2026, 1, 13))
    assert (chronic.chronic, chronic.conversations) == (1, 2)
    assert words.chronic_sentence(chronic, name="Peggy", days=30, at=5) == (
        "In 1 of 2 conversations in the last 30 days, Peggy asked one thing 5 times or more "
        "(in any words). Clara answered warmly each time."
    )


def test_questions_by_hour_are_local_hours(peggy):
    converse(peggy, utc(2026, 1, 12, 23, 10), [("Where am I?", 0.5, "confused")] * 2)
    (hour,) = selectors.questions_by_hour(person=peggy, now=utc(2026, 1, 13))
    assert (hour.hour, hour.asked, hour.repeats) == (18, 2, 1)


def test_questions_per_session_oldest_first(peggy):
    converse(peggy, utc(2026, 1, 10, 15), [("Where am I?", 0.5, "confused")])
    converse(peggy, utc(2026, 1, 11, 15), [("What day is it?", 0.5, "confused")] * 2)
    rows = selectors.questions_per_session(person=peggy, now=utc(2026, 1, 13))
    assert [row.by_type for row in rows] == [{"location": 1}, {"time": 2}]


def test_what_calms_is_computed_when_the_nightly_job_has_not_run(peggy):
    converse(
        peggy,
        utc(2026, 1, 12, 15),
        [("Where am I?", 0.8, "anxious"), ("Oh that's nice", 0.3, "calm")],
        story_at=0,
    )
    kinds, stories, covered = selectors.what_calms(person=peggy, now=utc(2026, 1, 13))
    assert covered == 1
    (kind,) = kinds
    assert (kind.name, kind.uses, kind.drop) == ("calming stories", 1, 50)
    assert stories[0].drop == 50


def test_sessions_page_newest_first_with_more(peggy):
    for day in (10, 11, 12):
        converse(peggy, utc(2026, 1, day, 15), [("Hello", 0.1, "calm")])
    first, more = selectors.sessions_page(person=peggy, page=1, per_page=2)
    assert [row.started.day for row in first] == [12, 11] and more
    second, more = selectors.sessions_page(person=peggy, page=2, per_page=2)
    assert [row.started.day for row in second] == [10] and not more
    assert first[0].started.tzinfo.key == "America/New_York"


def test_timeline_groups_readings_by_the_persons_own_day(peggy):
    # 03:00 UTC on the 10th is 22:00 on the 9th in New York: the same local day as the 9th's.
    converse(peggy, utc(2026, 1, 9, 15), [("Hi", 0.2, "calm"), ("Where am I?", 0.6, "anxious")])
    converse(peggy, utc(2026, 1, 10, 3), [("Hello", 0.1, "calm")])
    converse(peggy, utc(2026, 1, 11, 15), [("Hello", 0.3, "calm")])
    timeline = selectors.emotion_timeline(person=peggy, now=utc(2026, 1, 13), days=30)
    assert [d.day.day for d in timeline.by_day] == [9, 11]
    first = timeline.by_day[0]
    assert first.readings == 3 and round(first.average, 2) == 0.3
    assert round(first.peak, 2) == 0.6 and first.peak_emotion == "anxious"
    assert first.peak_at.tzinfo.key == "America/New_York"


def test_a_long_timeline_never_averages_a_peak_away(peggy):
    calm = [("Hello", 0.1, "calm")] * 5
    converse(peggy, utc(2026, 1, 10, 15), [*calm, ("I am so frightened", 0.95, "fearful")])
    timeline = selectors.emotion_timeline(person=peggy, now=utc(2026, 3, 1), days=90)
    (day,) = timeline.by_day
    assert round(day.peak, 2) == 0.95 and day.average < 0.3


def test_a_star_sits_at_the_reading_that_needed_a_person(peggy):
    converse(
        peggy,
        utc(2026, 1, 10, 15),
        [("Hello", 0.1, "calm"), ("I fell and I can't get up, help me", 0.85, "fearful")],
    )
    timeline = selectors.emotion_timeline(person=peggy, now=utc(2026, 1, 13), days=30)
    ((at, reason, distress),) = timeline.escalations
    assert round(distress, 2) == 0.85 and at.tzinfo.key == "America/New_York"


def test_last_7_days_roll_rather_than_start_on_monday(peggy):
    # Monday 12 January, 9am in New York: the weekend's conversations are in "the last 7 days".
    monday_morning = utc(2026, 1, 12, 14)
    converse(peggy, utc(2026, 1, 10, 15), [("Hello", 0.2, "calm")])  # Saturday
    converse(peggy, utc(2026, 1, 3, 15), [("Hello", 0.6, "anxious")])  # the Saturday before
    converse(peggy, utc(2025, 12, 20, 15), [("Hello", 0.9, "fearful")])  # older: in neither
    recent, before = selectors.last_7_days(person=peggy, now=monday_morning)
    assert (recent.readings, recent.conversations) == (1, 1)
    assert round(recent.average, 2) == 0.2
    assert (before.readings, round(before.average, 2)) == (1, 0.6)
