"""Production settings: what DEBUG off requires, and Django's deployment checklist.

Each case starts a fresh interpreter, because settings are read once at start-up.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory.crypto import generate_key

ROOT = Path(__file__).resolve().parents[1]
SECRET = "k3y-" + "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"
PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": SECRET,
    "ALLOWED_HOSTS": "clara.example",
    "DATABASE_URL": "postgres://clara@db.internal:5432/clara",
    "REDIS_URL": "redis://redis.internal:6379/0",
    "CLARA_ENCRYPTION_KEYS": generate_key(),
}
CLARA_VARIABLES = (
    *PRODUCTION,
    "CELERY_EMBEDDED_BROKER",
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_PRELOAD",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_PROXY_SSL_HEADER",
)


def _run(args: list[str], tmp_path: Path, **env_vars: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in CLARA_VARIABLES}
    env.update({"CLARA_DATA_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "clara.settings"})
    env.update(env_vars)
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def _setting(expression: str, tmp_path: Path, **env_vars: str) -> subprocess.CompletedProcess:
    """Import the settings module alone (fast: no apps) and print `expression` over it as `s`."""
    script = f"import clara.settings as s; print(repr({expression}))"
    return _run(["-c", script], tmp_path, **env_vars)


def test_deploy_checklist_passes_under_production_settings(tmp_path):
    done = _run(
        ["manage.py", "check", "--deploy", "--fail-level", "WARNING"], tmp_path, **PRODUCTION
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert "no issues" in done.stdout


def test_deploy_checklist_fails_without_https_settings(tmp_path):
    # The same check must be able to fail, or passing it says nothing.
    insecure = {**PRODUCTION, "SECURE_SSL_REDIRECT": "0", "SESSION_COOKIE_SECURE": "0"}
    done = _run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], tmp_path, **insecure)
    assert done.returncode != 0
    assert "security.W008" in done.stderr and "security.W012" in done.stderr


@pytest.mark.parametrize(
    ("missing", "message"),
    [
        ("SECRET_KEY", "SECRET_KEY must be set when DEBUG is off"),
        ("ALLOWED_HOSTS", "ALLOWED_HOSTS must be set when DEBUG is off"),
        ("DATABASE_URL", "DATABASE_URL must be set when DEBUG is off"),
        ("REDIS_URL", "REDIS_URL must be set when DEBUG is off"),
    ],
)
def test_production_refuses_to_start_without(missing, message, tmp_path):
    env = {k: v for k, v in PRODUCTION.items() if k != missing}
    done = _setting("s.DEBUG", tmp_path, **env)
    assert done.returncode != 0
    assert message in done.stderr


def test_development_defaults_stay_plain_http(tmp_path):
    # `make run` serves http://127.0.0.1:8000 with no environment at all.
    done = _setting(
        "(s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.SECURE_HSTS_SECONDS, "
        "s.DATABASES['default']['ENGINE'])",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(False, False, 0, 'django.db.backends.sqlite3')"


def test_proxy_ssl_header_only_when_asked(tmp_path):
    expression = "getattr(s, 'SECURE_PROXY_SSL_HEADER', None)"
    plain = _setting(expression, tmp_path, **PRODUCTION)
    behind_proxy = _setting(expression, tmp_path, **PRODUCTION, SECURE_PROXY_SSL_HEADER="1")
    assert plain.stdout.strip() == "None"
    assert behind_proxy.stdout.strip() == "('HTTP_X_FORWARDED_PROTO', 'https')"
