"""The clinician report: a PDF of one person over a chosen period, rendered from HTML by
WeasyPrint. Who the person is on record (full name, identifier, home), a summary first, then
mood week by week, the kinds of question that came back (counted as the dashboard counts them),
night-time activity (22:00 to 06:00, the person's time), what helped, and the alerts with what
was done, people by their names. Kinds of question, never the person's own words; for the
team's admins and care staff only (dashboard/alerting/views).
"""

import math
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db.models import Avg
from django.template.loader import render_to_string

from dashboard import params, pdf, selectors, words
from dashboard.alerting import delivery
from dashboard.alerting.models import AlertStep
from memory.core.person import CaregiverContext, person_zone
from memory.models import Alert, ChatMessage, DetectedEmotion, Person

MAX_DAYS = 366
NIGHT_START, NIGHT_END = 22, 6


@dataclass(frozen=True)
class Period:
    start: date
    end: date  # inclusive

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1


DEFAULT_DAYS = 30


class BadPeriod(ValueError):
    """A period the report (or the FHIR export of its figures) cannot cover, naming the field."""

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(detail)
        self.field = field
        self.detail = detail


def period_asked(*, start: date | None, end: date | None, today: date) -> Period:
    """The period a caller asked for: `to` defaults to today, `from` to 30 days before it; both
    days between params.FIRST_DAY and LAST_DAY (a day near date's own ends overflows once a day
    or a time zone is added), `from` not after `to`, at most MAX_DAYS. BadPeriod otherwise."""
    for field, day in (("to", end), ("from", start)):
        if day is not None and not params.FIRST_DAY <= day <= params.LAST_DAY:
            raise BadPeriod(field, f"{field} must be {params.DAY_RANGE}, as YYYY-MM-DD.")
    end = end or today
    start = start or max(end - timedelta(days=DEFAULT_DAYS - 1), params.FIRST_DAY)
    if start > end:
        raise BadPeriod("from", "The first day comes after the last.")
    period = Period(start=start, end=end)
    if period.days > MAX_DAYS:
        raise BadPeriod("from", f"A period covers at most {MAX_DAYS} days.")
    return period


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


def questions_asked(*, person: Person, period: Period) -> selectors.QuestionsAsked:
    """Each kind of question asked in the period, counted as the dashboard's repetition panel
    counts them (dashboard.selectors.questions_between): the report's questions table and the
    FHIR export's questions Observation."""
    start, end = bounds(person, period)
    return selectors.questions_between(person=person, start=start, end=end)


def period_alerts(*, person: Person, period: Period) -> list[Alert]:
    """The person's alerts raised in the period, oldest first (the report's and the FHIR
    export's)."""
    start, end = bounds(person, period)
    return list(
        Alert.objects.filter(person_id=person.id, created_at__gte=start, created_at__lt=end)
        .select_related("resolved_by", "claimed_by")
        .order_by("created_at")
    )


def _identity(person: Person) -> dict:
    """Who the report is about, as the profile has it: full name, identifier, home."""
    about = CaregiverContext.of(person)
    home = ", ".join(part for part in (about.home, about.room) if part)
    return {
        "full_name": person.full_name or person.display_name or about.name,
        "known_as": about.preferred_name,
        "identifier": person.identifier or "",
        "home": home,
    }


def _summary(*, context: dict, name: str) -> list[str]:
    """The report's first lines: the period in a few sentences, the same figures as below."""
    if not context["conversations"]:
        return ["No conversations in this period."]
    lines = [
        f"{name} talked with Clara {words.plural(context['conversations'], 'time')} on "
        f"{words.plural(context['days_talked'], 'day')} of {context['period'].days}."
    ]
    if context["average_upset"] is not None:
        lines.append(
            f"Mostly {words.upset_words(context['average'])} "
            f"(on average {context['average_upset']} of 100 on Clara's scale of how upset)."
        )
    if context["questions"]:
        top = context["questions"][0]
        lines.append(
            f"Most repeated: “{top['kind']}”, asked {words.plural(top['times'], 'time')} in "
            f"{top['conversations']} of {words.plural(context['conversations'], 'conversation')}."
        )
    if context["night_messages"]:
        lines.append(
            f"At night (22:00 to 06:00): {words.plural(context['night_messages'], 'message')} "
            f"over {words.plural(context['nights'], 'night')}."
        )
    else:
        lines.append("No messages to Clara at night.")
    alerts = context["alerts"]
    if alerts:
        urgent = sum(a["urgent"] for a in alerts)
        open_ones = sum(a["status"] != words.ALERT_STATUS[Alert.Status.RESOLVED] for a in alerts)
        line = f"{words.plural(len(alerts), 'alert')} ({urgent} urgent)"
        line += f", {open_ones} not resolved yet." if open_ones else ", all resolved."
        lines.append(line[0].upper() + line[1:])
    else:
        lines.append("No alerts.")
    return lines


def report_context(*, person: Person, period: Period, now: datetime) -> dict:
    start, end = bounds(person, period)
    zone = person_zone(person)
    name = delivery.first_name(person)
    weeks = period_weeks(person=person, period=period, now=now)
    mood = [
        {
            "start": w.start,
            "upset": words.upset_score(w.average),
            "conversations": w.conversations,
        }
        for w in weeks
    ]
    asked = questions_asked(person=person, period=period)
    questions = [
        {
            "kind": words.question_label(q.question_type),
            "times": q.asked,
            "conversations": q.conversations,
        }
        for q in asked.questions
    ]
    said_at = list(
        ChatMessage.objects.filter(
            person_id=person.id,
            role=ChatMessage.Role.USER,
            timestamp__gte=start,
            timestamp__lt=end,
        ).values_list("timestamp", flat=True)
    )
    night = [
        t.astimezone(zone)
        for t in said_at
        if not NIGHT_END <= t.astimezone(zone).hour < NIGHT_START
    ]
    nights = {(t - timedelta(hours=NIGHT_END)).date() for t in night}
    average = DetectedEmotion.objects.filter(
        person_id=person.id, timestamp__gte=start, timestamp__lt=end
    ).aggregate(average=Avg("distress_score"))["average"]  # idx_emotions_user_time
    kinds, stories, covered = selectors.what_calms(person=person, now=min(end, now))
    alerts = period_alerts(person=person, period=period)
    steps = delivery.timeline(alert_ids=[a.id for a in alerts])
    context = {
        "name": name,
        **_identity(person),
        "period": period,
        "generated": now.astimezone(zone),
        "conversations": asked.conversations,
        "days_talked": len({t.astimezone(zone).date() for t in said_at}),
        "average": average,
        "average_upset": words.upset_score(average),
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
                "urgent": a.kind == Alert.Kind.ESCALATION,
                "status": words.ALERT_STATUS.get(a.status, a.status),
                # Who wrote each handover note, by name (the timeline keeps names, not logins).
                "notes": [(s.who, s.note) for s in steps[a.id] if s.kind == AlertStep.Kind.NOTE],
                "claimed_by": words.caregiver_name(a.claimed_by) if a.claimed_by_id else "",
                "resolved_by": words.caregiver_name(a.resolved_by) if a.resolved_by_id else "",
                "resolved_at": a.resolved_at.astimezone(zone) if a.resolved_at else None,
                "outcome": words.outcome_words(a.outcome, a.outcome_note) if a.outcome else "",
            }
            for a in alerts
        ],
        "zone": str(zone),
    }
    context["summary"] = _summary(context=context, name=name)
    return context


def report_pdf(*, person: Person, period: Period, now: datetime) -> bytes:
    """The report as PDF bytes (WeasyPrint in dashboard.pdf's renderer processes; fonts and
    styles local, nothing fetched). Call it inside pdf.render_slot(); raises pdf.Busy if the render fails."""
    html = render_to_string(
        "alerting/clinician_report.html", report_context(person=person, period=period, now=now)
    )
    return pdf.html_to_pdf(html)
