"""Traces (issue 34 §2): one trace follows a turn into the jobs it queues, and no span carries
personal data.

This process serves the bot flow and dashboard pages with tracing on (spans into an in-memory
exporter, through the same privacy filter as the OTLP exporter); a real Celery worker in a
subprocess runs the jobs those requests queued and sends its spans over OTLP/HTTP to a receiver
here. Every span name, attribute, event and status from both is scanned for every id, name and
word the flow used.
"""

import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connections
from django.test import Client

from clara import tracing
from clara.celery import app as celery_app
from dashboard.models import CareRole, CareTeamMembership
from memory.models import OrganisationMembership, Person
from tests.support.otp import pass_second_factor
from tests.support.processes import database_url, free_port
from tests.test_metrics import WORDS, _bot_flow

ROOT = Path(__file__).resolve().parents[2]
CAREGIVER = "carer-quillfeather"
JOBS_TIMEOUT = 60

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.concurrency]


class _Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP traces endpoint: each request's spans, decoded, into `spans`."""

    spans: list[dict] = []

    def do_POST(self):  # noqa: N802 - the handler's API
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    self.spans.append(
                        {
                            "name": span.name,
                            "trace_id": span.trace_id.hex(),
                            "attributes": {a.key: str(a.value) for a in span.attributes},
                            "events": [
                                {a.key: str(a.value) for a in event.attributes}
                                for event in span.events
                            ],
                            "status": span.status.message,
                        }
                    )
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def receiver():
    _Receiver.spans = []
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _Receiver.spans
    server.shutdown()


@pytest.fixture
def traced():
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    # Connections opened before instrumenting are not traced: start afresh.
    connections.close_all()
    tracing.configure(exporter=exporter, sample_ratio=1.0)
    yield exporter
    tracing.shutdown()
    connections.close_all()


def _use_broker(**conf) -> None:
    """Point the project's app at another broker (its pools are made afresh on next use)."""
    celery_app.conf.update(**conf)
    # Only drop the app's references: kombu keeps one pool per broker address in a registry of
    # its own and hands the same object back when that broker is used again, so a pool closed
    # here (or a registry reset) broke every later job queued on the first broker with "Acquire
    # on closed pool". Each broker's pool stays open, and is found again when it comes back.
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@pytest.fixture
def worker(receiver, tmp_path):
    """A worker on a filesystem broker of this test's own, which this process now sends to."""
    url, spans = receiver
    folders = tmp_path / "broker"
    for name in ("queue", "processed", "results", "control"):
        (folders / name).mkdir(parents=True)
    previous = {
        "broker_url": celery_app.conf.broker_url,
        "broker_transport": celery_app.conf.broker_transport,
    }
    previous["broker_transport_options"] = celery_app.conf.broker_transport_options
    _use_broker(
        broker_url="filesystem://",
        # The embedded broker as deployed (with REDIS_URL set, as on PostgreSQL's lane, this
        # process's settings name no transport, and kombu's own would write messages in place).
        broker_transport="clara.embedded_broker:Transport",
        broker_transport_options={
            "data_folder_in": str(folders / "queue"),
            "data_folder_out": str(folders / "queue"),
            "processed_folder": str(folders / "processed"),
            "store_processed": False,
            "control_folder": str(folders / "control"),
        },
    )
    env = {
        **os.environ,
        "DEBUG": "1",
        "DATABASE_URL": database_url(),
        "CLARA_DATA_DIR": str(tmp_path),
        "CLARA_RECOVERY_LOG": str(settings.CLARA_RECOVERY_LOG),
        "CLARA_OTLP_ENDPOINT": url,
        "CLARA_OTEL_SAMPLE_RATIO": "1.0",
        # The worker's own /metrics (its pool's values added up from this folder).
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
        "CLARA_WORKER_METRICS_PORT": str(metrics_port := free_port()),
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("REDIS_URL", None)
    env["CELERY_BROKER_DIR"] = str(folders)
    log = tmp_path / "worker.log"
    with open(log, "w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "clara", "worker", "-l", "info",
             "--concurrency", "1", "-Q",
             f"{celery_app.conf.task_default_queue},{settings.CLARA_ALERTS_QUEUE}",
             "--without-mingle", "--without-gossip", "--without-heartbeat"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        yield spans, log, f"http://127.0.0.1:{metrics_port}/metrics"
    finally:
        _use_broker(**previous)
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _texts(span: dict) -> list[str]:
    texts = [span["name"], span["status"]]
    texts += [f"{k}={v}" for k, v in span["attributes"].items()]
    texts += [f"{k}={v}" for event in span["events"] for k, v in event.items()]
    return texts


def _local(span) -> dict:
    return {
        "name": span.name,
        "trace_id": format(span.context.trace_id, "032x"),
        "attributes": {k: str(v) for k, v in (span.attributes or {}).items()},
        "events": [{k: str(v) for k, v in (e.attributes or {}).items()} for e in span.events],
        "status": span.status.description or "",
    }


def test_a_turn_is_one_trace_into_its_jobs_and_no_span_names_anyone(api, traced, worker, caplog):
    worker_spans, worker_log, worker_metrics = worker
    ids = _bot_flow(api)
    person_id, session_id = ids[0], ids[1]
    closed = api.post(f"/api/v1/sessions/{session_id}/close", {})
    assert closed.status_code == 200

    # A caregiver's pages.
    caregiver = get_user_model().objects.create_user(CAREGIVER, password="a-long-password-here")
    organisation_id = Person.objects.get(id=person_id).organisation_id
    OrganisationMembership.objects.create(user=caregiver, organisation_id=organisation_id)
    CareTeamMembership.objects.create(
        user=caregiver, person_id=person_id, role=CareRole.ADMIN, can_see_transcripts=True
    )
    browser = Client(raise_request_exception=False)
    assert (
        browser.post(
            "/login/", {"username": CAREGIVER, "password": "a-long-password-here"}
        ).status_code
        == 302
    )
    pass_second_factor(browser, caregiver)
    for path in ("/", f"/people/{person_id}/", f"/people/{person_id}/conversations/"):
        browser.get(path)

    local = [_local(span) for span in traced.get_finished_spans()]
    routes = {span["attributes"].get("http.route") for span in local}
    assert "api/v1/sessions/<session_id>/context" in routes
    assert any(span["attributes"].get("db.statement") for span in local)  # the driver's spans
    close_span = next(
        span for span in local
        if span["attributes"].get("http.route") == "api/v1/sessions/<session_id>/close"
    )  # fmt: skip
    # The close queued the session summary: its publish is in the close's trace...
    assert any(
        span["trace_id"] == close_span["trace_id"] and "compute_session_summary" in span["name"]
        for span in local
    ), sorted({span["name"] for span in local})

    # ... and the worker ran it in that same trace.
    deadline = time.monotonic() + JOBS_TIMEOUT
    while not any(
        span["trace_id"] == close_span["trace_id"]
        and span["name"] == "run/memory.tasks.compute_session_summary"
        for span in worker_spans
    ):
        assert time.monotonic() < deadline, (
            sorted({s["name"] for s in worker_spans}),
            worker_log.read_text()[-3000:],
        )
        time.sleep(0.25)

    # The worker's log lines carry the trace id of the job they belong to.
    assert f"trace={close_span['trace_id']}" in worker_log.read_text()
    # Its /metrics has the job's time, and no id of the flow's.
    scraped = httpx.get(worker_metrics, timeout=10).text
    assert 'clara_task_duration_seconds_count{task="memory.tasks.compute_session_summary"}' in (
        scraped
    )
    assert [value for value in ids if value in scraped] == []

    texts = [text for span in local + list(worker_spans) for text in _texts(span)]
    lowered = "\n".join(texts).lower()
    assert [value for value in ids if value.lower() in lowered] == []
    assert [value for value in ids if value.replace("-", "").lower() in lowered] == []
    assert [word for word in WORDS if word.lower() in lowered] == []
    assert CAREGIVER not in lowered
    # URLs keep their route template only: no path with an id, no query string.
    for span in local + list(worker_spans):
        for key in ("http.target", "url.path", "http.url", "url.full", "url.query"):
            value = span["attributes"].get(key)
            assert value is None or value == span["attributes"].get("http.route", "unmatched")


def test_log_lines_carry_the_trace_id(traced):
    import io
    import logging

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter(settings.LOGGING["formatters"]["plain"]["format"]))
    logger = logging.getLogger("clara.test_trace_id")
    logger.addHandler(handler)
    try:
        with tracing._provider.get_tracer("test").start_as_current_span("x") as span:
            logger.warning("inside a span")
            expected = format(span.get_span_context().trace_id, "032x")
        logger.warning("outside")
    finally:
        logger.removeHandler(handler)
    assert f"trace={expected} inside a span" in out.getvalue()
    assert "trace=- outside" in out.getvalue()


def test_sql_literals_are_scrubbed():
    statement = (
        "SELECT * FROM people WHERE name = 'Philippa O''Neil' AND id = "
        "'0190a000-0000-7000-8000-000000000001' AND n IN (1, 2.5) AND k = X'0aff'"
    )
    assert tracing.scrub_sql(statement) == (
        "SELECT * FROM people WHERE name = ? AND id = ? AND n IN (?, ?) AND k = ?"
    )
