"""The clinician report: a PDF of one person over a chosen period, rendered from HTML by
WeasyPrint. Mood week by week, the kinds of question that came back, night-time activity (22:00
to 06:00, the person's time), what helped, and the alerts with what was done. Kinds of question,
never the person's own words; for the team's admins and care staff only (dashboard/alerting/views).
"""

import math
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db.models import Count
from django.template.loader import render_to_string

from dashboard import pdf, selectors, words
from dashboard.alerting import delivery
from dashboard.alerting.models import AlertStep
from memory.core.person import person_zone
from memory.models import Alert, ChatMessage, Person, RepetitionRecord

MAX_DAYS = 366
NIGHT_START, NIGHT_END = 22, 6


@dataclass(frozen=True)
class Period:
    start: date
    end: date  # inclusive

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1


def bounds(person: Person, period: Period) -> tuple[datetime, datetime]:
    zone = person_zone(person)
    start = datetime.combine(period.start, time.min, tzinfo=zone)
    end = datetime.combine(period.end + timedelta(days=1), time.min, tzinfo=zone)
    return start, end


def period_weeks(*, person: Person, period: Period, now: datetime) -> list[selectors.Week]:
    """The weeks (Monday to Sunday, the person's time) that overlap the period, each with its
    average distress and conversations: the report's mood table and the FHIR export's weekly
    Observations (dashboard/fhir), so both give the same figures."""
    _, end = bounds(person, period)
    return [
        w
        for w in selectors.weekly_distress(
            person=person, now=min(end, now), weeks=math.ceil(period.days / 7) + 1
        )
        if w.start + timedelta(days=6) >= period.start and w.start <= period.end
    ]


def repeated_questions(*, person: Person, period: Period) -> list[tuple[str, int]]:
    """(question type, times asked again) in the period, most first: the report's questions
    table and the FHIR export's repetition Observation."""
    start, end = bounds(person, period)
    rows = (
        RepetitionRecord.objects.filter(
            person_id=person.id, timestamp__gte=start, timestamp__lt=end, repeat_count__gt=0
        )
        .values("question_type")
        .annotate(n=Count("id"))
        .order_by("-n", "question_type")
    )
    return [(row["question_type"], row["n"]) for row in rows]


def period_alerts(*, person: Person, period: Period) -> list[Alert]:
    """The person's alerts raised in the period, oldest first (the report's and the FHIR
    export's)."""
    start, end = bounds(person, period)
    return list(
        Alert.objects.filter(person_id=person.id, created_at__gte=start, created_at__lt=end)
        .select_related("resolved_by")
        .order_by("created_at")
    )


def report_context(*, person: Person, period: Period, now: datetime) -> dict:
    start, end = bounds(person, period)
    zone = person_zone(person)
    name = delivery.first_name(person)
    mood = [
        {
            "start": w.start,
            "upset": words.upset_score(w.average),
            "conversations": w.conversations,
        }
        for w in period_weeks(person=person, period=period, now=now)
    ]
    questions = [
        {"kind": words.question_label(kind), "times": n}
        for kind, n in repeated_questions(person=person, period=period)
    ]
    said_at = ChatMessage.objects.filter(
        person_id=person.id, role=ChatMessage.Role.USER, timestamp__gte=start, timestamp__lt=end
    ).values_list("timestamp", flat=True)
    night = [
        t.astimezone(zone)
        for t in said_at
        if not NIGHT_END <= t.astimezone(zone).hour < NIGHT_START
    ]
    nights = {(t - timedelta(hours=NIGHT_END)).date() for t in night}
    kinds, stories, covered = selectors.what_calms(person=person, now=min(end, now))
    alerts = period_alerts(person=person, period=period)
    steps = delivery.timeline(alert_ids=[a.id for a in alerts])
    return {
        "name": name,
        "period": period,
        "generated": now.astimezone(zone),
        "mood": mood,
        "questions": questions,
        "night_messages": len(night),
        "nights": len(nights),
        "helped": [
            {"name": words.story_kind(k.name), "drop": k.drop, "uses": k.uses}
            for k in kinds
            if k.drop is not None
        ],
        "alerts": [
            {
                "when": a.created_at.astimezone(zone),
                "headline": words.alert_headline(a.kind, a.detail),
                "status": words.ALERT_STATUS.get(a.status, a.status),
                "notes": [s.note for s in steps[a.id] if s.kind == AlertStep.Kind.NOTE],
                "resolved_by": words.caregiver_name(a.resolved_by) if a.resolved_by_id else "",
                "resolved_at": a.resolved_at.astimezone(zone) if a.resolved_at else None,
                "outcome": words.outcome_words(a.outcome, a.outcome_note) if a.outcome else "",
            }
            for a in alerts
        ],
        "zone": str(zone),
    }


def report_pdf(*, person: Person, period: Period, now: datetime) -> bytes:
    """The report as PDF bytes (WeasyPrint in dashboard.pdf's renderer processes; fonts and
    styles local, nothing fetched). Call it inside pdf.render_slot(); raises pdf.Busy if the render fails."""
    html = render_to_string(
        "alerting/clinician_report.html", report_context(person=person, period=period, now=now)
    )
    return pdf.html_to_pdf(html)
