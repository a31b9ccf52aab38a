"""Production settings: DEBUG is off unless set, what DEBUG off requires, Django's deployment
checklist, and development encryption keys refused.

Each case starts a fresh interpreter, because settings are read once at start-up.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memory.core import crypto
from memory.core.crypto import generate_key

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
    "CLARA_TRUSTED_PROXIES",
    "CLARA_INTERNAL_NETWORKS",
    "CLARA_LOGIN_MAX_AGE_SECONDS",
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


def test_debug_is_off_unless_set(tmp_path):
    # Nothing set: production's rules, so the first missing secret stops the start.
    done = _setting("s.DEBUG", tmp_path)
    assert done.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in done.stderr
    assert _setting("s.DEBUG", tmp_path, **PRODUCTION).stdout.strip() == "False"
    assert _setting("s.DEBUG", tmp_path, DEBUG="1").stdout.strip() == "True"


def test_development_defaults_stay_plain_http(tmp_path):
    # `make run` sets DEBUG=1 and nothing else, and serves http://127.0.0.1:8000.
    done = _setting(
        "(s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.SECURE_HSTS_SECONDS, "
        "s.DATABASES['default']['ENGINE'])",
        tmp_path,
        DEBUG="1",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(False, False, 0, 'django.db.backends.sqlite3')"


@pytest.mark.parametrize("secret", [crypto.DEVELOPMENT_SECRET_KEY, SECRET])
def test_production_refuses_a_development_encryption_key(secret, tmp_path):
    # The key DEBUG derives, from make run's public SECRET_KEY or from this deployment's own.
    development = crypto.development_key(secret)
    keys = f"{generate_key()},{development}"
    done = _setting("s.DEBUG", tmp_path, **{**PRODUCTION, "CLARA_ENCRYPTION_KEYS": keys})
    assert done.returncode != 0
    assert "CLARA_ENCRYPTION_KEYS lists a development key" in done.stderr
    assert development not in done.stderr  # a key is never echoed
    # With DEBUG on it is what a developer's machine uses anyway.
    assert _setting("s.DEBUG", tmp_path, DEBUG="1", CLARA_ENCRYPTION_KEYS=keys).returncode == 0


def test_production_refuses_a_database_written_with_the_development_key(tmp_path):
    """`make run`'s data (DEBUG on, no keys) under a production configuration: migrate, the
    release step, refuses it and says which setting to set; a fresh database is accepted."""
    written = tmp_path / "dev.sqlite3"
    development = {"DEBUG": "1", "DATABASE_URL": f"sqlite:///{written}"}
    for command in (["migrate", "-v0"], ["load_demo", "--people", "1", "--days", "1"]):
        done = _run(["manage.py", *command], tmp_path, **development)
        assert done.returncode == 0, done.stderr

    production = {**PRODUCTION, "DATABASE_URL": f"sqlite:///{written}"}
    production["CELERY_EMBEDDED_BROKER"] = "1"  # no Redis needed to be refused
    done = _run(["manage.py", "migrate", "--noinput"], tmp_path, **production)
    assert done.returncode != 0
    assert "memory.E001" in done.stderr
    assert "development key" in done.stderr and "CLARA_ENCRYPTION_KEYS" in done.stderr
    # It names where such data is (the first five encrypted columns that hold some).
    assert re.search(r"development key \(written.*\): [a-z_]+\.[a-z_]+", done.stderr)

    production["DATABASE_URL"] = f"sqlite:///{tmp_path / 'new.sqlite3'}"
    done = _run(["manage.py", "migrate", "--noinput", "-v0"], tmp_path, **production)
    assert done.returncode == 0, done.stderr


def test_proxy_ssl_header_only_when_asked(tmp_path):
    expression = "getattr(s, 'SECURE_PROXY_SSL_HEADER', None)"
    plain = _setting(expression, tmp_path, **PRODUCTION)
    behind_proxy = _setting(expression, tmp_path, **PRODUCTION, SECURE_PROXY_SSL_HEADER="1")
    assert plain.stdout.strip() == "None"
    assert behind_proxy.stdout.strip() == "('HTTP_X_FORWARDED_PROTO', 'https')"


def test_logins_have_limits_in_production(tmp_path):
    expression = (
        "(s.SESSION_SAVE_EVERY_REQUEST, s.CLARA_LOGIN_MAX_AGE_SECONDS, s.AXES_LOCKOUT_PARAMETERS,"
        " s.CLARA_TRUSTED_PROXIES, [v.get('OPTIONS') for v in s.AUTH_PASSWORD_VALIDATORS])"
    )
    result = _setting(expression, tmp_path, **PRODUCTION)
    assert result.stdout.strip() == (
        "(False, 43200, ['username', 'ip_address', ['username', 'ip_address']], [],"
        " [None, {'min_length': 12}, None, None])"
    )


def test_a_malformed_trusted_proxy_refuses_to_start(tmp_path):
    result = _setting(
        "1", tmp_path, **PRODUCTION, CLARA_TRUSTED_PROXIES="10.0.0.0/8,proxy.internal"
    )
    assert result.returncode != 0
    assert "Not an address or network: 'proxy.internal'" in result.stderr


def test_reading_a_development_key_value_without_that_key_says_what_it_is(settings):
    settings.SECRET_KEY = crypto.DEVELOPMENT_SECRET_KEY
    written = crypto.Keyring([crypto.development_key(crypto.DEVELOPMENT_SECRET_KEY)]).encrypt("Hi")
    with pytest.raises(crypto.DecryptionError, match="It is a development key") as raised:
        crypto.Keyring([generate_key()]).decrypt(written)
    assert "CLARA_ENCRYPTION_KEYS" in str(raised.value)
    # Any other unknown key: the plain message.
    other = crypto.Keyring([generate_key()]).encrypt("Hi")
    with pytest.raises(crypto.DecryptionError) as raised:
        crypto.Keyring([generate_key()]).decrypt(other)
    assert "development" not in str(raised.value)
