"""The services enqueue the background jobs after commit, and raise alerts with the event."""

import uuid

import pytest

from memory import tasks
from memory.conversations import services
from memory.conversations.emotion import EmotionReading
from memory.models import Alert, Session

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch) -> list[tuple[str, tuple]]:
    """What the services hand to the broker: (task name, args), recorded instead of sent."""
    record: list[tuple[str, tuple]] = []

    def recorder(name):
        def apply_async(args=(), kwargs=None, **options):
            record.append((name, tuple(args)))

        return apply_async

    for task in (tasks.compute_session_summary, tasks.update_rolling_summary):
        monkeypatch.setattr(task, "apply_async", recorder(task.name))
    return record


def test_closing_a_session_enqueues_its_summary_after_commit(
    django_capture_on_commit_callbacks, sent
):
    session, _ = services.session_resolve()

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.session_close(session_id=session.id)
    assert sent == []  # nothing before the commit
    for callback in callbacks:
        callback()

    assert ("memory.tasks.compute_session_summary", (str(session.id),)) in sent


def test_every_fourth_turn_enqueues_the_rolling_summary(django_capture_on_commit_callbacks, sent):
    session_id = uuid.uuid4()
    with django_capture_on_commit_callbacks(execute=True):
        for turn in range(5):
            services.exchange_record(
                session_id=session_id, user_message=f"hi {turn}", assistant_message="hello"
            )

    assert sent == [("memory.tasks.update_rolling_summary", (str(session_id),))]


def test_an_escalation_raises_one_alert_with_the_exchange():
    session, _ = services.session_resolve(user_id=uuid.uuid4())
    fearful = EmotionReading("fearful", 0.9, 0.95, "escalating")

    for _ in range(2):
        services.exchange_record(
            session_id=session.id,
            user_message="I've fallen and I can't get up",
            assistant_message="I'm getting someone to help you now.",
            emotion=fearful,
        )

    (alert,) = Alert.objects.all()
    assert (alert.kind, alert.session_id, alert.person_id) == (
        "escalation",
        session.id,
        session.person_id,
    )
    assert Session.objects.get(id=session.id).escalation_triggered


def test_a_failed_exchange_leaves_no_alert(monkeypatch):
    from django.db import connection

    from tests.support.refused_writes import RefusedWrite

    session, _ = services.session_resolve(user_id=uuid.uuid4())
    with connection.execute_wrapper(RefusedWrite("UPDATE people")):
        result = services.exchange_submit(
            session_id=session.id, user_message="Help me!", assistant_message="I'm here."
        )

    assert isinstance(result, services.PendingExchange)
    assert not Alert.objects.exists()


def test_linking_a_person_brings_the_sessions_alerts_along():
    session, _ = services.session_resolve()
    services.exchange_record(
        session_id=session.id, user_message="Help me!", assistant_message="I'm here."
    )
    user_id = uuid.uuid4()

    services.session_resolve(session_id=session.id, user_id=user_id)

    assert Alert.objects.get().person_id == user_id


def _closed_session_with_talk():
    session, _ = services.session_resolve(user_id=uuid.uuid4())
    for line in ["Where am I?", "When is Ann coming?", "Where am I?", "I like the garden."]:
        services.exchange_record(
            session_id=session.id, user_message=line, assistant_message="I'm right here with you."
        )
    services.session_close(session_id=session.id)
    return Session.objects.get(id=session.id)


def test_the_summary_task_twice_leaves_what_once_left():
    session = _closed_session_with_talk()

    tasks.compute_session_summary(str(session.id))
    once = Session.objects.get(id=session.id).session_summary
    tasks.compute_session_summary(str(session.id))

    assert Session.objects.get(id=session.id).session_summary == once
    assert once["summarizer"] == "extractive"
    assert {"question_type": "location", "count": 2} in once["key_topics"]


def test_the_rolling_summary_task_writes_one_row_per_person():
    from memory.models import RollingSummary

    session = _closed_session_with_talk()

    tasks.update_rolling_summary(str(session.id))
    tasks.update_rolling_summary(str(session.id))

    assert RollingSummary.objects.filter(person_id=session.person_id).count() == 1


def test_the_trends_task_twice_leaves_one_row_for_the_day():
    from memory.models import PersonTrend

    session = _closed_session_with_talk()

    tasks.compute_person_trends(str(session.person_id))
    tasks.compute_person_trends(str(session.person_id))

    assert PersonTrend.objects.filter(person_id=session.person_id).count() == 1


def test_the_daily_trends_job_fans_out_batches_covering_every_active_person(monkeypatch):
    people = {str(_closed_session_with_talk().person_id) for _ in range(2)}
    sent = []
    monkeypatch.setattr(
        tasks.compute_trends_batch,
        "apply_async",
        lambda args=(), kwargs=None, **kw: sent.extend(args[0]),
    )

    assert tasks.compute_all_trends() == 2
    assert set(sent) == people


def test_the_escalation_alert_names_the_reason():
    session, _ = services.session_resolve(user_id=uuid.uuid4())

    services.exchange_record(
        session_id=session.id, user_message="I fell in the kitchen", assistant_message="I'm here."
    )

    detail = Alert.objects.get().detail
    assert detail["reason"] == "fall"
    assert detail["why"]["language"] == "en" and detail["why"]["source"] == "phrase"
    assert "kitchen" not in str(detail)  # what decided it, never the words


def test_trends_can_be_computed_on_demand(capsys):
    from django.core.management import call_command

    from memory.models import PersonTrend

    session = _closed_session_with_talk()

    call_command("compute_trends")

    assert PersonTrend.objects.filter(person_id=session.person_id).exists()
    assert "Trends computed for 1 person(s)" in capsys.readouterr().out


def test_a_job_for_a_session_that_is_not_there_does_nothing_and_does_not_fail():
    missing = str(uuid.uuid4())

    tasks.compute_session_summary(missing)
    tasks.update_rolling_summary(missing)

    assert not Session.objects.filter(id=missing).exists()


@pytest.mark.parametrize(
    ("person", "message"),
    [("not-a-uuid", "must be a person's id"), (str(uuid.uuid4()), "No person with id")],
)
def test_compute_trends_refuses_a_bad_person_clearly(person, message):
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match=message):
        call_command("compute_trends", person=person)


def test_create_api_key_refuses_a_blank_name():
    from django.core.management import CommandError, call_command

    from memory.models import ApiKey

    with pytest.raises(CommandError, match="needs a name"):
        call_command("create_api_key", "   ")
    assert not ApiKey.objects.exists()


def test_the_jobs_a_turn_queues_keep_no_result(monkeypatch):
    """No one waits for them: sending one subscribes to no result (with Redis, a round trip and a
    subscription per job), and the worker stores none. A job someone waits for still does."""
    from clara.celery import app
    from dashboard.alerting.tasks import deliver_alert

    awaited = []
    monkeypatch.setattr(app.backend, "on_task_call", lambda producer, task_id: awaited.append(1))
    per_turn = [
        tasks.update_rolling_summary,
        tasks.compute_session_summary,
        tasks.remember_message,
        tasks.extract_commitments,
        tasks.withhold_exchange,
        tasks.record_fact_use,
        deliver_alert,
    ]
    for task in per_turn:
        task.delay(str(uuid.uuid4()))
    assert awaited == []
    tasks.ping.delay()
    assert awaited == [1]
