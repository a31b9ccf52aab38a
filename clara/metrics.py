"""`GET /metrics`: the service's Prometheus metrics, for CLARA_INTERNAL_NETWORKS only.

What is measured is defined in memory/core/metrics.py. This module adds what only the web
process knows (each request's time, status and database time, by route template), what is read
when Prometheus asks (the Celery queue's depth, the recovery log's backlog), and the jobs' time
and failures from Celery's signals.

Anyone outside the internal networks is not answered here: the request goes on to URL routing,
which has no `/metrics`, so it gets exactly the 404 of any unknown path.

Several processes (gunicorn's workers, Celery's pool) each write their values to files under
PROMETHEUS_MULTIPROC_DIR, and a scrape adds them up (prometheus_client's multiprocess mode):
a scrape then sees the whole web instance whichever process answers. The directory is emptied
when gunicorn's master starts (clara/gunicorn.py) and when a Celery worker starts; a web
instance and a worker each need their own (the Procfile gives them one each).
"""

import logging
import os
import threading
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from time import perf_counter

from django.conf import settings
from django.db import connections
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily

from clara import metrics_files
from clara.client_ip import is_internal
from memory.core import metrics

logger = logging.getLogger(__name__)

PATH = "/metrics"
# A request no URL pattern matched (a 404 before any view): its path is never a label.
UNMATCHED = "unmatched"


def multiprocess_dir() -> str:
    return settings.PROMETHEUS_MULTIPROC_DIR


# --- What is read at scrape time ---------------------------------------------------------------


def _redis_queue_depth(queue: str) -> int:
    from clara.health import _redis

    client = _redis()
    # kombu's Redis transport keeps a queue's prioritised messages in sibling lists.
    names = [queue, *(f"{queue}\x06\x16{step}" for step in (3, 6, 9))]
    pipe = client.pipeline(transaction=False)
    for name in names:
        pipe.llen(name)
    return sum(pipe.execute())


def _filesystem_queue_depth(queue: str) -> int:
    # kombu's filesystem transport: one file per waiting message, "<time>_<uuid>.<queue>.msg".
    folder = Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"])
    suffix = f".{queue}.msg"
    with os.scandir(folder) as entries:
        return sum(1 for entry in entries if entry.name.endswith(suffix))


def queue_depth(queue: str | None = None) -> int | None:
    """Messages waiting in a Celery queue, the default one unless named (None when the broker
    does not answer)."""
    queue = queue or settings.CELERY_TASK_DEFAULT_QUEUE
    url = settings.CELERY_BROKER_URL
    try:
        if url.startswith(("redis://", "rediss://", "unix://")):
            return _redis_queue_depth(queue)
        if url.startswith("filesystem://"):
            return _filesystem_queue_depth(queue)
    except Exception as exc:  # noqa: BLE001 - an unreachable broker is a value, not an error
        logger.warning("metrics: queue depth unavailable: %s", type(exc).__name__)
    return None


class ScrapeCollector:
    """Values read when Prometheus asks: the queue's depth and the recovery log's backlog."""

    def describe(self):
        return []

    def collect(self):
        from clara import health  # it reads the recovery log's models: not at import time

        depths = {queue.name: queue_depth(queue.name) for queue in settings.CELERY_TASK_QUEUES}
        answered = None not in depths.values()
        up = GaugeMetricFamily(
            "clara_celery_broker_up", "Whether the Celery broker answered the queue-depth read."
        )
        up.add_metric([], 1 if answered else 0)
        yield up
        if answered:
            family = GaugeMetricFamily(
                "clara_celery_queue_depth",
                "Jobs waiting in each Celery queue (the default one and the alerts' one; Redis: "
                "LLEN; embedded broker: files waiting).",
                labels=["queue"],
            )
            for queue, depth in depths.items():
                family.add_metric([queue], depth)
            yield family
        log = health.check_recovery_log()
        if log["ok"]:
            backlog = GaugeMetricFamily(
                "clara_recovery_log_pending",
                "Exchanges waiting in this machine's recovery log to be stored.",
            )
            backlog.add_metric([], log["pending"])
            yield backlog


_scrape_registry = CollectorRegistry(auto_describe=False)
_scrape_registry.register(ScrapeCollector())


def _recorded() -> CollectorRegistry:
    """Where recorded values are read: every process's files under gunicorn's or the worker
    pool's folder, else this process's own registry."""
    if not multiprocess_dir():
        return REGISTRY
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=multiprocess_dir())
    return registry


def exposition() -> bytes:
    """The whole text exposition: every process's recorded values, then the scrape-time ones."""
    return generate_latest(_recorded()) + generate_latest(_scrape_registry)


def metrics_view(request: HttpRequest) -> HttpResponse:
    if request.method not in ("GET", "HEAD"):
        response = HttpResponse(status=405)
        response["Allow"] = "GET, HEAD"
        return response
    response = HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    response["X-Content-Type-Options"] = "nosniff"
    return response


# --- Requests ----------------------------------------------------------------------------------


class _DatabaseTimer:
    """An execute wrapper adding up the time of every statement a request runs."""

    __slots__ = ("seconds",)

    def __init__(self) -> None:
        self.seconds = 0.0

    def __call__(self, execute, sql, params, many, context):
        started = perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.seconds += perf_counter() - started


def route_of(request: HttpRequest) -> str:
    """The URL pattern that answered (`api/v1/sessions/<session_id>/context`), never the path."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        # Answered before routing (a health probe, a 413, a 429): routed here, only to name it.
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return UNMATCHED
    return match.route or UNMATCHED


class MetricsMiddleware:
    """Answers /metrics for the internal networks; times every other request.

    First in MIDDLEWARE, so the time includes every other middleware. The work per request is a
    few dictionary lookups and three observations (measured in bench/metrics_overhead.py).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.aliases = list(settings.DATABASES)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path == PATH and is_internal(request):
            return metrics_view(request)
        timer = _DatabaseTimer()
        started = perf_counter()
        with ExitStack() as stack:
            for alias in self.aliases:
                stack.enter_context(connections[alias].execute_wrapper(timer))
            response = self.get_response(request)
        elapsed = perf_counter() - started
        route = route_of(request)
        method = metrics.bounded(request.method, _METHODS)
        metrics.HTTP_REQUEST_SECONDS.labels(route, method).observe(elapsed)
        metrics.HTTP_REQUESTS.labels(route, method, str(response.status_code)).inc()
        metrics.HTTP_DB_SECONDS.labels(route).observe(timer.seconds)
        return response


_METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"))


# --- Jobs --------------------------------------------------------------------------------------

_task_started: dict[str, float] = {}


def _on_task_prerun(task_id=None, task=None, **kwargs) -> None:
    _task_started[task_id] = perf_counter()


def _on_task_postrun(task_id=None, task=None, **kwargs) -> None:
    started = _task_started.pop(task_id, None)
    if started is not None and task is not None:
        metrics.TASK_SECONDS.labels(task.name).observe(perf_counter() - started)


def _on_task_failure(sender=None, **kwargs) -> None:
    if sender is not None:
        metrics.TASK_FAILURES.labels(sender.name).inc()


def _on_worker_init(**kwargs) -> None:
    if multiprocess_dir():
        metrics_files.wipe(multiprocess_dir())


def _on_worker_process_shutdown(pid=None, **kwargs) -> None:
    if multiprocess_dir():
        multiprocess.mark_process_dead(pid or os.getpid(), path=multiprocess_dir())


_worker_server_lock = threading.Lock()
_worker_server_started = False


def _on_worker_ready(**kwargs) -> None:
    """A worker's own /metrics (its jobs' time and failures) on CLARA_WORKER_METRICS_PORT."""
    global _worker_server_started
    port = settings.CLARA_WORKER_METRICS_PORT
    if not port:
        return
    from prometheus_client import start_http_server

    with _worker_server_lock:
        if _worker_server_started:
            return
        start_http_server(port, addr=settings.CLARA_WORKER_METRICS_ADDRESS, registry=_recorded())
        _worker_server_started = True


def connect_celery() -> None:
    """Jobs' time and failures, recorded wherever a task runs (clara/celery.py calls this)."""
    from celery import signals

    signals.task_prerun.connect(_on_task_prerun, weak=False)
    signals.task_postrun.connect(_on_task_postrun, weak=False)
    signals.task_failure.connect(_on_task_failure, weak=False)
    signals.worker_init.connect(_on_worker_init, weak=False)
    signals.worker_process_shutdown.connect(_on_worker_process_shutdown, weak=False)
    signals.worker_ready.connect(_on_worker_ready, weak=False)
    # Traces (off without an endpoint): each pool process instruments itself once forked.
    signals.worker_process_init.connect(_on_worker_process_init, weak=False)


def _on_worker_process_init(**kwargs) -> None:
    from clara import tracing

    tracing.configure()
