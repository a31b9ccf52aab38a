"""Emotional trends per person, computed in SQL and stored one row per person per day.

Everything is aggregated by the database: exact sums and counts with filters, grouped by the
hour of day in the person's own time zone, weekly ranges computed in that zone, and correlated
subqueries for the distress before and after a story. Python only reshapes the handful of
grouped rows that come back, so the cost per person does not grow with how much they have
talked. For caregivers only: nothing here reaches the companion's prompt.

This is the one-person path (on-demand recomputes) and the reference. The nightly job computes
the same JSON for a batch of people at once in memory.insights.trends_batch, which shares the shaping
functions below (`*_shape`, `trends_assemble`).
"""

import uuid
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.db import transaction
from django.db.models import Avg, BigIntegerField, Count, F, Func, OuterRef, Q, Subquery, Sum
from django.db.models.functions import ExtractHour
from django.utils import timezone

from memory.conversations.models import (
    ChatMessage,
    DetectedEmotion,
    NarrativeUsage,
    Person,
    QuestionType,
    RepetitionRecord,
    Session,
)
from memory.core.errors import NotFound
from memory.core.person import person_zone
from memory.insights.models import PersonTrend

TRENDS_VERSION = 1
# The baseline and every per-session figure look at the person's latest sessions, this many.
BASELINE_SESSIONS = 30
# People who talked with Clara this recently get their trends recomputed every day.
ACTIVE_DAYS = 30
WEEKS = 4
# Local hours, start inclusive, end exclusive: 06:00–11:59 and 18:00–23:59.
MORNING = (6, 12)
EVENING = (18, 24)
TOP_QUESTION_TYPES = 5
# Scores are summed as whole billionths, i.e. exactly. Float addition depends on the order the
# database happens to read rows in, and an average that lands on a rounding tie (common: the
# mean of two 3-decimal scores is one) would then round either way from one run, plan or
# path (per person, batch) to the next. Billionths keep every digit a score can carry.
SCORE_SCALE = 1_000_000_000


class ScaledScore(Func):
    """A distress score as whole billionths (an integer), so that SUM is exact."""

    template = f"CAST(ROUND((%(expressions)s) * {SCORE_SCALE:d}) AS BIGINT)"
    output_field = BigIntegerField()


def score_mean(total: object, count: int) -> float | None:
    """The mean score from a sum of ScaledScore and a count (None when there is nothing)."""
    # int(): PostgreSQL returns SUM(bigint) as numeric (Decimal). int / int is exact-rounded.
    return int(total) / (SCORE_SCALE * count) if count else None


def recent_session_ids(
    *, person_id: uuid.UUID, before: datetime, limit: int = BASELINE_SESSIONS
) -> list[uuid.UUID]:
    """The person's latest sessions that have messages, started before `before`, newest first."""
    return [
        session_id
        for session_id, _ in _recent_sessions(person_id=person_id, before=before, limit=limit)
    ]


def _recent_sessions(
    *, person_id: uuid.UUID, before: datetime, limit: int = BASELINE_SESSIONS
) -> list[tuple[uuid.UUID, datetime]]:
    # idx_sessions_person_created
    return list(
        Session.objects.filter(person_id=person_id, created_at__lt=before, message_count__gt=0)
        # The id breaks ties, so the batch path (trends_batch) picks the very same sessions.
        .order_by("-created_at", "-id")
        .values_list("id", "created_at")[:limit]
    )


def distress_average(
    *, person_id: uuid.UUID, session_ids: list[uuid.UUID], before: datetime
) -> tuple[float | None, int]:
    """Average distress of the person's readings in these sessions, and how many readings."""
    row = DetectedEmotion.objects.filter(
        person_id=person_id, session_id__in=session_ids, timestamp__lt=before
    ).aggregate(average=Avg("distress_score"), readings=Count("id"))
    return row["average"], row["readings"]


def _round(value: float | None) -> float | None:
    # Three decimals: enough for caregivers, and SQLite and PostgreSQL then agree to the digit.
    return None if value is None else round(value, 3)


def _day_start(day: date, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time.min, tzinfo=zone)


def _offset_minutes(zone: ZoneInfo, at: datetime) -> int:
    return int(at.astimezone(zone).utcoffset().total_seconds() // 60)


def utc_offsets(zone: ZoneInfo, start: datetime, end: datetime) -> list[tuple[datetime, int]]:
    """The zone's UTC offsets (minutes) between start and end: [(from, offset)], oldest first."""
    start = start.astimezone(UTC)
    segments = [(start, _offset_minutes(zone, start))]
    day = timedelta(days=1)
    at = start
    while at < end:
        step = min(at + day, end)
        if _offset_minutes(zone, step) != segments[-1][1]:
            # A clock change (DST) inside this day: find its instant to the microsecond.
            low, high = at, step
            while high - low > timedelta(microseconds=1):
                middle = low + (high - low) / 2
                if _offset_minutes(zone, middle) == segments[-1][1]:
                    low = middle
                else:
                    high = middle
            segments.append((high, _offset_minutes(zone, high)))
        at = step
    return segments


class LocalHour(ExtractHour):
    """Hour of day in `zone` of timestamps between `start` and `end`.

    On PostgreSQL this is ExtractHour (AT TIME ZONE). On SQLite, Django's ExtractHour calls a
    Python function for every row, which cost about 8 µs a row here; SQLite's own strftime
    with the zone's UTC offset is used instead, one offset per stretch between clock changes.
    Rows outside [start, end) get the offset of the nearest stretch.
    """

    def __init__(self, expression, *, zone: ZoneInfo, start: datetime, end: datetime):
        super().__init__(expression, tzinfo=zone)
        self.segments = utc_offsets(zone, start, end)

    def as_sqlite(self, compiler, connection, **extra_context):
        column, column_params = compiler.compile(self.lhs)

        def hour(minutes: int) -> str:
            # %% is SQLite's literal %, after Django's placeholder conversion.
            return f"CAST(strftime('%%H', {column}, '{minutes:+d} minutes') AS INTEGER)"

        (_, first), *changes = self.segments
        if not changes:
            return hour(first), list(column_params)
        sql, params = ["CASE"], []
        offset = first
        for changed_at, next_offset in changes:
            sql.append(f"WHEN {column} < %s THEN {hour(offset)}")
            params += [*column_params, connection.ops.adapt_datetimefield_value(changed_at)]
            params += column_params
            offset = next_offset
        sql.append(f"ELSE {hour(offset)} END")
        params += column_params
        return " ".join(sql), params


def _in_window(session_ids: list[uuid.UUID], since: datetime, until: datetime) -> dict:
    # By session id, not person: the (session_id, ...) indexes then read just these sessions'
    # rows, however long the person's history. The time range keeps late uploads out.
    return {"session_id__in": session_ids, "timestamp__gte": since, "timestamp__lt": until}


def _time_of_day(*, session_ids, since, until, hour: LocalHour) -> dict:
    # One pass over the readings, grouped by local hour; baseline, morning and evening are
    # sums of at most 24 groups.
    rows = list(
        DetectedEmotion.objects.filter(**_in_window(session_ids, since, until))
        .annotate(hour=hour)
        .values("hour")
        .annotate(total=Sum(ScaledScore("distress_score")), readings=Count("id"))
        .order_by("hour")
    )
    return time_of_day_shape(rows)


def time_of_day_shape(rows: list[dict]) -> dict:
    """Baseline, morning and evening from rows {hour, total, readings}: total a ScaledScore sum."""

    def average(first: int, last: int) -> tuple[float | None, int]:
        chosen = [row for row in rows if first <= row["hour"] < last]
        readings = sum(row["readings"] for row in chosen)
        total = sum(int(row["total"]) for row in chosen)
        return _round(score_mean(total, readings)), readings

    baseline, readings = average(0, 24)
    morning, morning_readings = average(*MORNING)
    evening, evening_readings = average(*EVENING)
    return {
        "baseline_distress": baseline,
        "readings": readings,
        "morning_avg": morning,
        "morning_readings": morning_readings,
        "evening_avg": evening,
        "evening_readings": evening_readings,
    }


def week_bounds(*, day: date, until: datetime, zone: ZoneInfo) -> tuple[list[date], list[datetime]]:
    """The last WEEKS weeks up to `day` (Mondays, oldest first) and their WEEKS + 1 bounds.

    Week boundaries are computed in the person's zone (Mondays, like TruncWeek), so each
    week is a plain timestamp range; the last one ends at `until`.
    """
    this_week = day - timedelta(days=day.weekday())
    weeks = [this_week - timedelta(weeks=back) for back in range(WEEKS - 1, -1, -1)]
    return weeks, [_day_start(week, zone) for week in weeks] + [until]


def _weekly(*, person_id, day: date, until: datetime, zone: ZoneInfo) -> list[dict]:
    # Conditional aggregates over idx_emotions_user_time, one per week.
    weeks, bounds = week_bounds(day=day, until=until, zone=zone)
    aggregates = {}
    for index in range(WEEKS):
        in_week = Q(timestamp__gte=bounds[index], timestamp__lt=bounds[index + 1])
        aggregates[f"total_{index}"] = Sum(ScaledScore("distress_score"), filter=in_week)
        aggregates[f"readings_{index}"] = Count("id", filter=in_week)
    row = DetectedEmotion.objects.filter(
        person_id=person_id, timestamp__gte=bounds[0], timestamp__lt=until
    ).aggregate(**aggregates)
    return weekly_shape(weeks, row)


def weekly_shape(weeks: list[date], row: dict) -> list[dict]:
    """The weekly list from one row {total_<i>, readings_<i>} (ScaledScore sum, count)."""
    return [
        {
            "week_start": week.isoformat(),
            "avg": _round(score_mean(row[f"total_{index}"], row[f"readings_{index}"])),
            "readings": row[f"readings_{index}"],
        }
        for index, week in enumerate(weeks)
    ]


def _questions(*, session_ids, since, until, hour: LocalHour) -> dict:
    # One pass over the person's messages, grouped by (question type, local hour): at most
    # 6 x 24 groups, from which the top types and the repeats by type and by hour are summed.
    rows = list(
        RepetitionRecord.objects.filter(**_in_window(session_ids, since, until))
        .annotate(hour=hour)
        .values("question_type", "hour")
        .annotate(asked=Count("id"), repeats=Count("id", filter=Q(repeat_count__gt=0)))
        .order_by("question_type", "hour")
    )
    return questions_shape(rows, sessions=len(session_ids))


def questions_shape(rows: list[dict], *, sessions: int) -> dict:
    """Top question types and repeats per session, from rows {question_type, hour, asked,
    repeats}."""
    asked: dict[str, int] = {}
    repeats_by_type: dict[str, int] = {}
    repeats_by_hour: dict[int, int] = {}
    for row in rows:
        qtype = row["question_type"]
        asked[qtype] = asked.get(qtype, 0) + row["asked"]
        if row["repeats"]:
            repeats_by_type[qtype] = repeats_by_type.get(qtype, 0) + row["repeats"]
            repeats_by_hour[row["hour"]] = repeats_by_hour.get(row["hour"], 0) + row["repeats"]

    def per_session(count: int) -> float | None:
        return _round(count / sessions) if sessions else None

    top = sorted(
        ((qtype, count) for qtype, count in asked.items() if qtype != QuestionType.GENERAL),
        key=lambda item: (-item[1], item[0]),
    )[:TOP_QUESTION_TYPES]
    total = sum(repeats_by_type.values())
    return {
        "top_question_types": [{"question_type": qtype, "count": count} for qtype, count in top],
        "repeats": {
            "sessions": sessions,
            "total": total,
            "per_session": per_session(total),
            "by_type": [
                {"question_type": qtype, "repeats": count, "per_session": per_session(count)}
                for qtype, count in sorted(repeats_by_type.items(), key=lambda i: (-i[1], i[0]))
            ],
            "by_hour": [
                {"hour": hour_, "repeats": count, "per_session": per_session(count)}
                for hour_, count in sorted(repeats_by_hour.items())
            ],
        },
    }


def _person_distress_at(offset: int) -> Subquery:
    """Distress of the person's message `offset` places from the story's message, same session.

    The story rides on Clara's message N+1 of an exchange: the person's message of that
    exchange is N (offset -1) and their next one is N+2 (offset +1).
    """
    return Subquery(
        ChatMessage.objects.filter(
            session_id=OuterRef("session_id"),
            sequence_number=OuterRef("message__sequence_number") + offset,
        ).values("emotion__distress_score")[:1]
    )


def _narratives(*, session_ids, since, until) -> dict:
    rows = list(
        NarrativeUsage.objects.filter(**_in_window(session_ids, since, until))
        .alias(before=_person_distress_at(-1), after=_person_distress_at(+1))
        .values("narrative_id", "category")
        # A telling with no next message (the session ended) counts as a use, not a change.
        .annotate(
            uses=Count("id"),
            # Every message of the person has a reading, so a telling has a next one exactly
            # when its message is not the session's last (cheaper than a third subquery).
            measured=Count(
                "id", filter=Q(message__sequence_number__lt=F("session__message_count"))
            ),
            # The mean change is change_total / changes: an exact sum, and the tellings that
            # have a reading on both sides (COUNT of a difference skips NULLs).
            change_total=Sum(ScaledScore(F("after")) - ScaledScore(F("before"))),
            changes=Count(F("after") - F("before")),
        )
        .order_by("narrative_id", "category")
    )
    return narratives_shape(rows)


def narratives_shape(rows: list[dict]) -> dict:
    """Story effects by category and by story, from rows {narrative_id, category, uses,
    measured, change_total, changes} ordered by narrative_id then category (the database's
    own order)."""
    for row in rows:
        row["change"] = score_mean(row["change_total"], row["changes"])
    categories: dict[str, list[float]] = {}
    for row in rows:  # one row per story told, a handful
        total = categories.setdefault(row["category"], [0, 0, 0.0])
        total[0] += row["uses"]
        if row["change"] is not None:
            total[1] += row["measured"]
            total[2] += row["change"] * row["measured"]
    by_category = sorted(
        (
            {
                "category": name,
                "uses": uses,
                "measured": measured,
                "avg_change": _round(change / measured) if measured else None,
            }
            for name, (uses, measured, change) in categories.items()
        ),
        key=lambda item: (item["avg_change"] is None, item["avg_change"] or 0, item["category"]),
    )
    return {
        # Negative is good: distress fell between the story and the person's next message.
        "by_category": by_category,
        "by_narrative": [
            {
                "narrative_id": row["narrative_id"],
                "category": row["category"],
                "uses": row["uses"],
                "measured": row["measured"],
                "avg_change": _round(row["change"]),
            }
            for row in rows
        ],
    }


def trends_data(*, person: Person, day: date) -> dict:
    """The trend figures for `person` as of the end of `day` in their time zone. Stores nothing."""
    zone = person_zone(person)
    until = trends_until(day=day, zone=zone)
    sessions = _recent_sessions(person_id=person.id, before=until)
    session_ids = [session_id for session_id, _ in sessions]
    # The readings of these sessions start at the oldest one (a day's slack for dated uploads).
    since = sessions[-1][1] - timedelta(days=1) if sessions else until - timedelta(days=1)
    hour = LocalHour("timestamp", zone=zone, start=since, end=until)
    common = {"session_ids": session_ids, "since": since, "until": until}
    return trends_assemble(
        zone=zone,
        until=until,
        sessions_covered=len(session_ids),
        time_of_day=_time_of_day(**common, hour=hour),
        weekly=_weekly(person_id=person.id, day=day, until=until, zone=zone),
        questions=_questions(**common, hour=hour),
        narratives=_narratives(**common),
    )


def trends_assemble(
    *,
    zone: ZoneInfo,
    until: datetime,
    sessions_covered: int,
    time_of_day: dict,
    weekly: list[dict],
    questions: dict,
    narratives: dict,
) -> dict:
    """The stored JSON, keys in one order whichever path computed the parts."""
    return {
        "version": TRENDS_VERSION,
        "timezone": str(zone),
        "until": until.isoformat(),
        "sessions_covered": sessions_covered,
        **time_of_day,
        "weekly": weekly,
        **questions,
        "narrative_effectiveness": narratives,
    }


def trends_until(*, day: date, zone: ZoneInfo) -> datetime:
    """The end of `day` in `zone`: trends for a day cover everything before it."""
    return _day_start(day + timedelta(days=1), zone)


def person_trends_compute(
    *, person_id: uuid.UUID, day: date | None = None, now: datetime | None = None
) -> PersonTrend:
    """Compute and store the person's trends for `day` (default: today where they live).

    One row per person per day; recomputing with nothing new leaves the row untouched.
    """
    now = now or timezone.now()
    person = Person.objects.filter(id=person_id).first()
    if person is None:
        raise NotFound("No person with this id.", field="person_id")
    day = day or now.astimezone(person_zone(person)).date()
    data = trends_data(person=person, day=day)
    with transaction.atomic():
        trend, created = PersonTrend.objects.select_for_update().get_or_create(
            person_id=person.id, day=day, defaults={"data": data, "computed_at": now}
        )
        if not created and trend.data != data:
            trend.data = data
            trend.computed_at = now
            trend.save(update_fields=["data", "computed_at"])
    return trend


def people_due_for_trends(*, now: datetime | None = None) -> list[uuid.UUID]:
    """Ids of people (not archived) who talked with Clara in the last 30 days: the daily fan-out."""
    now = now or timezone.now()
    return list(
        Person.objects.filter(last_active_at__gte=now - timedelta(days=ACTIVE_DAYS))
        .exclude(status=Person.Status.ARCHIVED)
        .order_by("id")
        .values_list("id", flat=True)
    )
