"""The weekly digest: on a family member's local Sunday evening, if they opted in, how the
person's week went in plain words, the kinds of question that came back most, what helped, and
the alerts with what was done. Never the person's own words, never a handover note's text.
"""

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from dashboard import selectors, words
from dashboard.alerting import delivery
from dashboard.alerting.models import AlertRouting, DigestSent
from memory.models import Alert

logger = logging.getLogger(__name__)

# Sunday evening, local: sent in the hour starting here.
DIGEST_WEEKDAY, DIGEST_HOUR = 6, 18


@dataclass(frozen=True)
class Digest:
    subject: str
    text: str
    html: str


def digest_build(*, membership, now: datetime) -> Digest:
    """The digest of the week up to `now` for one member (what they may see: no transcripts)."""
    person = membership.person
    name = delivery.first_name(person)
    weeks = selectors.weekly_distress(person=person, now=now, weeks=1)
    week = weeks[-1] if weeks else None
    band = selectors.repetition_this_week(person=person, now=now)
    kinds, _stories, _covered = selectors.what_calms(person=person, now=now)
    since = now - timedelta(days=7)
    alerts = [
        {
            "headline": words.alert_headline(a.kind, a.detail),
            "status": words.ALERT_STATUS.get(a.status, a.status),
            "when": a.created_at.astimezone(delivery.person_zone(person)),
        }
        for a in Alert.objects.filter(person_id=person.id, created_at__gte=since).order_by(
            "created_at"
        )
    ]
    questions = [
        words.question_phrase(q.question_type, subject=name)
        for q in sorted(band.questions, key=lambda q: -q.asked)[:3]
        if q.asked
    ]
    helped = [words.story_kind(k.name) for k in kinds if k.drop and k.drop > 0][:2]
    upset = words.upset_score(week.average) if week and week.average is not None else None
    context = {
        "name": name,
        "conversations": band.conversations,
        "upset": upset,
        "questions": questions,
        "helped": helped,
        "alerts": alerts,
        "url": settings.CLARA_SITE_URL + reverse("dashboard:person", args=[person.id]),
        "settings_url": settings.CLARA_SITE_URL
        + reverse("dashboard:alert_routing", args=[person.id]),
    }
    return Digest(
        subject=f"Clara: {name}'s week",
        text=render_to_string("alerting/digest_email.txt", context),
        html=render_to_string("alerting/digest_email.html", context),
    )


def _local_now(routing: AlertRouting, now: datetime) -> datetime:
    return now.astimezone(delivery._zone(routing, routing.membership.person))


def digests_send(*, now: datetime | None = None) -> int:
    """Hourly: each opted-in member whose local time is Sunday 18:00-18:59 gets this week's
    digest once (DigestSent). Returns how many went."""
    now = now or timezone.now()
    sent = 0
    routings = AlertRouting.objects.filter(weekly_digest=True).select_related(
        "membership__user", "membership__person__organisation"
    )
    for routing in routings:
        membership = routing.membership
        local = _local_now(routing, now)
        if local.weekday() != DIGEST_WEEKDAY or local.hour != DIGEST_HOUR:
            continue
        if not membership.user.email:
            continue
        # Only while the login is still in the person's organisation (as for alerts).
        if not delivery.team_members(membership.person).filter(id=membership.id).exists():
            continue
        try:
            with transaction.atomic():
                DigestSent.objects.create(membership=membership, week_ending=local.date())
                digest = digest_build(membership=membership, now=now)
                message = EmailMultiAlternatives(
                    digest.subject, digest.text, to=[membership.user.email]
                )
                message.attach_alternative(digest.html, "text/html")
                message.send()  # a failure rolls the DigestSent back: the next hour tries again
        except IntegrityError:
            continue  # sent already this week
        except Exception as exc:  # noqa: BLE001 - one refused e-mail must not stop the others
            logger.warning("weekly digest %s failed: %s", membership.id, type(exc).__name__)
            continue
        sent += 1
    return sent
