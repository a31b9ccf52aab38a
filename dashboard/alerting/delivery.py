"""Telling people about alerts: on-call routing, e-mail, escalation, acknowledgement.

An alert raised in insights is announced (memory.insights.signals.alert_raised); the receiver
queues `deliver_alert` after the commit. Delivery writes one AlertNotice per recipient before
sending, so a retried job sends nothing twice, and records each step on the alert's timeline.

- Urgent alerts (an escalation: a fall, pain, self-harm, wanting to leave, a call for help,
  severe fear) go at once, any hour, to every member who receives urgent or all alerts.
  Other alerts go to members who receive all, within their hours, else are held until then.
- An urgent alert still "new" CLARA_ALERT_ESCALATE_MINUTES after it went out escalates to the
  team's admins (whatever their own choice), and as long again later to the organisation's
  contact. "I'm looking into it" or "Dealt with" stops it.
- E-mails carry Clara's description, the person's first name and links: never what was said.
"""

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core import signing
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from dashboard import words
from dashboard.alerting.models import (
    AlertEscalation,
    AlertNotice,
    AlertRouting,
    AlertStep,
    Receives,
)
from dashboard.models import CareRole, CareTeamMembership
from memory.core.person import CaregiverContext, person_zone
from memory.insights import alerts
from memory.models import Alert, Person, Session
from memory.webhooks import services as webhooks
from memory.webhooks.models import WebhookEvent

logger = logging.getLogger(__name__)

URGENT_KINDS = {Alert.Kind.ESCALATION}
LEVEL_TEAM, LEVEL_ADMINS, LEVEL_CONTACT = 0, 1, 2
CONTACT = "organisation contact"
LINK_SALT = "clara.alert-ack"
MAX_SEND_ATTEMPTS = 5
# Alerts about moments older than this are not delivered (see alert_deliver).
STALE_AFTER = timedelta(hours=24)


def is_urgent(alert: Alert) -> bool:
    return alert.kind in URGENT_KINDS


def default_routing(membership: CareTeamMembership) -> AlertRouting:
    """Unsaved choice of a member who has not chosen: urgent alerts, by e-mail, no digest."""
    return AlertRouting(membership=membership)


def routing_of(membership: CareTeamMembership) -> AlertRouting:
    try:
        return membership.routing
    except AlertRouting.DoesNotExist:
        return default_routing(membership)


def _zone(routing: AlertRouting, person: Person) -> ZoneInfo:
    if routing.time_zone:
        try:
            return ZoneInfo(routing.time_zone)
        except (KeyError, ValueError):
            pass
    return person_zone(person)


def within_hours(
    *, now: datetime, start: time | None, end: time | None, zone: ZoneInfo
) -> datetime:
    """`now` if it is within [start, end) local time (or no hours are set), else the next start."""
    if start is None or end is None or start == end:
        return now
    local = now.astimezone(zone)
    t = local.time()
    inside = start <= t < end if start < end else (t >= start or t < end)
    if inside:
        return now
    day = local.date() if t < start else local.date() + timedelta(days=1)
    return datetime.combine(day, start, tzinfo=zone).astimezone(now.tzinfo or ZoneInfo("UTC"))


def team_members(person: Person):
    """The person's care team that counts: logins still in the person's organisation."""
    return (
        CareTeamMembership.objects.filter(
            person_id=person.id,
            user__organisation_memberships__organisation_id=person.organisation_id,
        )
        .select_related("user", "routing")
        .distinct()
    )


def _webhook_data(alert: Alert, *, level: int | None = None) -> dict:
    """What a webhook receives about an alert: codes and ids, never the person's words."""
    data = {
        "alert_id": alert.id,
        "person_id": str(alert.person_id) if alert.person_id else None,
        "session_id": str(alert.session_id) if alert.session_id else None,
        "kind": alert.kind,
        "reason": (alert.detail or {}).get("reason") if is_urgent(alert) else None,
        "urgent": is_urgent(alert),
        "status": alert.status,
        "raised_at": alert.created_at.isoformat(),
    }
    if alert.person_id:
        data["dashboard_url"] = settings.CLARA_SITE_URL + reverse(
            "dashboard:person_alerts", args=[alert.person_id]
        )
    if level is not None:
        data["level"] = level
    return data


def _organisation_id(alert: Alert) -> uuid.UUID | None:
    if alert.person_id:
        return alert.person.organisation_id
    if alert.session_id:
        return (
            Session.objects.filter(id=alert.session_id)
            .values_list("organisation_id", flat=True)
            .first()
        )
    return None


def _emit(alert: Alert, event: str, key: str, *, level: int | None = None, at=None) -> None:
    organisation_id = _organisation_id(alert)
    if organisation_id is None:
        return
    webhooks.event_emit(
        organisation_id=organisation_id,
        event=event,
        data=_webhook_data(alert, level=level),
        dedupe_key=f"{alert.id}:{key}",
        at=at or timezone.now(),
    )


def _notice(
    alert: Alert, *, user_id: int | None, level: int, due_at: datetime
) -> tuple[AlertNotice, bool]:
    key = f"{alert.id}:{level}:{user_id if user_id else 'contact'}"
    return AlertNotice.objects.get_or_create(
        dedupe_key=key,
        defaults={"alert": alert, "user_id": user_id, "level": level, "due_at": due_at},
    )


def alert_deliver(*, alert_id: int, now: datetime | None = None) -> list[AlertNotice]:
    """Route a new alert: webhooks, and an e-mail to each member who asked for it (or held).

    Idempotent: a second run finds the notices and webhook deliveries already written and sends
    only those not sent yet. Returns the notices sent now.
    """
    now = now or timezone.now()
    alert = Alert.objects.select_related("person").filter(id=alert_id).first()
    if alert is None or alert.created_at < now - STALE_AFTER:
        # A moment long past (a replayed backlog, the demo's weeks of history) is recorded on
        # the dashboard, not paged to anyone.
        return []
    with transaction.atomic():
        _emit(alert, WebhookEvent.ALERT_RAISED, "raised", at=now)
        if alert.person_id is None:
            return []  # an anonymous session's alert: nobody's team yet; webhooks only
        urgent = is_urgent(alert)
        for membership in team_members(alert.person):
            routing = routing_of(membership)
            if routing.receives == Receives.NONE or not routing.by_email:
                continue
            if routing.receives == Receives.URGENT and not urgent:
                continue
            if not membership.user.email:
                continue
            due = (
                now
                if urgent
                else within_hours(
                    now=now,
                    start=routing.hours_start,
                    end=routing.hours_end,
                    zone=_zone(routing, alert.person),
                )
            )
            notice, created = _notice(
                alert, user_id=membership.user_id, level=LEVEL_TEAM, due_at=due
            )
            if created and due > now:
                _step(alert, AlertStep.Kind.HELD, user=membership.user, level=LEVEL_TEAM, at=now)
        if urgent and alert.status == Alert.Status.OPEN:
            AlertEscalation.objects.get_or_create(
                alert=alert,
                defaults={
                    "next_at": now + timedelta(minutes=settings.CLARA_ALERT_ESCALATE_MINUTES)
                },
            )
    return _send_due(alert_id=alert.id, now=now)


def _step(
    alert: Alert,
    kind: str,
    *,
    user=None,
    who: str = "",
    level: int = 0,
    via: str = "",
    note: str = "",
    at=None,
) -> AlertStep:
    return AlertStep.objects.create(
        alert=alert,
        kind=kind,
        user=user,
        who=who or (user.get_username() if user is not None else ""),
        level=level,
        via=via,
        note=note,
        at=at or timezone.now(),
    )


def _send_due(*, alert_id: int | None = None, now: datetime) -> list[AlertNotice]:
    due = AlertNotice.objects.filter(
        status__in=[AlertNotice.Status.HELD, AlertNotice.Status.FAILED],
        due_at__lte=now,
        attempts__lt=MAX_SEND_ATTEMPTS,
    ).select_related("alert__person__organisation", "user")
    if alert_id is not None:
        due = due.filter(alert_id=alert_id)
    sent = []
    for notice in due.order_by("due_at")[:500]:
        if notice_send(notice=notice, now=now):
            sent.append(notice)
    return sent


def first_name(person: Person) -> str:
    name = CaregiverContext.of(person).name_or("")
    return name.split()[0] if name.split() else "the person you care for"


def ack_token(notice: AlertNotice) -> str:
    return signing.dumps({"n": notice.id}, salt=LINK_SALT, compress=True)


def notice_from_token(token: str) -> AlertNotice | None:
    """The notice an acknowledgement link names, if the signature holds and it is not too old."""
    try:
        data = signing.loads(token, salt=LINK_SALT, max_age=settings.CLARA_ALERT_LINK_HOURS * 3600)
    except signing.BadSignature:
        return None
    return AlertNotice.objects.select_related("alert__person").filter(id=data.get("n")).first()


@dataclass(frozen=True)
class Email:
    to: str
    subject: str
    text: str
    html: str


def notice_email(notice: AlertNotice) -> Email | None:
    """The e-mail of a notice (None when it has nowhere to go)."""
    alert, person = notice.alert, notice.alert.person
    if notice.user_id:
        to = notice.user.email
    else:
        to = person.organisation.contact_email
    if not to:
        return None
    name = first_name(person)
    urgent = is_urgent(alert)
    context = {
        "name": name,
        "headline": words.alert_headline(alert.kind, alert.detail),
        "urgent": urgent,
        "escalated": notice.level > LEVEL_TEAM,
        "when": alert.created_at.astimezone(person_zone(person)),
        "alerts_url": settings.CLARA_SITE_URL
        + reverse("dashboard:person", args=[person.id])
        + "#alerts",
        "ack_url": settings.CLARA_SITE_URL
        + reverse("dashboard:alert_ack", args=[ack_token(notice)]),
        "minutes": settings.CLARA_ALERT_ESCALATE_MINUTES,
    }
    if notice.level > LEVEL_TEAM:
        subject = f"Clara: nobody has answered an alert about {name} yet"
    elif urgent:
        subject = f"Clara: {name} may need someone now"
    else:
        subject = f"Clara: something to look at for {name}"
    return Email(
        to=to,
        subject=subject,
        text=render_to_string("alerting/alert_email.txt", context),
        html=render_to_string("alerting/alert_email.html", context),
    )


def notice_send(*, notice: AlertNotice, now: datetime | None = None) -> bool:
    """Send one notice now; records sent or failed on it and on the alert's timeline."""
    now = now or timezone.now()
    # Conditional UPDATE: another worker may be sending this very notice.
    claimed = AlertNotice.objects.filter(
        id=notice.id,
        status__in=[AlertNotice.Status.HELD, AlertNotice.Status.FAILED],
        attempts=notice.attempts,
    ).update(attempts=notice.attempts + 1)
    if not claimed:
        return False
    who = notice.user.get_username() if notice.user_id else CONTACT
    email = notice_email(notice)
    if email is None:
        AlertNotice.objects.filter(id=notice.id).update(
            status=AlertNotice.Status.FAILED, attempts=MAX_SEND_ATTEMPTS
        )
        _step(
            notice.alert,
            AlertStep.Kind.SEND_FAILED,
            user=notice.user,
            who=who,
            level=notice.level,
            at=now,
        )
        return False
    message = EmailMultiAlternatives(email.subject, email.text, to=[email.to])
    message.attach_alternative(email.html, "text/html")
    try:
        message.send()
    except Exception as exc:  # noqa: BLE001 - any mail failure is retried by the sweep
        logger.warning("alert e-mail %s failed: %s", notice.id, type(exc).__name__)
        AlertNotice.objects.filter(id=notice.id).update(
            status=AlertNotice.Status.FAILED, due_at=now + timedelta(minutes=1)
        )
        _step(
            notice.alert,
            AlertStep.Kind.SEND_FAILED,
            user=notice.user,
            who=who,
            level=notice.level,
            at=now,
        )
        return False
    AlertNotice.objects.filter(id=notice.id).update(status=AlertNotice.Status.SENT, sent_at=now)
    _step(notice.alert, AlertStep.Kind.SENT, user=notice.user, who=who, level=notice.level, at=now)
    return True


def alert_escalate(*, alert_id: int, now: datetime | None = None) -> int | None:
    """Take an unacknowledged urgent alert one level up, if it is due; returns the new level."""
    now = now or timezone.now()
    with transaction.atomic():
        state = (
            # Lock only this row: PostgreSQL refuses FOR UPDATE on an outer join's nullable side.
            AlertEscalation.objects.select_for_update(of=("self",))
            .select_related("alert__person__organisation")
            .filter(alert_id=alert_id, next_at__lte=now)
            .first()
        )
        if state is None:
            return None
        alert = state.alert
        if alert.status != Alert.Status.OPEN or alert.person_id is None:
            state.next_at = None
            state.save(update_fields=["next_at"])
            return None
        level = state.level + 1
        if level == LEVEL_ADMINS:
            admins = [
                m.user
                for m in team_members(alert.person).filter(role=CareRole.ADMIN)
                if m.user.email
            ]
            for user in admins:
                _notice(alert, user_id=user.pk, level=level, due_at=now)
            _step(
                alert,
                AlertStep.Kind.ESCALATED,
                who="the team's admins" if admins else "no team admin with an e-mail",
                level=level,
                at=now,
            )
            state.next_at = now + timedelta(minutes=settings.CLARA_ALERT_ESCALATE_MINUTES)
        else:
            level = LEVEL_CONTACT
            if alert.person.organisation.contact_email:
                _notice(alert, user_id=None, level=level, due_at=now)
                _step(alert, AlertStep.Kind.ESCALATED, who=CONTACT, level=level, at=now)
            else:
                _step(
                    alert,
                    AlertStep.Kind.ESCALATED,
                    who="no organisation contact set",
                    level=level,
                    at=now,
                )
            state.next_at = None
        state.level = level
        state.save(update_fields=["level", "next_at"])
        _emit(alert, WebhookEvent.ALERT_ESCALATED, f"escalated:{level}", level=level, at=now)
    _send_due(alert_id=alert.id, now=now)
    return level


def alerts_sweep(*, now: datetime | None = None) -> dict:
    """Every minute: escalations that are due, then held or failed e-mails whose time came."""
    now = now or timezone.now()
    escalated = 0
    for alert_id in AlertEscalation.objects.filter(next_at__lte=now).values_list(
        "alert_id", flat=True
    )[:500]:
        if alert_escalate(alert_id=alert_id, now=now) is not None:
            escalated += 1
    sent = len(_send_due(now=now))
    return {"escalated": escalated, "sent": sent}


STEP_OF_STATUS = {
    Alert.Status.LOOKING_INTO: AlertStep.Kind.LOOKING_INTO,
    Alert.Status.ACKNOWLEDGED: AlertStep.Kind.ACKNOWLEDGED,
    Alert.Status.OPEN: AlertStep.Kind.REOPENED,
}


def alert_respond(
    *, alert: Alert, status: str, user, via: str, now: datetime | None = None
) -> Alert:
    """A caregiver looks into, acknowledges or reopens an alert (dashboard or e-mail link).

    Records the step, stops the escalation unless reopened, and tells webhooks of an
    acknowledgement. A status that does not change records nothing.
    """
    now = now or timezone.now()
    with transaction.atomic():
        before = (
            Alert.objects.select_for_update()
            .filter(id=alert.id)
            .values_list("status", flat=True)
            .first()
        )
        updated = alerts.alert_set_status(alert_id=alert.id, status=status, user_id=user.pk, at=now)
        if before == status:
            return updated
        _step(updated, STEP_OF_STATUS[status], user=user, via=via, at=now)
        if status != Alert.Status.OPEN:
            AlertEscalation.objects.filter(alert_id=alert.id).update(next_at=None)
        if status == Alert.Status.ACKNOWLEDGED:
            _emit(
                updated, WebhookEvent.ALERT_ACKNOWLEDGED, f"acknowledged:{now.isoformat()}", at=now
            )
    return updated


def link_opened(*, notice: AlertNotice, user, now: datetime | None = None) -> None:
    """The e-mail's link was opened (the first time is recorded)."""
    now = now or timezone.now()
    if AlertNotice.objects.filter(id=notice.id, opened_at__isnull=True).update(opened_at=now):
        _step(
            notice.alert, AlertStep.Kind.OPENED, user=user, level=notice.level, via="email", at=now
        )


def link_use(*, notice: AlertNotice, user, now: datetime | None = None) -> bool:
    """Acknowledge through the e-mail's link: once. False if it was used before."""
    now = now or timezone.now()
    with transaction.atomic():
        if not AlertNotice.objects.filter(id=notice.id, link_used_at__isnull=True).update(
            link_used_at=now
        ):
            return False
        alert_respond(
            alert=notice.alert, status=Alert.Status.ACKNOWLEDGED, user=user, via="email", now=now
        )
    return True


def note_add(*, alert: Alert, user, text: str, now: datetime | None = None) -> AlertStep:
    """A handover note on an alert ("called her daughter, she is fine")."""
    return _step(alert, AlertStep.Kind.NOTE, user=user, note=text.strip(), at=now)


def timeline(*, alert_ids: list[int]) -> dict[int, list[AlertStep]]:
    """The steps of these alerts, oldest first, by alert."""
    steps: dict[int, list[AlertStep]] = {alert_id: [] for alert_id in alert_ids}
    for step in AlertStep.objects.filter(alert_id__in=alert_ids).order_by("at", "id"):
        steps[step.alert_id].append(step)
    return steps
