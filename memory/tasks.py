"""Background tasks. Each is a thin wrapper around one service, takes ids (never model
instances), and is idempotent: running it twice leaves the database as running it once.

Services import this module to enqueue work after commit (`task.delay_on_commit(id)`), so tasks
import services inside the function.
"""

import dataclasses

from celery import shared_task
from django.db import OperationalError

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
