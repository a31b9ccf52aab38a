"""What the background jobs compute for caregivers: summaries, trends and the alerts trends call for.

Each task keeps the name it was first registered under (`memory.tasks.<name>`), so queued
messages and the beat schedule survive the move; `memory/tasks.py` imports them all.
"""

import logging
import uuid

from celery import shared_task

from memory.core.errors import NotFound
from memory.core.jobs import PER_TURN_JOB, RETRY_ON_DATABASE_ERRORS
from memory.insights import alerts, summaries, trends, trends_batch

logger = logging.getLogger(__name__)


@shared_task(name="memory.tasks.compute_session_summary", **PER_TURN_JOB)
def compute_session_summary(session_id: str) -> None:
    """Write the caregivers' summary of a closed or expired session (replaces the basic one)."""
    try:
        summaries.session_summary_compute(session_id=uuid.UUID(session_id))
    except NotFound:
        logger.warning("session summary: no session %s (nothing to do)", session_id)


@shared_task(name="memory.tasks.update_rolling_summary", **PER_TURN_JOB)
def update_rolling_summary(session_id: str) -> None:
    """Refresh the person's rolling summary, then their summary spine; each is a no-op until due."""
    try:
        person_id = summaries.session_person(uuid.UUID(session_id))
    except NotFound:
        logger.warning("rolling summary: no session %s (nothing to do)", session_id)
        return
    if person_id is None:
        return  # anonymous: no person to summarise
    summaries.rolling_summary_update(session_id=uuid.UUID(session_id), person_id=person_id)
    summaries.summary_spine_update(person_id=person_id)


@shared_task(name="memory.tasks.compute_person_trends", **RETRY_ON_DATABASE_ERRORS)
def compute_person_trends(person_id: str) -> None:
    """Today's trends row for one person, then the alerts those trends call for."""
    trends.person_trends_compute(person_id=uuid.UUID(person_id))
    alerts.alerts_from_trends(person_id=uuid.UUID(person_id))


@shared_task(name="memory.tasks.compute_trends_batch", **RETRY_ON_DATABASE_ERRORS)
def compute_trends_batch(person_ids: list[str]) -> int:
    """Today's trends rows for a batch of people at once, then each one's trend alerts.

    Returns how many of them exist (unknown ids are skipped). Running it again rewrites no
    unchanged row and raises no alert twice.
    """
    computed = trends_batch.people_trends_compute(
        person_ids=[uuid.UUID(person_id) for person_id in person_ids]
    )
    for person_id in computed:
        alerts.alerts_from_trends(person_id=person_id)
    return len(computed)


@shared_task(name="memory.tasks.compute_all_trends", **RETRY_ON_DATABASE_ERRORS)
def compute_all_trends() -> int:
    """Fan out: one compute_trends_batch per BATCH_SIZE people active in the last 30 days.

    Batches, not one task per person: a batch costs five grouped queries, where a person on
    their own costs about eight (the 1,000-people benchmark in docs/benchmarks.md). Returns
    how many people were enqueued.
    """
    people = [str(person_id) for person_id in trends.people_due_for_trends()]
    size = trends_batch.BATCH_SIZE
    for start in range(0, len(people), size):
        compute_trends_batch.delay(people[start : start + size])
    return len(people)
