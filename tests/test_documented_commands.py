"""The README's and docs/mcp.md's `manage.py` commands work as written in a new shell after
`make run` (issue 33): each runs here in a fresh process with a clean environment (no DEBUG, no
DJANGO_SETTINGS_MODULE), its settings coming from the .env that `make run` writes.

The .env is written by the Makefile's own rule, to a temporary path (CLARA_ENV_FILE points the
settings at it; the developer's .env is never touched), plus a data folder of its own so no
command reaches the developer's database. The MCP stdio server is started by the official SDK's
client with only the key in its environment, from another directory, as a desktop client does.
"""

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv").exists() else sys.executable
TIMEOUT = 120


def _clean_env(**extra: str) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(Path.home()), **extra}


def _manage(env_file: Path, *args: str, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PYTHON, "manage.py", *args],
        cwd=ROOT,
        env=_clean_env(CLARA_ENV_FILE=str(env_file), **extra),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


@pytest.fixture(scope="module")
def env_file(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("demo")
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
    migrated = _manage(path, "migrate", "--verbosity", "0")
    assert migrated.returncode == 0, migrated.stderr
    return path


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
