"""Trends for many people at once: the nightly job's path (memory.tasks.compute_trends_batch).

It computes what `trends.trends_data` computes for one person, for a whole batch of people in
five grouped queries (GROUP BY person and local hour, ...) instead of about eight ORM queries
per person, and writes the batch's rows in one upsert. The per-person path stays for
on-demand recomputes and as the reference: the shaping of grouped rows into the stored JSON is
shared (`trends.*_shape`), scores are summed exactly on both (`trends.ScaledScore`), and tests
check that both paths store identical JSON.

The SQL is written per engine (SQLite, PostgreSQL) where they differ:
- each query's input is one JSON parameter (json_each / jsonb_array_elements), so a batch is
  one parameter however many people or sessions it has;
- the local hour: PostgreSQL converts with AT TIME ZONE and the person's zone name, as the
  ORM's ExtractHour does. SQLite has no time zones: each timestamp is shifted by the zone's
  UTC offset with strftime, the person's range cut where the clock changes (DST), exactly
  the stretches of `trends.LocalHour`, so an hour is local on both sides of a change;
- PostgreSQL gets LATERAL subqueries where a join on the JSON rows would make it scan whole
  tables (it guesses 100 rows for any JSON set-returning function).

Only reads until `people_trends_store`, which holds the write lock for one short upsert.
"""

import json
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from django.db import connection, transaction
from django.utils import timezone

from memory.conversations.models import Person
from memory.insights import trends
from memory.insights.models import PersonTrend

# People per batch (one task each in the nightly job). Larger batches mean fewer queries but
# a longer task; at 250 the 1,000-people benchmark runs four batches.
BATCH_SIZE = 250

# Each query takes one JSON parameter: an array of rows, each an array of the columns in this
# order. A batch is then one parameter however many people it has.
_JSON_ROWS = {
    "sqlite": "SELECT {columns} FROM json_each(%s)",
    "postgresql": "SELECT {columns} FROM jsonb_array_elements(%s::jsonb) AS v",
}
# The batch's people; `no` is the person's place in the batch, which the results carry back.
_PEOPLE_COLUMNS = {"no": "integer", "id": "uuid", "until": "timestamptz"}
_PEOPLE_COLUMNS |= {f"w{index}": "timestamptz" for index in range(trends.WEEKS)}
# One row per chosen session and stretch of one UTC offset: [seg_start, seg_end) ranges that
# together cover the person's [since, until). On SQLite one per offset between clock changes,
# `local` being the strftime modifier that shifts UTC to it ('-300 minutes'); on PostgreSQL
# one per session, [since, until), `local` being the zone's name.
_WORK_COLUMNS = {
    "no": "integer",
    "session_id": "uuid",
    "seg_start": "timestamptz",
    "seg_end": "timestamptz",
    "local": "text",
}
_HOUR = {
    # '%%' is a literal '%' once Django has put the parameter in.
    "sqlite": "CAST(strftime('%%H', {column}, w.local) AS INTEGER)",
    "postgresql": "CAST(EXTRACT(HOUR FROM {column} AT TIME ZONE w.local) AS integer)",
}

# trends._recent_sessions for every person: the latest sessions with messages before their
# `until`, newest first, the id breaking ties. Ids come back as text, ready for the JSON.
_SESSIONS_SQL = {
    # A window function: SQLite has no LATERAL, and reads a person's sessions quickly anyway.
    "sqlite": f"""
        WITH p AS MATERIALIZED ({{people}}),
        ranked AS (
            SELECT p.no, s.id, s.created_at,
                   ROW_NUMBER() OVER (
                       PARTITION BY s.person_id ORDER BY s.created_at DESC, s.id DESC
                   ) AS n
            FROM p
            JOIN sessions s ON s.person_id = p.id AND s.created_at < p.until
            WHERE s.message_count > 0
        )
        SELECT no, id, created_at FROM ranked WHERE n <= {trends.BASELINE_SESSIONS:d}""",
    # PostgreSQL: per person, idx_sessions_person_created backwards, stopping at the 30th.
    "postgresql": f"""
        WITH p AS MATERIALIZED ({{people}})
        SELECT p.no, CAST(s.id AS text), s.created_at
        FROM p
        CROSS JOIN LATERAL (
            SELECT s.id, s.created_at FROM sessions s
            WHERE s.person_id = p.id AND s.created_at < p.until AND s.message_count > 0
            ORDER BY s.created_at DESC, s.id DESC
            LIMIT {trends.BASELINE_SESSIONS:d}
        ) AS s""",
}

# trends._time_of_day: readings of the chosen sessions in [since, until), summed by local
# hour. The work rows drive: one (session_id, timestamp) index range each.
_TIME_OF_DAY_SQL = """
    WITH w AS MATERIALIZED ({work})
    SELECT w.no, {hour} AS hour, SUM({scaled_e}), COUNT(*)
    FROM w
    JOIN detected_emotions e ON e.session_id = w.session_id
        AND e."timestamp" >= w.seg_start AND e."timestamp" < w.seg_end
    GROUP BY 1, 2
    ORDER BY 1, 2"""

# trends._questions: the chosen sessions' questions by (type, local hour).
_QUESTIONS_SQL = """
    WITH w AS MATERIALIZED ({work})
    SELECT w.no, r.question_type, {hour} AS hour,
           COUNT(*), COUNT(*) FILTER (WHERE r.repeat_count > 0)
    FROM w
    JOIN repetition_tracking r ON r.session_id = w.session_id
        AND r."timestamp" >= w.seg_start AND r."timestamp" < w.seg_end
    GROUP BY 1, 2, 3
    ORDER BY 1, 2, 3"""

# trends._narratives: each story told in the chosen sessions, with the distress of the
# person's message before it (its sequence number - 1) and after it (+ 1), same session. A
# story falls in exactly one of its session's work rows, as they split [since, until). The
# ORDER BY is the database's own collation, as in the per-person query.
_NARRATIVES_SQL = """
    WITH w AS MATERIALIZED ({work})
    SELECT w.no, n.narrative_id, n.category, COUNT(*),
           COUNT(*) FILTER (WHERE m.sequence_number < s.message_count),
           SUM({scaled_after} - {scaled_before}),
           COUNT(after_e.distress_score - before_e.distress_score)
    FROM w
    JOIN narrative_usage n ON n.session_id = w.session_id
        AND n."timestamp" >= w.seg_start AND n."timestamp" < w.seg_end
    JOIN chat_messages m ON m.id = n.message_id
    JOIN sessions s ON s.id = n.session_id
    LEFT JOIN chat_messages before_m ON before_m.session_id = n.session_id
        AND before_m.sequence_number = m.sequence_number - 1
    LEFT JOIN detected_emotions before_e ON before_e.message_id = before_m.id
    LEFT JOIN chat_messages after_m ON after_m.session_id = n.session_id
        AND after_m.sequence_number = m.sequence_number + 1
    LEFT JOIN detected_emotions after_e ON after_e.message_id = after_m.id
    GROUP BY 1, 2, 3
    ORDER BY 1, 2, 3"""

# trends._weekly: all the person's readings since the oldest week's Monday (not only the
# chosen sessions'), one sum and count per week.
_WEEKLY_AGGREGATES = """
        SUM({scaled_e}) FILTER (WHERE e."timestamp" >= p.w0 AND e."timestamp" < p.w1),
        COUNT(*) FILTER (WHERE e."timestamp" >= p.w0 AND e."timestamp" < p.w1),
        SUM({scaled_e}) FILTER (WHERE e."timestamp" >= p.w1 AND e."timestamp" < p.w2),
        COUNT(*) FILTER (WHERE e."timestamp" >= p.w1 AND e."timestamp" < p.w2),
        SUM({scaled_e}) FILTER (WHERE e."timestamp" >= p.w2 AND e."timestamp" < p.w3),
        COUNT(*) FILTER (WHERE e."timestamp" >= p.w2 AND e."timestamp" < p.w3),
        SUM({scaled_e}) FILTER (WHERE e."timestamp" >= p.w3 AND e."timestamp" < p.until),
        COUNT(*) FILTER (WHERE e."timestamp" >= p.w3 AND e."timestamp" < p.until)"""
_WEEKLY_SQL = {
    # SQLite reads each person's range through idx_emotions_user_time by itself.
    "sqlite": f"""
        WITH p AS MATERIALIZED ({{people}})
        SELECT p.no, {_WEEKLY_AGGREGATES}
        FROM p
        JOIN detected_emotions e ON e.person_id = p.id
            AND e."timestamp" >= p.w0 AND e."timestamp" < p.until
        GROUP BY p.no""",
    # PostgreSQL, guessing 100 people from the JSON, would hash-join a scan of the whole
    # table; LATERAL makes it one idx_emotions_user_time range per person.
    "postgresql": f"""
        WITH p AS MATERIALIZED ({{people}})
        SELECT p.no, week.*
        FROM p
        CROSS JOIN LATERAL (
            SELECT {_WEEKLY_AGGREGATES}
            FROM detected_emotions e
            WHERE e.person_id = p.id AND e."timestamp" >= p.w0 AND e."timestamp" < p.until
        ) AS week""",
}


@dataclass
class _Person:
    id: uuid.UUID
    zone: ZoneInfo
    until: datetime
    weeks: list[date]
    week_bounds: list[datetime]
    sessions: list[tuple[str, datetime]] = field(default_factory=list)
    # The readings of the sessions start at the oldest one (a day's slack for dated uploads).
    since: datetime | None = None


def _json_rows(columns: dict[str, str]) -> str:
    """SELECT the columns from the JSON parameter, on this engine."""
    if connection.vendor == "sqlite":
        names = (f"json_extract(value, '$[{i}]') AS {name}" for i, name in enumerate(columns))
    else:
        names = (
            f"CAST(v->>{i} AS {kind}) AS {name}" for i, (name, kind) in enumerate(columns.items())
        )
    return _JSON_ROWS[connection.vendor].format(columns=", ".join(names))


def _scaled(column: str) -> str:
    return trends.ScaledScore.template % {"expressions": column}


def _query(template: str | dict[str, str], rows: list[list], *, column: str = "") -> list:
    """Run one of the templates above on this engine with `rows` as its JSON parameter."""
    vendor = connection.vendor
    sql = (template[vendor] if isinstance(template, dict) else template).format(
        people=_json_rows(_PEOPLE_COLUMNS),
        work=_json_rows(_WORK_COLUMNS),
        hour=_HOUR[vendor].format(column=column),
        # trends.ScaledScore, for exact sums.
        scaled_e=_scaled("e.distress_score"),
        scaled_after=_scaled("after_e.distress_score"),
        scaled_before=_scaled("before_e.distress_score"),
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [json.dumps(rows)])
        return cursor.fetchall()


def _time_adapter() -> Callable[[datetime], str]:
    """How a datetime goes into the JSON: on SQLite as the text Django stores (naive UTC),
    so that comparing it with a column's text orders correctly; on PostgreSQL ISO 8601."""
    if connection.vendor == "sqlite":
        return connection.ops.adapt_datetimefield_value
    return datetime.isoformat


def _py_time(value: datetime | str) -> datetime:
    # SQLite gives naive UTC (a datetime when the column's declared type survives, else text).
    if not isinstance(value, datetime):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _sqlite_stretches(batch: list[_Person]) -> dict[int, list[tuple[datetime, str]]]:
    """Per person (by place in the batch): [(from, strftime modifier)] over [since, until).

    trends.utc_offsets(zone, since, until) for each person, but walked once per zone over
    the batch's whole range and then cut, since clock changes are the zone's, not the range's.
    """
    ranges: dict[ZoneInfo, tuple[datetime, datetime]] = {}
    for person in batch:
        if person.sessions:
            low, high = ranges.get(person.zone, (person.since, person.until))
            ranges[person.zone] = (min(low, person.since), max(high, person.until))
    offsets = {zone: trends.utc_offsets(zone, *bounds) for zone, bounds in ranges.items()}
    out = {}
    for no, person in enumerate(batch):
        if not person.sessions:
            continue
        changes = offsets[person.zone]
        first = max(i for i, (at, _) in enumerate(changes) if at <= person.since)
        stretches = [(person.since, changes[first][1])]
        stretches += [(at, minutes) for at, minutes in changes[first + 1 :] if at < person.until]
        out[no] = [(at, f"{minutes:+d} minutes") for at, minutes in stretches]
    return out


def _work_rows(batch: list[_Person]) -> list[list]:
    """The _WORK_COLUMNS rows: each chosen session x each offset stretch of its person."""
    adapt = _time_adapter()
    if connection.vendor == "sqlite":
        # The same stretches as trends.LocalHour; every row read is inside [since, until).
        stretches = _sqlite_stretches(batch)
    else:
        stretches = {no: [(p.since, str(p.zone))] for no, p in enumerate(batch) if p.sessions}
    rows = []
    for no, person_stretches in stretches.items():
        person = batch[no]
        ends = [start for start, _ in person_stretches[1:]] + [person.until]
        ranges = [
            [adapt(start), adapt(end), local]
            for (start, local), end in zip(person_stretches, ends, strict=True)
        ]
        rows += [
            [no, session_id, *stretch] for session_id, _ in person.sessions for stretch in ranges
        ]
    return rows


def _by_person(rows: list[tuple], names: Sequence[str]) -> dict[int, list[dict]]:
    # Rows come ordered by person then the grouping columns; each person's keep that order.
    out: dict[int, list[dict]] = {}
    for no, *values in rows:
        out.setdefault(no, []).append(dict(zip(names, values, strict=True)))
    return out


@contextmanager
def _reading() -> Iterator[None]:
    """Where the batch's reads run: on PostgreSQL one transaction with room to sort in memory."""
    if connection.vendor != "postgresql":
        # SQLite reads in autocommit: a transaction here would take the write lock at BEGIN.
        yield
        return
    with transaction.atomic(), connection.cursor() as cursor:
        # The grouped rows of a batch (some 130k for 250 people) sort in memory, not on disk.
        cursor.execute("SET LOCAL work_mem = '64MB'")
        yield


def people_trends_data(*, people: Sequence[Person], days: dict[uuid.UUID, date]) -> dict:
    """The trend figures of each person as of the end of days[person.id] in their zone.

    Returns {person_id: data}, data exactly as trends.trends_data gives it. Stores nothing.
    Five queries for the whole batch.
    """
    batch: list[_Person] = []
    for person in people:
        zone = trends.person_zone(person)
        until = trends.trends_until(day=days[person.id], zone=zone)
        weeks, bounds = trends.week_bounds(day=days[person.id], until=until, zone=zone)
        batch.append(_Person(person.id, zone, until, weeks, bounds))
    if not batch:
        return {}
    # As Django stores a UUIDField: 32 hex digits on SQLite, the uuid type on PostgreSQL.
    sqlite = connection.vendor == "sqlite"
    adapt = _time_adapter()
    people_rows = [
        [no, person.id.hex if sqlite else str(person.id)]
        + [adapt(bound) for bound in [person.until, *person.week_bounds[:-1]]]
        for no, person in enumerate(batch)
    ]
    with _reading():
        for no, session_id, created_at in _query(_SESSIONS_SQL, people_rows):
            batch[no].sessions.append((session_id, _py_time(created_at)))
        for person in batch:
            if person.sessions:
                person.since = min(created for _, created in person.sessions) - timedelta(days=1)
        work = _work_rows(batch)
        hours = _by_person(
            _query(_TIME_OF_DAY_SQL, work, column='e."timestamp"'), ["hour", "total", "readings"]
        )
        questions = _by_person(
            _query(_QUESTIONS_SQL, work, column='r."timestamp"'),
            ["question_type", "hour", "asked", "repeats"],
        )
        narratives = _by_person(
            _query(_NARRATIVES_SQL, work),
            ["narrative_id", "category", "uses", "measured", "change_total", "changes"],
        )
        weekly = {no: values for no, *values in _query(_WEEKLY_SQL, people_rows)}

    data = {}
    for no, person in enumerate(batch):
        values = weekly.get(no) or [None, 0] * trends.WEEKS  # no readings in those weeks
        week_row = {}
        for index, (total, readings) in enumerate(zip(values[::2], values[1::2], strict=True)):
            week_row |= {f"total_{index}": total, f"readings_{index}": readings}
        sessions = len(person.sessions)
        data[person.id] = trends.trends_assemble(
            zone=person.zone,
            until=person.until,
            sessions_covered=sessions,
            time_of_day=trends.time_of_day_shape(hours.get(no, [])),
            weekly=trends.weekly_shape(person.weeks, week_row),
            questions=trends.questions_shape(questions.get(no, []), sessions=sessions),
            narratives=trends.narratives_shape(narratives.get(no, [])),
        )
    return data


def people_trends_store(
    *, data: dict[uuid.UUID, dict], days: dict[uuid.UUID, date], now: datetime
) -> int:
    """Store each person's row for their day, one upsert; returns how many rows were written.

    Like trends.person_trends_compute: a row whose data did not change keeps its computed_at.
    """
    if not data:
        return 0
    with transaction.atomic():
        stored = {
            (person_id, day): old
            for person_id, day, old in PersonTrend.objects.select_for_update()
            .filter(person_id__in=list(data), day__in=set(days.values()))
            .values_list("person_id", "day", "data")
        }
        rows = [
            PersonTrend(person_id=person_id, day=days[person_id], data=new, computed_at=now)
            for person_id, new in data.items()
            if stored.get((person_id, days[person_id])) != new
        ]
        # update_conflicts: a row another worker inserted meanwhile is updated, not duplicated.
        PersonTrend.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["person", "day"],
            update_fields=["data", "computed_at"],
        )
    return len(rows)


def people_trends_compute(
    *, person_ids: Iterable[uuid.UUID], day: date | None = None, now: datetime | None = None
) -> list[uuid.UUID]:
    """Compute and store the trends of these people for `day` (default: today where each lives).

    Unknown ids are skipped; returns the ids computed. Same rows as person_trends_compute for
    each person, in five reads and one write for the whole batch.
    """
    now = now or timezone.now()
    person_ids = list(person_ids)
    if connection.vendor not in _HOUR:
        # The grouped SQL is written for SQLite and PostgreSQL; any other engine Django supports
        # gets the same rows from the per-person path.
        found = list(Person.objects.filter(id__in=person_ids).values_list("id", flat=True))
        for person_id in found:
            trends.person_trends_compute(person_id=person_id, day=day, now=now)
        return found
    people = list(Person.objects.filter(id__in=person_ids).only("id", "caregiver_context"))
    days = {
        person.id: day or now.astimezone(trends.person_zone(person)).date() for person in people
    }
    data = people_trends_data(people=people, days=days)
    people_trends_store(data=data, days=days, now=now)
    return [person.id for person in people]
