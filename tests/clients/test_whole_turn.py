"""The generated clients (clients/python, clients/typescript), unpatched, drive one whole bot turn
against a live server: resolve the session, its context, store the exchange, close it with no
body. Each runs as an integrator runs it, in a process of its own: the Python client is the
README's own example; the TypeScript one is compiled with tsc (TypeScript 5.9.3, the package's
lock) and run by node.

The TypeScript turn needs clients/typescript/node_modules (`npm ci` there; `make check-clients`
does it): without it the test is skipped on a developer's machine and fails in CI.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memory.models import ChatMessage, Session
from tests.clients.support import PYTHON_CLIENT, TYPESCRIPT_CLIENT, readme_block

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 120


def _env(live_server, api_key: str, **extra: str) -> dict[str, str]:
    """A clean environment: the server's root and the key, none of the project's settings."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(Path.home()),
        "CLARA_URL": live_server.url,
        "CLARA_API_KEY": api_key,
        **extra,
    }


def _assert_one_turn_stored(session_id: str) -> None:
    session = Session.objects.get(id=session_id)
    assert session.status == "closed"
    assert list(
        ChatMessage.objects.filter(session=session)
        .order_by("sequence_number")
        .values_list("role", flat=True)
    ) == ["user", "assistant"]


def test_the_python_client_readme_turn_runs_against_a_live_server(live_server, api_key):
    code = readme_block(PYTHON_CLIENT / "README.md", "## A whole turn", "python")
    result = subprocess.run(
        [sys.executable, "-c", code],
        env=_env(live_server, api_key, PYTHONPATH=str(PYTHON_CLIENT)),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["closed", "2"]
    (session,) = Session.objects.all()
    _assert_one_turn_stored(session.id)


def _typescript_tools_or_skip() -> Path:
    tsc = TYPESCRIPT_CLIENT / "node_modules" / ".bin" / "tsc"
    missing = "node" if shutil.which("node") is None else None
    if missing is None and not tsc.exists():
        missing = "clients/typescript/node_modules (npm ci)"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{missing} is missing; .ci/run installs it (make check-clients)")
        pytest.skip(f"{missing} is missing")
    return tsc


def test_the_typescript_client_turn_runs_against_a_live_server(live_server, api_key):
    tsc = _typescript_tools_or_skip()
    # Incremental: a second run (the other database engine) compiles nothing again.
    built = subprocess.run(
        [str(tsc), "-p", str(TYPESCRIPT_CLIENT)], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert built.returncode == 0, built.stdout + built.stderr
    result = subprocess.run(
        ["node", str(TYPESCRIPT_CLIENT / "dist" / "examples" / "turn.js")],
        env=_env(live_server, api_key),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stderr
    turn = json.loads(result.stdout)
    assert turn["status"] == "closed"
    assert turn["message_count"] == 2
    assert turn["context_messages"] >= 1
    _assert_one_turn_stored(turn["session_id"])


def test_the_typescript_readme_shows_the_turn_that_runs():
    shown = readme_block(TYPESCRIPT_CLIENT / "README.md", "## A whole turn", "ts")
    assert shown == (TYPESCRIPT_CLIENT / "examples" / "turn.ts").read_text()
