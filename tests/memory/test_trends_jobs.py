"""The nightly trends job in batches, and the SQLite WAL checkpoint, run as the worker runs them.

Task functions are called directly against the database (the integration tests run a real
worker); only the broker hand-off is recorded instead of sent.
"""

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from clara.celery import app
from memory import tasks
from memory.conversations import services
from memory.conversations.emotion import EmotionReading
from memory.insights import trends_batch
from memory.models import Alert, ChatMessage, Person, PersonTrend


def _person_who_talked(distress: float = 0.3) -> uuid.UUID:
    person_id = uuid.uuid4()
    at = timezone.now() - timedelta(hours=2)
    session, _ = services.session_resolve(user_id=person_id, display_name="Nana", at=at)
    for turn in range(3):
        services.exchange_record(
            session_id=session.id,
            user_message="Where am I?",
            assistant_message="You're at home, safe and warm.",
            emotion=EmotionReading(
                emotion="anxious", confidence=0.8, distress_score=distress, trajectory="stable"
            ),
            at=at + timedelta(minutes=turn),
        )
    services.session_close(session_id=session.id, at=at + timedelta(minutes=5))
    return person_id


@pytest.mark.django_db
def test_a_batch_task_writes_each_persons_row_and_running_it_twice_changes_nothing():
    people = [_person_who_talked(0.2), _person_who_talked(0.6)]
    ids = [str(person_id) for person_id in people] + [str(uuid.uuid4())]

    assert tasks.compute_trends_batch(ids) == 2
    first = {t.person_id: (t.data, t.computed_at) for t in PersonTrend.objects.all()}
    alerts = Alert.objects.count()
    assert tasks.compute_trends_batch(ids) == 2

    assert {t.person_id: (t.data, t.computed_at) for t in PersonTrend.objects.all()} == first
    assert set(first) == set(people)
    assert first[people[1]][0]["baseline_distress"] == 0.6
    assert Alert.objects.count() == alerts


@pytest.mark.django_db
def test_an_engine_without_the_grouped_sql_gets_the_same_rows_person_by_person(monkeypatch):
    people = [_person_who_talked(0.2), _person_who_talked(0.6)]
    trends_batch.people_trends_compute(person_ids=people)
    batched = {t.person_id: t.data for t in PersonTrend.objects.all()}
    PersonTrend.objects.all().delete()
    # As if the database were neither SQLite nor PostgreSQL.
    monkeypatch.setattr(trends_batch, "_HOUR", {})

    assert sorted(trends_batch.people_trends_compute(person_ids=[*people, uuid.uuid4()])) == sorted(
        people
    )
    assert {t.person_id: t.data for t in PersonTrend.objects.all()} == batched


@pytest.mark.django_db
def test_the_daily_job_fans_out_every_active_person_in_batches(monkeypatch):
    people = {str(_person_who_talked()) for _ in range(5)}
    Person.objects.create(  # not active for 40 days: not due
        created_at=timezone.now(), last_active_at=timezone.now() - timedelta(days=40)
    )
    monkeypatch.setattr(trends_batch, "BATCH_SIZE", 2)
    sent: list[list[str]] = []
    monkeypatch.setattr(
        tasks.compute_trends_batch,
        "apply_async",
        lambda args=(), kwargs=None, **options: sent.append(args[0]),
    )

    assert tasks.compute_all_trends() == 5

    assert [len(batch) for batch in sent] == [2, 2, 1]
    assert {person for batch in sent for person in batch} == people


def test_the_scheduler_runs_the_checkpoint_every_minute():
    entry = app.conf.beat_schedule["checkpoint-sqlite-wal"]

    assert entry["task"] == tasks.checkpoint_sqlite_wal.name
    assert entry["schedule"].minute == set(range(60))


@pytest.mark.django_db(transaction=True)  # committed writes, and no transaction open around it
def test_the_wal_checkpoint_runs_and_is_harmless_twice():
    person_id = _person_who_talked()

    first = tasks.checkpoint_sqlite_wal()
    second = tasks.checkpoint_sqlite_wal()

    if connection.vendor == "sqlite":
        # Nothing else is reading: every frame in the WAL reaches the database file, each time.
        assert first["busy"] == 0 and first["log"] > 0
        assert first["checkpointed"] == first["log"]
        assert second == {"busy": 0, "log": second["log"], "checkpointed": second["log"]}
    else:
        assert first is None and second is None
    # The exchanges written before are all still there.
    assert ChatMessage.objects.filter(person_id=person_id).count() == 6
