"""How every background job is retried (shared by the tasks of each part)."""

from django.db import OperationalError

# A database that is locked, restarting or unreachable is retried with growing pauses
# (1 s, 2 s, 4 s, ... with jitter), five times at most.
RETRY_ON_DATABASE_ERRORS = {
    "acks_late": True,
    "autoretry_for": (OperationalError,),
    "retry_backoff": True,
    "max_retries": 5,
}
