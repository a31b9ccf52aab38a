import json

import pytest
from django.test import Client
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from clara.celery import app as celery_app
from memory.conversations import services

# Property tests assert what holds for every example, not how fast one runs: on a shared 2-core
# machine a load of 15-20 made the "too slow" health check and the deadline fail tests whose
# behaviour was right. Speed is measured in bench/, not here.
hypothesis_settings.register_profile(
    "clara", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.load_profile("clara")

# Tasks that tests enqueue (after a real commit) go to an in-memory broker, never into the
# development queue under data/ that `make run`'s worker reads. Integration tests start their
# own worker and client app on a broker of their own.
celery_app.conf.update(broker_url="memory://", result_backend="cache+memory://")


@pytest.fixture(autouse=True)
def _project_celery_app_is_current():
    """A client app a test makes for its worker (tests/integration/test_worker.py) becomes
    Celery's current app, which shared tasks send through: left current, later tests queued
    their jobs on that test's closed broker. The project's app is current again after each."""
    yield
    celery_app.set_current()


@pytest.fixture(autouse=True)
def _isolated_recovery_log(settings, tmp_path):
    """Each test gets its own recovery log, so tests never see each other's entries."""
    settings.CLARA_RECOVERY_LOG = tmp_path / "recovery.jsonl"


@pytest.fixture(autouse=True)
def _own_rate_limit_counts(settings):
    """Cache-counted limits (password resets) start from zero in each test: the cache outlives
    tests and runs, and every test client comes from 127.0.0.1."""
    import uuid

    settings.CLARA_RATE_LIMIT_SCOPE = uuid.uuid4().hex


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _receivers_on_loopback(settings):
    """The tests' HTTP receivers listen on this machine's loopback, which production refuses as a
    webhook address (tests/memory/test_webhooks.py takes the allowance away to show it)."""
    settings.CLARA_WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8", "::1/128"]


class ApiClient:
    """A Django test client that sends the bot's key and JSON bodies."""

    def __init__(self, raw_key: str | None):
        self.client = Client()
        self.headers = {"Authorization": f"Bearer {raw_key}"} if raw_key else {}

    def get(self, path: str, **params):
        return self.client.get(path, params, headers=self.headers)

    def post(self, path: str, body=None, *, raw: str | None = None):
        data = raw if raw is not None else json.dumps(body if body is not None else {})
        return self.client.post(path, data, content_type="application/json", headers=self.headers)


@pytest.fixture
def api_key(db):
    _, raw_key = services.api_key_create(name="test bot")
    return raw_key


@pytest.fixture
def api(api_key):
    return ApiClient(api_key)


@pytest.fixture
def anonymous_api(db):
    return ApiClient(None)


@pytest.fixture
def http_receiver():
    """A real HTTP server on 127.0.0.1 that records requests (tests/support/http_receiver.py)."""
    from tests.support.http_receiver import HttpReceiver

    with HttpReceiver() as receiver:
        yield receiver


@pytest.fixture
def admin_client(admin_user):
    """pytest-django's operator, past the second factor every operator must pass."""
    from tests.support.otp import verified_client

    return verified_client(admin_user)


@pytest.fixture
def smtp_server(settings):
    """A real SMTP server on 127.0.0.1 (tests/support/smtp_server.py), and Django sending to it."""
    from tests.support.smtp_server import SmtpServer

    with SmtpServer() as server:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = server.host, server.port
        settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
        settings.EMAIL_TIMEOUT = 5
        yield server
