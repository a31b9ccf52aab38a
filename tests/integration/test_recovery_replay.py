"""The recovery log is replayed by the web machine that holds it, with no timer (issue 34 §5).

Two web instances (the Procfile's `web` line: gunicorn, two processes each), each with a data
folder and recovery log of its own as two machines would have, share the test database. Bots
send exchanges to both, alternately, and the database stops taking writes mid-load: on SQLite
another connection holds the file's write lock; on PostgreSQL it holds an EXCLUSIVE lock on the
messages table (reads go on, writes fail after the servers' lock timeout). Exchanges sent then
are acknowledged with 202 and wait in the instance's log. Once the lock goes, nothing but the
servers themselves runs: every acknowledged exchange must be stored exactly once, with gapless
sequence numbers, and both logs empty.
"""

import os
import sqlite3
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.db import connection

from memory.conversations import services
from memory.conversations import sql as storage
from memory.models import ChatMessage
from tests.support.processes import (
    database_url,
    free_port,
    procfile,
    running,
    start,
    wait_until_ready,
)

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = 4
START_TIMEOUT = 90
LOCKED_FOR = 4.0  # seconds the database refuses writes
REPLAYED_WITHIN = 30.0  # seconds for both logs to empty once it is back

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.concurrency]


@pytest.fixture
def instances(tmp_path):
    url = database_url()
    if connection.vendor == "postgresql":
        # A write waiting for a lock fails after 300 ms instead of waiting for the lock.
        url += ("&" if "?" in url else "?") + "options=-c%20lock_timeout%3D300"
    base_env = {
        **os.environ,
        "PATH": f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}",
        "DEBUG": "0",
        "SECRET_KEY": "recovery-test-" + uuid.uuid4().hex + uuid.uuid4().hex,
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": url,
        # No worker here: jobs the exchanges queue wait in a folder nobody reads.
        "CELERY_EMBEDDED_BROKER": "1",
        "CELERY_BROKER_DIR": str(tmp_path / "broker"),
        "CLARA_ENCRYPTION_KEYS": ",".join(settings.CLARA_ENCRYPTION_KEYS),
        "SECURE_SSL_REDIRECT": "0",
        "CLARA_API_RATE_LIMIT_PER_MINUTE": "0",
        # A writer gives up on the SQLite lock quickly, so the exchange goes to the log.
        "SQLITE_BUSY_TIMEOUT_MS": "300",
        "CLARA_RECOVERY_REPLAY_SECONDS": "1",
        "WEB_CONCURRENCY": "2",
        "WEB_THREADS": "4",
        "PYTHONUNBUFFERED": "1",
    }
    base_env.pop("REDIS_URL", None)
    processes, logs, bases, recovery_logs = [], [], [], []
    for n in (1, 2):
        port = free_port()
        data = tmp_path / f"web{n}"
        recovery_logs.append(data / "recovery.jsonl")
        env = {
            **base_env,
            "PORT": str(port),
            "CLARA_DATA_DIR": str(data),
            "CLARA_RECOVERY_LOG": str(recovery_logs[-1]),
            "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / f"metrics{n}"),
        }
        logs.append(tmp_path / f"web{n}.log")
        processes.append(start(procfile()["web"], env, logs[-1]))
        bases.append(f"http://127.0.0.1:{port}")
    with running(processes, logs):
        wait_until_ready(bases, [], processes, timeout=START_TIMEOUT, what="the instances")
        yield bases, recovery_logs


class _WriteLock:
    """Another connection holding the database's write lock (SQLite) or the messages table's
    (PostgreSQL) until released."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.held = threading.Event()

    def hold(self) -> None:
        if connection.vendor == "sqlite":
            raw = sqlite3.connect(connection.settings_dict["NAME"], timeout=10)
            raw.isolation_level = None
            raw.execute("BEGIN EXCLUSIVE")
            self.held.set()
            self.release.wait()
            raw.execute("ROLLBACK")
            raw.close()
            return
        import psycopg

        db = connection.settings_dict
        with psycopg.connect(
            dbname=db["NAME"],
            user=db["USER"],
            password=db["PASSWORD"] or None,
            host=db["HOST"] or "127.0.0.1",
            port=db["PORT"] or 5432,
        ) as raw:
            with raw.transaction():
                raw.execute(f"LOCK TABLE {ChatMessage._meta.db_table} IN EXCLUSIVE MODE")
                self.held.set()
                self.release.wait()


def test_acknowledged_exchanges_are_stored_once_after_an_outage(instances):
    bases, recovery_logs = instances
    _, key = services.api_key_create(name="recovery test bot")
    headers = {"Authorization": f"Bearer {key}"}
    clients = [httpx.Client(base_url=base, headers=headers, timeout=30) for base in bases]
    sessions = []
    for n in range(SESSIONS):
        resolved = clients[n % 2].post("/api/v1/sessions", json={"user_id": str(uuid.uuid4())})
        assert resolved.status_code in (200, 201), resolved.text
        sessions.append(resolved.json()["session_id"])

    acknowledged: dict[str, list[str]] = {sid: [] for sid in sessions}
    statuses: Counter = Counter()
    stop = threading.Event()

    # Warm every process first (its first exchange loads the language models), on connections
    # of their own so that both processes of each instance take some.
    for sid in sessions:
        for instance, base in enumerate(bases):
            for turn in range(2):
                key = f"warm-{instance}-{turn}"
                body = {
                    "user_message": "Good morning",
                    "assistant_message": "Hello",
                    "idempotency_key": key,
                }
                answer = httpx.post(
                    f"{base}/api/v1/sessions/{sid}/exchanges",
                    json=body,
                    headers=headers,
                    timeout=60,
                )
                assert answer.status_code == 201, answer.text
                acknowledged[sid].append(key)

    def bot(sid: str, offset: int) -> None:
        turn = 0
        while not stop.is_set():
            instance = (turn + offset) % 2
            key = f"turn-{turn}"
            body = {
                "user_message": f"Message {turn} of the morning",
                "assistant_message": f"Reply {turn}",
                "idempotency_key": key,
            }
            try:
                answer = clients[instance].post(f"/api/v1/sessions/{sid}/exchanges", json=body)
            except httpx.TransportError:
                answer = None
            if answer is not None:
                statuses[(instance, answer.status_code)] += 1
                if answer.status_code in (200, 201, 202):
                    acknowledged[sid].append(key)
                    turn += 1
            time.sleep(0.05)

    lock = _WriteLock()
    threads = [threading.Thread(target=bot, args=(sid, n)) for n, sid in enumerate(sessions)]
    for thread in threads:
        thread.start()
    time.sleep(1.5)
    locker = threading.Thread(target=lock.hold)
    locker.start()
    assert lock.held.wait(10)
    time.sleep(LOCKED_FOR)
    lock.release.set()
    locker.join()
    time.sleep(1.5)
    stop.set()
    for thread in threads:
        thread.join()

    # The outage went through both instances' recovery logs.
    assert statuses[(0, 202)] > 0 and statuses[(1, 202)] > 0, statuses
    assert {code for _, code in statuses} <= {201, 202}, statuses

    # Nothing runs a replay but the servers themselves.
    deadline = time.monotonic() + REPLAYED_WITHIN
    while any(log.exists() and log.stat().st_size for log in recovery_logs):
        assert time.monotonic() < deadline, "the recovery logs were not replayed"
        time.sleep(0.25)

    for sid in sessions:
        keys = acknowledged[sid]
        assert len(keys) == len(set(keys))
        messages = list(ChatMessage.objects.filter(session_id=sid).order_by("sequence_number"))
        users = [m for m in messages if m.role == "user"]
        assert len(users) == len(keys), (sid, len(users), len(keys))
        digests = Counter(m.idempotency_key for m in users)
        for key in keys:
            assert digests[storage.db_idempotency_key(key, session_id=uuid.UUID(sid))] == 1, key
        assert [m.sequence_number for m in messages] == list(range(1, len(messages) + 1))

    # Each instance's /metrics (gunicorn's processes added up) says the logs are empty.
    for base in bases:
        text = httpx.get(f"{base}/metrics", timeout=10).text
        assert "clara_recovery_log_pending 0.0" in text
        assert 'clara_http_requests_total{method="POST",route="api/v1/sessions/<session_id>' in text
    for client in clients:
        client.close()
