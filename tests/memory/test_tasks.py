"""Background tasks, called directly against the database (no broker, no eager mode)."""

import uuid
from datetime import timedelta

import pytest
from django.db import OperationalError, transaction
from django.utils import timezone

from clara.celery import app
from memory import tasks
from memory.conversations import recovery, services
from memory.models import ChatMessage, Session

pytestmark = pytest.mark.django_db


def _session_states() -> list[tuple]:
    return list(
        Session.objects.order_by("id").values_list(
            "id", "status", "ended_at", "dominant_emotion", "last_activity_at"
        )
    )


def test_ping_answers_pong():
    assert tasks.ping() == "pong"


def test_an_idle_session_expires_once():
    now = timezone.now()
    idle, _ = services.session_resolve(at=now - timedelta(hours=2))
    busy, _ = services.session_resolve(at=now)

    assert tasks.expire_idle_sessions() == 1
    after_once = _session_states()
    assert tasks.expire_idle_sessions() == 0

    assert _session_states() == after_once
    assert Session.objects.get(id=idle.id).status == "expired"
    assert Session.objects.get(id=busy.id).status == "active"


def test_replaying_the_recovery_log_twice_stores_once():
    session_id = uuid.uuid4()
    recovery.append(
        {
            "session_id": session_id,
            "user_message": "Is Tom coming today?",
            "assistant_message": "Tom loves visiting you.",
            "idempotency_key": "bot-key-7",
            "at": timezone.now(),
        }
    )

    first = tasks.replay_recovery_log()
    second = tasks.replay_recovery_log()

    assert first == {"stored": 1, "already_stored": 0, "remaining": 0, "rejected": 0}
    assert second == {"stored": 0, "already_stored": 0, "remaining": 0, "rejected": 0}
    assert ChatMessage.objects.filter(session_id=session_id).count() == 2


def test_an_empty_recovery_log_is_a_no_op():
    assert tasks.replay_recovery_log() == {
        "stored": 0,
        "already_stored": 0,
        "remaining": 0,
        "rejected": 0,
    }


def test_a_task_enqueued_in_a_transaction_is_sent_only_on_commit(
    django_capture_on_commit_callbacks, monkeypatch
):
    sent: list[tuple] = []
    monkeypatch.setattr(
        tasks.expire_idle_sessions, "apply_async", lambda *a, **kw: sent.append((a, kw))
    )

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        with transaction.atomic():
            tasks.expire_idle_sessions.delay_on_commit()
        assert sent == []

    assert len(callbacks) == 1
    callbacks[0]()
    assert len(sent) == 1


def test_a_task_enqueued_in_a_rolled_back_transaction_is_never_sent(
    django_capture_on_commit_callbacks, monkeypatch
):
    sent: list[tuple] = []
    monkeypatch.setattr(
        tasks.replay_recovery_log, "apply_async", lambda *a, **kw: sent.append((a, kw))
    )

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(RuntimeError), transaction.atomic():
            tasks.replay_recovery_log.delay_on_commit()
            raise RuntimeError("rolled back")

    assert callbacks == []
    assert sent == []


def test_every_scheduled_entry_names_a_registered_task():
    app.loader.import_default_modules()
    for name, entry in app.conf.beat_schedule.items():
        assert entry["task"] in app.tasks, name


def test_tasks_retry_when_the_database_is_unavailable():
    for task in (tasks.expire_idle_sessions, tasks.replay_recovery_log):
        assert task.acks_late
        assert OperationalError in task.autoretry_for
        assert task.max_retries == 5
