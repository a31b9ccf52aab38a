"""Background tasks, by the name Celery knows them (`memory.tasks.<name>`).

Each task is a thin wrapper around one service, takes ids (never model instances), and is
idempotent: running it twice leaves the database as running it once. The tasks live beside the
services they call (`memory/<part>/tasks.py`); this module gathers them for Celery's autodiscovery
and keeps the two that belong to no part.
"""

from celery import shared_task

from memory.companion.tasks import decide_check_ins, schedule_check_ins
from memory.conversations.tasks import expire_idle_sessions, replay_recovery_log
from memory.core.jobs import RETRY_ON_DATABASE_ERRORS
from memory.facts.tasks import (
    curate_memories,
    expire_memories,
    extract_commitments,
    record_fact_use,
    remember_message,
    withhold_exchange,
)
from memory.insights.tasks import (
    compute_all_trends,
    compute_person_trends,
    compute_session_summary,
    compute_trends_batch,
    update_rolling_summary,
)
from memory.webhooks.tasks import deliver_webhook, retry_due_webhooks

__all__ = [
    "withhold_exchange",
    "record_fact_use",
    "apply_retention",
    "apply_retention_all",
    "checkpoint_sqlite_wal",
    "compute_all_trends",
    "compute_person_trends",
    "compute_session_summary",
    "compute_trends_batch",
    "curate_memories",
    "decide_check_ins",
    "deliver_webhook",
    "expire_idle_sessions",
    "expire_memories",
    "extract_commitments",
    "ping",
    "remember_message",
    "replay_recovery_log",
    "retry_due_webhooks",
    "schedule_check_ins",
    "update_rolling_summary",
]


@shared_task
def ping() -> str:
    """Health check: a worker is consuming from the broker."""
    return "pong"


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


@shared_task(name="memory.tasks.apply_retention", **RETRY_ON_DATABASE_ERRORS)
def apply_retention(organisation_id: str) -> dict[str, int]:
    """One organisation's retention (memory/retention.py): old conversations' text, statuses."""
    import uuid
    from dataclasses import asdict

    from memory import retention

    report = retention.retention_apply(organisation_id=uuid.UUID(organisation_id))
    return asdict(report)


@shared_task(name="memory.tasks.apply_retention_all")
def apply_retention_all() -> int:
    """Fan out: one apply_retention task per organisation. Returns how many were queued."""
    from memory.conversations.models import Organisation

    ids = list(Organisation.objects.values_list("id", flat=True))
    for organisation_id in ids:
        apply_retention.delay(str(organisation_id))
    return len(ids)
