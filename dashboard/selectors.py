"""Reads for the caregiver dashboard. Everything is aggregated by the database.

Each selector answers one panel of the person page with a fixed, small number of queries that
read through the person's (person, timestamp) or (session, ...) indexes, so the cost follows the
window shown (30 days, 90 days, 20 conversations), not how long the person has talked with Clara.
Times are shown in the person's own time zone (CaregiverContext.zone).
"""

import heapq
import itertools
import re
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from types import SimpleNamespace
from zoneinfo import ZoneInfo

from django.contrib.auth import get_user_model
from django.db.models import Avg, Count, F, OuterRef, Q, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Coalesce

from dashboard import access, naming, words
from dashboard.models import AuditAction, AuditEvent, CareTeamMembership
from dashboard.sql import LocalWeekHour
from memory.conversations import escalation
from memory.conversations.repeats import Said, decode_meaning, group_by_meaning
from memory.core.person import CaregiverContext, person_zone
from memory.insights import trends
from memory.models import (
    AccessChannel,
    AccessEvent,
    AccessOutcome,
    Alert,
    ChatMessage,
    DetectedEmotion,
    Emotion,
    Narrative,
    Organisation,
    OrganisationMembership,
    Person,
    PersonTrend,
    QuestionType,
    RepetitionRecord,
    Session,
)

TIMELINE_DAYS = 30
HEATMAP_DAYS = 90
WEEKS_SHOWN = 12
REPETITION_DAYS = 30
SESSIONS_CHARTED = 20
MOST_REPEATED = 8
# The repeated-questions panel reads at most this many of the person's latest messages in its
# window, and compares the MERGE_WORDINGS most frequent wordings by meaning.
REPEATED_MESSAGES = 2000
MERGE_WORDINGS = 400
SESSIONS_PER_PAGE = 20
ALERTS_SHOWN = 30
# "What helps" ranks a kind of reply or a story only after it was followed by this many readings
# (on 2 or 3 tellings one good afternoon looks like a cure); below it says "not enough yet".
CALMING_MIN_MEASURED = 5
NOT_ACKNOWLEDGED = [Alert.Status.OPEN, Alert.Status.CLAIMED]


def _local_midnight(day: date, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, datetime.min.time(), tzinfo=zone)


def _today_start(person: Person, now: datetime) -> datetime:
    zone = person_zone(person)
    return _local_midnight(now.astimezone(zone).date(), zone)


def _week_start(person: Person, now: datetime) -> datetime:
    """This week's Monday, 00:00 where the person lives."""
    zone = person_zone(person)
    today = now.astimezone(zone).date()
    return _local_midnight(today - timedelta(days=today.weekday()), zone)


# --- People list ----------------------------------------------------------------------------


@dataclass
class Mood:
    """How the person has been today: the feeling most read, how upset on average."""

    readings: int = 0
    conversations: int = 0
    feeling: str | None = None
    average: float | None = None

    @property
    def words(self) -> str:
        if not self.readings:
            return "No conversations yet today"
        upset = words.upset_words(self.average)
        felt = words.feeling(self.feeling)
        if felt == upset or (upset == "calm" and felt in ("calm", "settled")):
            return f"Mostly {felt}"
        return f"Mostly {felt}, {upset} overall"

    @property
    def level(self) -> str:
        """A CSS class: calm / unsettled / upset, for the colour of the badge."""
        if self.average is None:
            return "unknown"
        if self.average < 0.4:
            return "calm"
        return "unsettled" if self.average < 0.6 else "upset"


@dataclass
class PersonCard:
    person: Person
    membership: CareTeamMembership
    open_alerts: int
    mood: Mood = field(default_factory=Mood)

    @property
    def name(self) -> str:
        return person_name(self.person)

    @property
    def zone(self) -> ZoneInfo:
        return person_zone(self.person)


def person_name(person: Person) -> str:
    """The name caregivers use: the preferred name, with the display name when it differs."""
    preferred = CaregiverContext.of(person).preferred_name
    display = person.display_name.strip()
    if preferred and display and preferred != display:
        return f"{preferred} ({display})"
    return preferred or display or "Unnamed person"


def people_named(*, organisation_id: uuid.UUID) -> list[tuple[str, str]]:
    """(id, name) of everyone of the organisation, by name: the audit's choice of person. Read
    as values, not people (a care group has thousands: building and checking each row was most
    of the page); each name is decrypted as before."""
    rows = Person.objects.filter(organisation_id=organisation_id).values_list(
        "id", "display_name", "caregiver_context"
    )
    named = [
        (str(pk), person_name(SimpleNamespace(display_name=name, caregiver_context=context)))
        for pk, name, context in rows
    ]
    return sorted(named, key=lambda row: row[1])


def moods_today(people: list[Person], *, now: datetime) -> dict[uuid.UUID, Mood]:
    """Today's mood of each person (their own midnight onwards): two grouped queries in all."""
    if not people:
        return {}
    # "Today" starts at a different instant for each time zone: one OR of a range per instant,
    # each over the people whose midnight it is (one term per person would be an expression too
    # deep for SQLite beyond about a thousand people, and a long plan for PostgreSQL).
    starts: dict[datetime, list[uuid.UUID]] = {}
    for person in people:
        starts.setdefault(_today_start(person, now), []).append(person.id)
    readings_filter = Q()
    sessions_filter = Q()
    for start, ids in starts.items():
        readings_filter |= Q(person_id__in=ids, timestamp__gte=start, timestamp__lte=now)
        sessions_filter |= Q(person_id__in=ids, created_at__gte=start, created_at__lte=now)
    moods = {person.id: Mood() for person in people}
    totals: dict[uuid.UUID, float] = {}
    rows = (
        DetectedEmotion.objects.filter(readings_filter)
        .values("person_id", "emotion")
        .annotate(readings=Count("id"), total=Sum("distress_score"))
        .order_by()
    )
    best: dict[uuid.UUID, int] = {}
    for row in rows:  # at most 7 feelings per person
        mood = moods[row["person_id"]]
        mood.readings += row["readings"]
        totals[row["person_id"]] = totals.get(row["person_id"], 0.0) + row["total"]
        if row["readings"] > best.get(row["person_id"], 0):
            best[row["person_id"]] = row["readings"]
            mood.feeling = row["emotion"]
    for person_id, total in totals.items():
        moods[person_id].average = total / moods[person_id].readings
    for row in (
        Session.objects.filter(sessions_filter, message_count__gt=0)
        .values("person_id")
        .annotate(conversations=Count("id"))
        .order_by()
    ):
        moods[row["person_id"]].conversations = row["conversations"]
    return moods


def _open_alerts_subquery() -> Coalesce:
    return Coalesce(
        Subquery(
            Alert.objects.filter(person_id=OuterRef("person_id"), status__in=NOT_ACKNOWLEDGED)
            .order_by()
            .values("person_id")
            .annotate(count=Count("id"))
            .values("count")[:1]
        ),
        Value(0),
    )


@dataclass(frozen=True)
class PersonRow:
    """One of the login's people as the people list orders, filters and pages them: no profile
    read or decrypted (a care group's admin is in thousands of care teams); `name` only when a
    search asked for names."""

    person_id: uuid.UUID
    organisation_id: uuid.UUID
    status: str
    role: str
    open_alerts: int
    name: str = ""


def _memberships_in(user, unit) -> QuerySet[CareTeamMembership]:
    memberships = access.care_memberships(user)
    return memberships if unit is None else memberships.filter(person__unit_id=unit.pk)


def people_ids_for_user(*, user, unit=None) -> QuerySet:
    """The ids of the people `people_rows_for_user` lists, as a subquery (a care group's
    thousands of ids are cheaper for the database to find again than for Django to send)."""
    return _memberships_in(user, unit).values("person_id")


def people_rows_for_user(*, user, unit=None, names: bool = False) -> list[PersonRow]:
    """The people in `user`'s care teams within its organisations (dashboard.access), most
    recently active first, as rows (one query); with `unit`, only those living in it (in SQL);
    `names`: each with the name caregivers use (decrypted: for a search)."""
    memberships = _memberships_in(user, unit)
    fields = ["person_id", "person__organisation_id", "person__status", "role", "open_alerts"]
    if names:
        fields += ["person__display_name", "person__caregiver_context"]
    rows = (
        memberships.annotate(open_alerts=_open_alerts_subquery())
        .order_by("-person__last_active_at")
        .values_list(*fields)
    )
    return [
        PersonRow(
            person_id=row[0],
            organisation_id=row[1],
            status=row[2],
            role=row[3],
            open_alerts=row[4],
            name=(
                person_name(SimpleNamespace(display_name=row[5], caregiver_context=row[6]))
                if names
                else ""
            ),
        )
        for row in rows
    ]


def cards_of(rows: list[PersonRow], *, user, now: datetime) -> list[PersonCard]:
    """The cards of `rows` (a page of the list), in their order, with today's mood: the people
    with their unit and home, and the login's membership of each care team (three queries, and
    the two of the moods)."""
    memberships = {
        m.person_id: m
        for m in access.care_memberships(user)
        .filter(person_id__in=[row.person_id for row in rows])
        .select_related("person__unit__home")
    }
    # A login's few organisations, read once: joined, each was built again for every person.
    organisations = Organisation.objects.in_bulk({row.organisation_id for row in rows})
    cards = []
    for row in rows:
        membership = memberships.get(row.person_id)
        if membership is None:  # left the care team since the rows were read
            continue
        membership.person.organisation = organisations[row.organisation_id]
        cards.append(
            PersonCard(person=membership.person, membership=membership, open_alerts=row.open_alerts)
        )
    moods_fill(cards, now=now)
    return cards


def moods_fill(cards: list[PersonCard], *, now: datetime) -> None:
    """Today's mood on each card (two queries for all of them)."""
    found = moods_today([card.person for card in cards], now=now)
    for card in cards:
        card.mood = found[card.person.id]


def people_without_a_team(*, organisation_id: uuid.UUID) -> list[Person]:
    """The organisation's people nobody of it looks after yet (a person the bot made, say),
    newest first: for its admins, who invite someone to care for them."""
    cared_for = CareTeamMembership.objects.filter(
        person__organisation_id=organisation_id,
        user__organisation_memberships__organisation_id=organisation_id,
    ).values("person_id")
    return list(
        Person.objects.filter(organisation_id=organisation_id)
        .exclude(status=Person.Status.ARCHIVED)
        .exclude(id__in=cared_for)
        .order_by("-created_at")[:50]
    )


def person_card(*, person: Person, membership: CareTeamMembership, now: datetime) -> PersonCard:
    """The header of the person page: name, last active, today's mood, alerts needing a look."""
    open_alerts = Alert.objects.filter(person_id=person.id, status__in=NOT_ACKNOWLEDGED).count()
    mood = moods_today([person], now=now)[person.id]
    return PersonCard(person=person, membership=membership, open_alerts=open_alerts, mood=mood)


# The person's latest messages read for the languages they speak in.
LANGUAGE_MESSAGES = 60
LANGUAGE_DAYS = 30


def languages_heard(*, person: Person, now: datetime) -> list[str]:
    """The languages the person spoke to Clara in lately (most used first), by name: a person
    who goes back to the language they grew up in is told apart at a glance. Read from their
    latest messages (never stored apart from them)."""
    from memory.conversations.urgency import language

    texts = ChatMessage.objects.filter(
        person_id=person.id,
        role=ChatMessage.Role.USER,
        timestamp__gte=now - timedelta(days=LANGUAGE_DAYS),
    ).order_by("-timestamp")[:LANGUAGE_MESSAGES]
    counts: dict[str, int] = {}
    for message in texts.only("content"):
        code = language.identify(message.content).code
        counts[code] = counts.get(code, 0) + 1
    return [language.NAMES[code] for code, _n in sorted(counts.items(), key=lambda i: -i[1])]


# --- Latest trends (computed nightly by memory.insights.trends) -----------------------------------------


def latest_trends(*, person: Person, now: datetime) -> dict:
    """The person's latest stored trends; computed on the spot (nothing stored) if none yet."""
    row = PersonTrend.objects.filter(person_id=person.id).order_by("-day").values("data").first()
    if row is not None:
        return row["data"]
    return trends.trends_data(person=person, day=now.astimezone(person_zone(person)).date())


# --- Emotion timeline ---------------------------------------------------------------------------


@dataclass
class Day:
    """One local day of readings: its average and its most upset moment (never averaged away)."""

    day: date
    average: float
    peak: float
    peak_at: datetime
    peak_emotion: str
    readings: int


@dataclass
class Timeline:
    zone: str
    days: int
    by_day: list[Day]  # oldest first; only days with readings
    baseline: float | None
    spread: float | None
    # (local time, reason, distress 0–1 of the reading it was raised on, or None if unknown)
    escalations: list[tuple[datetime, str | None, float | None]]

    @property
    def band(self) -> tuple[float, float] | None:
        if self.baseline is None:
            return None
        spread = self.spread or 0.0
        return max(self.baseline - spread, 0.0), min(self.baseline + spread, 1.0)

    @property
    def readings(self) -> int:
        return sum(day.readings for day in self.by_day)


# The timeline reads at most this many readings (the newest): ~90 days of a person who talks
# all day. Beyond it the oldest days are left out, never thinned.
TIMELINE_READINGS = 20_000


def emotion_timeline(*, person: Person, now: datetime, days: int = TIMELINE_DAYS) -> Timeline:
    """Each local day of the last `days` days (its average and its highest reading), the usual
    level (baseline) and its spread, and the moments that needed a person at their real level.

    The baseline is the nightly trends' (the last 30 conversations); the spread is the standard
    deviation of the readings in the window, so the band is "their usual range". Days are
    grouped here (the rows are three small columns, bounded by TIMELINE_READINGS) so the day
    follows the person's own clock on every database. Four queries.
    """
    zone = person_zone(person)
    since = now - timedelta(days=days)
    window = DetectedEmotion.objects.filter(
        person_id=person.id, timestamp__gte=since, timestamp__lte=now
    )  # idx_emotions_user_time
    rows = list(
        window.order_by("-timestamp").values_list("timestamp", "distress_score", "emotion")[
            :TIMELINE_READINGS
        ]
    )
    rows.reverse()
    by_day: list[Day] = []
    for day, readings in itertools.groupby(
        ((at.astimezone(zone), distress, emotion) for at, distress, emotion in rows),
        key=lambda row: row[0].date(),
    ):
        readings = list(readings)
        peak_at, peak, peak_emotion = max(readings, key=lambda row: (row[1], row[0]))
        by_day.append(
            Day(
                day=day,
                average=sum(row[1] for row in readings) / len(readings),
                peak=peak,
                peak_at=peak_at,
                peak_emotion=peak_emotion or Emotion.NEUTRAL,
                readings=len(readings),
            )
        )
    stats = window.aggregate(
        mean=Avg("distress_score"),
        square=Avg(F("distress_score") * F("distress_score")),
    )
    spread = None
    if stats["mean"] is not None:
        spread = max(stats["square"] - stats["mean"] ** 2, 0.0) ** 0.5
    trend = (
        PersonTrend.objects.filter(person_id=person.id)
        .order_by("-day")
        .values_list("data", flat=True)
        .first()
    )
    baseline = (trend or {}).get("baseline_distress", stats["mean"])
    # The star sits at the reading the alert was raised on: the session's latest reading at or
    # before the alert (the exchange write stores both in one transaction).
    raised_on = (
        DetectedEmotion.objects.filter(
            session_id=OuterRef("session_id"), timestamp__lte=OuterRef("created_at")
        )
        .order_by("-timestamp")
        .values("distress_score")[:1]
    )
    escalations = [
        (at.astimezone(zone), (detail or {}).get("reason"), distress)
        for at, detail, distress in Alert.objects.filter(
            person_id=person.id,
            kind=Alert.Kind.ESCALATION,
            created_at__gte=since,
            created_at__lte=now,
        )
        .annotate(distress=Subquery(raised_on))
        .order_by("created_at")
        .values_list("created_at", "detail", "distress")
    ]
    return Timeline(
        zone=str(zone),
        days=days,
        by_day=by_day,
        baseline=baseline,
        spread=spread,
        escalations=escalations,
    )


@dataclass
class Stretch:
    """Distress over a stretch of days: 'the last 7 days' or 'the 7 days before'."""

    average: float | None
    readings: int
    conversations: int


def last_7_days(*, person: Person, now: datetime) -> tuple[Stretch, Stretch]:
    """The last 7 days (rolling, to now) and the 7 days before them: two queries.

    Rolling days, not the calendar week: on a Monday morning a calendar week holds almost
    nothing, and every comparison would read as a change.
    """
    cut, start = now - timedelta(days=7), now - timedelta(days=14)
    recent, before = Q(timestamp__gte=cut), Q(timestamp__lt=cut)
    readings = DetectedEmotion.objects.filter(
        person_id=person.id, timestamp__gte=start, timestamp__lte=now
    ).aggregate(
        avg_recent=Avg("distress_score", filter=recent),
        n_recent=Count("id", filter=recent),
        avg_before=Avg("distress_score", filter=before),
        n_before=Count("id", filter=before),
    )  # idx_emotions_user_time
    sessions = Session.objects.filter(
        person_id=person.id, created_at__gte=start, created_at__lte=now, message_count__gt=0
    ).aggregate(
        recent=Count("id", filter=Q(created_at__gte=cut)),
        before=Count("id", filter=Q(created_at__lt=cut)),
    )  # idx_sessions_person_created
    return (
        Stretch(readings["avg_recent"], readings["n_recent"], sessions["recent"]),
        Stretch(readings["avg_before"], readings["n_before"], sessions["before"]),
    )


# --- Time of day and weekly trend -------------------------------------------------------------


@dataclass
class Heatmap:
    zone: str
    days: int
    # averages[weekday][hour], Monday = 0; None where there was no reading
    averages: list[list[float | None]]
    readings: list[list[int]]

    @property
    def total(self) -> int:
        return sum(map(sum, self.readings))

    def hardest_hours(self) -> tuple[int, int] | None:
        """The local hours (start, end) of the most upset stretch of the day, for the caption."""
        by_hour = []
        for hour in range(24):
            count = sum(self.readings[day][hour] for day in range(7))
            if count:
                total = sum(
                    (self.averages[day][hour] or 0) * self.readings[day][hour] for day in range(7)
                )
                by_hour.append((total / count, hour))
        if len(by_hour) < 3:
            return None
        worst = max(by_hour)[1]
        return worst, worst + 1


def distress_heatmap(*, person: Person, now: datetime, days: int = HEATMAP_DAYS) -> Heatmap:
    """Average distress by weekday and hour (local) over the last `days` days: one GROUP BY."""
    zone = person_zone(person)
    since = now - timedelta(days=days)
    averages: list[list[float | None]] = [[None] * 24 for _ in range(7)]
    readings = [[0] * 24 for _ in range(7)]
    rows = (
        DetectedEmotion.objects.filter(
            person_id=person.id, timestamp__gte=since, timestamp__lte=now
        )
        .annotate(slot=LocalWeekHour("timestamp", zone=zone, start=since, end=now))
        .values("slot")
        .annotate(average=Avg("distress_score"), readings=Count("id"))
        .order_by("slot")
    )
    for row in rows:  # at most 168
        day, hour = divmod(row["slot"], 24)
        averages[day][hour] = row["average"]
        readings[day][hour] = row["readings"]
    return Heatmap(zone=str(zone), days=days, averages=averages, readings=readings)


@dataclass
class Week:
    start: date
    average: float | None
    readings: int
    conversations: int


def weekly_distress(*, person: Person, now: datetime, weeks: int = WEEKS_SHOWN) -> list[Week]:
    """Average distress and conversations per week (Monday to Sunday, local), oldest first.

    Week bounds are computed in the person's zone, so each week is a plain timestamp range:
    two queries of conditional aggregates over the (person, time) indexes.
    """
    zone = person_zone(person)
    this_week = _week_start(person, now).date()
    starts = [this_week - timedelta(weeks=back) for back in range(weeks - 1, -1, -1)]
    bounds = [_local_midnight(start, zone) for start in starts] + [now]
    readings, conversations = {}, {}
    for index in range(weeks):
        in_week = Q(timestamp__gte=bounds[index], timestamp__lt=bounds[index + 1])
        readings[f"avg_{index}"] = Avg("distress_score", filter=in_week)
        readings[f"n_{index}"] = Count("id", filter=in_week)
        started = Q(created_at__gte=bounds[index], created_at__lt=bounds[index + 1])
        conversations[f"c_{index}"] = Count("id", filter=started)
    emotion_row = DetectedEmotion.objects.filter(
        person_id=person.id, timestamp__gte=bounds[0], timestamp__lt=now
    ).aggregate(**readings)
    session_row = Session.objects.filter(
        person_id=person.id, created_at__gte=bounds[0], created_at__lt=now, message_count__gt=0
    ).aggregate(**conversations)
    return [
        Week(
            start=start,
            average=emotion_row[f"avg_{index}"],
            readings=emotion_row[f"n_{index}"],
            conversations=session_row[f"c_{index}"],
        )
        for index, start in enumerate(starts)
    ]


# --- Repetition -------------------------------------------------------------------------------


@dataclass
class SessionQuestions:
    session_id: uuid.UUID
    started: datetime
    by_type: dict[str, int]


def questions_per_session(
    *, person: Person, now: datetime, sessions: int = SESSIONS_CHARTED
) -> list[SessionQuestions]:
    """Questions asked in each of the latest conversations, by type (not 'other'), oldest first."""
    zone = person_zone(person)
    recent = list(
        Session.objects.filter(person_id=person.id, created_at__lte=now, message_count__gt=0)
        .order_by("-created_at")
        .values_list("id", "created_at")[:sessions]
    )  # idx_sessions_person_created
    by_session = {
        session_id: SessionQuestions(session_id, at.astimezone(zone), {})
        for session_id, at in recent
    }
    rows = (
        RepetitionRecord.objects.filter(session_id__in=list(by_session))
        .exclude(question_type=QuestionType.GENERAL)
        .values("session_id", "question_type")
        .annotate(asked=Count("id"))
        .order_by()
    )  # idx_repetition_type
    for row in rows:
        by_session[row["session_id"]].by_type[row["question_type"]] = row["asked"]
    return list(reversed(by_session.values()))


@dataclass
class RepeatedQuestion:
    example: str  # the most frequent wording (the person's own words: transcript right only)
    question_type: str
    times: int
    conversations: int
    wordings: int = 1  # how many different wordings (by words or by meaning) were one question
    # One repetition record of the most frequent wording, and its keyed words: the profile's
    # "set an agreed answer" names the question by this record.
    record_id: uuid.UUID | None = None
    fingerprint: str = ""

    @property
    def in_other_words(self) -> bool:
        return self.wordings > 1


_NOT_A_WORD = re.compile(r"[^\w\s]|_")


def _said_the_same(text: str) -> str:
    """What makes two short messages the same: their words, lower case, without punctuation."""
    return " ".join(_NOT_A_WORD.sub("", text.lower()).split())


@dataclass
class _Wording:
    example: str
    question_type: str
    fingerprint: str
    record_id: uuid.UUID  # one record said this way: its stored meaning stands for all
    times: int = 0
    sessions: set = field(default_factory=set)


def most_repeated_questions(
    *,
    person: Person,
    now: datetime,
    days: int = REPETITION_DAYS,
    limit: int = MOST_REPEATED,
    messages: int = REPEATED_MESSAGES,
) -> list[RepeatedQuestion]:
    """The questions asked most often in the last `days` days, each counted however it was put.

    Reads the person's latest `messages` repetition records of the window (their text is
    encrypted at rest, so it is compared after decryption, in Python) and groups them twice:
    by wording (the same content words, keyed, and the same words once punctuation and case
    are gone), then by meaning: wordings that mean the same ("I want to go home" / "Take me
    home, please") become one question (memory.conversations.repeats.group_by_meaning, on the
    stored meaning of one record per wording: no model runs here). Opposites ("I don't want to
    go home") stay apart though their content words are the same. Rows stored without a
    meaning group by their words only. The MERGE_WORDINGS most frequent wordings are compared.
    """
    rows = (
        RepetitionRecord.objects.filter(
            person_id=person.id,
            # Every type, named: the (person, question_type, timestamp) index then reads just the
            # window's rows (without it, SQLite walks all of the person's rows by fingerprint).
            question_type__in=QuestionType.values,
            timestamp__gte=now - timedelta(days=days),
            timestamp__lte=now,
        )
        .order_by("-timestamp")
        .values_list("id", "fingerprint", "original_message", "question_type", "session_id")[
            :messages
        ]
    )  # idx_repetition_user_type
    wordings: dict[tuple[str, str], _Wording] = {}
    for record_id, fingerprint, text, qtype, session_id in rows:
        key = (fingerprint, _said_the_same(text))
        said = wordings.get(key)
        if said is None:
            said = wordings[key] = _Wording(text, qtype, fingerprint, record_id)
        said.times += 1
        said.sessions.add(session_id)
    ordered = sorted(
        wordings.values(), key=lambda said: (-said.times, _said_the_same(said.example))
    )[:MERGE_WORDINGS]
    # Loaded as instances, not values(): each stored meaning is then checked against the row it
    # was read from (memory/core/fields.py), so one moved onto this person's record is refused.
    stored = {
        record.id: record.meaning
        for record in RepetitionRecord.objects.filter(
            id__in=[said.record_id for said in ordered]
        ).only("id", "meaning")
    }  # primary key
    groups = group_by_meaning(
        [
            Said(
                key=index,
                fingerprint=said.fingerprint,
                times=said.times,
                meaning=decode_meaning(stored.get(said.record_id)),
            )
            for index, said in enumerate(ordered)
        ]
    )
    found = []
    for group in groups:
        members = [ordered[item.key] for item in group]
        times = sum(member.times for member in members)
        if times < 2:
            continue
        found.append(
            RepeatedQuestion(
                example=members[0].example,
                question_type=members[0].question_type,
                times=times,
                conversations=len(set().union(*(member.sessions for member in members))),
                wordings=len(members),
                record_id=members[0].record_id,
                fingerprint=members[0].fingerprint,
            )
        )
    found.sort(key=lambda q: (-q.times, _said_the_same(q.example)))
    return found[:limit]


@dataclass
class ChronicConversations:
    chronic: int  # conversations in which one thing was asked CHRONIC_AT times or more
    conversations: int


def chronic_conversations(
    *, person: Person, now: datetime, days: int = REPETITION_DAYS
) -> ChronicConversations:
    """How many of the person's conversations of the last `days` days went round in circles
    (the chronic-repetition flag the exchange write sets). For caregivers; never the prompt."""
    row = Session.objects.filter(
        person_id=person.id,
        created_at__gte=now - timedelta(days=days),
        created_at__lte=now,
        message_count__gt=0,
    ).aggregate(
        chronic=Count("id", filter=Q(chronic_repetition_pattern=True)),
        conversations=Count("id"),
    )  # idx_sessions_person_created
    return ChronicConversations(row["chronic"], row["conversations"])


@dataclass
class HourCount:
    hour: int
    asked: int
    repeats: int


def questions_by_hour(
    *, person: Person, now: datetime, days: int = REPETITION_DAYS
) -> list[HourCount]:
    """Questions (and repeats of an earlier one) by local hour over the last `days` days."""
    zone = person_zone(person)
    since = now - timedelta(days=days)
    rows = (
        RepetitionRecord.objects.filter(
            person_id=person.id, timestamp__gte=since, timestamp__lte=now
        )
        .exclude(question_type=QuestionType.GENERAL)
        .annotate(hour=trends.LocalHour("timestamp", zone=zone, start=since, end=now))
        .values("hour")
        .annotate(asked=Count("id"), repeats=Count("id", filter=Q(repeat_count__gt=0)))
        .order_by("hour")
    )
    return [HourCount(row["hour"], row["asked"], row["repeats"]) for row in rows]


@dataclass
class WeekQuestion:
    question_type: str
    asked: int
    conversations: int
    last_week_asked: int
    last_week_conversations: int

    @property
    def per_conversation(self) -> float:
        return self.asked / self.conversations if self.conversations else 0.0

    @property
    def last_week_per_conversation(self) -> float:
        if not self.last_week_conversations:
            return 0.0
        return self.last_week_asked / self.last_week_conversations


@dataclass
class WeekBand:
    conversations: int
    last_week_conversations: int
    questions: list[WeekQuestion]


def repetition_this_week(*, person: Person, now: datetime) -> WeekBand:
    """The last 7 days' questions by type beside the 7 days before: two queries.

    Rolling days, not calendar weeks: on a Monday morning a calendar week holds almost nothing,
    and every question would read as asked less.
    """
    this_week = now - timedelta(days=7)
    last_week = now - timedelta(days=14)
    is_this = Q(timestamp__gte=this_week)
    is_last = Q(timestamp__lt=this_week)
    rows = (
        RepetitionRecord.objects.filter(
            person_id=person.id, timestamp__gte=last_week, timestamp__lte=now
        )
        .exclude(question_type=QuestionType.GENERAL)
        .values("question_type")
        .annotate(
            asked=Count("id", filter=is_this),
            conversations=Count("session_id", distinct=True, filter=is_this),
            last_asked=Count("id", filter=is_last),
            last_conversations=Count("session_id", distinct=True, filter=is_last),
        )
        .order_by()
    )  # idx_repetition_user_type
    questions = sorted(
        (
            WeekQuestion(
                question_type=row["question_type"],
                asked=row["asked"],
                conversations=row["conversations"],
                last_week_asked=row["last_asked"],
                last_week_conversations=row["last_conversations"],
            )
            for row in rows
        ),
        key=lambda q: (-q.asked, -q.last_week_asked, q.question_type),
    )
    sessions = Session.objects.filter(
        person_id=person.id, created_at__gte=last_week, created_at__lte=now, message_count__gt=0
    ).aggregate(
        this=Count("id", filter=Q(created_at__gte=this_week)),
        last=Count("id", filter=Q(created_at__lt=this_week)),
    )
    return WeekBand(
        conversations=sessions["this"],
        last_week_conversations=sessions["last"],
        questions=questions,
    )


@dataclass
class QuestionsAsked:
    """The questions of a stretch of time by kind, counted as the repetition panel counts them."""

    conversations: int
    questions: list[WeekQuestion]


def questions_between(*, person: Person, start: datetime, end: datetime) -> QuestionsAsked:
    """Each kind of question asked in [start, end) (every asking, "other" left out), in how many
    conversations, of how many: the same counts as repetition_this_week's, for any period (the
    clinician report; tests/dashboard/test_clinician_report.py compares the two). Two queries."""
    rows = (
        RepetitionRecord.objects.filter(
            person_id=person.id, timestamp__gte=start, timestamp__lt=end
        )
        .exclude(question_type=QuestionType.GENERAL)
        .values("question_type")
        .annotate(asked=Count("id"), conversations=Count("session_id", distinct=True))
        .order_by()
    )  # idx_repetition_user_type
    questions = sorted(
        (
            WeekQuestion(
                question_type=row["question_type"],
                asked=row["asked"],
                conversations=row["conversations"],
                last_week_asked=0,
                last_week_conversations=0,
            )
            for row in rows
        ),
        key=lambda q: (-q.asked, q.question_type),
    )
    conversations = Session.objects.filter(
        person_id=person.id, created_at__gte=start, created_at__lt=end, message_count__gt=0
    ).count()  # idx_sessions_person_created
    return QuestionsAsked(conversations=conversations, questions=questions)


# --- What calms them --------------------------------------------------------------------------


@dataclass
class Calming:
    name: str  # a kind of story, or a story's title
    category: str
    uses: int
    measured: int
    change: float | None  # average change of distress after it; negative is calmer

    @property
    def drop(self) -> int | None:
        """How many points (of 100) calmer the person was after it, on average."""
        return None if self.change is None else -round(self.change * 100)

    @property
    def enough(self) -> bool:
        """Measured often enough to rank: below CALMING_MIN_MEASURED it reads "not enough yet"."""
        return self.change is not None and self.measured >= CALMING_MIN_MEASURED


def what_calms(*, person: Person, now: datetime) -> tuple[list[Calming], list[Calming], int]:
    """Story kinds and stories ranked by the fall in distress that followed them.

    From the nightly trends (the last 30 conversations): (by kind, by story, conversations covered).
    """
    data = latest_trends(person=person, now=now)
    effect = data.get("narrative_effectiveness") or {}
    by_category = [
        Calming(
            name=words.story_kind(row["category"]),
            category=row["category"],
            uses=row["uses"],
            measured=row["measured"],
            change=row["avg_change"],
        )
        for row in effect.get("by_category", [])
    ]
    stories = effect.get("by_narrative", [])
    titles = _titles_for(person, [row["narrative_id"] for row in stories])
    by_story = [
        Calming(
            name=titles.get(row["narrative_id"], row["narrative_id"].replace("-", " ")),
            category=row["category"],
            uses=row["uses"],
            measured=row["measured"],
            change=row["avg_change"],
        )
        for row in stories
    ]

    def rank(item: Calming) -> tuple:
        # Calmest first among those measured often enough; the rest after, most tried first.
        if item.enough:
            return (0, item.change, 0, item.name)
        return (1, 0, -item.uses, item.name)

    return (
        sorted(by_category, key=rank),
        sorted(by_story, key=rank),
        data.get("sessions_covered", 0),
    )


# --- Conversations ------------------------------------------------------------------------------


@dataclass
class SessionRow:
    id: uuid.UUID
    started: datetime
    ended: datetime | None
    status: str
    message_count: int
    dominant_emotion: str | None
    escalation_triggered: bool
    summary: dict

    @property
    def one_liner(self) -> str:
        line = self.summary.get("one_liner")
        if line:
            return line
        if self.status == Session.Status.ACTIVE:
            return "Talking with Clara now."
        return (
            f"Talked with Clara for {words.duration(self.summary.get('duration_seconds'))}, "
            f"mostly {words.feeling(self.dominant_emotion)}. (Summary not written yet.)"
        )

    @property
    def repeats(self) -> int | None:
        return (self.summary.get("counts") or {}).get("repeats")


_SESSION_FIELDS = (
    "id",
    "created_at",
    "ended_at",
    "status",
    "message_count",
    "dominant_emotion",
    "escalation_triggered",
    "session_summary",
)


def _session_row(row: dict, zone: ZoneInfo, about: CaregiverContext | None = None) -> SessionRow:
    """One conversation's row; its summary in the current name and pronouns when `about`."""
    return SessionRow(
        id=row["id"],
        started=row["created_at"].astimezone(zone),
        ended=row["ended_at"].astimezone(zone) if row["ended_at"] else None,
        status=row["status"],
        message_count=row["message_count"],
        dominant_emotion=row["dominant_emotion"],
        escalation_triggered=row["escalation_triggered"],
        summary=naming.summary_as_now(row["session_summary"] or {}, about),
    )


def sessions_page(
    *, person: Person, page: int = 1, per_page: int = SESSIONS_PER_PAGE
) -> tuple[list[SessionRow], bool]:
    """One page of the person's conversations, newest first; (rows, whether there are more)."""
    zone = person_zone(person)
    offset = (max(page, 1) - 1) * per_page
    rows = list(
        Session.objects.filter(person_id=person.id, message_count__gt=0)
        .order_by("-created_at")
        .values(*_SESSION_FIELDS)[offset : offset + per_page + 1]
    )  # idx_sessions_person_created
    about = CaregiverContext.of(person)
    return [_session_row(row, zone, about) for row in rows[:per_page]], len(rows) > per_page


def session_for_person(*, person: Person, session_id: uuid.UUID) -> SessionRow | None:
    """The person's conversation with this id, or None (another person's session is not theirs)."""
    row = Session.objects.filter(id=session_id, person_id=person.id).values(*_SESSION_FIELDS)
    row = row.first()
    if row is None:
        return None
    return _session_row(row, person_zone(person), CaregiverContext.of(person))


@dataclass
class TranscriptLine:
    role: str
    content: str
    at: datetime
    emotion: str | None
    distress: float | None
    repeat_count: int | None
    story: str | None
    escalation: str | None  # why this message needed a person, if it did

    @property
    def feeling(self) -> str:
        return words.feeling(self.emotion)

    @property
    def upset(self) -> int | None:
        return words.upset_score(self.distress)

    @property
    def level(self) -> str:
        return Mood(readings=1, average=self.distress).level

    @property
    def escalation_words(self) -> str:
        return words.ESCALATION_REASONS.get(self.escalation or "", "needed help")


def transcript(*, person: Person, session_id: uuid.UUID) -> list[TranscriptLine]:
    """Every message of the conversation in order, with the feeling read from each of the
    person's messages, repeats, stories told and the messages that needed a person. One query."""
    zone = person_zone(person)
    rows = (
        ChatMessage.objects.filter(session_id=session_id, person_id=person.id)
        .order_by("sequence_number")
        .values_list(
            "role",
            "content",
            "timestamp",
            "emotion__emotion",
            "emotion__distress_score",
            "repetition__repeat_count",
            "narrative_usage__narrative_id",
        )
    )  # idx_messages_session_seq
    lines = []
    for role, content, at, emotion, distress, repeats, story in rows:
        flagged = None
        if role == ChatMessage.Role.USER:
            found = escalation.detect(content, emotion=emotion, distress=distress or 0.0)
            flagged = found.reason if found.escalate else None
        lines.append(
            TranscriptLine(
                role=role,
                content=content,
                at=at.astimezone(zone),
                emotion=emotion,
                distress=distress,
                repeat_count=repeats,
                story=story,
                escalation=flagged,
            )
        )
    return lines


def _titles_for(person: Person, ids: list[str]) -> dict[str, str]:
    """Titles of the library's stories and of this person's own, by id. A bot may name any id
    in an exchange: another person's story (another organisation's) is answered as an unknown
    id is, never with its title."""
    return dict(
        Narrative.objects.filter(Q(person__isnull=True) | Q(person=person), id__in=ids).values_list(
            "id", "title"
        )
    )


def story_titles(used: list[dict], *, person: Person) -> list[str]:
    """Titles of the stories a session summary lists (each once, in order told)."""
    ids = list(dict.fromkeys(str(item.get("id")) for item in used if item.get("id")))
    titles = _titles_for(person, ids)
    return [titles.get(story_id, story_id.replace("-", " ")) for story_id in ids]


# --- Alerts ----------------------------------------------------------------------------------


@dataclass
class AlertRow:
    id: int
    kind: str
    status: str
    headline: str
    created: datetime
    session_id: uuid.UUID | None
    claimed_by: str | None = None  # a name, never a login (words.caregiver_name)
    claimed_by_id: int | None = None
    claimed_at: datetime | None = None
    resolved_by: str | None = None
    resolved_at: datetime | None = None
    outcome: str = ""  # in words, with the note of "other"
    # What decided an escalation (words.alert_why): the language, the kind of words or the
    # nearest example; never the person's own words.
    why: str | None = None

    @property
    def status_words(self) -> str:
        return words.ALERT_STATUS.get(self.status, self.status)

    @property
    def urgent(self) -> bool:
        return self.kind == Alert.Kind.ESCALATION


def alerts_for_person(*, person: Person, limit: int = ALERTS_SHOWN) -> list[AlertRow]:
    """The person's alerts: the ones not resolved first (oldest first: the longest waiting
    leads), then the resolved, newest first."""
    zone = person_zone(person)
    rows = (
        Alert.objects.filter(person_id=person.id)
        .order_by("-created_at")
        .values(
            "id",
            "kind",
            "status",
            "detail",
            "created_at",
            "session_id",
            "claimed_by_id",
            "claimed_by__username",
            "claimed_by__first_name",
            "claimed_by__last_name",
            "claimed_at",
            "resolved_by__username",
            "resolved_by__first_name",
            "resolved_by__last_name",
            "resolved_at",
            "outcome",
            "outcome_note",
        )[:limit]
    )  # idx_alerts_person_created
    alerts = [
        AlertRow(
            id=row["id"],
            kind=row["kind"],
            status=row["status"],
            headline=words.alert_headline(row["kind"], row["detail"]),
            created=row["created_at"].astimezone(zone),
            session_id=row["session_id"],
            claimed_by=words.login_name(
                row["claimed_by__first_name"],
                row["claimed_by__last_name"],
                row["claimed_by__username"],
            ),
            claimed_by_id=row["claimed_by_id"],
            claimed_at=row["claimed_at"].astimezone(zone) if row["claimed_at"] else None,
            resolved_by=words.login_name(
                row["resolved_by__first_name"],
                row["resolved_by__last_name"],
                row["resolved_by__username"],
            ),
            resolved_at=row["resolved_at"].astimezone(zone) if row["resolved_at"] else None,
            outcome=words.outcome_words(row["outcome"], row["outcome_note"])
            if row["outcome"]
            else "",
            why=words.alert_why(row["detail"]),
        )
        for row in rows
    ]
    waiting = sorted(
        (a for a in alerts if a.status != Alert.Status.RESOLVED), key=lambda a: (a.created, a.id)
    )
    over = [a for a in alerts if a.status == Alert.Status.RESOLVED]
    return waiting + over


def alert_of_person(*, person: Person, alert_id: int) -> Alert | None:
    return Alert.objects.filter(id=alert_id, person_id=person.id).first()


# --- Team -------------------------------------------------------------------------------------


def team_of(*, person: Person) -> list[CareTeamMembership]:
    return list(
        CareTeamMembership.objects.filter(person_id=person.id)
        .select_related("user", "granted_by_unit")
        .order_by("role", "user__username")
    )


def organisation_logins(*, organisation_id: uuid.UUID, exclude_person: Person | None = None):
    """The logins of one organisation, by login name: the only ones a care team may take.

    `exclude_person`: leave out those already in this person's care team.
    """
    users = get_user_model().objects.filter(
        pk__in=OrganisationMembership.objects.filter(organisation_id=organisation_id).values(
            "user_id"
        ),
        is_active=True,
    )
    if exclude_person is not None:
        users = users.exclude(care_memberships__person_id=exclude_person.id)
    return users.order_by("username")


# --- An organisation's audit ---------------------------------------------------------------------

AUDIT_PER_PAGE = 50
CHANNEL_WORDS = {"dashboard": "dashboard", **dict(AccessChannel.choices)}


@dataclass
class AuditRow:
    at: datetime
    who: str
    channel: str
    person: Person | None
    what: str
    object_id: str
    outcome: str

    @property
    def person_label(self) -> str:
        # Erased people leave rows that point at no one.
        return person_name(self.person) if self.person is not None else ""

    @property
    def refused(self) -> bool:
        return self.outcome != AccessOutcome.ALLOWED.label


def _dashboard_row(event: AuditEvent) -> AuditRow:
    return AuditRow(
        at=event.at,
        # The login's name (full name, else the login); the login name kept on the row when
        # the login is gone.
        who=words.caregiver_name(event.user) if event.user_id else event.username,
        channel=CHANNEL_WORDS["dashboard"],
        person=event.person,
        what=event.get_action_display(),
        object_id=event.object_id,
        outcome=_dashboard_outcome(event),
    )


def _dashboard_outcome(event: AuditEvent) -> str:
    if event.allowed:
        return AccessOutcome.ALLOWED.label
    if event.action == AuditAction.PERSON_NOT_FOUND:
        return AccessOutcome.NOT_FOUND.label  # a probe of someone not theirs: answered 404
    return AccessOutcome.REFUSED.label


def _access_row(event: AccessEvent, names: dict[str, str] | None = None) -> AuditRow:
    who = event.actor
    if who.startswith("key:"):
        who = f"API key {who.removeprefix('key:')}"
    elif who.startswith("user:"):
        login = who.removeprefix("user:")
        who = f"operator {(names or {}).get(login) or login}"
    return AuditRow(
        at=event.at,
        who=who,
        channel=CHANNEL_WORDS.get(event.channel, event.channel),
        person=event.person,
        what=event.get_action_display(),
        object_id=event.object_id,
        outcome=event.get_outcome_display(),
    )


def _operator_names(events: list[AccessEvent]) -> dict[str, str]:
    """Operators' names by login, for the audit's rows of admin reads (one query)."""
    logins = {e.actor.removeprefix("user:") for e in events if e.actor.startswith("user:")}
    if not logins:
        return {}
    users = get_user_model().objects.filter(username__in=logins)
    return {user.get_username(): words.caregiver_name(user) for user in users}


def organisation_audit(
    *,
    organisation: Organisation,
    page: int = 1,
    per_page: int = AUDIT_PER_PAGE,
    where=None,
) -> tuple[list[AuditRow], bool]:
    """One page of the organisation's audit, newest first, and whether there is an older page:
    its caregivers' reads on the dashboard and its API keys' and operators' disclosures,
    narrowed by `where` (dashboard.audit_filter.AuditFilter) when given.

    Two indexed reads (idx_audit_org_at, idx_access_org_at), each of the first page*per_page+1
    rows, merged by time.
    """
    wanted = page * per_page + 1
    dashboard_rows = AuditEvent.objects.filter(organisation_id=organisation.pk)
    access_rows = AccessEvent.objects.filter(organisation_id=organisation.pk)
    if where is not None:
        dashboard_rows = where.dashboard_rows(dashboard_rows)
        access_rows = where.access_rows(access_rows)
    dashboard_rows = dashboard_rows.select_related("person", "user").order_by("-at", "-id")[:wanted]
    access_rows = list(access_rows.select_related("person").order_by("-at", "-id")[:wanted])
    names = _operator_names(access_rows)
    merged = heapq.merge(
        (_dashboard_row(e) for e in dashboard_rows),
        (_access_row(e, names) for e in access_rows),
        key=lambda row: row.at,
        reverse=True,
    )
    rows = list(itertools.islice(merged, (page - 1) * per_page, wanted))
    return rows[:per_page], len(rows) > per_page


# --- What Clara remembers ----------------------------------------------------------------------


@dataclass
class MemoryGroup:
    type: str
    heading: str
    memories: list


def memories_by_type(*, person: Person, short_name: str) -> list[MemoryGroup]:
    """The person's live memories grouped by type in the review's order (most important first)."""
    from memory.facts import store  # the fact store imports the embedding model lazily

    groups = {
        memory_type: MemoryGroup(memory_type, heading.format(name=short_name), [])
        for memory_type, heading in words.MEMORY_TYPES.items()
    }
    for memory in store.memory_list_for_person(person.id):
        groups.setdefault(
            memory.type, MemoryGroup(memory.type, memory.type.replace("_", " "), [])
        ).memories.append(memory)
    return [group for group in groups.values() if group.memories]


def memory_of_person(*, person: Person, memory_id: uuid.UUID):
    """The person's live memory with this id, or None (another person's is not theirs)."""
    from memory.models import Memory

    return Memory.objects.filter(
        id=memory_id, person_id=person.id, status=Memory.Status.ACTIVE
    ).first()
