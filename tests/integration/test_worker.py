"""A real Celery worker in a subprocess, on Redis and on the embedded filesystem broker.

The worker uses the test database (committed data, hence `transaction=True`); the test sends tasks
by name through a client app of its own, so the project's app configuration is left alone.
"""

import os
import subprocess
import sys
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from celery import Celery
from django.conf import settings
from django.db import connection
from django.utils import timezone

from memory.conversations import services
from memory.core.crypto import generate_key as crypto_generate_key
from memory.models import Session
from tests.support.processes import database_url

ROOT = Path(__file__).resolve().parents[2]
REDIS_TEST_URL = os.environ.get("CLARA_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
RESULT_TIMEOUT = 30

pytestmark = pytest.mark.django_db(transaction=True)


def _redis_or_skip() -> None:
    import redis

    try:
        client = redis.Redis.from_url(REDIS_TEST_URL, socket_connect_timeout=1, socket_timeout=1)
        client.flushdb()
    except redis.exceptions.ConnectionError as exc:
        reason = f"Redis is not answering at {REDIS_TEST_URL} ({exc})"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; .ci/run starts it, so CI must have it.")
        pytest.skip(reason)


def _client_app(broker: str, tmp: Path) -> tuple[Celery, dict[str, str]]:
    """A client app for `broker`, and the environment that points a worker at the same one."""
    env = {**os.environ, "DEBUG": "1", "CLARA_DATA_DIR": str(tmp)}
    env["DATABASE_URL"] = database_url()
    env["CLARA_RECOVERY_LOG"] = str(settings.CLARA_RECOVERY_LOG)
    client = Celery("clara-test-client")
    common = {"task_serializer": "json", "accept_content": ["json"], "result_serializer": "json"}
    if broker == "redis":
        _redis_or_skip()
        env["REDIS_URL"] = REDIS_TEST_URL
        client.conf.update(broker_url=REDIS_TEST_URL, result_backend=REDIS_TEST_URL, **common)
    else:
        env.pop("REDIS_URL", None)
        folders = tmp / "broker"
        env["CELERY_BROKER_DIR"] = str(folders)
        for name in ("queue", "processed", "results", "control"):
            (folders / name).mkdir(parents=True, exist_ok=True)
        client.conf.update(
            broker_url="filesystem://",
            broker_transport="clara.embedded_broker:Transport",  # as the web sends
            broker_transport_options={
                "data_folder_in": str(folders / "queue"),
                "data_folder_out": str(folders / "queue"),
                "processed_folder": str(folders / "processed"),
                "store_processed": False,
                "control_folder": str(folders / "control"),
            },
            result_backend=f"file://{folders / 'results'}",
            **common,
        )
    return client, env


@pytest.fixture(params=["redis", "filesystem"])
def worker(request, tmp_path):
    """Start `celery worker` on the broker; yield a client app that sends to it."""
    client, env = _client_app(request.param, tmp_path)
    log_path = tmp_path / "worker.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "clara", "worker", "--pool", "solo"]
            + ["-l", "info", "--without-mingle", "--without-gossip", "--without-heartbeat"]
            + ["-n", f"test-{uuid.uuid4().hex[:8]}@%h"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        yield client
    except BaseException:
        print(log_path.read_text())
        raise
    finally:
        # The test has what it needs; a clean shutdown on the filesystem broker takes seconds.
        process.kill()
        process.wait()
        client.close()
        connection.close()


def _result(worker, task_name: str):
    async_result = worker.send_task(task_name)
    try:
        return async_result.get(timeout=RESULT_TIMEOUT)
    finally:
        async_result.forget()


def test_a_worker_answers_ping(worker):
    assert _result(worker, "memory.tasks.ping") == "pong"


def _sessions_opened() -> int:
    """How many connections PostgreSQL has accepted to the test database so far."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


def test_a_worker_keeps_its_database_connection_from_job_to_job(worker):
    # Celery's Django fixup would open a connection (a PostgreSQL backend) for every job; the
    # worker keeps one for CONN_MAX_AGE, as a web process does (clara/celery.py).
    if connection.vendor != "postgresql":
        pytest.skip("counted in pg_stat_database; SQLite opens a file, not a server session")
    _result(worker, "memory.tasks.expire_idle_sessions")  # the worker's first connection
    before = _sessions_opened()
    for _ in range(6):
        _result(worker, "memory.tasks.expire_idle_sessions")
    assert _sessions_opened() == before


def test_a_worker_expires_an_idle_session(worker):
    idle, _ = services.session_resolve(at=timezone.now() - timedelta(hours=2))
    connection.close()  # the worker writes next; SQLite wants no reader holding on here

    assert _result(worker, "memory.tasks.expire_idle_sessions") == 1

    assert Session.objects.get(id=idle.id).status == "expired"


# --- Configuration: which broker a process gets ------------------------------------------------


def _broker_for(**env_overrides: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DEBUG")}
    env.update(
        {
            "SECRET_KEY": "x" * 50,
            "ALLOWED_HOSTS": "clara.example",
            # DEBUG off requires these too; nothing here contacts the database.
            "DATABASE_URL": "postgres://clara@db.internal:5432/clara",
            "CLARA_ENCRYPTION_KEYS": crypto_generate_key(),
            **env_overrides,
        }
    )
    script = (
        "import django; django.setup(); from clara import celery_app as a; print(a.conf.broker_url)"
    )
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "clara.settings"},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_production_without_redis_refuses_to_start(tmp_path):
    done = _broker_for(DEBUG="0", CLARA_DATA_DIR=str(tmp_path))
    assert done.returncode != 0
    assert "REDIS_URL must be set when DEBUG is off" in done.stderr


def test_production_may_ask_for_the_embedded_broker(tmp_path):
    done = _broker_for(DEBUG="0", CELERY_EMBEDDED_BROKER="1", CLARA_DATA_DIR=str(tmp_path))
    assert done.stdout.strip() == "filesystem://", done.stderr


def test_redis_url_makes_redis_the_broker(tmp_path):
    done = _broker_for(DEBUG="0", REDIS_URL=REDIS_TEST_URL, CLARA_DATA_DIR=str(tmp_path))
    assert done.stdout.strip() == REDIS_TEST_URL, done.stderr
