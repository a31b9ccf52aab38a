"""Telling people about alerts: who a member asked to hear, the e-mails, sending them, the
alert's timeline and what webhooks hear.

An alert raised in insights is announced (memory.insights.signals.alert_raised); the receiver
queues `deliver_alert` after the commit, which climbs the first rung of the alert's ladder
(dashboard/alerting/ladder.py). Each e-mail is an AlertNotice written before it is sent, so a
retried job sends nothing twice, and each step goes on the alert's timeline with people's names.

E-mails carry Clara's description, the person's first name, where and when, who else was told
and one button: never what was said. The button claims the alert, and only for the person the
e-mail was sent to (dashboard/alerting/respond.py).
"""

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core import signing
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from dashboard import words
from dashboard.alerting import rights
from dashboard.alerting.models import AlertNotice, AlertRouting, AlertStep, Receives
from dashboard.models import CareTeamMembership
from memory.core import metrics
from memory.core.person import CaregiverContext, person_zone
from memory.models import Alert, Person
from memory.webhooks import services as webhooks

logger = logging.getLogger(__name__)

URGENT_KINDS = {Alert.Kind.ESCALATION}
CONTACT = "the organisation's contact"
LINK_SALT = "clara.alert-ack"
MAX_SEND_ATTEMPTS = 5
# Alerts about moments older than this are not delivered (see ladder.alert_deliver).
STALE_AFTER = timedelta(hours=24)


def is_urgent(alert: Alert) -> bool:
    return alert.kind in URGENT_KINDS


def default_routing(membership: CareTeamMembership) -> AlertRouting:
    """Unsaved choice of a member who has not chosen: urgent alerts, by e-mail, no digest;
    family in a care home hear nothing until they choose to (the staff answer alerts there)."""
    if rights.family_opt_in(membership):
        return AlertRouting(membership=membership, receives=Receives.NONE)
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
        .select_related("user", "routing", "person")
        .distinct()
    )


# --- Webhooks ---------------------------------------------------------------------------------


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
    if alert.outcome:
        data["outcome"] = alert.outcome
    if alert.person_id:
        data["dashboard_url"] = settings.CLARA_SITE_URL + reverse(
            "dashboard:person_alerts", args=[alert.person_id]
        )
    if level is not None:
        data["level"] = level
    return data


def organisation_id_of(alert: Alert) -> uuid.UUID | None:
    """The alert's organisation: its person's, or (no person yet) its session's."""
    return rights.organisation_of(alert)


def emit(alert: Alert, event: str, key: str, *, level: int | None = None, at=None) -> None:
    organisation_id = organisation_id_of(alert)
    if organisation_id is None:
        return
    webhooks.event_emit(
        organisation_id=organisation_id,
        event=event,
        data=_webhook_data(alert, level=level),
        dedupe_key=f"{alert.id}:{key}",
        at=at or timezone.now(),
    )


# --- Notices and the timeline ------------------------------------------------------------------


def notice_for(
    alert: Alert,
    *,
    user_id: int | None,
    level: int,
    due_at: datetime,
    purpose: str = AlertNotice.Purpose.ALERT,
    key: str = "",
) -> tuple[AlertNotice, bool]:
    """The notice of this alert to this recipient at this level (made once: its dedupe key)."""
    key = key or f"{alert.id}:{level}:{user_id if user_id else 'contact'}"
    return AlertNotice.objects.get_or_create(
        dedupe_key=key,
        defaults={
            "alert": alert,
            "user_id": user_id,
            "level": level,
            "due_at": due_at,
            "purpose": purpose,
        },
    )


def step(
    alert: Alert,
    kind: str,
    *,
    user=None,
    who: str = "",
    level: int = 0,
    via: str = "",
    note: str = "",
    for_family: bool = False,
    at=None,
) -> AlertStep:
    """One line of the alert's timeline, naming people by their names (never their login)."""
    return AlertStep.objects.create(
        alert=alert,
        kind=kind,
        user=user,
        who=(who or words.caregiver_name(user))[:300],
        level=level,
        via=via,
        note=note,
        for_family=for_family,
        at=at or timezone.now(),
    )


def send_due(*, alert_id: int | None = None, now: datetime) -> list[AlertNotice]:
    """Send the held or failed notices whose time has come (of one alert, or all)."""
    due = AlertNotice.objects.filter(
        status__in=[AlertNotice.Status.HELD, AlertNotice.Status.FAILED],
        due_at__lte=now,
        attempts__lt=MAX_SEND_ATTEMPTS,
    ).select_related("alert__person__organisation", "user")
    if alert_id is not None:
        due = due.filter(alert_id=alert_id)
    sent = []
    for notice in due.order_by("due_at", "id")[:500]:
        if notice_send(notice=notice, now=now):
            sent.append(notice)
    return sent


def first_name(person: Person | None) -> str:
    if person is None:
        return "someone Clara talked with"
    name = CaregiverContext.of(person).name_or("")
    return name.split()[0] if name.split() else "the person you care for"


def ack_token(notice: AlertNotice) -> str:
    return signing.dumps({"n": notice.id}, salt=LINK_SALT, compress=True)


def notice_from_token(token: str) -> AlertNotice | None:
    """The notice a link names, if the signature holds and it is not too old."""
    try:
        data = signing.loads(token, salt=LINK_SALT, max_age=settings.CLARA_ALERT_LINK_HOURS * 3600)
    except signing.BadSignature:
        return None
    return (
        AlertNotice.objects.select_related("alert__person__organisation", "user")
        .filter(id=data.get("n"))
        .first()
    )


@dataclass(frozen=True)
class Email:
    to: str
    subject: str
    text: str
    html: str


def _contact_email(alert: Alert) -> str:
    from memory.models import Organisation

    organisation_id = organisation_id_of(alert)
    return (
        Organisation.objects.filter(id=organisation_id)
        .values_list("contact_email", flat=True)
        .first()
        or ""
    )


def told_names(alert: Alert, *, besides: AlertNotice | None = None) -> list[str]:
    """Who else this alert went to, by name, in the order they were told."""
    names: list[str] = []
    notices = (
        AlertNotice.objects.filter(alert_id=alert.id, purpose=AlertNotice.Purpose.ALERT)
        .exclude(status=AlertNotice.Status.FAILED, attempts__gte=MAX_SEND_ATTEMPTS)
        .select_related("user")
        .order_by("level", "id")
    )
    for notice in notices:
        if besides is not None and notice.user_id == besides.user_id:
            continue
        name = words.caregiver_name(notice.user) if notice.user_id else CONTACT
        if name not in names:
            names.append(name)
    return names


def where(person: Person | None) -> str:
    """Where to go, from the profile: "Beech House, Room 12" (empty when not set)."""
    if person is None:
        return ""
    about = CaregiverContext.of(person)
    return ", ".join(part for part in (about.home, about.room) if part)


def when_words(alert: Alert) -> str:
    """When it happened, in the person's time zone ("Tuesday 3 March, 02:30"); UTC said only
    when none is set (or there is no person yet)."""
    about = CaregiverContext.of(alert.person) if alert.person_id else None
    if about is not None and about.zone_set:
        local = alert.created_at.astimezone(about.zone)
        return f"{local:%A} {local.day} {local:%B, %H:%M}"
    utc = alert.created_at.astimezone(ZoneInfo("UTC"))
    return f"{utc:%A} {utc.day} {utc:%B, %H:%M} UTC"


def notice_email(notice: AlertNotice, *, now: datetime | None = None) -> Email | None:
    """The e-mail of a notice (None when it has nowhere to go): the headline first ("Peggy may
    have fallen"), where and when, who else was told, one button (to claim it, for someone who
    may act; the text part's first line is the headline too)."""
    now = now or timezone.now()
    alert, person = notice.alert, notice.alert.person
    to = notice.user.email if notice.user_id else _contact_email(alert)
    if not to:
        return None
    name = first_name(person) if person else "Someone"
    urgent = is_urgent(alert)
    reminder = notice.purpose == AlertNotice.Purpose.REMINDER
    escalated = notice.level > 0 and not reminder
    claimer = alert.claimed_by if alert.status == Alert.Status.CLAIMED else None
    zone = person_zone(person) if person else ZoneInfo("UTC")
    headline = words.alert_email_headline(alert.kind, alert.detail, name)
    context = {
        "name": name,
        "headline": headline,
        "description": words.alert_headline(alert.kind, alert.detail),
        "urgent": urgent,
        "escalated": escalated,
        "reminder": reminder,
        "where": where(person),
        "when": when_words(alert),
        "claimer": words.caregiver_name(claimer) if claimer else "",
        "claimed_at": f"{alert.claimed_at.astimezone(zone):%H:%M}" if claimer else "",
        "alerts_url": settings.CLARA_SITE_URL + alerts_path(alert),
        "ack_url": settings.CLARA_SITE_URL
        + reverse("dashboard:alert_ack", args=[ack_token(notice)]),
        "told": told_names(alert, besides=notice),
        "minutes": settings.CLARA_ALERT_ESCALATE_MINUTES,
        "can_act": rights.may_act_on(alert, notice.user)
        if notice.user_id
        else True,  # the contact: the link then asks for the login with its address
    }
    if reminder:
        subject = f"Is it over? {headline}"
    elif escalated:
        subject = f"Nobody has answered yet: {headline}"
    else:
        subject = headline
    return Email(
        to=to,
        subject=subject,
        text=render_to_string("alerting/alert_email.txt", context),
        html=render_to_string("alerting/alert_email.html", context),
    )


def alerts_path(alert: Alert) -> str:
    """Where the alert is on the dashboard: its person's page, else its organisation's alerts."""
    if alert.person_id:
        return reverse("dashboard:person", args=[alert.person_id]) + "#alerts"
    from memory.models import Organisation

    slug = (
        Organisation.objects.filter(id=organisation_id_of(alert))
        .values_list("slug", flat=True)
        .first()
    )
    return reverse("dashboard:organisation_alerts", args=[slug]) + f"#alert-{alert.id}"


def _recipient_name(notice: AlertNotice) -> str:
    return words.caregiver_name(notice.user) if notice.user_id else CONTACT


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
    who = _recipient_name(notice)
    kind = (
        AlertStep.Kind.REMINDED
        if notice.purpose == AlertNotice.Purpose.REMINDER
        else AlertStep.Kind.SENT
    )
    email = notice_email(notice, now=now)
    if email is None:
        AlertNotice.objects.filter(id=notice.id).update(
            status=AlertNotice.Status.FAILED, attempts=MAX_SEND_ATTEMPTS
        )
        step(
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
        step(
            notice.alert,
            AlertStep.Kind.SEND_FAILED,
            user=notice.user,
            who=who,
            level=notice.level,
            at=now,
        )
        return False
    AlertNotice.objects.filter(id=notice.id).update(status=AlertNotice.Status.SENT, sent_at=now)
    step(notice.alert, kind, user=notice.user, who=who, level=notice.level, at=now)
    if notice.purpose != AlertNotice.Purpose.REMINDER:
        # A reminder's time since the alert measures the claim, not the delivery.
        metrics.ALERT_DELIVERY_SECONDS.labels("email").observe(
            max(0.0, (now - notice.alert.created_at).total_seconds())
        )
    return True


def note_add(
    *, alert: Alert, user, text: str, for_family: bool = False, now: datetime | None = None
) -> AlertStep:
    """A handover note on an alert ("called her daughter, she is fine"); for the care staff and
    team admins unless `for_family`."""
    return step(
        alert, AlertStep.Kind.NOTE, user=user, note=text.strip(), for_family=for_family, at=now
    )


# Steps whose `who` names a rung of the ladder ("the team's admins: Ann Lee, Raj Patel"), not
# their one login: kept as written.
_NAMES_A_RUNG = {AlertStep.Kind.ESCALATED}


def timeline(*, alert_ids: list[int]) -> dict[int, list[AlertStep]]:
    """The steps of these alerts, oldest first, by alert; a login that still exists is named as
    it is named now (a step written before it had a name said its login)."""
    steps: dict[int, list[AlertStep]] = {alert_id: [] for alert_id in alert_ids}
    rows = AlertStep.objects.filter(alert_id__in=alert_ids).select_related("user")
    for row in rows.order_by("at", "id"):
        if row.user_id and row.kind not in _NAMES_A_RUNG:
            row.who = words.caregiver_name(row.user)
        steps[row.alert_id].append(row)
    return steps
