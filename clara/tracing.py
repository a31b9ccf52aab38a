"""OpenTelemetry traces of requests, jobs and database statements; off unless an endpoint is set.

With CLARA_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_ENDPOINT) set, `configure()` (called by
clara/wsgi.py before Django loads its middleware, and by each Celery worker process as it starts)
instruments Django, Celery (the trace context travels in each task's headers, so a job queued by
a turn is part of that turn's trace) and the database driver (psycopg, or sqlite3), and sends
spans over OTLP/HTTP. Unset: nothing is instrumented and nothing is paid.

No personal data leaves in a span. Instrumentation records more than we want (full URLs with
ids and query strings, client addresses, user agents, exception messages that may quote what
was said), so every span passes `PrivateSpanExporter` on its way out, which keeps only an
allow-list of attributes and rewrites the rest:
- the URL's path and target become the route template (`api/v1/sessions/<session_id>/context`);
- SQL keeps its shape with every literal replaced by `?` (Django sends values as parameters,
  which are never recorded; this catches any value written into a statement);
- an exception event keeps its type only, a span's status its code only.
tests/test_tracing.py runs the bot flow, the jobs it queues (in a real worker) and dashboard pages
and checks that no id, name or word of theirs is in any span.

Every log record carries `trace_id` (the current span's, or "-"), and the log format prints it,
so a log line leads to its trace.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections.abc import Sequence
from typing import Any

from django.conf import settings

logger = logging.getLogger(__name__)

# Attributes that say what ran, never about whom: kept as they are.
_KEPT = frozenset(
    {
        "http.method",
        "http.request.method",
        "http.status_code",
        "http.response.status_code",
        "http.route",
        "http.scheme",
        "url.scheme",
        "http.flavor",
        "network.protocol.version",
        "db.system",
        "db.system.name",
        "db.name",
        "db.namespace",
        "db.operation.name",
        "celery.action",
        "celery.state",
        "celery.task_name",
        "messaging.system",
        "messaging.operation",
        "messaging.operation.type",
        "messaging.destination",
        "messaging.destination.name",
        "messaging.message_id",
        "messaging.message.id",
        "error.type",
        "exception.type",
    }
)
# Attributes holding a URL path: replaced by the route template.
_PATHS = frozenset({"http.target", "url.path"})
# Attributes holding SQL: literals replaced.
_STATEMENTS = frozenset({"db.statement", "db.query.text"})
# Django, Celery and the database's spans are named by route, task and statement kind; any
# other character run that could be a value (digits, a quoted string) is replaced as in SQL.
_LITERAL = re.compile(r"'(?:[^']|'')*'|\b[xX]'[0-9a-fA-F]*'|\b\d+(?:\.\d+)?\b")
_UUID = re.compile(
    r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"
)
UNMATCHED = "unmatched"


@functools.lru_cache(maxsize=4096)
def scrub_sql(statement: str) -> str:
    """The statement's shape: every string, hex and number literal replaced with `?`.

    Cached: a service runs the same few hundred statement texts over and over (values travel
    as parameters). A statement with a literal in it is cached by its text, which stays in this
    process's memory only."""
    return _UUID.sub("?", _LITERAL.sub("?", statement))


def _private_attributes(attributes) -> dict:
    kept = {}
    route = None
    for key, value in (attributes or {}).items():
        if key in _KEPT:
            kept[key] = value
        elif key in _STATEMENTS and isinstance(value, str):
            kept[key] = scrub_sql(value)
        if key == "http.route":
            route = value
    if any(key in _PATHS for key in attributes or {}):
        for key in _PATHS & set(attributes):
            kept[key] = route or UNMATCHED
    return kept


def private_span(span):
    """A copy of a finished span with only what identifies no one."""
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.trace import Link, Status

    events = [
        Event(
            event.name,
            {k: v for k, v in (event.attributes or {}).items() if k in _KEPT},
            event.timestamp,
        )
        for event in span.events
    ]
    return ReadableSpan(
        name=scrub_sql(span.name),
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=_private_attributes(span.attributes),
        events=events,
        links=[Link(link.context) for link in span.links],
        kind=span.kind,
        status=Status(span.status.status_code),
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


class PrivateSpanExporter:
    """Wraps the real exporter: every span goes out through `private_span` first."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def export(self, spans: Sequence):
        return self.inner.export([private_span(span) for span in spans])

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        flush = getattr(self.inner, "force_flush", None)
        return flush(timeout_millis) if flush else True


_lock = threading.Lock()
_provider = None


def enabled() -> bool:
    return bool(settings.CLARA_OTLP_ENDPOINT)


def configure(*, exporter=None, batch: bool | None = None, sample_ratio: float | None = None):
    """Instrument Django, Celery and the database driver, once per process; returns the
    tracer provider, or None when tracing is off (no endpoint and no exporter given).

    `exporter` replaces the OTLP one (tests pass an in-memory exporter): each span is then
    exported as it ends (unless `batch`), and the provider is not made the process's global
    one. `sample_ratio` overrides CLARA_OTEL_SAMPLE_RATIO.
    """
    global _provider
    if exporter is None and not enabled():
        return None
    with _lock:
        if _provider is not None:
            return _provider
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
        from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

        given = exporter is not None
        if not given:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            endpoint = settings.CLARA_OTLP_ENDPOINT.rstrip("/")
            if not endpoint.endswith("/v1/traces"):
                endpoint += "/v1/traces"
            exporter = OTLPSpanExporter(endpoint=endpoint)
        ratio = settings.CLARA_OTEL_SAMPLE_RATIO if sample_ratio is None else sample_ratio
        provider = TracerProvider(
            resource=Resource.create({"service.name": settings.CLARA_OTEL_SERVICE_NAME}),
            # A request's decision is its jobs' and statements' too (whole traces or none).
            sampler=ParentBased(TraceIdRatioBased(ratio)),
        )
        if batch is None:
            batch = not given
        processor = BatchSpanProcessor if batch else SimpleSpanProcessor
        provider.add_span_processor(processor(PrivateSpanExporter(exporter)))
        if not given:
            # The process's provider for good (tests configure and shut down their own).
            trace.set_tracer_provider(provider)
        _instrument(provider)
        _provider = provider
        return provider


_traced_execution = None


def _statements_inside_traces_only() -> None:
    """A statement gets a span only inside a recorded span (a sampled request or job).

    The driver's instrumentation otherwise starts a span for every statement and lets the
    sampler drop it: about 25 per /context turn, each paying for a context switch in and out
    when nine turns in ten are not traced. Statements outside any trace (a command, a thread)
    would be orphan root spans anyway.
    """
    global _traced_execution
    from opentelemetry import trace
    from opentelemetry.instrumentation.dbapi import CursorTracer

    if _traced_execution is not None:
        return
    _traced_execution = original = CursorTracer.traced_execution

    def traced_execution(self, cursor, query_method, *args, **kwargs):
        if not trace.get_current_span().is_recording():
            return query_method(*args, **kwargs)
        return original(self, cursor, query_method, *args, **kwargs)

    CursorTracer.traced_execution = traced_execution


def _statements_everywhere() -> None:
    global _traced_execution
    from opentelemetry.instrumentation.dbapi import CursorTracer

    if _traced_execution is not None:
        CursorTracer.traced_execution = _traced_execution
        _traced_execution = None


def _instrumentors() -> list[tuple[Any, dict]]:
    """Django, Celery and this database's driver, each with how it is instrumented."""
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor

    if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        from opentelemetry.instrumentation.sqlite3 import SQLite3Instrumentor

        driver = (SQLite3Instrumentor(), {})
    else:
        from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor

        # Statements only: parameters (the values) are never captured.
        driver = (PsycopgInstrumentor(), {"enable_commenter": False, "capture_parameters": False})
    return [
        # Probes and scrapes every few seconds: noise, not requests. The route (http.route) is
        # the instrumentation's own; a request no route matched gets UNMATCHED as its path.
        (DjangoInstrumentor(), {"excluded_urls": "healthz,readyz,metrics"}),
        (CeleryInstrumentor(), {}),
        driver,
    ]


def _instrument(provider) -> None:
    _statements_inside_traces_only()
    for instrumentor, options in _instrumentors():
        instrumentor.instrument(tracer_provider=provider, **options)


def shutdown() -> None:
    """Undo `configure` (tests): instrumentation removed, pending spans flushed."""
    global _provider
    with _lock:
        if _provider is None:
            return
        for instrumentor, _ in _instrumentors():
            instrumentor.uninstrument()
        _statements_everywhere()
        _provider.shutdown()
        _provider = None


# --- The trace id in every log line --------------------------------------------------------------


def current_trace_id() -> str:
    """The current span's trace id (32 hex digits), or "-" outside a trace or with tracing off."""
    if _provider is None:
        return "-"
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else "-"


_installed = False


def install_log_record_trace_id() -> None:
    """Every log record gets `trace_id`, whichever handler formats it (ours, Celery's)."""
    global _installed
    if _installed:
        return
    previous = logging.getLogRecordFactory()

    def factory(*args, **kwargs):
        record = previous(*args, **kwargs)
        record.trace_id = current_trace_id()
        return record

    logging.setLogRecordFactory(factory)
    _installed = True


class TraceIdFilter(logging.Filter):
    """For a record made without the factory (`logging.makeLogRecord`): `trace_id` all the same."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "trace_id"):
            record.trace_id = current_trace_id()
        return True
