"""/healthz (liveness) and /readyz (database, broker, recovery log, SQLite integrity)."""

import pytest
from django.db import OperationalError, connection

from clara import health


@pytest.fixture(autouse=True)
def _fresh_health_state(monkeypatch):
    # Per-process caches in clara.health: each test starts without them.
    monkeypatch.setattr(health, "_redis_client", None)
    monkeypatch.setattr(health, "_integrity", None)


def test_liveness_answers_without_the_database(client):
    # No `db` fixture: pytest-django raises on any database access.
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_probes_by_ip_and_over_http_are_answered(client, settings, db):
    # A load balancer probes the instance's address, which is not in ALLOWED_HOSTS, over HTTP.
    settings.SECURE_SSL_REDIRECT = True

    live = client.get("/healthz", HTTP_HOST="10.1.2.3:8000")
    ready = client.get("/readyz", HTTP_HOST="10.1.2.3:8000")

    assert live.status_code == 200
    assert ready.status_code == 200


def test_ready_when_database_and_broker_answer(client, db):
    response = client.get("/readyz")

    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert body["checks"]["database"]["ok"] is True
    assert body["checks"]["database"]["vendor"] == connection.vendor
    assert body["checks"]["broker"]["ok"] is True
    assert body["checks"]["recovery_log"] == {"ok": True, "pending": 0}
    assert response["Cache-Control"] == "no-store"


def test_readiness_counts_exchanges_waiting_in_the_recovery_log(client, db, settings):
    settings.CLARA_RECOVERY_LOG.write_text('{"v": 1}\n{"v": 1}\n\n{"v": 1}\n')

    body = client.get("/readyz").json()

    # Waiting entries are reported, not a failure: the scheduler replays them.
    assert body["checks"]["recovery_log"] == {"ok": True, "pending": 3}
    assert body["status"] == "ok"


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite only")
def test_sqlite_integrity_is_checked_and_reused(client, db, settings):
    settings.CLARA_READYZ_SQLITE_CHECK_SECONDS = 300

    first = client.get("/readyz").json()["checks"]["sqlite_integrity"]
    second = client.get("/readyz").json()["checks"]["sqlite_integrity"]

    assert first["ok"] is True and first["result"] == "ok"
    # The second probe reuses the first result instead of reading the whole file again.
    assert second["age_s"] >= first["age_s"]
    assert health._integrity is not None


@pytest.mark.skipif(connection.vendor == "sqlite", reason="not SQLite")
def test_no_sqlite_check_on_postgresql(client, db):
    assert "sqlite_integrity" not in client.get("/readyz").json()["checks"]


def test_not_ready_when_the_broker_is_unreachable(client, db, settings):
    # A port nothing listens on.
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:9/0"

    response = client.get("/readyz")

    body = response.json()
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert body["status"] == "unavailable"
    assert body["checks"]["broker"]["ok"] is False
    assert body["checks"]["broker"]["error"] == "ConnectionError"
    assert body["checks"]["database"]["ok"] is True


def test_not_ready_when_the_database_refuses(client, db, monkeypatch):
    def refuse(*args, **kwargs):
        raise OperationalError("connection to server at 10.0.0.9 failed: password=secret")

    monkeypatch.setattr(connection, "cursor", refuse)

    response = client.get("/readyz")

    body = response.json()
    assert response.status_code == 503
    assert body["checks"]["database"] == {
        "ok": False,
        "vendor": connection.vendor,
        "error": "OperationalError",
    }
    # Only the exception's class: its message may name hosts or credentials.
    assert "secret" not in response.content.decode()


def test_probes_only_read(client, db):
    assert client.post("/healthz").status_code == 405
    assert client.post("/readyz").status_code == 405
