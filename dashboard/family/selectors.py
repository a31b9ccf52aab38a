"""What the family page shows, read through the dashboard's selectors, in words for family.

Minimum necessary as everywhere: no quotes of the person (summary lines and plans that quote them
are left out, dashboard.minimum), no scores, no staff notes (dashboard.notes.services), no
handover-note text unless its writer marked it for family.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from dashboard import minimum, selectors, words
from dashboard.alerting import delivery
from dashboard.models import CareTeamMembership
from dashboard.notes import services as notes
from memory.core.person import CaregiverContext, person_zone
from memory.facts import commitments
from memory.models import Alert, Person, QuestionType

# How far apart two stretches' average distress (0–1) must be before the page says "calmer" or
# "more unsettled" than the week before: under half a band of words.UPSET_LEVELS (0.2 wide).
CHANGE_AT = 0.08
ALERT_DAYS = 14
COMING_UP_SHOWN = 5
ASKED_SHOWN = 4


@dataclass
class Asked:
    """One kind of question the person kept asking, collapsed: one line whatever the wordings."""

    words: str
    times: int


@dataclass
class FamilyAlert:
    headline: str
    created: datetime
    state: str
    notes: list = field(default_factory=list)  # handover steps marked for family


def how_she_has_been(*, person: Person, now: datetime, about: CaregiverContext) -> list[str]:
    """'In the last 7 days Peggy has mostly been a little unsettled, over 9 conversations:
    calmer than the week before.' In words only."""
    recent, before = selectors.last_7_days(person=person, now=now)
    name = about.name_or("They")
    if not recent.readings:
        if recent.conversations:
            return [
                f"{name} talked with Clara {words.plural(recent.conversations, 'time')} in "
                "the last 7 days."
            ]
        return [f"{name} has not talked with Clara in the last 7 days."]
    line = (
        f"In the last 7 days {name} has mostly been {words.upset_words(recent.average)}, over "
        f"{words.plural(recent.conversations, 'conversation')}"
    )
    if before.readings and recent.average is not None and before.average is not None:
        change = recent.average - before.average
        if change <= -CHANGE_AT:
            line += ": calmer than the week before"
        elif change >= CHANGE_AT:
            line += ": more unsettled than the week before"
        else:
            line += ", much as the week before"
    return [line + "."]


def kept_asking(*, person: Person, now: datetime, subject: str) -> list[Asked]:
    """The questions that came back lately, in Clara's words, one line per kind: a kind said in
    many wordings ("Said something else" five times) is one line with its times added up."""
    lines: dict[str, Asked] = {}
    for question in selectors.most_repeated_questions(person=person, now=now):
        said = words.repeated_question_words(question, subject=subject, with_words=False)
        if question.question_type == QuestionType.GENERAL:
            said = "Came back to other things"
        found = lines.setdefault(said, Asked(words=said, times=0))
        found.times += question.times
    return sorted(lines.values(), key=lambda a: -a.times)[:ASKED_SHOWN]


def what_helps(*, person: Person, now: datetime, about: CaregiverContext) -> dict:
    """What seemed to calm the person (best first, no figures), the answers the team agreed
    for the questions she asks, and what she likes to talk about."""
    kinds, _stories, _covered = selectors.what_calms(person=person, now=now)
    calming = [k.name for k in kinds if k.enough and k.drop is not None and k.drop > 0]
    answers = [
        (words.question_phrase(kind, about.subject), answer)
        for kind, answer in about.agreed_answers.items()
        if kind != QuestionType.GENERAL
    ]
    return {"calming": calming, "answers": answers, "topics": list(about.known_topics)}


def coming_up(*, person: Person, now: datetime, about: CaregiverContext) -> list[str]:
    """Plans and promises still open (the soonest first, those with no day after), and the
    usual visits the profile names. Lines that quote the person are left out."""
    zone = person_zone(person)
    today = now.astimezone(zone).replace(hour=0, minute=0, second=0, microsecond=0)
    open_ones = [
        c
        for c in commitments.commitments_for_person(person_id=person.id)
        if c.due_at is None or c.due_at >= today
    ]
    open_ones.sort(key=lambda c: (c.due_at is None, c.due_at or now))
    name = about.name_or("They")
    lines = []
    for commitment in open_ones:
        line = commitments.describe(commitment, zone=zone, organisation_id=person.organisation_id)
        if minimum.quotes(line):
            continue
        # "plans to call Ann on Sunday (Sun 29 Mar)", "was told Clara would ...": the person leads.
        lines.append(f"{name} {line}.")
        if len(lines) >= COMING_UP_SHOWN:
            break
    for contact in about.family:
        if contact.visit_day:
            who = f"{contact.name} ({contact.relation})" if contact.relation else contact.name
            lines.append(f"{who} usually visits on {contact.visit_day}.")
    return lines


def family_headline(alert: selectors.AlertRow, *, name: str) -> str:
    """An alert's headline for family: the staff words without the figures."""
    if alert.kind == Alert.Kind.DISTRESS_ABOVE_BASELINE:
        return f"{name} was more upset than usual in one conversation."
    if alert.kind == Alert.Kind.CHRONIC_REPETITION:
        return f"{name} has been asking the same things more often than usual."
    return alert.headline


def _state(alert: selectors.AlertRow, *, user_id: int) -> str:
    if alert.status == Alert.Status.RESOLVED:
        who = alert.resolved_by or "someone no longer on the team"
        return (
            f"Dealt with by {who}: {alert.outcome}." if alert.outcome else f"Dealt with by {who}."
        )
    if alert.status == Alert.Status.CLAIMED:
        if alert.claimed_by_id == user_id:
            return "You are dealing with it."
        return f"{alert.claimed_by or 'Someone'} is dealing with it."
    return "The care team has been told."


def recent_alerts(
    *, person: Person, membership: CareTeamMembership, now: datetime, name: str
) -> list[FamilyAlert]:
    """Alerts not resolved, and those of the last ALERT_DAYS days, with who is dealing with them
    and the handover notes marked for family."""
    since = now - timedelta(days=ALERT_DAYS)
    rows = [
        a
        for a in selectors.alerts_for_person(person=person)
        if a.status != Alert.Status.RESOLVED or a.created >= since
    ]
    timelines = notes.timeline_for(
        membership=membership, timelines=delivery.timeline(alert_ids=[a.id for a in rows])
    )
    return [
        FamilyAlert(
            headline=family_headline(a, name=name),
            created=a.created,
            state=_state(a, user_id=membership.user_id),
            notes=[s for s in timelines.get(a.id, []) if s.kind == "note"],
        )
        for a in rows
    ]


def family_page(*, person: Person, membership: CareTeamMembership, now: datetime) -> dict:
    """Everything the family page shows (dashboard.family.views.person_page)."""
    about = CaregiverContext.of(person)
    name = about.name_or("They")
    card = selectors.person_card(person=person, membership=membership, now=now)
    return {
        "card": card,
        "how": how_she_has_been(person=person, now=now, about=about),
        "asked": kept_asking(person=person, now=now, subject=about.subject),
        "helps": what_helps(person=person, now=now, about=about),
        "coming_up": coming_up(person=person, now=now, about=about),
        "family_notes": notes.notes_for(person=person, membership=membership),
        "family_alerts": recent_alerts(person=person, membership=membership, now=now, name=name),
    }
