"""People acting on an alert: claiming it ("I'm dealing with it"), taking it over, resolving it
with its outcome, from the dashboard or from the e-mail's link.

Only someone allowed to act (dashboard/alerting/rights.py) changes anything; anyone else is
refused with `NotAllowed` and nothing is recorded on the alert. The e-mail's link works only for
the person it was sent to (`link_is_for`).
"""

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from dashboard import selectors, words
from dashboard.alerting import delivery, ladder, rights
from dashboard.alerting.models import AlertNotice, AlertStep
from memory.insights import alerts
from memory.insights.alerts import Claimed
from memory.models import Alert
from memory.webhooks.models import WebhookEvent


class NotAllowed(Exception):
    """The user may see the alert but not act on it (their role, or the care setting)."""


def alert_claim_by(*, alert: Alert, user, via: str, now: datetime | None = None) -> str:
    """`user` has the alert now (a claim, or a take-over of someone else's claim): the step
    goes on the timeline, the climb stops and the claim's timeout starts. Returns Claimed.*."""
    now = now or timezone.now()
    if not rights.may_act_on(alert, user):
        raise NotAllowed
    with transaction.atomic():
        updated, what = alerts.alert_claim(alert_id=alert.id, user_id=user.pk, at=now)
        if what in (Claimed.CLAIMED, Claimed.TOOK_OVER):
            kind = AlertStep.Kind.CLAIMED if what == Claimed.CLAIMED else AlertStep.Kind.TOOK_OVER
            delivery.step(updated, kind, user=user, via=via, at=now)
            ladder.claim_started(alert=updated, at=now)
    return what


def alert_resolve_by(
    *, alert: Alert, user, outcome: str, note: str = "", via: str, now: datetime | None = None
) -> bool:
    """It is over, with its outcome: the step (with the outcome) goes on the timeline, the
    ladder stops and webhooks hear. False if it was resolved already (nothing changes).
    Raises memory.core.errors.Invalid for a missing outcome or note."""
    now = now or timezone.now()
    if not rights.may_act_on(alert, user):
        raise NotAllowed
    with transaction.atomic():
        updated, done = alerts.alert_resolve(
            alert_id=alert.id, user_id=user.pk, outcome=outcome, note=note, at=now
        )
        if done:
            delivery.step(
                updated,
                AlertStep.Kind.RESOLVED,
                user=user,
                via=via,
                note=words.outcome_words(updated.outcome, updated.outcome_note),
                at=now,
            )
            ladder.resolved(alert=updated)
            delivery.emit(
                updated, WebhookEvent.ALERT_ACKNOWLEDGED, f"resolved:{now.isoformat()}", at=now
            )
    return done


def alert_attach_by(*, alert: Alert, user, person, now: datetime | None = None) -> Alert:
    """An alert with no person is about `person` after all: someone of the organisation's staff
    says so; it goes on the timeline (the person's name, encrypted). From now on it is the
    person's alert, on their page, and their team hears of what comes next."""
    now = now or timezone.now()
    if not rights.organisation_staff(user, rights.organisation_of(alert)):
        raise NotAllowed
    with transaction.atomic():
        updated = alerts.alert_attach(alert_id=alert.id, person_id=person.id)
        delivery.step(
            updated,
            AlertStep.Kind.ATTACHED,
            user=user,
            note=selectors.person_name(person),
            via="dashboard",
            at=now,
        )
    return updated


def link_is_for(notice: AlertNotice, user) -> bool:
    """Whether the logged-in `user` is the one this e-mail went to (the organisation's contact:
    a login of the organisation with the contact's address)."""
    if user is None or not user.is_authenticated:
        return False
    if notice.user_id is not None:
        return notice.user_id == user.pk
    address = delivery._contact_email(notice.alert)
    return bool(address) and (user.email or "").strip().lower() == address.strip().lower()


def link_opened(*, notice: AlertNotice, user, now: datetime | None = None) -> None:
    """The e-mail's link was opened by its recipient (the first time is recorded)."""
    now = now or timezone.now()
    if AlertNotice.objects.filter(id=notice.id, opened_at__isnull=True).update(opened_at=now):
        delivery.step(
            notice.alert,
            AlertStep.Kind.OPENED,
            user=user,
            level=notice.level,
            via="email",
            at=now,
        )


def link_claim(*, notice: AlertNotice, user, now: datetime | None = None) -> str:
    """Claim through the e-mail's link (its recipient only: the caller checks link_is_for)."""
    now = now or timezone.now()
    what = alert_claim_by(alert=notice.alert, user=user, via="email", now=now)
    AlertNotice.objects.filter(id=notice.id, link_used_at__isnull=True).update(link_used_at=now)
    return what
