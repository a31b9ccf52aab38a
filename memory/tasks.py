"""Background tasks. Each is a thin wrapper around one service, takes ids (never model
instances), and is idempotent: running it twice leaves the database as running it once.

Services import this module to enqueue work after commit (`task.delay_on_commit(id)`), so tasks
import services inside the function.
"""

import dataclasses
import logging
import uuid

from celery import shared_task
from django.db import OperationalError

from memory.errors import NotFound

logger = logging.getLogger(__name__)

# A database that is locked, restarting or unreachable is retried with growing pauses
# (1 s, 2 s, 4 s, ... with jitter), five times at most.
RETRY_ON_DATABASE_ERRORS = {
    "acks_late": True,
    "autoretry_for": (OperationalError,),
    "retry_backoff": True,
    "max_retries": 5,
}


@shared_task
def ping() -> str:
    """Health check: a worker is consuming from the broker."""
    return "pong"


@shared_task(**RETRY_ON_DATABASE_ERRORS)
def expire_idle_sessions() -> int:
    """Expire sessions idle for CLARA_SESSION_IDLE_MINUTES; returns how many were expired."""
    from memory import services

    return services.sessions_expire_idle()


@shared_task(**RETRY_ON_DATABASE_ERRORS)
def replay_recovery_log() -> dict[str, int]:
    """Store the exchanges waiting in the recovery log; returns the replay report."""
    from memory import services

    return dataclasses.asdict(services.recovery_replay())


@shared_task(**RETRY_ON_DATABASE_ERRORS)
def compute_session_summary(session_id: str) -> None:
    """Write the caregivers' summary of a closed or expired session (replaces the basic one)."""
    from memory import summaries

    try:
        summaries.session_summary_compute(session_id=uuid.UUID(session_id))
    except NotFound:
        logger.warning("session summary: no session %s (nothing to do)", session_id)


@shared_task(**RETRY_ON_DATABASE_ERRORS)
def update_rolling_summary(session_id: str) -> None:
    """Refresh the person's rolling summary, then their summary spine; each is a no-op until due."""
    from memory import summaries
    from memory.models import Session

    try:
        summaries.rolling_summary_update(session_id=uuid.UUID(session_id))
    except NotFound:
        logger.warning("rolling summary: no session %s (nothing to do)", session_id)
        return
    person_id = Session.objects.filter(id=session_id).values_list("person_id", flat=True).first()
    if person_id is not None:
        summaries.summary_spine_update(person_id=person_id)


@shared_task(**RETRY_ON_DATABASE_ERRORS)
def compute_person_trends(person_id: str) -> None:
    """Today's trends row for one person, then the alerts those trends call for."""
    from memory import alerts, trends

    trends.person_trends_compute(person_id=uuid.UUID(person_id))
    alerts.alerts_from_trends(person_id=uuid.UUID(person_id))


@shared_task(**RETRY_ON_DATABASE_ERRORS)
def compute_trends_batch(person_ids: list[str]) -> int:
    """Today's trends rows for a batch of people at once, then each one's trend alerts.

    Returns how many of them exist (unknown ids are skipped). Running it again rewrites no
    unchanged row and raises no alert twice.
    """
    from memory import alerts, trends_batch

    computed = trends_batch.people_trends_compute(
        person_ids=[uuid.UUID(person_id) for person_id in person_ids]
    )
    for person_id in computed:
        alerts.alerts_from_trends(person_id=person_id)
    return len(computed)


@shared_task(**RETRY_ON_DATABASE_ERRORS)
def compute_all_trends() -> int:
    """Fan out: one compute_trends_batch per BATCH_SIZE people active in the last 30 days.

    Batches, not one task per person: a batch costs five grouped queries, where a person on
    their own costs about eight (the 1,000-people benchmark in docs/benchmarks.md). Returns
    how many people were enqueued.
    """
    from memory import trends, trends_batch

    people = [str(person_id) for person_id in trends.people_due_for_trends()]
    size = trends_batch.BATCH_SIZE
    for start in range(0, len(people), size):
        compute_trends_batch.delay(people[start : start + size])
    return len(people)


@shared_task
def checkpoint_sqlite_wal() -> dict[str, int] | None:
    """SQLite only: copy what the write-ahead log holds back into the database file.

    PASSIVE never waits for readers or writers, so it cannot hold up a request; frames a
    reader still needs stay for the next run. Without it, a WAL that always has a reader
    somewhere never gets reset and grows with every write. Returns SQLite's counts (busy,
    frames in the log, frames checkpointed); None on PostgreSQL, where there is nothing to do.
    Not retried: the beat runs it again a minute later anyway.
    """
    from django.db import connection

    if connection.vendor != "sqlite":
        return None
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")
        busy, log, checkpointed = cursor.fetchone()
    return {"busy": busy, "log": log, "checkpointed": checkpointed}


# --- Check-ins and commitments (memory/checkins.py, memory/commitments.py) --------------------


@shared_task(**RETRY_ON_DATABASE_ERRORS)
def schedule_check_ins() -> int:
    """Fan out: one decide_check_ins per person with a passed, undecided check-in slot today."""
    from memory import checkins

    people = checkins.people_due_for_check_ins()
    for person_id in people:
        decide_check_ins.delay(str(person_id))
    return len(people)


@shared_task(**RETRY_ON_DATABASE_ERRORS)
def decide_check_ins(person_id: str) -> list[str]:
    """Decide the person's due check-in slots once each (send or suppress); returns the slots."""
    from memory import checkins

    decided = checkins.check_ins_decide(person_id=uuid.UUID(person_id))
    return [f"{check_in.slot} {check_in.outcome} {check_in.reason}" for check_in in decided]


@shared_task(**RETRY_ON_DATABASE_ERRORS)
def extract_commitments(message_id: str) -> int:
    """Store the promises and plans of the exchange this message (the person's) opens."""
    from memory import commitments

    try:
        return len(commitments.commitments_extract(message_id=uuid.UUID(message_id)))
    except NotFound:
        logger.warning("commitments: no message %s (nothing to do)", message_id)
        return 0


# --- Long-term memory (memory/remember.py, memory/curation.py) -------------------------------


@shared_task(**RETRY_ON_DATABASE_ERRORS)
def remember_message(message_id: str) -> int:
    """Read one of the person's messages for facts; stores them unconfirmed. Idempotent."""
    from memory import remember

    return remember.remember_from_message(uuid.UUID(message_id)).stored


@shared_task(**RETRY_ON_DATABASE_ERRORS)
def expire_memories() -> int:
    """Delete memories whose lifetime is over (feelings, events, small talk)."""
    from memory import curation

    return curation.memories_expire()


@shared_task(**RETRY_ON_DATABASE_ERRORS)
def curate_memories() -> dict:
    """Archive stale trivia and fold near-duplicate memories (never pinned or confirmed ones)."""
    from memory import curation

    return dataclasses.asdict(curation.memories_curate())
