"""The README's and docs/mcp.md's `manage.py` commands work as written in a new shell after
`make run` (issue 33): each runs here in a fresh process with a clean environment (no DEBUG, no
DJANGO_SETTINGS_MODULE), its settings coming from the .env that `make run` writes.

The .env is written by the Makefile's own rule, to a temporary path (CLARA_ENV_FILE points the
settings at it; the developer's .env is never touched), plus a data folder of its own so no
command reaches the developer's database. The MCP stdio server is started by the official SDK's
client with only the key in its environment, from another directory, as a desktop client does.
"""

import os
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from memory.core.crypto import generate_key

ROOT = Path(__file__).resolve().parents[1]
PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv").exists() else sys.executable
TIMEOUT = 120


def _clean_env(**extra: str) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(Path.home()), **extra}


def _manage(
    env_file: Path, *args: str, stdin: str | None = None, **extra: str
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PYTHON, "manage.py", *args],
        cwd=ROOT,
        env=_clean_env(CLARA_ENV_FILE=str(env_file), **extra),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


@pytest.fixture(scope="module")
def env_file(tmp_path_factory) -> Path:
    return _demo_env(tmp_path_factory.mktemp("demo"))


def _demo_env(folder: Path, *, migrate: bool = True) -> Path:
    """The .env `make run` writes, with a data folder (so a database) of its own, migrated."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ".env"
    made = subprocess.run(
        ["make", "-s", f"ENV_FILE={path}", str(path)],
        cwd=ROOT,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert made.returncode == 0, made.stderr
    assert "DEBUG=1" in path.read_text().splitlines()
    with path.open("a") as env:
        env.write(f"CLARA_DATA_DIR={folder / 'data'}\n")
    if migrate:
        migrated = _manage(path, "migrate", "--verbosity", "0")
        assert migrated.returncode == 0, migrated.stderr
    return path


def test_make_run_writes_the_env_file():
    # A dry run that makes every prerequisite: `run` must depend on the .env rule as the file is
    # read (an ENV_FILE defined below the rule once left it out, and no .env was ever written).
    planned = subprocess.run(
        ["make", "-nB", "run"], cwd=ROOT, env=_clean_env(), capture_output=True, text=True
    )
    assert planned.returncode == 0, planned.stderr
    assert "Wrote .env" in planned.stdout


def test_make_never_overwrites_an_existing_env(tmp_path):
    path = tmp_path / ".env"
    path.write_text("DEBUG=0\nSECRET_KEY=mine\n")
    subprocess.run(
        ["make", "-s", f"ENV_FILE={path}", str(path)], cwd=ROOT, env=_clean_env(), check=True
    )
    assert path.read_text() == "DEBUG=0\nSECRET_KEY=mine\n"


@pytest.mark.parametrize(
    "args",
    [
        ["create_api_key", "my bot"],
        [
            "create_api_key",
            "sunrise bot",
            "--org",
            "sunrise-care",
            "--scopes",
            "turns",
            "memories:read",
            "--expires",
            "90",
        ],
    ],
    ids=["plain", "org-scopes-expiry"],
)
def test_create_api_key_as_documented(env_file, args):
    done = _manage(env_file, *args)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("clara_")


@pytest.mark.parametrize("command", ["replay_recovery_log", "expire_idle_sessions"])
def test_maintenance_commands_as_documented(env_file, command):
    done = _manage(env_file, command)
    assert done.returncode == 0, done.stderr


def test_the_mcp_stdio_example_works_with_only_the_key_in_its_environment(env_file, tmp_path):
    key = _manage(env_file, "create_api_key", "desktop").stdout.strip().splitlines()[-1]
    params = StdioServerParameters(
        command=PYTHON,
        args=[str(ROOT / "manage.py"), "mcp_server", "--transport", "stdio"],
        # docs/mcp.md's JSON gives only the key; the .env is the project's (here: the test's).
        env={"CLARA_API_KEY": key, "CLARA_ENV_FILE": str(env_file)},
        cwd=str(tmp_path),
    )

    async def tools() -> list[str]:
        with anyio.fail_after(TIMEOUT), open(tmp_path / "stdio.log", "w") as log:
            async with Client(stdio_client(params, errlog=log)) as client:
                return [tool.name for tool in (await client.list_tools()).tools]

    try:
        names = anyio.run(tools)
    except BaseException:
        print((tmp_path / "stdio.log").read_text())
        raise
    assert "search_memory" in names


def test_a_missing_production_setting_is_one_line_naming_it(tmp_path):
    done = subprocess.run(
        [PYTHON, "manage.py", "create_api_key", "bot"],
        cwd=ROOT,
        env=_clean_env(CLARA_ENV_FILE="", DEBUG="0"),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if "Not configured" in line]
    assert len(lines) == 1 and "SECRET_KEY" in lines[0], done.stderr
    assert done.stdout == ""


def _ok(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _python(env_file: Path, code: str, **extra: str) -> str:
    """One line of Python against the demo's database: how the test looks at what a command did."""
    return _ok(_manage(env_file, "shell", "--no-imports", "-c", code, **extra)).strip()


LOOK = (
    "from django.conf import settings; from memory.models import Person, PersonTrend; "
    "print(settings.CLARA_ENCRYPTION_KEYS[0]); print(PersonTrend.objects.count()); "
    "print(sorted(p.display_name for p in Person.objects.all()))"
)


def test_the_readmes_data_commands_as_documented(env_file, tmp_path):
    """load_demo, compute_trends, chat, rotate_keys, backup and restore, each in a new shell.

    The demo is smaller than `load_demo --seed 7`'s default (one person, two days) to keep the
    test short; it is the same command and code path. Each command is a process start (a few
    seconds each, the migration a dozen), so it uses the module's migrated database, which holds
    API keys but no people, and reads back what the commands did in as few starts as it can.
    """
    env = env_file
    loaded = _ok(_manage(env, "load_demo", "--seed", "7", "--people", "1", "--days", "2"))
    assert "Loaded demo data (seed 7, 2 days): 1 people" in loaded
    _ok(_manage(env, "compute_trends"))
    chat = _manage(env, "chat", "--person", "Nana", stdin="Hello Clara, is it Tuesday?\nbye\n")
    assert chat.returncode == 0, chat.stderr
    assert "Session " in chat.stderr and "with Nana" in chat.stderr
    old_key, trends, names = _python(env, LOOK).splitlines()
    assert int(trends) > 0 and "Nana" in names and len(eval(names)) == 2

    # Rotation as README and docs/deploy.md describe it: a new key first, the old one kept
    # until rotate_keys has run; then the old key can go and everything still reads.
    new_key = generate_key()
    rotated = _ok(_manage(env, "rotate_keys", CLARA_ENCRYPTION_KEYS=f"{new_key},{old_key}"))
    assert int(rotated.rsplit("total: ", 1)[1].split()[0]) > 0
    assert _python(env, LOOK, CLARA_ENCRYPTION_KEYS=new_key).splitlines() == [
        new_key,
        trends,
        names,
    ]

    backup = _manage(env, "backup", CLARA_ENCRYPTION_KEYS=new_key)
    copy = Path(_ok(backup).strip().splitlines()[-1])
    assert copy.is_file() and copy.parent == env.parent / "data" / "backups"
    fresh = _demo_env(tmp_path / "restored", migrate=False)
    _ok(_manage(fresh, "restore", str(copy)))
    assert _python(fresh, LOOK, CLARA_ENCRYPTION_KEYS=new_key).splitlines() == [
        new_key,
        trends,
        names,
    ]


def test_createsuperuser_as_documented(env_file):
    done = _manage(
        env_file,
        "createsuperuser",
        "--noinput",
        DJANGO_SUPERUSER_USERNAME="operator",
        DJANGO_SUPERUSER_EMAIL="operator@example.org",
        DJANGO_SUPERUSER_PASSWORD="a long passphrase for the test",
    )
    assert done.returncode == 0, done.stderr
    assert (
        _python(
            env_file,
            "from django.contrib.auth import get_user_model; "
            "print(get_user_model().objects.get(username='operator').is_superuser)",
        )
        == "True"
    )


def test_the_mcp_http_example_works_in_a_new_shell(env_file, tmp_path):
    """docs/mcp.md's HTTP command, then a tools/list with a key from create_api_key."""
    key = _manage(env_file, "create_api_key", "http desktop").stdout.strip().splitlines()[-1]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log_path = tmp_path / "http.log"
    with open(log_path, "w") as log:
        server = subprocess.Popen(
            [
                PYTHON,
                "manage.py",
                "mcp_server",
                "--transport",
                "http",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            cwd=ROOT,
            env=_clean_env(CLARA_ENV_FILE=str(env_file)),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )

    async def tools() -> list[str]:
        with anyio.fail_after(TIMEOUT):
            while True:
                assert server.poll() is None, log_path.read_text()
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    await anyio.sleep(0.1)
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=TIMEOUT)
            url = f"http://127.0.0.1:{port}/mcp"
            async with Client(streamable_http_client(url, http_client=http)) as client:
                return [tool.name for tool in (await client.list_tools()).tools]

    try:
        names = anyio.run(tools)
    except BaseException:
        print(log_path.read_text())
        raise
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    assert "search_memory" in names and "upsert_memory" in names
