"""`manage.py restore FILE`: put a `manage.py backup` file into the configured database.

Meant for an empty database (a new server, or a fresh one beside the broken one); a database
that already has tables is refused unless `--force`, which replaces its contents. SQLite: the
backup is integrity-checked, then copied in with the online backup API (one write transaction,
so other connections see the old database or the new one, never half). PostgreSQL:
`pg_restore --single-transaction`, so a failed restore leaves nothing behind. Stop the web and
worker processes first when restoring over a live database.
"""

import sqlite3
import subprocess
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from memory.core import progress
from memory.management.commands.backup import (
    pg_environment,
    pg_tool,
    run_pg_tool,
    sqlite_integrity,
)

# Pages copied per step of a SQLite restore (16 MB at 4 KB pages): the progress's grain.
RESTORE_STEP_PAGES = 4096

SQLITE_MAGIC = b"SQLite format 3\x00"
PGDUMP_MAGIC = b"PGDMP"


class Command(BaseCommand):
    help = "Restore a `manage.py backup` file into the configured (empty) database."

    def add_arguments(self, parser):
        parser.add_argument("backup", help="the file `manage.py backup` wrote")
        parser.add_argument(
            "--force",
            action="store_true",
            help="replace the contents of a database that already has tables",
        )

    def handle(self, *args, backup: str, force: bool = False, **options):
        source = Path(backup)
        if not source.is_file():
            raise CommandError(f"No backup at {source}.")
        with open(source, "rb") as handle:
            head = handle.read(16)
        kind = (
            "sqlite"
            if head.startswith(SQLITE_MAGIC)
            else "postgresql"
            if head.startswith(PGDUMP_MAGIC)
            else None
        )
        if kind is None:
            raise CommandError(f"{source} is not a SQLite database or a pg_dump custom archive.")
        if kind != connection.vendor:
            raise CommandError(
                f"{source} is a {kind} backup but the database (DATABASE_URL) is {connection.vendor}."
            )
        tables = connection.introspection.table_names()
        if tables and not force:
            raise CommandError(
                f"The database already has {len(tables)} tables; restore into an empty database, "
                "or pass --force to replace its contents."
            )
        if kind == "sqlite":
            self._sqlite(source)
        else:
            self._postgresql(source, clean=bool(tables))
        connection.close()
        counts = self._row_counts()
        total = sum(counts.values())
        self.stdout.write(f"Restored {source}: {len(counts)} tables, {total:,} rows.")

    def _sqlite(self, source: Path) -> None:
        problems = sqlite_integrity(source)
        if problems != "ok":
            raise CommandError(f"The backup failed its integrity check: {problems}")
        connection.close()
        target_path = connection.settings_dict["NAME"]
        backup = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        target = sqlite3.connect(target_path, timeout=settings.SQLITE_BUSY_TIMEOUT_MS / 1000)
        pages = backup.execute("PRAGMA page_count").fetchone()[0]
        try:
            # In steps (nothing else writes to a database being restored), for the progress.
            with progress.for_command(self, desc="restore", total=pages, unit="pages") as meter:
                backup.backup(
                    target,
                    pages=RESTORE_STEP_PAGES,
                    sleep=0,
                    progress=lambda status, remaining, total: meter.update(
                        total - remaining - meter.done
                    ),
                )
            # The settings' init_command sets WAL on every connection; set it now so the file is
            # in the mode it will be used in.
            target.execute("PRAGMA journal_mode=WAL")
        finally:
            target.close()
            backup.close()

    def _postgresql(self, source: Path, *, clean: bool) -> None:
        connection.close()
        command = [pg_tool("pg_restore"), "--no-owner", "--no-privileges", "--exit-on-error"]
        command += ["--single-transaction", "--dbname", connection.settings_dict["NAME"]]
        if clean:
            command += ["--clean", "--if-exists"]
        listing = subprocess.run(
            [pg_tool("pg_restore"), "--list", str(source)], capture_output=True, text=True
        )
        tables = sum(1 for line in listing.stdout.splitlines() if " TABLE DATA " in line)
        with progress.for_command(self, desc="restore", total=tables, unit="tables") as meter:
            code, messages = run_pg_tool(
                [*command, str(source)],
                env=pg_environment(connection.settings_dict),
                meter=meter,
                marker="processing data for table",
            )
        if code != 0:
            raise CommandError(f"pg_restore failed (nothing was restored): {messages.strip()}")

    def _row_counts(self) -> dict[str, int]:
        quote = connection.ops.quote_name
        counts = {}
        with connection.cursor() as cursor:
            for table in connection.introspection.table_names():
                cursor.execute(f"SELECT COUNT(*) FROM {quote(table)}")
                counts[table] = cursor.fetchone()[0]
        return counts
