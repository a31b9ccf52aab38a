"""The production shape, for real: the Procfile's `web` (gunicorn, several worker processes) and
two of its `worker` lines (Celery on Redis), with DEBUG off, against the test database.

Many concurrent clients post exchanges, each one several times with the same idempotency key (a
bot retrying after a timeout), so the copies land in different gunicorn processes at once. Every
exchange must be stored exactly once, each session's sequence numbers must run 1..N without a
gap, a retry must answer with the original's message ids, and the jobs the writes and closes
enqueue must be done by the two workers. Runs on SQLite (WAL, IMMEDIATE transactions) and on
PostgreSQL; Redis is required (CI starts it).
"""

import os
import random
import time
import uuid
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from django.conf import settings

from memory.conversations import services
from memory.conversations import sql as storage
from memory.models import ChatMessage, RollingSummary, Session
from tests.support.processes import (
    database_url,
    free_port,
    procfile,
    running,
    start,
    wait_until_ready,
)

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("CLARA_TEST_DEPLOY_REDIS_URL", "redis://127.0.0.1:6379/11")
SESSIONS = 6  # two per person, so person rows are contended too
TURNS = 20
COPIES = 3  # each exchange is sent this many times, concurrently, with one idempotency key
CLIENTS = 24
START_TIMEOUT = 90
JOBS_TIMEOUT = 60

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.concurrency]


def _redis_or_skip() -> None:
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except redis.exceptions.ConnectionError as exc:
        reason = f"Redis is not answering at {REDIS_URL} ({exc})"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; .ci/run starts it, so CI must have it.")
        pytest.skip(reason)


@pytest.fixture
def deployment(tmp_path):
    """Start web (3 gunicorn workers) and two Celery workers; yield the base URL."""
    _redis_or_skip()
    port = free_port()
    queue = f"clara-test-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "PATH": f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}",
        "DEBUG": "0",
        "SECRET_KEY": "deploy-test-" + uuid.uuid4().hex + uuid.uuid4().hex,
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": database_url(),
        "REDIS_URL": REDIS_URL,
        # A queue of this run's own: another run on the same Redis never takes these tasks.
        "CELERY_QUEUE": queue,
        "CLARA_DATA_DIR": str(tmp_path),
        "CLARA_RECOVERY_LOG": str(settings.CLARA_RECOVERY_LOG),
        # The test reads what the servers wrote, so they encrypt with the test's keys.
        "CLARA_ENCRYPTION_KEYS": ",".join(settings.CLARA_ENCRYPTION_KEYS),
        # TLS ends at the proxy in front; this test talks to gunicorn directly.
        "SECURE_SSL_REDIRECT": "0",
        # The limiter stays on (its Redis counter is shared by the processes), out of the way.
        "CLARA_API_RATE_LIMIT_PER_MINUTE": "1000000",
        "PORT": str(port),
        "WEB_CONCURRENCY": "3",
        "WEB_THREADS": "4",
        "CELERY_CONCURRENCY": "1",
        "PYTHONUNBUFFERED": "1",
    }
    commands = procfile()
    worker_flags = "--without-mingle --without-gossip --without-heartbeat"
    processes = [
        start(commands["web"], env, tmp_path / "web.log"),
        *(
            start(f"{commands['worker']} -n w{n}-{queue}@%h {worker_flags}", env, log)
            for n, log in ((1, tmp_path / "worker1.log"), (2, tmp_path / "worker2.log"))
        ),
    ]
    base = f"http://127.0.0.1:{port}"
    logs = [tmp_path / name for name in ("web.log", "worker1.log", "worker2.log")]
    with running(processes, logs):
        wait_until_ready([base], logs[1:], processes, timeout=START_TIMEOUT, what="the deployment")
        yield base, logs


def _post(client: httpx.Client, path: str, body: dict) -> httpx.Response:
    return client.post(path, json=body)


def test_exchanges_are_stored_once_with_gapless_sequences_across_processes(deployment):
    base, logs = deployment
    _, key = services.api_key_create(name="deploy test")
    headers = {"Authorization": f"Bearer {key}"}
    people = [str(uuid.uuid4()) for _ in range(SESSIONS // 2)]
    limits = httpx.Limits(max_connections=CLIENTS, max_keepalive_connections=CLIENTS)
    with httpx.Client(base_url=base, headers=headers, timeout=30, limits=limits) as client:
        session_ids = []
        for n in range(SESSIONS):
            response = _post(client, "/api/v1/sessions", {"user_id": people[n % len(people)]})
            assert response.status_code == 201, response.text
            session_ids.append(response.json()["session_id"])

        jobs = [
            (session_id, turn, copy)
            for session_id in session_ids
            for turn in range(TURNS)
            for copy in range(COPIES)
        ]
        random.Random(7).shuffle(jobs)

        def send(job):
            session_id, turn, _copy = job
            response = _post(
                client,
                f"/api/v1/sessions/{session_id}/exchanges",
                {
                    "user_message": f"Is it Tuesday today? ({turn})",
                    "assistant_message": "It is a lovely day, and I am right here with you.",
                    "idempotency_key": f"turn-{turn}",
                    "emotion": {
                        "emotion": "calm",
                        "confidence": 0.7,
                        "distress_score": 0.1,
                        "trajectory": "stable",
                    },
                },
            )
            return job, response.status_code, response.json()

        with ThreadPoolExecutor(max_workers=CLIENTS) as pool:
            results = list(pool.map(send, jobs))

        by_exchange = defaultdict(list)
        for (session_id, turn, _copy), status, body in results:
            by_exchange[(session_id, turn)].append((status, body))
        assert {status for _, status, _ in results} <= {200, 201, 202}, results
        stored_answers = {}
        for exchange, answers in by_exchange.items():
            statuses = [status for status, _ in answers]
            # At most one copy stored it; the others got the original back (or, if the
            # database was too busy, a 202 from the recovery log, replayed below).
            assert statuses.count(201) <= 1, (exchange, statuses)
            originals = {repr(body) for status, body in answers if status in (200, 201)}
            assert len(originals) <= 1, (exchange, answers)
            if originals:
                stored_answers[exchange] = next(b for s, b in answers if s in (200, 201))

        # The recovery log is shared by the web processes; replaying stores nothing twice.
        services.recovery_replay()

        # Closing enqueues the session summary; the two workers compute them.
        for session_id in session_ids:
            assert client.post(f"/api/v1/sessions/{session_id}/close", json={}).status_code == 200

    for session_id in session_ids:
        messages = list(
            ChatMessage.objects.filter(session_id=session_id).order_by("sequence_number")
        )
        assert [m.sequence_number for m in messages] == list(range(1, 2 * TURNS + 1))
        assert [m.role for m in messages] == ["user", "assistant"] * TURNS
        keys = [m.idempotency_key for m in messages if m.role == "user"]
        # Stored as keyed digests of the session and the key (issue 30), never verbatim.
        digest = {
            f"turn-{t}": storage.db_idempotency_key(f"turn-{t}", session_id=session_id)
            for t in range(TURNS)
        }
        assert sorted(keys) == sorted(digest.values())
        by_id = {str(m.id): m for m in messages}
        for turn in range(TURNS):
            answer = stored_answers.get((session_id, turn))
            if answer is not None:
                # Whatever copy answered, it named the stored rows.
                user = by_id[answer["user_message"]["message_id"]]
                assert user.idempotency_key == digest[f"turn-{turn}"]
                assert user.sequence_number == answer["user_message"]["sequence_number"]
        assert Session.objects.get(id=session_id).message_count == 2 * TURNS

    deadline = time.monotonic() + JOBS_TIMEOUT
    while time.monotonic() < deadline:
        done = Session.objects.filter(
            id__in=session_ids, session_summary__isnull=False
        ).count() == SESSIONS and RollingSummary.objects.filter(
            person_id__in=people
        ).count() == len(people)
        if done:
            break
        time.sleep(0.5)
    summaries = Session.objects.filter(id__in=session_ids, session_summary__isnull=False).count()
    assert summaries == SESSIONS, "the workers did not compute every session summary"
    assert RollingSummary.objects.filter(person_id__in=people).count() == len(people)
    # Both workers took tasks from the shared queue (each takes one at a time).
    done_per_worker = [log.read_text().count("succeeded in") for log in logs[1:]]
    assert all(done_per_worker), done_per_worker
    statuses = sorted({status for _, status, _ in results})
    print(f"statuses {statuses}; tasks done per worker {done_per_worker}")
