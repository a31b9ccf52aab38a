"""`manage.py backup` and `manage.py restore`: a backup restored into an empty database has every row.

The restore runs in a subprocess pointed at a new, empty database (DATABASE_URL), as an operator
would run it on a fresh server; every table is then compared row by row with the original.
"""

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from memory.management.commands.backup import pg_environment

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.django_db(transaction=True)


def _conversation(api) -> None:
    """A person, two sessions, exchanges with emotions and a closed session: rows in most tables."""
    user_id = str(uuid.uuid4())
    for s in range(2):
        session = api.post("/api/v1/sessions", {"user_id": user_id, "display_name": "Marigold"})
        session_id = session.json()["session_id"]
        for turn in range(3):
            response = api.post(
                f"/api/v1/sessions/{session_id}/exchanges",
                {
                    "user_message": f"Where is my garden, turn {turn}?",
                    "assistant_message": "Your roses are blooming beautifully, Marigold.",
                    "idempotency_key": f"s{s}-t{turn}",
                    "emotion": {
                        "emotion": "confused",
                        "confidence": 0.8,
                        "distress_score": 0.4,
                        "trajectory": "stable",
                    },
                },
            )
            assert response.status_code == 201, response.content
        assert api.post(f"/api/v1/sessions/{session_id}/close", {}).status_code == 200


def _tables_and_rows(cursor, quote) -> dict[str, list[tuple]]:
    """Every table's rows, in a canonical order (as text, so any column type sorts)."""
    if connection.vendor == "sqlite":
        cursor.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    else:
        cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    tables = sorted(row[0] for row in cursor.fetchall())
    result = {}
    for table in tables:
        cursor.execute(f"SELECT * FROM {quote(table)}")
        result[table] = sorted(cursor.fetchall(), key=repr)
    return result


def _restore(backup: Path, database_url: str, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DEBUG": "1", "DATABASE_URL": database_url}
    return subprocess.run(
        [sys.executable, "manage.py", "restore", str(backup), *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _pg_conninfo() -> dict:
    db = connection.settings_dict
    return {
        "host": db["HOST"] or "127.0.0.1",
        "port": db["PORT"] or 5432,
        "user": db["USER"],
        "password": db["PASSWORD"] or None,
    }


@pytest.fixture
def raw_cursor():
    """open(name) -> a plain DB-API cursor on database `name` (SQLite: a file path).

    Both databases are read through the bare driver, so values compare as the driver gives them.
    """
    handles = []

    def open_cursor(name):
        if connection.vendor == "sqlite":
            import sqlite3

            handle = sqlite3.connect(name)
        else:
            import psycopg

            handle = psycopg.connect(dbname=name, autocommit=True, **_pg_conninfo())
        handles.append(handle)
        return handle.cursor()

    yield open_cursor
    for handle in handles:
        handle.close()


@pytest.fixture
def empty_database(tmp_path):
    """(DATABASE_URL, name) of a new empty database; dropped afterwards."""
    if connection.vendor == "sqlite":
        path = tmp_path / "restored.sqlite3"
        yield f"sqlite:///{path}", str(path)
        return
    db = connection.settings_dict
    name = f"clara_restore_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    admin_env = pg_environment({**db, "NAME": "postgres"})
    conninfo = _pg_conninfo()
    subprocess.run(["createdb", name], env=admin_env, check=True)
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    try:
        yield (
            f"postgres://{db['USER']}{password}@{conninfo['host']}:{conninfo['port']}/{name}",
            name,
        )
    finally:
        subprocess.run(["dropdb", "--if-exists", "--force", name], env=admin_env, check=True)


def test_a_backup_restored_into_an_empty_database_has_every_row(
    api, empty_database, raw_cursor, tmp_path
):
    _conversation(api)
    backup = tmp_path / "backups" / "clara.backup"
    call_command("backup", output=str(backup))
    url, name = empty_database

    done = _restore(backup, url)

    assert done.returncode == 0, done.stderr
    quote = connection.ops.quote_name
    original = _tables_and_rows(raw_cursor(connection.settings_dict["NAME"]), quote)
    restored = _tables_and_rows(raw_cursor(name), quote)
    assert set(restored) == set(original)
    for table, rows in original.items():
        assert restored[table] == rows, table
    # The comparison covered the conversation, not just empty tables.
    assert len(original["chat_messages"]) == 12
    assert f"{sum(map(len, original.values())):,} rows" in done.stdout

    # Now the database has tables: a second restore needs --force, and replaces what is there
    # (the same rows again, not twice as many).
    refused = _restore(backup, url)
    forced = _restore(backup, url, "--force")

    assert refused.returncode != 0 and "--force" in refused.stderr
    assert forced.returncode == 0, forced.stderr
    assert _tables_and_rows(raw_cursor(name), quote) == original


def test_restore_refuses_a_database_that_has_tables(api, tmp_path):
    backup = tmp_path / "clara.backup"
    call_command("backup", output=str(backup))

    with pytest.raises(CommandError, match="already has .* tables"):
        call_command("restore", str(backup))


def test_restore_refuses_a_file_that_is_no_backup(db, tmp_path):
    bogus = tmp_path / "notes.txt"
    bogus.write_text("Marigold likes roses")

    with pytest.raises(CommandError, match="not a SQLite database or a pg_dump"):
        call_command("restore", str(bogus))


def test_backup_never_overwrites_a_file(db, tmp_path):
    existing = tmp_path / "clara.backup"
    existing.write_bytes(b"an older backup")

    with pytest.raises(CommandError, match="exists"):
        call_command("backup", output=str(existing))
    assert existing.read_bytes() == b"an older backup"
