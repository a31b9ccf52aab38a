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

# The jobs a turn queues (summaries, reading facts and promises, fact use, alert delivery): no
# one waits for their return value, so none is kept. With Redis as the result backend a kept
# result cost the web process a subscription to the job's result channel at every send, and the
# worker a write and a publish after every run (docs/benchmarks.md, "Capacity of one machine").
PER_TURN_JOB = {**RETRY_ON_DATABASE_ERRORS, "ignore_result": True}
