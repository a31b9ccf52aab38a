"""The service's Prometheus metrics, defined once for every part to record into.

`GET /metrics` (clara/metrics.py) exposes them to CLARA_INTERNAL_NETWORKS. Every label value
comes from a closed set written in the code (a route template, a task's registered name, a
reason code, a channel, an event code, a status number): never a person's or a session's id,
a name or anything said, so nothing here can identify anyone (tests/test_metrics.py runs the
bot flow and scans the whole output for every id and word it used).

Under gunicorn with several processes, PROMETHEUS_MULTIPROC_DIR (clara/settings.py) makes each
process write its values to files there and /metrics add them up; without it (one process,
tests) the values live in this process.
"""

import os

from prometheus_client import Counter, Gauge, Histogram

# prometheus_client reads the variable itself, and writes a file there for each value as soon as
# it exists (the gauge below, at import): the folder must be there before this module loads,
# which in gunicorn's master is before Django's settings are.
if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.makedirs(os.environ["PROMETHEUS_MULTIPROC_DIR"], exist_ok=True)

# Requests: the route is the URL pattern (`api/v1/sessions/<session_id>/context`), never the
# path that was asked for, which carries ids.
HTTP_BUCKETS = (0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
HTTP_REQUEST_SECONDS = Histogram(
    "clara_http_request_duration_seconds",
    "Time to answer a request, by route template and method.",
    ["route", "method"],
    buckets=HTTP_BUCKETS,
)
HTTP_REQUESTS = Counter(
    "clara_http_requests",
    "Requests answered, by route template, method and status code.",
    ["route", "method", "status"],
)
DB_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
HTTP_DB_SECONDS = Histogram(
    "clara_http_request_db_seconds",
    "Time a request spent in database statements, by route template.",
    ["route"],
    buckets=DB_BUCKETS,
)

# Jobs: the task's registered name (`memory.tasks.compute_session_summary`).
TASK_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
TASK_SECONDS = Histogram(
    "clara_task_duration_seconds",
    "Time a background job ran, by task name.",
    ["task"],
    buckets=TASK_BUCKETS,
)
TASK_FAILURES = Counter(
    "clara_task_failures",
    "Background jobs that failed for good (their retries spent, or none allowed), by task name.",
    ["task"],
)

# Alerts reaching people: from the alert being raised to its message leaving.
ALERT_DELIVERY_BUCKETS = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
ALERT_DELIVERY_SECONDS = Histogram(
    "clara_alert_delivery_seconds",
    "Time from an alert being raised to a message about it being sent, by channel.",
    ["channel"],
    buckets=ALERT_DELIVERY_BUCKETS,
)
WEBHOOK_FAILURES = Counter(
    "clara_webhook_failures",
    "Webhook delivery attempts that failed, by event code and outcome (retrying or failed).",
    ["event", "outcome"],
)
ESCALATIONS = Counter(
    "clara_escalations",
    "Sessions escalated to a person (escalation alerts raised), by reason code.",
    ["reason"],
)

# Long-term search's copies held by this process (memory/facts/search.py), added up over the
# live processes.
SEARCH_MEMORY_BYTES = Gauge(
    "clara_search_memory_bytes",
    "Estimated bytes of long-term search copies held in process memory.",
    multiprocess_mode="livesum",
)


def bounded(value: str | None, allowed: tuple[str, ...] | frozenset[str]) -> str:
    """`value` if it is one of `allowed`, else "other": a label never takes a free value."""
    return value if value in allowed else "other"
