"""Caregiver alerts: an outbox of things a person's caregivers should look at.

An alert is written once per dedupe key, in the same transaction as the event that raises it
(an escalation with its exchange, a trend with its computation), so none is lost and none is
raised twice. Whatever tells caregivers (e-mail, the dashboard) reads this table.
"""

import uuid
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Avg, Count, Q
from django.utils import timezone

from memory.conversations.models import Person, Session
from memory.core.errors import Conflict, Invalid, NotFound
from memory.insights import signals, trends
from memory.insights.models import Alert

# Distress: a session whose average is this far above the person's own baseline, over at least
# this many readings, against a baseline of at least this many earlier sessions.
DISTRESS_MARGIN = 0.2
MIN_READINGS = 3
MIN_BASELINE_SESSIONS = 3
# Sessions active this long before `now` are judged for distress.
DISTRESS_LOOKBACK = timedelta(days=1)
# Repetition: the last 3 sessions' repeats per session above 1.5 times the rate of the 30
# sessions before them, with at least 5 repeats in those 3 sessions.
RECENT_SESSIONS = 3
REPEAT_RATE_FACTOR = 1.5
MIN_RECENT_REPEATS = 5


def escalation_dedupe_key(session_id: uuid.UUID) -> str:
    """One escalation alert per session, however many messages raised the flag."""
    return f"escalation:{session_id}"


def alert_raise(
    *,
    person_id: uuid.UUID | None,
    session_id: uuid.UUID | None,
    kind: str,
    detail: dict,
    dedupe_key: str,
    at: datetime | None = None,
) -> tuple[Alert, bool]:
    """Record an alert unless one with this dedupe key exists; returns (alert, created).

    Call it inside the transaction of the event that causes it: both commit or neither does.
    """
    if kind not in Alert.Kind.values:
        raise Invalid(f"Unknown alert kind {kind!r}.", field="kind")
    with transaction.atomic():
        alert, created = Alert.objects.get_or_create(
            dedupe_key=dedupe_key,
            defaults={
                "person_id": person_id,
                "session_id": session_id,
                "kind": kind,
                "detail": detail or {},
                "created_at": at or timezone.now(),
            },
        )
        if created:
            # Delivery (e-mail, webhooks) subscribes and queues its job after the commit.
            signals.alert_raised.send(
                sender=Alert, event=signals.AlertRaised(alert_id=alert.id, kind=alert.kind)
            )
        return alert, created


def escalation_alert_raise(
    *,
    person_id: uuid.UUID | None,
    session_id: uuid.UUID,
    reason: str | None = None,
    explanation: dict | None = None,
    message_id: uuid.UUID | None = None,
    at: datetime | None = None,
) -> tuple[Alert, bool]:
    """The escalation alert of a session, raised once (for services.exchange_record).

    `explanation` says what decided it (the language, the phrase rule or nearest example; no
    word of the person's) and `message_id` which message: the words themselves are shown only
    to those who may read transcripts, recomputed from the stored message."""
    detail = {"reason": reason}
    if explanation:
        detail["why"] = {k: v for k, v in explanation.items() if k != "reason" and v is not None}
    if message_id is not None:
        detail["message_id"] = str(message_id)
    return alert_raise(
        person_id=person_id,
        session_id=session_id,
        kind=Alert.Kind.ESCALATION,
        detail=detail,
        dedupe_key=escalation_dedupe_key(session_id),
        at=at,
    )


# A resolution's note ("other: her son took her to the GP") is short, like a handover note.
OUTCOME_NOTE_MAX_CHARS = 500
# What people choose from when they resolve an alert (UNKNOWN is only for old rows).
OUTCOMES_OFFERED = [o for o in Alert.Outcome if o != Alert.Outcome.UNKNOWN]


class Claimed:
    """What a claim did (alert_claim's second value)."""

    CLAIMED = "claimed"  # nobody had it: now this person
    TOOK_OVER = "took_over"  # someone else had it: now this person
    ALREADY = "already"  # this person had it already: nothing changed
    RESOLVED = "resolved"  # it is over: nothing changed


def alert_claim(*, alert_id: int, user_id: int, at: datetime | None = None) -> tuple[Alert, str]:
    """Someone allowed to act has the alert now (who, since when); returns (alert, Claimed.*).

    A claim of an alert someone else has takes it over; a resolved alert is not claimed again.
    Whether the user may act is the caller's rule (dashboard/alerting/rights.py).
    """
    with transaction.atomic():
        alert = Alert.objects.select_for_update().filter(id=alert_id).first()
        if alert is None:
            raise NotFound("No alert with this id.", field="alert_id")
        if alert.status == Alert.Status.RESOLVED:
            return alert, Claimed.RESOLVED
        if alert.status == Alert.Status.CLAIMED and alert.claimed_by_id == user_id:
            return alert, Claimed.ALREADY
        what = Claimed.TOOK_OVER if alert.status == Alert.Status.CLAIMED else Claimed.CLAIMED
        alert.status = Alert.Status.CLAIMED
        alert.claimed_by_id = user_id
        alert.claimed_at = at or timezone.now()
        alert.save(update_fields=["status", "claimed_by", "claimed_at"])
    return alert, what


def alert_resolve(
    *, alert_id: int, user_id: int, outcome: str, note: str = "", at: datetime | None = None
) -> tuple[Alert, bool]:
    """The alert is over: who, when and the outcome; returns (alert, resolved now).

    "other" needs a note. An alert nobody claimed is claimed and resolved by the same person in
    one go (they went and saw); a resolved alert stays as it was resolved (False).
    """
    if outcome not in OUTCOMES_OFFERED:
        raise Invalid("Choose what happened.", field="outcome")
    note = (note or "").strip()
    if outcome == Alert.Outcome.OTHER and not note:
        raise Invalid("Say in a few words what happened.", field="note")
    if len(note) > OUTCOME_NOTE_MAX_CHARS:
        raise Invalid(f"At most {OUTCOME_NOTE_MAX_CHARS} characters.", field="note")
    at = at or timezone.now()
    with transaction.atomic():
        alert = Alert.objects.select_for_update().filter(id=alert_id).first()
        if alert is None:
            raise NotFound("No alert with this id.", field="alert_id")
        if alert.status == Alert.Status.RESOLVED:
            return alert, False
        if alert.claimed_by_id is None:
            alert.claimed_by_id, alert.claimed_at = user_id, at
        alert.status = Alert.Status.RESOLVED
        alert.resolved_by_id, alert.resolved_at = user_id, at
        alert.outcome, alert.outcome_note = outcome, note or None
        alert.save(
            update_fields=[
                "status",
                "claimed_by",
                "claimed_at",
                "resolved_by",
                "resolved_at",
                "outcome",
                "outcome_note",
            ]
        )
    return alert, True


def alert_attach(*, alert_id: int, person_id: uuid.UUID) -> Alert:
    """An alert raised with no person (an anonymous session's) is about this person, of the
    session's organisation: a caregiver says so. Whether they may is the caller's rule."""
    with transaction.atomic():
        alert = (
            Alert.objects.select_for_update(of=("self",))
            .select_related("session")
            .filter(id=alert_id)
            .first()
        )
        if alert is None or alert.session_id is None:
            raise NotFound("No alert with this id.", field="alert_id")
        if alert.person_id is not None:
            raise Conflict("This alert is already about someone.", field="alert_id")
        person = Person.objects.filter(
            id=person_id, organisation_id=alert.session.organisation_id
        ).first()
        if person is None:
            # Another organisation's person answers as an unknown one.
            raise NotFound("No person with this id.", field="person_id")
        alert.person_id = person.id
        alert.save(update_fields=["person"])
    return alert


def _distress_alerts(*, person: Person, now: datetime) -> list[Alert]:
    readings = Q(emotions__timestamp__lte=now)
    judged = (
        Session.objects.filter(
            person_id=person.id,
            last_activity_at__gte=now - DISTRESS_LOOKBACK,
            created_at__lte=now,
            message_count__gt=0,
        )
        .annotate(
            average=Avg("emotions__distress_score", filter=readings),
            readings=Count("emotions", filter=readings),
        )
        .filter(readings__gte=MIN_READINGS)
        .order_by("created_at")
        .values("id", "created_at", "average", "readings")
    )
    raised = []
    for session in judged:  # the person's sessions of the last day: a handful
        earlier = trends.recent_session_ids(person_id=person.id, before=session["created_at"])
        if len(earlier) < MIN_BASELINE_SESSIONS:
            continue
        baseline, _ = trends.distress_average(
            person_id=person.id, session_ids=earlier, before=session["created_at"]
        )
        if baseline is None or session["average"] <= baseline + DISTRESS_MARGIN:
            continue
        alert, created = alert_raise(
            person_id=person.id,
            session_id=session["id"],
            kind=Alert.Kind.DISTRESS_ABOVE_BASELINE,
            detail={
                "session_average": round(session["average"], 3),
                "baseline": round(baseline, 3),
                "readings": session["readings"],
                "baseline_sessions": len(earlier),
            },
            dedupe_key=f"distress_above_baseline:{session['id']}",
            at=now,
        )
        if created:
            raised.append(alert)
    return raised


def _repetition_alert(*, person: Person, now: datetime) -> Alert | None:
    rows = list(
        Session.objects.filter(person_id=person.id, created_at__lte=now, message_count__gt=0)
        .order_by("-created_at")
        .annotate(repeats=Count("repetitions", filter=Q(repetitions__repeat_count__gt=0)))
        .values_list("id", "repeats")[: RECENT_SESSIONS + trends.BASELINE_SESSIONS]
    )
    recent, earlier = rows[:RECENT_SESSIONS], rows[RECENT_SESSIONS:]
    if len(recent) < RECENT_SESSIONS or len(earlier) < MIN_BASELINE_SESSIONS:
        return None
    recent_repeats = sum(repeats for _, repeats in recent)
    recent_rate = recent_repeats / len(recent)
    usual_rate = sum(repeats for _, repeats in earlier) / len(earlier)
    if recent_repeats < MIN_RECENT_REPEATS or recent_rate <= REPEAT_RATE_FACTOR * usual_rate:
        return None
    # At most one a day (the person's day): the pattern is news once, not at every rerun.
    day = now.astimezone(trends.person_zone(person)).date()
    alert, created = alert_raise(
        person_id=person.id,
        session_id=recent[0][0],
        kind=Alert.Kind.CHRONIC_REPETITION,
        detail={
            "recent_repeats_per_session": round(recent_rate, 3),
            "usual_repeats_per_session": round(usual_rate, 3),
            "recent_sessions": [str(session_id) for session_id, _ in recent],
            "usual_sessions": len(earlier),
        },
        dedupe_key=f"chronic_repetition:{person.id}:{day.isoformat()}",
        at=now,
    )
    return alert if created else None


def alerts_from_trends(*, person_id: uuid.UUID, now: datetime | None = None) -> list[Alert]:
    """Raise the person's distress and repetition alerts as of `now`; returns the new ones.

    Distress: a session active in the last day whose average is well above the person's own
    baseline (the 30 sessions before it). Repetition: repeats in the last 3 sessions rising above
    the person's usual rate. Running it again raises nothing new.
    """
    now = now or timezone.now()
    person = Person.objects.filter(id=person_id).first()
    if person is None:
        raise NotFound("No person with this id.", field="person_id")
    raised = _distress_alerts(person=person, now=now)
    repetition = _repetition_alert(person=person, now=now)
    if repetition is not None:
        raised.append(repetition)
    return raised
