"""What the tests that start real processes (gunicorn, Celery workers) share: the test
database's URL for a child process, a free port, the Procfile's commands, and starting one."""

import socket
import subprocess
from pathlib import Path

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
