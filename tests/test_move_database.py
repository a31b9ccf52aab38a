"""`manage.py move_database`: the demo's database (SQLite in the default run) into a new
PostgreSQL on the local server, row for row, with counts and checksums; refused onto data;
finished by a second run after a failure."""

import os
import uuid

import psycopg
import pytest
from django.core.management import CommandError, call_command
from django.db import connection, connections

from memory import demo, move
from memory.models import ChatMessage, Memory, Person

PG_ADMIN = os.environ.get("CI_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
_BASE = PG_ADMIN.rsplit("/", 1)[0]


def _postgres_answers() -> bool:
    try:
        psycopg.connect(PG_ADMIN.rsplit("/", 1)[0] + "/postgres", connect_timeout=3).close()
    except psycopg.Error:
        return False
    return True


pytestmark = pytest.mark.skipif(
    not _postgres_answers(), reason="no PostgreSQL on 127.0.0.1:5432 to move into"
)


@pytest.fixture
def target_url():
    name = f"clara_move_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(_BASE + "/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield f"{_BASE}/{name}"
    connections.close_all()
    with psycopg.connect(_BASE + "/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def demo_database(db):
    demo.load(demo.build_plan(seed=7, people=2, days=3))
    assert ChatMessage.objects.count() > 50


def test_the_demo_moves_row_for_row_and_reads_back_decrypted(demo_database, target_url, capsys):
    call_command("move_database", to=target_url)
    assert "checksums match" in capsys.readouterr().out

    with move.target_connection(target_url) as alias:
        for model in move.copy_models():
            assert model._default_manager.using(alias).count() == model._default_manager.count(), (
                model._meta.db_table
            )
        # Encrypted columns were copied as ciphertext and decrypt with the same keys.
        ours = sorted(ChatMessage.objects.values_list("id", "content"))
        theirs = sorted(ChatMessage.objects.using(alias).values_list("id", "content"))
        assert theirs == ours
        assert sorted(Person.objects.using(alias).values_list("display_name", flat=True)) == sorted(
            Person.objects.values_list("display_name", flat=True)
        )
        embedded = Memory.objects.filter(embedding__isnull=False).first()
        if embedded is not None:
            assert bytes(Memory.objects.using(alias).get(id=embedded.id).embedding) == bytes(
                embedded.embedding
            )
        # Sequences were reset: a new row gets an id past the copied ones.
        from django.contrib.auth.models import Permission

        highest = Permission.objects.order_by("-id").values_list("id", flat=True).first()
        from django.contrib.contenttypes.models import ContentType

        added = Permission.objects.using(alias).create(
            name="moved", codename="moved", content_type=ContentType.objects.using(alias).first()
        )
        assert added.id > highest

    # Stored values are equal too: copied, not decrypted and encrypted again (new nonces).
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, content FROM chat_messages")
        source = {uuid.UUID(str(i)): content for i, content in cursor.fetchall()}
    with psycopg.connect(target_url) as target:
        moved = dict(target.execute("SELECT id, content FROM chat_messages").fetchall())
    assert moved == source


def test_a_target_with_data_is_refused_before_anything_is_written(demo_database, target_url):
    with psycopg.connect(target_url, autocommit=True) as target:
        target.execute("CREATE TABLE notes_of_someone_else (x int)")
        target.execute("INSERT INTO notes_of_someone_else VALUES (1)")

    with pytest.raises(CommandError, match="refusing"):
        call_command("move_database", to=target_url)

    with psycopg.connect(target_url) as target:
        tables = target.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
    assert tables == [("notes_of_someone_else",)]


def test_a_sqlite_target_is_refused(db, tmp_path):
    with pytest.raises(CommandError, match="PostgreSQL"):
        call_command("move_database", to=f"sqlite:///{tmp_path / 'x.sqlite3'}")


def test_a_move_that_failed_halfway_is_finished_by_running_it_again(
    demo_database, target_url, monkeypatch
):
    prepare = move._Table.prepare

    def failing(self, values, alias):
        if self.name == "chat_messages":
            raise ConnectionError("the network went away")
        return prepare(self, values, alias)

    monkeypatch.setattr(move._Table, "prepare", failing)
    with pytest.raises(ConnectionError):
        call_command("move_database", to=target_url)
    with psycopg.connect(target_url) as target:
        assert target.execute("SELECT count(*) FROM chat_messages").fetchone() == (0,)
        finished = dict(target.execute("SELECT table_name, row_count FROM clara_move_progress"))
    assert finished["people"] == Person.objects.count()
    assert "chat_messages" not in finished

    monkeypatch.setattr(move._Table, "prepare", prepare)
    reports = move.move_database(url=target_url)

    by_table = {r.table: r for r in reports}
    assert by_table["people"].skipped
    assert not by_table["chat_messages"].skipped
    assert by_table["chat_messages"].rows == ChatMessage.objects.count()
    with psycopg.connect(target_url) as target:
        assert target.execute(
            "SELECT count(*) FROM pg_tables WHERE tablename = 'clara_move_progress'"
        ).fetchone() == (0,)
    # Finished: a third run is refused like any database holding data.
    with pytest.raises(move.MoveRefused):
        move.move_database(url=target_url)
