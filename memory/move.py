"""Moving the whole database to a new PostgreSQL: `manage.py move_database --to postgres://…`.

The target gets its schema from the migrations, then every row of every table of every installed
app, read from the current database (`default`, usually SQLite) and written as it is stored:
encrypted columns are copied as ciphertext (never decrypted, so the keys are not even needed
beyond reading the settings), the rest goes through Django's own conversion for each engine
(SQLite's text datetimes, 0/1 booleans and hex UUIDs become PostgreSQL's types). Sequences are
reset past the largest id. Then each table's row count and checksum are compared on both sides.

The target must be a new, empty database. While the copy runs, a progress table in the target
(`clara_move_progress`) records each table that is finished; a run that stops halfway (a lost
connection, a full disk, Ctrl-C) leaves it there, and running the command again empties the
tables that were not finished and copies them again (finished ones are kept). A target with
tables and no progress table is refused: it is someone's data. The progress table is dropped once
every table has been verified, so a finished target is refused too.

The source is read inside one transaction: on SQLite (whose transactions here take the write
lock at BEGIN) writers wait until the copy ends, so stop the service first (docs/deploy.md).
"""

import copy as copying
import hashlib
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from urllib.parse import quote

import dj_database_url
from django.apps import apps
from django.conf import settings
from django.core.management.color import no_style
from django.db import DEFAULT_DB_ALIAS, connections, models, transaction
from django.db.models.expressions import Col
from django.db.utils import load_backend

from memory.core.progress import Progress

TARGET_ALIAS = "move_target"
PROGRESS_TABLE = "clara_move_progress"
BATCH = 2000
# The checksum is the sum of each row's hash modulo 2**128: independent of row order (SQLite and
# PostgreSQL sort text keys differently), and with the count beside it a lost, doubled or changed
# row shows.
_MOD = 1 << 128


class MoveRefused(Exception):
    """The move cannot start (a target holding data, a wrong engine)."""


class MoveFailed(Exception):
    """The copy finished but the target differs from the source."""


@dataclass
class TableReport:
    table: str
    rows: int
    checksum: str
    seconds: float
    skipped: bool = False


def copy_models() -> list[type[models.Model]]:
    """Every model with a table of its own (auto-created many-to-many tables too), parents before
    the tables that refer to them, so each table's foreign keys hold when its copy commits."""
    found = [
        m
        for m in apps.get_models(include_auto_created=True)
        if m._meta.managed and not m._meta.proxy and not m._meta.swapped
    ]
    by_table = {m._meta.db_table: m for m in found}
    needs: dict[str, set[str]] = {}
    for m in found:
        needs[m._meta.db_table] = {
            f.related_model._meta.db_table
            for f in m._meta.concrete_fields
            if f.remote_field is not None
            and f.related_model is not None
            and f.related_model._meta.db_table in by_table
            and f.related_model._meta.db_table != m._meta.db_table
        }
    ordered: list[str] = []
    placed: set[str] = set()
    while len(ordered) < len(needs):
        ready = sorted(t for t in needs if t not in placed and needs[t] <= placed)
        if not ready:
            # A cycle of foreign keys between tables: none today. Django's constraints are
            # DEFERRABLE INITIALLY DEFERRED, but each table commits alone, so refuse clearly.
            left = sorted(t for t in needs if t not in placed)
            raise MoveRefused(f"Foreign keys form a cycle among {', '.join(left)}.")
        ordered += ready
        placed.update(ready)
    return [by_table[t] for t in ordered]


def _storage_field(field: models.Field) -> models.Field:
    """The field as its column stores it: an encrypted field's own Django base class, so values
    are converted as stored text, bytes or JSON and never decrypted or encrypted again."""
    if type(field).__module__.startswith("django."):
        return field
    base = next(
        (k for k in type(field).__mro__ if k.__module__.startswith("django.db.models")), None
    )
    if base is None:
        return field
    storage = copying.copy(field)
    storage.__class__ = base
    return storage


class _Table:
    def __init__(self, model: type[models.Model]):
        self.model = model
        self.name = model._meta.db_table
        self.fields = [_storage_field(f) for f in model._meta.concrete_fields]
        self.columns = [f.column for f in self.fields]

    def _expressions(self) -> list[Col]:
        # A foreign key's column converts as the key it points to (a UUID, not text).
        return [
            Col(self.name, f, f.target_field) if f.is_relation else Col(self.name, f)
            for f in self.fields
        ]

    def _converters(self, alias: str) -> list[list[Callable]]:
        conn = connections[alias]
        out = []
        for field, expression in zip(self.fields, self._expressions(), strict=True):
            out.append(conn.ops.get_db_converters(expression) + field.get_db_converters(conn))
        return out

    def read(self, alias: str) -> Iterator[list]:
        """Every row as Python values, in batches (a server-side cursor on PostgreSQL)."""
        conn = connections[alias]
        quote = conn.ops.quote_name
        sql = "SELECT {} FROM {}".format(
            ", ".join(quote(c) for c in self.columns), quote(self.name)
        )
        converters = self._converters(alias)
        expressions = self._expressions()
        cursor = conn.chunked_cursor()
        try:
            cursor.execute(sql)
            while True:
                rows = cursor.fetchmany(BATCH)
                if not rows:
                    break
                batch = []
                for row in rows:
                    values = list(row)
                    for i, chain in enumerate(converters):
                        for convert in chain:
                            values[i] = convert(values[i], expressions[i], conn)
                    batch.append(values)
                yield batch
        finally:
            cursor.close()

    def copy_sql(self, alias: str) -> str:
        quote = connections[alias].ops.quote_name
        return "COPY {} ({}) FROM STDIN".format(
            quote(self.name), ", ".join(quote(c) for c in self.columns)
        )

    def prepare(self, values: list, alias: str) -> list:
        conn = connections[alias]
        return [f.get_db_prep_save(v, conn) for f, v in zip(self.fields, values, strict=True)]


def _canonical(value) -> str:
    if value is None:
        return "\x00"
    if isinstance(value, bool):
        return "T" if value else "F"
    if isinstance(value, bytes | bytearray | memoryview):
        return "b" + bytes(value).hex()
    if isinstance(value, datetime):
        return "d" + value.isoformat()
    if isinstance(value, date | timedelta | uuid.UUID | Decimal | int | float):
        return f"{type(value).__name__[0]}{value}"
    if isinstance(value, dict | list):
        return "j" + json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return "s" + str(value)


def row_digest(values: list) -> int:
    joined = "\x1f".join(_canonical(v) for v in values).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.sha256(joined).digest()[:16], "big")


def table_summary(table: _Table, alias: str) -> tuple[int, str]:
    """(rows, checksum) of one table as `alias` holds it, converted to Python values first so
    both engines are compared on what Django reads."""
    count, total = 0, 0
    for batch in table.read(alias):
        count += len(batch)
        for values in batch:
            total = (total + row_digest(values)) % _MOD
    return count, f"{total:032x}"


def target_settings(url: str) -> dict:
    config = dj_database_url.parse(url)
    if config["ENGINE"] not in (
        "django.db.backends.postgresql",
        "django.db.backends.postgresql_psycopg2",
    ):
        raise MoveRefused("The target must be a PostgreSQL database (postgres://…).")
    # The same defaults Django fills in for a configured alias.
    return connections.configure_settings({DEFAULT_DB_ALIAS: config})[DEFAULT_DB_ALIAS]


@contextmanager
def target_connection(url: str) -> Iterator[str]:
    """The target as a database alias (this thread's only) for the duration of the move. Not
    added to settings.DATABASES: nothing else (migrate's routers, the test runner) should see it."""
    config = target_settings(url)
    connections[TARGET_ALIAS] = load_backend(config["ENGINE"]).DatabaseWrapper(config, TARGET_ALIAS)
    try:
        yield TARGET_ALIAS
    finally:
        connections[TARGET_ALIAS].close()
        del connections[TARGET_ALIAS]


def _progress(alias: str) -> dict[str, tuple[int, str]] | None:
    """Tables an interrupted move finished, or None when this target has no progress table."""
    conn = connections[alias]
    if PROGRESS_TABLE not in conn.introspection.table_names():
        return None
    with conn.cursor() as cursor:
        cursor.execute(f"SELECT table_name, row_count, checksum FROM {PROGRESS_TABLE}")
        return {name: (rows, checksum) for name, rows, checksum in cursor.fetchall()}


def _prepare_target(alias: str, log: Callable[[str], None]) -> dict[str, tuple[int, str]]:
    conn = connections[alias]
    done = _progress(alias)
    if done is None:
        tables = conn.introspection.table_names()
        if tables:
            raise MoveRefused(
                f"The target already has {len(tables)} tables and no unfinished move of this "
                "command: refusing to write over them. Give a new, empty database (createdb)."
            )
        with conn.cursor() as cursor:
            cursor.execute(
                f"CREATE TABLE {PROGRESS_TABLE} (table_name text PRIMARY KEY, "
                "row_count bigint NOT NULL, checksum text NOT NULL)"
            )
        done = {}
        log("target is empty: creating the schema")
    else:
        log(f"resuming an unfinished move: {len(done)} tables already copied")
    _migrate(conn.settings_dict)
    return done


def _migrate(settings_dict: dict) -> None:
    """`manage.py migrate` with the target as the default database, in a process of its own:
    some data migrations read through the default connection, not the one being migrated."""
    url = "postgres://{user}{password}@{host}:{port}/{name}".format(
        user=quote(settings_dict["USER"] or "", safe=""),
        password=":" + quote(settings_dict["PASSWORD"], safe="")
        if settings_dict["PASSWORD"]
        else "",
        host=quote(settings_dict["HOST"] or "", safe=""),
        port=settings_dict["PORT"] or 5432,
        name=quote(settings_dict["NAME"], safe=""),
    )
    done = subprocess.run(
        [sys.executable, str(settings.BASE_DIR / "manage.py"), "migrate", "--noinput", "-v0"],
        env={**os.environ, "DATABASE_URL": url},
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise MoveRefused(f"migrate on the target failed: {done.stderr.strip()[-2000:]}")


def move_database(
    *,
    url: str,
    source: str = DEFAULT_DB_ALIAS,
    log: Callable[[str], None] = lambda _: None,
    progress: Progress | None = None,
) -> list[TableReport]:
    """Copy every table of `source` into the empty PostgreSQL at `url`, reset its sequences,
    and check each table's row count and checksum on both sides. Raises MoveRefused before
    writing anything to a target that holds data, MoveFailed when a table differs. `progress`
    counts the rows copied against the rows the tables to copy hold."""
    ordered = [_Table(m) for m in copy_models()]
    reports: list[TableReport] = []
    with target_connection(url) as alias:
        done = _prepare_target(alias, log)
        target = connections[alias]
        src = connections[source]
        unknown = sorted(
            set(src.introspection.table_names())
            - {t.name for t in ordered}
            - {"django_migrations", "sqlite_sequence"}
        )
        if unknown:
            log(f"not copied (no model owns them): {', '.join(unknown)}")
        # Finished tables are a prefix of the order: from the first unfinished table on,
        # everything is copied again (a table after it may refer to rows it will hold).
        first = next((i for i, t in enumerate(ordered) if t.name not in done), len(ordered))
        todo = ordered[first:]
        with transaction.atomic(using=source):
            # What migrate seeded (personas, the default organisation, content types,
            # permissions) and what an interrupted run left: emptied in one statement. Every
            # table that refers to one of these is also unfinished (parents are copied first).
            if todo:
                with target.cursor() as cursor:
                    cursor.execute(
                        "TRUNCATE {}".format(", ".join(target.ops.quote_name(t.name) for t in todo))
                    )
            if progress is not None:
                with src.cursor() as cursor:
                    for table in todo:
                        cursor.execute(f"SELECT COUNT(*) FROM {src.ops.quote_name(table.name)}")  # noqa: S608 - a model's table
                        progress.add_total(cursor.fetchone()[0])
            for table in ordered:
                if table not in todo:
                    rows, checksum = done[table.name]
                    reports.append(TableReport(table.name, rows, checksum, 0.0, skipped=True))
                    continue
                started = time.monotonic()
                count, total = 0, 0
                with transaction.atomic(using=alias), target.cursor() as cursor:
                    # COPY: several times faster than INSERTs; psycopg adapts each value.
                    with cursor.cursor.copy(table.copy_sql(alias)) as stream:
                        for batch in table.read(source):
                            for values in batch:
                                total = (total + row_digest(values)) % _MOD
                                stream.write_row(table.prepare(values, alias))
                            count += len(batch)
                            if progress is not None:
                                progress.update(len(batch))
                    checksum = f"{total:032x}"
                    cursor.execute(
                        f"INSERT INTO {PROGRESS_TABLE} (table_name, row_count, checksum) "
                        "VALUES (%s, %s, %s)",
                        [table.name, count, checksum],
                    )
                seconds = time.monotonic() - started
                reports.append(TableReport(table.name, count, checksum, seconds))
                log(f"copied {table.name}: {count} rows in {seconds:.1f} s")
            with target.cursor() as cursor:
                for statement in target.ops.sequence_reset_sql(
                    no_style(), [t.model for t in ordered]
                ):
                    cursor.execute(statement)
            # Verification: each side read again through Django's conversion for its engine.
            differences: list[str] = []
            first_different = len(ordered)
            for index, report in enumerate(reports):
                table = next(t for t in ordered if t.name == report.table)
                # The source's side was summed while copying, in this same read transaction.
                source_side = (
                    table_summary(table, source)
                    if report.skipped
                    else (report.rows, report.checksum)
                )
                target_side = table_summary(table, alias)
                if source_side != target_side:
                    differences.append(
                        f"{table.name}: source {source_side[0]} rows {source_side[1]}, "
                        f"target {target_side[0]} rows {target_side[1]}"
                    )
                    first_different = min(first_different, index)
                report.rows, report.checksum = target_side
        if differences:
            # The next run copies again from the first table that differs.
            with target.cursor() as cursor:
                cursor.execute(
                    f"DELETE FROM {PROGRESS_TABLE} WHERE table_name = ANY(%s)",
                    [[t.name for t in ordered[first_different:]]],
                )
            raise MoveFailed(
                "The target differs from the source (run again to recopy after fixing the "
                "cause; the progress table is kept): " + "; ".join(differences)
            )
        with target.cursor() as cursor:
            cursor.execute(f"DROP TABLE {PROGRESS_TABLE}")
    return reports
