"""Exactly-once exchange writes: concurrency, retries, injected failures and the recovery log."""

import json
import os
import sqlite3
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import OperationalError, connection

from memory.conversations import recovery, services
from memory.core import crypto
from memory.models import (
    ChatMessage,
    DetectedEmotion,
    NarrativeUsage,
    RepetitionRecord,
    Session,
)
from tests.support.refused_writes import RefusedWrite

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db(transaction=True)


def _counts() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (Session, ChatMessage, DetectedEmotion, RepetitionRecord, NarrativeUsage)
    }


def _run_threads(count: int, target) -> list:
    """Start `count` threads at once on `target(index)`; return results, re-raising any error."""
    barrier = threading.Barrier(count)
    results: list = [None] * count
    errors: list[BaseException] = []

    def run(index: int) -> None:
        try:
            barrier.wait()
            results[index] = target(index)
        except BaseException as exc:  # noqa: BLE001 - surfaced to the test below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    if errors:
        raise errors[0]
    return results


@pytest.mark.concurrency
def test_concurrent_writers_keep_sequence_numbers_unique_and_gapless():
    session_id = uuid.uuid4()
    per_thread = 8

    def write(index: int) -> list[int]:
        sequences = []
        for turn in range(per_thread):
            stored = services.exchange_record(
                session_id=session_id,
                user_message=f"writer {index} turn {turn}",
                assistant_message=f"reply to writer {index} turn {turn}",
            )
            sequences.append(stored.user_sequence_number)
        return sequences

    _run_threads(6, write)

    rows = list(
        ChatMessage.objects.filter(session_id=session_id)
        .order_by("sequence_number")
        .values_list("sequence_number", "role", "content")
    )
    assert [row[0] for row in rows] == list(range(1, 6 * per_thread * 2 + 1))
    # Each exchange sits whole at N (the person) and N+1 (Clara's reply to that same line).
    for (_, user_role, user_text), (_, clara_role, clara_text) in zip(
        rows[::2], rows[1::2], strict=True
    ):
        assert (user_role, clara_role) == ("user", "assistant")
        assert clara_text == f"reply to {user_text}"
    assert Session.objects.get(id=session_id).message_count == len(rows)


@pytest.mark.concurrency
def test_concurrent_retries_of_one_key_store_the_exchange_once():
    session_id = uuid.uuid4()

    def write(_index: int) -> services.StoredExchange:
        return services.exchange_record(
            session_id=session_id,
            user_message="Is my daughter coming today?",
            assistant_message="She loves you very much. Shall we look at the garden?",
            idempotency_key="turn-1",
        )

    results = _run_threads(6, write)

    assert len({(r.user_message_id, r.assistant_message_id) for r in results}) == 1
    assert sum(1 for r in results if r.created) == 1
    assert ChatMessage.objects.filter(session_id=session_id).count() == 2
    assert DetectedEmotion.objects.filter(session_id=session_id).count() == 1


@pytest.mark.concurrency
def test_concurrent_first_exchanges_create_the_session_once():
    session_id = uuid.uuid4()

    _run_threads(
        5,
        lambda index: services.exchange_record(
            session_id=session_id, user_message=f"hello {index}", assistant_message="Hello, dear."
        ),
    )

    assert Session.objects.filter(id=session_id).count() == 1
    assert Session.objects.get(id=session_id).message_count == 10


@pytest.fixture
def disk_failure():
    # Off until a test starts it; the 4th statement of an exchange (after the messages) fails.
    failure = RefusedWrite("INSERT INTO repetition_tracking", active=False)
    connection.execute_wrappers.append(failure)
    yield failure
    connection.execute_wrappers.remove(failure)


def test_failed_write_stores_nothing_and_answers_202(api, disk_failure):
    session_id = uuid.uuid4()
    services.exchange_record(session_id=session_id, user_message="Hi", assistant_message="Hello!")
    before = _counts()
    disk_failure.start()

    response = api.post(
        f"/api/v1/sessions/{session_id}/exchanges",
        {"user_message": "Where am I?", "assistant_message": "You're at home, safe and warm."},
    )

    assert response.status_code == 202, response.content
    assert response.json()["idempotency_key"].startswith("recovery-")
    # The messages were inserted before the failure; the rollback took them back out.
    assert _counts() == before
    assert recovery.pending_count() == 1


def test_replay_stores_a_logged_exchange_once(api, disk_failure):
    session_id = uuid.uuid4()
    disk_failure.start()
    body = {
        "user_message": "When is Tom coming?",
        "assistant_message": "Tom loves visiting you.",
        "idempotency_key": "bot-key-42",
        "emotion": {
            "emotion": "anxious",
            "confidence": 0.8,
            "distress_score": 0.6,
            "trajectory": "stable",
        },
        "narrative": {"id": "garden-walk-01", "mode": "seed", "category": "calming_story"},
        "intent": "reassure",
    }
    assert api.post(f"/api/v1/sessions/{session_id}/exchanges", body).status_code == 202
    disk_failure.stop()

    call_command("replay_recovery_log")
    call_command("replay_recovery_log")

    assert recovery.pending_count() == 0
    messages = list(ChatMessage.objects.filter(session_id=session_id).order_by("sequence_number"))
    assert [(m.sequence_number, m.content) for m in messages] == [
        (1, "When is Tom coming?"),
        (2, "Tom loves visiting you."),
    ]
    emotion = DetectedEmotion.objects.get(message=messages[0])
    assert (emotion.emotion, emotion.distress_score) == ("anxious", 0.6)
    assert NarrativeUsage.objects.get(session_id=session_id).narrative_id == "garden-walk-01"
    # The client's retry after the replay gets the stored exchange, not a second copy.
    retry = api.post(f"/api/v1/sessions/{session_id}/exchanges", body)
    assert retry.status_code == 200
    assert retry.json()["user_message"]["message_id"] == str(messages[0].id)


def test_replay_skips_an_exchange_a_client_retry_already_stored(api, disk_failure):
    session_id = uuid.uuid4()
    body = {
        "user_message": "What day is it?",
        "assistant_message": "It's a lovely Sunday.",
        "idempotency_key": "k-1",
    }
    disk_failure.start()
    assert api.post(f"/api/v1/sessions/{session_id}/exchanges", body).status_code == 202
    disk_failure.stop()
    assert api.post(f"/api/v1/sessions/{session_id}/exchanges", body).status_code == 201

    report = services.recovery_replay()

    assert (report.stored, report.already_stored, report.remaining) == (0, 1, 0)
    assert ChatMessage.objects.filter(session_id=session_id).count() == 2


def test_replay_keeps_entries_the_database_still_refuses(disk_failure):
    session_id = uuid.uuid4()
    disk_failure.start()
    services.exchange_submit(session_id=session_id, user_message="a", assistant_message="b")

    report = services.recovery_replay()

    assert (report.stored, report.remaining) == (0, 1)
    assert recovery.pending_count() == 1


def test_replay_moves_unreadable_entries_aside_and_stores_the_rest(disk_failure):
    session_id = uuid.uuid4()
    disk_failure.start()
    services.exchange_submit(session_id=session_id, user_message="a", assistant_message="b")
    disk_failure.stop()
    log = Path(settings.CLARA_RECOVERY_LOG)
    with open(log, "a") as out:
        out.write('{"version": 1, "session_id": "torn wri')  # a write cut short by a crash

    report = services.recovery_replay()

    assert (report.stored, report.rejected, report.remaining) == (1, 1, 0)
    assert not log.exists()
    assert "torn wri" in log.with_name("recovery.rejected.jsonl").read_text()


def test_recovery_log_entries_are_complete_json_lines(disk_failure):
    disk_failure.start()
    services.exchange_submit(
        session_id=uuid.uuid4(), user_message="Where's Ann?", assistant_message="Ann is well."
    )

    (line,) = Path(settings.CLARA_RECOVERY_LOG).read_text().splitlines()
    entry = json.loads(line)
    # Encrypted on disk like the message columns; the keys read it back.
    assert "Ann" not in line
    assert crypto.decrypt(entry["user_message"]) == "Where's Ann?"
    assert entry["version"] == recovery.FORMAT_VERSION
    assert entry["idempotency_key"]


@pytest.mark.skipif(
    settings.DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3",
    reason="holds SQLite's file lock from a second connection",
)
def test_locked_sqlite_database_sends_the_exchange_to_the_log(api):
    session_id = uuid.uuid4()
    services.exchange_record(session_id=session_id, user_message="Hi", assistant_message="Hello!")
    connection.close()
    options = connection.settings_dict["OPTIONS"]
    saved_timeout, options["timeout"] = options["timeout"], 0.1
    blocker = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        response = api.post(
            f"/api/v1/sessions/{session_id}/exchanges",
            {"user_message": "Where am I?", "assistant_message": "Home, with me."},
        )
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
        connection.close()
        options["timeout"] = saved_timeout

    assert response.status_code == 202
    assert ChatMessage.objects.filter(session_id=session_id).count() == 2
    assert services.recovery_replay().stored == 1
    assert ChatMessage.objects.filter(session_id=session_id).count() == 4


def _database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{db['NAME']}"
    host = db["HOST"] or "127.0.0.1"
    return f"postgres://{db['USER']}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


def test_acknowledged_exchange_is_there_for_a_new_process(api):
    session_id = uuid.uuid4()
    response = api.post(
        f"/api/v1/sessions/{session_id}/exchanges",
        {"user_message": "Is it morning?", "assistant_message": "Yes, a bright one."},
    )
    assert response.status_code == 201
    connection.close()

    # A fresh interpreter is what a restarted server is: it knows only what reached the disk.
    script = (
        "from memory.models import ChatMessage;"
        f"print(ChatMessage.objects.filter(session_id='{session_id}').count())"
    )
    env = {**os.environ, "DATABASE_URL": _database_url(), "DEBUG": "1"}
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.strip().splitlines()[-1] == "2"


def test_a_read_the_database_refuses_gets_503_with_retry_after(api, monkeypatch):
    session_id = uuid.uuid4()
    services.exchange_record(session_id=session_id, user_message="Hi", assistant_message="Hello!")

    def refuse(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(ChatMessage.objects, "filter", refuse)
    response = api.get(f"/api/v1/sessions/{session_id}/messages")

    assert response.status_code == 503
    assert response["Retry-After"] == "1"
    assert response.json()["code"] == "unavailable"
