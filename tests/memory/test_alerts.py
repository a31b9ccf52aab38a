"""Caregiver alerts: the outbox, escalations, distress above baseline, chronic repetition."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.db import transaction

from memory.conversations import services
from memory.conversations.emotion import EmotionReading
from memory.core.errors import Invalid
from memory.insights import alerts
from memory.models import Alert

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 2, 1, 20, 0, tzinfo=UTC)


def _reading(distress: float) -> EmotionReading:
    return EmotionReading(
        emotion="anxious", confidence=0.8, distress_score=distress, trajectory="stable"
    )


def _session(person_id, at, messages):
    """One closed session; `messages` is a list of (text, distress)."""
    session, _ = services.session_resolve(user_id=person_id, display_name="Nana", at=at)
    for index, (text, distress) in enumerate(messages):
        services.exchange_record(
            session_id=session.id,
            user_message=text,
            assistant_message="I'm here with you.",
            emotion=_reading(distress),
            at=at + timedelta(minutes=index),
        )
    services.session_close(session_id=session.id, at=at + timedelta(minutes=len(messages)))
    return session


def _calm_history(person_id, sessions=5, *, messages=None):
    messages = messages or [("Hello", 0.2), ("Nice day", 0.2), ("Lovely", 0.2)]
    for day in range(sessions, 0, -1):
        _session(person_id, NOW - timedelta(days=day), messages)


# --- alert_raise ------------------------------------------------------------------------------


def test_raising_an_alert_twice_with_one_key_stores_one():
    session = _session(uuid.uuid4(), NOW, [("Where am I?", 0.6)])
    key = alerts.escalation_dedupe_key(session.id)

    first, created = alerts.alert_raise(
        person_id=session.person_id,
        session_id=session.id,
        kind=Alert.Kind.ESCALATION,
        detail={"reason": "asks_for_help"},
        dedupe_key=key,
        at=NOW,
    )
    second, created_again = alerts.alert_raise(
        person_id=session.person_id,
        session_id=session.id,
        kind=Alert.Kind.ESCALATION,
        detail={"reason": "asks_for_help"},
        dedupe_key=key,
        at=NOW,
    )

    assert created and not created_again
    assert second.id == first.id
    assert Alert.objects.count() == 1
    assert first.status == Alert.Status.OPEN


def test_an_alert_rolls_back_with_the_event_that_raised_it():
    session = _session(uuid.uuid4(), NOW, [("Hello", 0.2)])

    with pytest.raises(RuntimeError), transaction.atomic():
        alerts.escalation_alert_raise(
            person_id=session.person_id, session_id=session.id, reason="fall", at=NOW
        )
        raise RuntimeError("the exchange failed")

    assert not Alert.objects.exists()


def test_escalation_alert_uses_the_session_key():
    session = _session(uuid.uuid4(), NOW, [("Where am I?", 0.6)])

    alert, _ = alerts.escalation_alert_raise(
        person_id=session.person_id, session_id=session.id, reason="fall", at=NOW
    )

    assert alert.dedupe_key == f"escalation:{session.id}"
    assert alert.kind == "escalation"
    assert alert.detail == {"reason": "fall"}


def test_an_escalation_in_an_anonymous_session_is_kept():
    session, _ = services.session_resolve(at=NOW)

    alert, created = alerts.escalation_alert_raise(person_id=None, session_id=session.id, at=NOW)

    assert created
    assert alert.person_id is None


def test_an_unknown_kind_is_refused():
    with pytest.raises(Invalid):
        alerts.alert_raise(person_id=None, session_id=None, kind="bored", detail={}, dedupe_key="x")


def test_a_claim_then_a_resolution_record_who_when_and_the_outcome():
    session = _session(uuid.uuid4(), NOW, [("Help me", 0.9)])
    alert, _ = alerts.escalation_alert_raise(
        person_id=session.person_id, session_id=session.id, at=NOW
    )
    carer = User.objects.create_user("carer")
    later = NOW + timedelta(minutes=5)

    claimed, what = alerts.alert_claim(alert_id=alert.id, user_id=carer.id, at=NOW)
    assert (claimed.status, claimed.claimed_by_id, claimed.claimed_at, what) == (
        "claimed",
        carer.id,
        NOW,
        "claimed",
    )
    assert alerts.alert_claim(alert_id=alert.id, user_id=carer.id, at=later)[1] == "already"

    resolved, done = alerts.alert_resolve(
        alert_id=alert.id, user_id=carer.id, outcome="false_alarm", at=later
    )
    assert done and (resolved.status, resolved.resolved_at, resolved.outcome) == (
        "resolved",
        later,
        "false_alarm",
    )
    assert resolved.claimed_at == NOW  # the claim stays as it was
    assert alerts.alert_claim(alert_id=alert.id, user_id=carer.id)[1] == "resolved"
    assert alerts.alert_resolve(alert_id=alert.id, user_id=carer.id, outcome="well")[1] is False


def test_someone_else_claiming_takes_it_over():
    session = _session(uuid.uuid4(), NOW, [("Help me", 0.9)])
    alert, _ = alerts.escalation_alert_raise(
        person_id=session.person_id, session_id=session.id, at=NOW
    )
    ann, raj = User.objects.create_user("ann"), User.objects.create_user("raj")
    alerts.alert_claim(alert_id=alert.id, user_id=ann.id, at=NOW)
    taken, what = alerts.alert_claim(alert_id=alert.id, user_id=raj.id, at=NOW)
    assert (what, taken.claimed_by_id) == ("took_over", raj.id)


@pytest.mark.parametrize(
    ("outcome", "note", "field"),
    [
        ("", "", "outcome"),
        ("shrug", "", "outcome"),
        ("unknown", "", "outcome"),
        ("other", " ", "note"),
        ("well", "x" * 501, "note"),
    ],
)
def test_a_resolution_needs_an_outcome_and_other_needs_words(outcome, note, field):
    session = _session(uuid.uuid4(), NOW, [("Help me", 0.9)])
    alert, _ = alerts.escalation_alert_raise(
        person_id=session.person_id, session_id=session.id, at=NOW
    )
    carer = User.objects.create_user("carer")
    with pytest.raises(Invalid) as refused:
        alerts.alert_resolve(alert_id=alert.id, user_id=carer.id, outcome=outcome, note=note)
    assert refused.value.field == field
    assert Alert.objects.get(id=alert.id).status == "open"


def test_resolving_an_alert_nobody_claimed_claims_it_too():
    session = _session(uuid.uuid4(), NOW, [("Help me", 0.9)])
    alert, _ = alerts.escalation_alert_raise(
        person_id=session.person_id, session_id=session.id, at=NOW
    )
    carer = User.objects.create_user("carer")
    resolved, _ = alerts.alert_resolve(
        alert_id=alert.id, user_id=carer.id, outcome="other", note="Her son came", at=NOW
    )
    assert (resolved.claimed_by_id, resolved.claimed_at) == (carer.id, NOW)
    assert Alert.objects.get(id=alert.id).outcome_note == "Her son came"


# --- alerts_from_trends: distress -------------------------------------------------------------


def test_a_session_well_above_the_persons_baseline_raises_an_alert():
    person_id = uuid.uuid4()
    _calm_history(person_id)
    upset = _session(person_id, NOW - timedelta(hours=2), [("Worried about things", 0.7)] * 3)

    raised = alerts.alerts_from_trends(person_id=person_id, now=NOW)

    assert [alert.kind for alert in raised] == ["distress_above_baseline"]
    assert raised[0].session_id == upset.id
    assert raised[0].detail == {
        "session_average": 0.7,
        "baseline": 0.2,
        "readings": 3,
        "baseline_sessions": 5,
    }


def test_distress_alerts_are_raised_once():
    person_id = uuid.uuid4()
    _calm_history(person_id)
    _session(person_id, NOW - timedelta(hours=2), [("Worried about things", 0.7)] * 3)
    alerts.alerts_from_trends(person_id=person_id, now=NOW)

    again = alerts.alerts_from_trends(person_id=person_id, now=NOW + timedelta(minutes=5))

    assert again == []
    # (the words may also be an urgent moment: that alert is another kind, raised with them)
    assert Alert.objects.filter(kind=Alert.Kind.DISTRESS_ABOVE_BASELINE).count() == 1


def test_fewer_than_three_readings_raise_no_distress_alert():
    person_id = uuid.uuid4()
    _calm_history(person_id)
    _session(person_id, NOW - timedelta(hours=2), [("Worried about things", 0.9)] * 2)

    assert alerts.alerts_from_trends(person_id=person_id, now=NOW) == []


def test_distress_slightly_above_baseline_raises_nothing():
    person_id = uuid.uuid4()
    _calm_history(person_id)
    _session(person_id, NOW - timedelta(hours=2), [("Hm", 0.35)] * 3)

    assert alerts.alerts_from_trends(person_id=person_id, now=NOW) == []


def test_a_person_who_is_always_upset_raises_no_distress_alert():
    person_id = uuid.uuid4()
    _calm_history(person_id, messages=[("Worried about things", 0.8)] * 3)
    _session(person_id, NOW - timedelta(hours=2), [("Worried about things", 0.85)] * 3)

    assert alerts.alerts_from_trends(person_id=person_id, now=NOW) == []


def test_no_distress_alert_without_a_baseline():
    person_id = uuid.uuid4()
    _session(person_id, NOW - timedelta(hours=2), [("Worried about things", 0.9)] * 3)

    assert alerts.alerts_from_trends(person_id=person_id, now=NOW) == []


# --- alerts_from_trends: chronic repetition ---------------------------------------------------


def _repeating(person_id, hours_ago):
    # Three questions of one kind: two of them repeats.
    return _session(
        person_id,
        NOW - timedelta(hours=hours_ago),
        [("Where am I?", 0.2), ("Where am I?", 0.2), ("What is this place?", 0.2)],
    )


def test_repeats_rising_above_the_usual_rate_raise_chronic_repetition():
    person_id = uuid.uuid4()
    _calm_history(person_id)
    for hours_ago in (6, 4, 2):
        _repeating(person_id, hours_ago)

    raised = alerts.alerts_from_trends(person_id=person_id, now=NOW)

    assert [alert.kind for alert in raised] == ["chronic_repetition"]
    assert raised[0].detail["recent_repeats_per_session"] == 2.0
    assert raised[0].detail["usual_repeats_per_session"] == 0.0
    assert raised[0].dedupe_key == f"chronic_repetition:{person_id}:2026-02-01"


def test_chronic_repetition_is_raised_once_a_day():
    person_id = uuid.uuid4()
    _calm_history(person_id)
    for hours_ago in (6, 4, 2):
        _repeating(person_id, hours_ago)
    alerts.alerts_from_trends(person_id=person_id, now=NOW)

    again = alerts.alerts_from_trends(person_id=person_id, now=NOW + timedelta(hours=1))

    assert again == []
    assert Alert.objects.filter(kind="chronic_repetition").count() == 1


def test_a_persons_usual_repetition_raises_nothing():
    person_id = uuid.uuid4()
    usual = [("Where am I?", 0.2), ("Where am I?", 0.2), ("What is this place?", 0.2)]
    _calm_history(person_id, messages=usual)
    for hours_ago in (6, 4, 2):
        _repeating(person_id, hours_ago)

    assert alerts.alerts_from_trends(person_id=person_id, now=NOW) == []


def test_fewer_than_five_recent_repeats_raise_nothing():
    person_id = uuid.uuid4()
    _calm_history(person_id)
    _repeating(person_id, 6)
    _repeating(person_id, 4)
    _session(person_id, NOW - timedelta(hours=2), [("Hello", 0.2)])

    assert alerts.alerts_from_trends(person_id=person_id, now=NOW) == []
