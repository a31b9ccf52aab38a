"""One person over a period as a FHIR R4 Bundle (type `collection`), for care-record systems.

What it holds, and nothing else (minimum necessary; never a word the person said):
- the person as a `Patient`: Clara's id as the identifier and the names the profile holds (the
  display name, and the preferred name as the `usual` one); no birth date, address or contact;
- per week overlapping the period (Monday to Sunday, the person's time), the "how upset" score
  (0-100) and the number of conversations, as `Observation`s; and one `Observation` of the
  questions asked again in the period, with a component per kind of question. These are the
  clinician report's figures, from the same functions (dashboard/alerting/report.py);
- the person's alerts raised by the period's end and still open or being handled, as `Flag`s;
- for the alerts raised in the period (the report's), each e-mail that told someone and each
  claim, take-over or resolution as a `Communication` (codes and people's names, no payload);
- the clinician report's PDF for the same period as a `DocumentReference` whose attachment is the
  dashboard URL of that PDF (a care-team login with the report right opens it).

Codes with no honest standard equivalent are in code systems under the deployment's URL
(`<CLARA_SITE_URL>/fhir/CodeSystem/...`, served there: codes.py); FHIR's own value sets are used
for Observation and Flag categories, data-absent reasons and the UCUM unit, and LOINC 34133-9
("Summary of episode note") types the report. Resource ids are stable (UUID v5 of what each is), so
exporting the same period again gives the same ids and a receiver can update in place.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from django.conf import settings
from django.urls import reverse

from dashboard import words
from dashboard.alerting import delivery, report
from dashboard.alerting.models import AlertStep
from dashboard.fhir import codes
from memory.core.person import CaregiverContext, person_zone
from memory.models import Alert, Person

OBSERVATION_CATEGORY = "http://terminology.hl7.org/CodeSystem/observation-category"
FLAG_CATEGORY = "http://terminology.hl7.org/CodeSystem/flag-category"
DATA_ABSENT = "http://terminology.hl7.org/CodeSystem/data-absent-reason"
UCUM = "http://unitsofmeasure.org"
LOINC = "http://loinc.org"

# Steps of an alert's timeline that are a delivery (someone was told) or an acknowledgement
# (someone allowed to act took it on or closed it).
DELIVERY_STEPS = {AlertStep.Kind.SENT, AlertStep.Kind.REMINDED}
ACK_STEPS = {
    AlertStep.Kind.CLAIMED,
    AlertStep.Kind.TOOK_OVER,
    AlertStep.Kind.RESOLVED,
    AlertStep.Kind.ACKNOWLEDGED,
    AlertStep.Kind.LOOKING_INTO,
}
ACTIVE_ALERTS = (Alert.Status.OPEN, Alert.Status.CLAIMED)


def _clara(name: str, code: str) -> dict[str, str]:
    """A coding in one of Clara's code systems, with its display from there."""
    return _coding(codes.url(name), code, codes.display(name, code))


def identifier_system(name: str) -> str:
    return f"{settings.CLARA_SITE_URL}/fhir/sid/{name}"


def _id(person: Person, *parts: object) -> str:
    """A stable resource id: the same thing exported twice has the same id."""
    return str(uuid.uuid5(person.id, ":".join(str(p) for p in parts)))


def _entry(resource: dict[str, Any]) -> dict[str, Any]:
    return {"fullUrl": f"urn:uuid:{resource['id']}", "resource": resource}


def _coding(system: str, code: str, display: str = "") -> dict[str, str]:
    coding = {"system": system, "code": code}
    if display:
        coding["display"] = display
    return coding


@dataclass(frozen=True)
class Export:
    person: Person
    period: report.Period
    now: datetime

    @property
    def subject(self) -> dict[str, str]:
        return {"reference": f"urn:uuid:{self.person.id}"}

    def local(self, day: date) -> datetime:
        return datetime.combine(day, time.min, tzinfo=person_zone(self.person))


def _patient(export: Export) -> dict[str, Any]:
    person = export.person
    about = CaregiverContext.of(person)
    names = []
    if about.display_name:
        names.append({"text": about.display_name})
    if about.preferred_name and about.preferred_name != about.display_name:
        names.append({"use": "usual", "text": about.preferred_name})
    patient: dict[str, Any] = {
        "resourceType": "Patient",
        "id": str(person.id),
        "identifier": [{"system": identifier_system("person"), "value": str(person.id)}],
        "active": person.status == Person.Status.ACTIVE,
    }
    if names:
        patient["name"] = names
    return patient


def _week_observations(export: Export) -> list[dict[str, Any]]:
    observations = []
    weeks = report.period_weeks(person=export.person, period=export.period, now=export.now)
    for week in weeks:
        start = export.local(week.start)
        end = min(start + timedelta(days=7), export.now)
        status = "final" if start + timedelta(days=7) <= export.now else "preliminary"
        period = {"start": start.isoformat(), "end": end.isoformat()}
        upset = words.upset_score(week.average)
        mood: dict[str, Any] = {
            "resourceType": "Observation",
            "id": _id(export.person, "upset-week", week.start),
            "status": status,
            "category": [{"coding": [_coding(OBSERVATION_CATEGORY, "survey", "Survey")]}],
            "code": {"coding": [_clara("observation", "upset-score-weekly")]},
            "subject": export.subject,
            "effectivePeriod": period,
        }
        if upset is None:
            mood["dataAbsentReason"] = {
                "coding": [_coding(DATA_ABSENT, "not-performed", "Not Performed")],
                "text": "No conversation with a reading this week.",
            }
        else:
            mood["valueQuantity"] = {
                "value": upset,
                "unit": "score",
                "system": UCUM,
                "code": "{score}",
            }
        observations.append(mood)
        observations.append(
            {
                "resourceType": "Observation",
                "id": _id(export.person, "conversations-week", week.start),
                "status": status,
                "code": {"coding": [_clara("observation", "conversations-weekly")]},
                "subject": export.subject,
                "effectivePeriod": period,
                "valueInteger": week.conversations,
            }
        )
    return observations


def _questions_observation(export: Export, start: datetime, end: datetime) -> dict[str, Any]:
    asked = report.questions_asked(person=export.person, period=export.period)
    counts = [(q.question_type, q.asked) for q in asked.questions]
    return {
        "resourceType": "Observation",
        "id": _id(export.person, "repeated-questions", export.period.start, export.period.end),
        "status": "final" if end <= export.now else "preliminary",
        "code": {"coding": [_clara("observation", "repeated-questions")]},
        "subject": export.subject,
        "effectivePeriod": {"start": start.isoformat(), "end": end.isoformat()},
        "valueInteger": sum(n for _, n in counts),
        "component": [
            {
                "code": {"coding": [_clara("question-kind", kind)]},
                "valueInteger": n,
            }
            for kind, n in counts
        ],
    }


def _alert_code(alert: Alert) -> dict[str, Any]:
    """What an alert is about: its reason (an escalation) or its kind, and the report's words."""
    code = (alert.detail or {}).get("reason") or alert.kind
    return {
        "coding": [_clara("alert-reason", str(code))],
        "text": words.alert_headline(alert.kind, alert.detail),
    }


def _alert_identifier(alert: Alert) -> dict[str, str]:
    return {"system": identifier_system("alert"), "value": str(alert.id)}


def _flags(export: Export, end: datetime) -> list[dict[str, Any]]:
    active = Alert.objects.filter(
        person_id=export.person.id, status__in=ACTIVE_ALERTS, created_at__lt=end
    ).order_by("created_at")
    return [
        {
            "resourceType": "Flag",
            "id": _id(export.person, "alert", alert.id),
            "identifier": [_alert_identifier(alert)],
            "status": "active",
            "category": [
                {
                    "coding": [
                        _coding(FLAG_CATEGORY, "safety", "Safety")
                        if alert.kind == Alert.Kind.ESCALATION
                        else _coding(FLAG_CATEGORY, "behavioral", "Behavioral")
                    ]
                }
            ],
            "code": _alert_code(alert),
            "subject": export.subject,
            "period": {"start": alert.created_at.isoformat()},
        }
        for alert in active
    ]


def _communications(export: Export) -> list[dict[str, Any]]:
    alerts = report.period_alerts(person=export.person, period=export.period)
    steps = delivery.timeline(alert_ids=[a.id for a in alerts])
    out = []
    for alert in alerts:
        for step in steps[alert.id]:
            if step.kind in DELIVERY_STEPS:
                category, people_field = "alert-delivery", "recipient"
            elif step.kind in ACK_STEPS:
                category, people_field = "alert-acknowledgement", "sender"
            else:
                continue
            communication: dict[str, Any] = {
                "resourceType": "Communication",
                "id": _id(export.person, "alert-step", step.id),
                "identifier": [{"system": identifier_system("alert-step"), "value": str(step.id)}],
                "status": "completed",
                "category": [
                    {
                        "coding": [
                            _clara("communication", category),
                            _clara("alert-step", step.kind),
                        ]
                    }
                ],
                "subject": export.subject,
                "about": [{"identifier": _alert_identifier(alert)}],
                "reasonCode": [_alert_code(alert)],
                "sent": step.at.isoformat(),
            }
            if step.who:
                communication[people_field] = (
                    [{"display": step.who}]
                    if people_field == "recipient"
                    else {"display": step.who}
                )
            if step.kind == AlertStep.Kind.RESOLVED and alert.outcome:
                communication["topic"] = {"coding": [_clara("alert-outcome", alert.outcome)]}
            out.append(communication)
    return out


def _report_reference(export: Export, start: datetime, end: datetime) -> dict[str, Any]:
    period = export.period
    url = (
        settings.CLARA_SITE_URL
        + reverse("dashboard:clinician_report", args=[export.person.id])
        + f"?from={period.start.isoformat()}&to={period.end.isoformat()}"
    )
    return {
        "resourceType": "DocumentReference",
        "id": _id(export.person, "clinician-report", period.start, period.end),
        "status": "current",
        "type": {"coding": [_coding(LOINC, "34133-9", "Summary of episode note")]},
        "subject": export.subject,
        "date": export.now.isoformat(),
        "description": (
            f"Clara clinician report, {period.start.isoformat()} to {period.end.isoformat()}"
        ),
        "content": [
            {
                "attachment": {
                    "contentType": "application/pdf",
                    "url": url,
                    "title": f"clinician-report-{period.start}-{period.end}.pdf",
                }
            }
        ],
        "context": {"period": {"start": start.isoformat(), "end": end.isoformat()}},
    }


def person_bundle(*, person: Person, period: report.Period, now: datetime) -> dict[str, Any]:
    """The Bundle (a dict, FHIR R4 JSON) of one person over `period` (inclusive days, the
    person's time). Reads only; the caller audits the disclosure."""
    export = Export(person=person, period=period, now=now)
    start, end = report.bounds(person, period)
    resources = [
        _patient(export),
        *_week_observations(export),
        _questions_observation(export, start, end),
        *_flags(export, end),
        *_communications(export),
        _report_reference(export, start, end),
    ]
    return {
        "resourceType": "Bundle",
        "id": str(uuid.uuid4()),
        "type": "collection",
        "timestamp": now.isoformat(),
        "entry": [_entry(resource) for resource in resources],
    }
