"""The ladder an urgent alert climbs until someone allowed to act has it, and until it is over.

    open ──(CLARA_ALERT_ESCALATE_MINUTES)──▶ the next rung ──▶ … ──▶ everyone again, every
      │                                                             CLARA_CLAIM_TIMEOUT_MINUTES
      └─ claimed ──(CLARA_CLAIM_TIMEOUT_MINUTES)──▶ a reminder to the claimer
                   ──(CLARA_ALERT_ESCALATE_MINUTES)──▶ the next rung, and on, until resolved

The rungs of a person's alert: 0 the care team (as each member chose to hear), 1 the team's
admins, 2 the organisation's on-call list (those whose hours hold now), 3 the organisation's
contact. An alert with no person (a session the bot opened without one) has no team: 0 the
on-call list, 1 the contact. Past the last rung everyone who may act (the organisation's admins
too), and the contact, are told again. A rung that reaches nobody allowed to act (only family
who may not act, no admin with an e-mail, nobody on call now, no contact set) is passed at
once, so an alert never waits on people who cannot take it. Only urgent alerts climb; the others
go to those who asked for them, in their hours.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from dashboard import words
from dashboard.alerting import delivery, rights
from dashboard.alerting.delivery import is_urgent
from dashboard.alerting.models import AlertEscalation, AlertNotice, AlertStep, Receives
from dashboard.models import CareRole
from memory.models import Alert
from memory.webhooks.models import WebhookEvent

LEVEL_TEAM = 0


@dataclass
class Rung:
    """Who one rung of the ladder tells: logins, and the organisation's contact or not."""

    label: str
    users: list = field(default_factory=list)
    contact: bool = False
    # What the timeline says when nobody is there ("no team admin with an e-mail").
    empty: str = ""


def escalate_after() -> timedelta:
    return timedelta(minutes=settings.CLARA_ALERT_ESCALATE_MINUTES)


def claim_timeout() -> timedelta:
    return timedelta(minutes=settings.CLARA_CLAIM_TIMEOUT_MINUTES)


def _team_rung(alert: Alert, *, now: datetime) -> tuple[Rung, dict[int, datetime]]:
    """Rung 0: each member who asked for this kind of alert by e-mail (and when, for the
    ones that wait for their hours)."""
    urgent = is_urgent(alert)
    rung, due = Rung(label="the care team", empty="nobody in the care team asked for it"), {}
    for membership in delivery.team_members(alert.person):
        routing = delivery.routing_of(membership)
        if routing.receives == Receives.NONE or not routing.by_email:
            continue
        if routing.receives == Receives.URGENT and not urgent:
            continue
        if not membership.user.email:
            continue
        rung.users.append(membership.user)
        due[membership.user.pk] = (
            now
            if urgent
            else delivery.within_hours(
                now=now,
                start=routing.hours_start,
                end=routing.hours_end,
                zone=delivery._zone(routing, alert.person),
            )
        )
    return rung, due


def _admins_rung(alert: Alert) -> Rung:
    users = [
        m.user
        for m in delivery.team_members(alert.person).filter(role=CareRole.ADMIN)
        if m.user.email
    ]
    return Rung(label="the team's admins", users=users, empty="no team admin with an e-mail")


def _contact_rung(alert: Alert) -> Rung:
    has = bool(delivery._contact_email(alert))
    return Rung(label=delivery.CONTACT, contact=has, empty="no organisation contact set")


def _on_call_rung(alert: Alert, *, now: datetime) -> Rung:
    organisation_id = delivery.organisation_id_of(alert)
    users = [u for u in rights.on_call_now(organisation_id, now=now) if u.email]
    return Rung(label="the on-call list", users=users, empty="nobody on call now")


def first_rung(alert: Alert, *, now: datetime) -> tuple[Rung, dict[int, datetime]]:
    """Rung 0: the care team as each member chose; with no person, the on-call list."""
    if alert.person_id is None:
        return _on_call_rung(alert, now=now), {}
    return _team_rung(alert, now=now)


def rungs(alert: Alert, *, now: datetime | None = None) -> list[Rung]:
    """The rungs after the first, in order."""
    now = now or timezone.now()
    if alert.person_id is None:
        return [_contact_rung(alert)]
    return [_admins_rung(alert), _on_call_rung(alert, now=now), _contact_rung(alert)]


def rung_at(alert: Alert, level: int, ladder: list[Rung], *, now: datetime) -> Rung:
    """The rung of this level on `ladder` (`rungs(alert)`; past its last: everyone who may act,
    the organisation's admins and the contact, again)."""
    if level - 1 < len(ladder):
        return ladder[level - 1]
    everyone = Rung(label="everyone again", empty="nobody to tell")
    first, _ = first_rung(alert, now=now)
    admins = [u for u in rights.organisation_admins(delivery.organisation_id_of(alert)) if u.email]
    for rung in [first, *ladder, Rung(label="", users=admins)]:
        everyone.contact = everyone.contact or rung.contact
        for user in rung.users:
            if user not in everyone.users and rights.may_act_on(alert, user):
                everyone.users.append(user)
    return everyone


def last_level(alert: Alert) -> int:
    return 1 if alert.person_id is None else 3


def _reaches_someone_who_acts(alert: Alert, rung: Rung) -> bool:
    return rung.contact or any(rights.may_act_on(alert, user) for user in rung.users)


def _tell(alert: Alert, rung: Rung, *, level: int, now: datetime, due=None) -> None:
    for user in rung.users:
        notice, created = delivery.notice_for(
            alert, user_id=user.pk, level=level, due_at=(due or {}).get(user.pk, now)
        )
        if created and notice.due_at > now:
            delivery.step(alert, AlertStep.Kind.HELD, user=user, level=level, at=now)
    if rung.contact:
        delivery.notice_for(alert, user_id=None, level=level, due_at=now)


def _who(rung: Rung) -> str:
    names = [words.caregiver_name(user) for user in rung.users]
    if rung.contact:
        names.append(delivery.CONTACT)
    if not names:
        return rung.empty
    if rung.label == delivery.CONTACT:
        return rung.label
    return f"{rung.label}: {', '.join(names)}"


def alert_deliver(*, alert_id: int, now: datetime | None = None) -> list[AlertNotice]:
    """Route a new alert: webhooks, and the first rung of its ladder (e-mails now, or held for
    the hours of those who asked only for those hours). An urgent alert whose first rung reaches
    nobody allowed to act climbs at once.

    Idempotent: a second run finds the notices and webhook deliveries already written and sends
    only those not sent yet. Returns the notices sent now.
    """
    now = now or timezone.now()
    alert = (
        Alert.objects.select_related("person__organisation", "session").filter(id=alert_id).first()
    )
    if alert is None or alert.created_at < now - delivery.STALE_AFTER:
        # A moment long past (a replayed backlog, the demo's weeks of history) is recorded on
        # the dashboard, not paged to anyone.
        return []
    climb = False
    with transaction.atomic():
        delivery.emit(alert, WebhookEvent.ALERT_RAISED, "raised", at=now)
        if delivery.organisation_id_of(alert) is None:
            return []  # no session and no person: nobody's to tell (never raised so)
        first, due = first_rung(alert, now=now)
        _tell(alert, first, level=LEVEL_TEAM, now=now, due=due)
        if is_urgent(alert) and alert.status == Alert.Status.OPEN:
            _, created = AlertEscalation.objects.get_or_create(
                alert=alert, defaults={"next_at": now + escalate_after()}
            )
            climb = created and not _reaches_someone_who_acts(alert, first)
    sent = delivery.send_due(alert_id=alert.id, now=now)
    if climb:
        # Nobody on the first rung may act: the next rung now (after the first rung's e-mails,
        # so the timeline reads in the order things happened).
        with transaction.atomic():
            state = AlertEscalation.objects.select_for_update().get(alert_id=alert.id)
            if state.level == LEVEL_TEAM:
                _climb(state, alert, now=now)
        sent += delivery.send_due(alert_id=alert.id, now=now)
    return sent


def _climb(state: AlertEscalation, alert: Alert, *, now: datetime) -> int:
    """Up one rung, and on past rungs that reach nobody who may act; records each on the
    timeline and tells webhooks. Returns the level reached."""
    level, top = state.level, last_level(alert)
    # Read once for the whole climb: an alert nobody may act on climbs every rung in one go.
    ladder = rungs(alert, now=now)
    while True:
        level += 1
        rung = rung_at(alert, level, ladder, now=now)
        _tell(alert, rung, level=level, now=now)
        delivery.step(alert, AlertStep.Kind.ESCALATED, who=_who(rung), level=level, at=now)
        delivery.emit(
            alert, WebhookEvent.ALERT_ESCALATED, f"escalated:{level}", level=level, at=now
        )
        if _reaches_someone_who_acts(alert, rung) or level > top:
            break
    state.level = level
    # Past the last rung, everyone is told again at the pace of a claim's timeout.
    state.next_at = now + (escalate_after() if level < top else claim_timeout())
    state.save(update_fields=["level", "next_at", "reminded_at"])
    return level


def alert_escalate(*, alert_id: int, now: datetime | None = None) -> str | None:
    """The alert's next step on the ladder, if it is due: "escalated", "reminded", or None
    (nothing due, or it is over)."""
    now = now or timezone.now()
    with transaction.atomic():
        state = (
            # Lock only this row: PostgreSQL refuses FOR UPDATE on an outer join's nullable side.
            AlertEscalation.objects.select_for_update(of=("self",))
            .select_related("alert__person__organisation", "alert__claimed_by")
            .filter(alert_id=alert_id, next_at__lte=now)
            .first()
        )
        if state is None:
            return None
        alert = state.alert
        if alert.status == Alert.Status.RESOLVED:
            state.next_at = None
            state.save(update_fields=["next_at"])
            return None
        claimed = alert.status == Alert.Status.CLAIMED
        if claimed and (state.reminded_at is None or state.reminded_at < alert.claimed_at):
            # A claim not resolved in time: first a word to the claimer, then the ladder again.
            delivery.notice_for(
                alert,
                user_id=alert.claimed_by_id,
                level=state.level,
                due_at=now,
                purpose=AlertNotice.Purpose.REMINDER,
                key=f"{alert.id}:remind:{alert.claimed_by_id}:{alert.claimed_at.isoformat()}",
            )
            state.reminded_at = now
            state.next_at = now + escalate_after()
            state.save(update_fields=["reminded_at", "next_at"])
            what = "reminded"
        else:
            _climb(state, alert, now=now)
            what = "escalated"
    delivery.send_due(alert_id=alert.id, now=now)
    return what


def claim_started(*, alert: Alert, at: datetime) -> None:
    """A claim (or a take-over) stops the climb; its timeout starts (the reminder's time)."""
    AlertEscalation.objects.filter(alert_id=alert.id).update(
        next_at=at + claim_timeout(), reminded_at=None
    )


def resolved(*, alert: Alert) -> None:
    """It is over: the ladder stops."""
    AlertEscalation.objects.filter(alert_id=alert.id).update(next_at=None)


def alerts_sweep(*, now: datetime | None = None) -> dict:
    """Every minute: ladder steps that are due, then held or failed e-mails whose time came."""
    now = now or timezone.now()
    done = {"escalated": 0, "reminded": 0}
    for alert_id in AlertEscalation.objects.filter(next_at__lte=now).values_list(
        "alert_id", flat=True
    )[:500]:
        what = alert_escalate(alert_id=alert_id, now=now)
        if what is not None:
            done[what] += 1
    done["sent"] = len(delivery.send_due(now=now))
    return done
