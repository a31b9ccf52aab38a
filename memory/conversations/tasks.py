"""The conversation record's jobs: expiring idle sessions, replaying the recovery log.

Each task keeps the name it was first registered under (`memory.tasks.<name>`), so queued
messages and the beat schedule survive the move; `memory/tasks.py` imports them all.
"""

import dataclasses

from celery import shared_task

from memory.conversations import services
from memory.core.jobs import RETRY_ON_DATABASE_ERRORS


@shared_task(name="memory.tasks.expire_idle_sessions", **RETRY_ON_DATABASE_ERRORS)
def expire_idle_sessions() -> int:
    """Expire sessions idle for CLARA_SESSION_IDLE_MINUTES; returns how many were expired."""
    return services.sessions_expire_idle()


@shared_task(name="memory.tasks.replay_recovery_log", **RETRY_ON_DATABASE_ERRORS)
def replay_recovery_log() -> dict[str, int]:
    """Store the exchanges waiting in the recovery log; returns the replay report."""
    return dataclasses.asdict(services.recovery_replay())
