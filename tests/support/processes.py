"""What the tests that start real processes (gunicorn, Celery workers) share: the test
database's URL for a child process, a free port, the Procfile's commands, starting one, waiting
until they answer, and stopping them."""

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    """The test database as DATABASE_URL, for a process the test starts."""
    db = connection.settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{db['NAME']}"
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    host = db["HOST"] or "127.0.0.1"
    return f"postgres://{db['USER']}{password}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def procfile() -> dict[str, str]:
    """The production Procfile's commands by name (web, worker, beat)."""
    lines = (ROOT / "Procfile").read_text().splitlines()
    entries = [line.split(":", 1) for line in lines if line and not line.startswith("#")]
    return {name.strip(): command.strip() for name, command in entries}


def start(command: str, env: dict[str, str], log: Path) -> subprocess.Popen:
    """`command` through the shell in its own process group (gunicorn's workers and Celery's
    pool go down with their parent), its output into `log`."""
    with open(log, "w") as out:
        return subprocess.Popen(
            ["sh", "-c", command],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _answers(base: str) -> bool:
    try:
        return httpx.get(f"{base}/readyz", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def wait_until_ready(
    bases: Sequence[str],
    worker_logs: Sequence[Path],
    processes: Sequence[subprocess.Popen],
    *,
    timeout: float,
    what: str,
) -> None:
    """Until every web instance answers /readyz and every worker has said "ready." (so that all
    take part from the first task on); fails the test if one exits or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while not (
        all(_answers(base) for base in bases)
        and all("ready." in log.read_text() for log in worker_logs)
    ):
        if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
            pytest.fail(f"{what} did not become ready")
        time.sleep(0.25)


@contextmanager
def running(processes: Sequence[subprocess.Popen], logs: Sequence[Path]) -> Iterator[None]:
    """Around a fixture's life: each log's tail printed if anything fails (start-up included),
    every process group killed at the end, and this process's connection closed."""
    try:
        yield
    except BaseException:
        for log in logs:
            print(f"--- {log.name}\n{log.read_text()[-5000:]}")
        raise
    finally:
        for process in processes:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
        connection.close()
