"""`manage.py backup`: a consistent copy of the database, taken while the service runs.

SQLite: the online backup API copies the database page by page inside one read transaction, so
the copy is a snapshot even while exchanges are being written (WAL readers don't block the
writer). PostgreSQL: `pg_dump --format=custom`, which also reads one snapshot. Either way the
file is written under a temporary name, checked, fsynced and only then renamed into place, so a
file with the final name is always a whole backup. The path is printed as the last line.

The backup holds everything the memory keeps about people: store it as carefully as the database.
"""

import os
import shutil
import sqlite3
import subprocess
from collections import deque
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from memory.conversations import recovery
from memory.core import progress
from memory.core.progress import Progress


def pg_environment(db: dict) -> dict[str, str]:
    """libpq variables for `db` (a DATABASES entry), so no password appears on a command line."""
    env = {**os.environ}
    for variable, key in (
        ("PGHOST", "HOST"),
        ("PGPORT", "PORT"),
        ("PGUSER", "USER"),
        ("PGPASSWORD", "PASSWORD"),
        ("PGDATABASE", "NAME"),
    ):
        if db.get(key):
            env[variable] = str(db[key])
    return env


def pg_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise CommandError(f"{name} is not installed (Debian: apt-get install postgresql-client).")
    return path


def run_pg_tool(command: list[str], *, env: dict, meter: Progress, marker: str) -> tuple[int, str]:
    """Run pg_dump or pg_restore with --verbose, counting a table done on each line holding
    `marker`; returns the exit code and the last lines of its messages (for an error)."""
    process = subprocess.Popen(
        [*command, "--verbose"],
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    tail: deque[str] = deque(maxlen=20)
    assert process.stderr is not None
    for line in process.stderr:
        if marker in line:
            meter.update()
        else:
            tail.append(line.rstrip())
    return process.wait(), "\n".join(tail)


def fsync_file_and_dir(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def sqlite_integrity(path: Path) -> str:
    """ "ok", or what SQLite's integrity_check found (the first few problems)."""
    check = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = [row[0] for row in check.execute("PRAGMA integrity_check").fetchmany(5)]
    finally:
        check.close()
    return "ok" if rows == ["ok"] else "; ".join(rows)


class Command(BaseCommand):
    help = (
        "Back up the database while the service runs: SQLite's online backup API, or pg_dump "
        "on PostgreSQL. Prints the backup's path as the last line."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--output",
            help="file to write (default: $CLARA_DATA_DIR/backups/clara-<UTC time>.<ext>)",
        )

    def handle(self, *args, output: str | None = None, **options):
        vendor = connection.vendor
        if vendor not in ("sqlite", "postgresql"):
            raise CommandError(f"No backup method for {vendor}.")
        extension = "sqlite3" if vendor == "sqlite" else "pgdump"
        if output:
            target = Path(output).resolve()
        else:
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            target = Path(settings.DATA_DIR) / "backups" / f"clara-{stamp}.{extension}"
        if target.exists():
            raise CommandError(f"{target} exists; choose another --output.")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        partial.unlink(missing_ok=True)

        try:
            if vendor == "sqlite":
                self._sqlite(partial)
            else:
                self._postgresql(partial)
            fsync_file_and_dir(partial)
            os.replace(partial, target)
            fsync_file_and_dir(target)
        finally:
            partial.unlink(missing_ok=True)

        pending = recovery.pending_count()
        if pending:
            # Those exchanges were acknowledged but are not in the database yet, so not in here.
            self.stderr.write(
                f"Note: {pending} exchange(s) wait in the recovery log and are not in this "
                "backup; run `manage.py replay_recovery_log` first, or keep the log with it."
            )
        self.stderr.write(f"Backup written ({target.stat().st_size:,} bytes):")
        self.stdout.write(str(target))

    def _sqlite(self, partial: Path) -> None:
        source_path = connection.settings_dict["NAME"]
        source = sqlite3.connect(source_path, timeout=settings.SQLITE_BUSY_TIMEOUT_MS / 1000)
        destination = sqlite3.connect(partial)
        pages = source.execute("PRAGMA page_count").fetchone()[0]
        try:
            # One step: a copy made in steps starts again whenever the running service writes,
            # so under steady writes it might never end. Progress is then the copy as a whole.
            with progress.for_command(self, desc="backup", total=pages, unit="pages") as meter:
                source.backup(destination)
                meter.update(pages)
            # The copy is a plain rollback-journal file; it becomes WAL again once restored.
            destination.execute("PRAGMA journal_mode=DELETE")
        finally:
            destination.close()
            source.close()
        problems = sqlite_integrity(partial)
        if problems != "ok":
            raise CommandError(f"The copy failed its integrity check: {problems}")

    def _postgresql(self, partial: Path) -> None:
        env = pg_environment(connection.settings_dict)
        tables = len(connection.introspection.table_names())
        with progress.for_command(self, desc="backup", total=tables, unit="tables") as meter:
            code, messages = run_pg_tool(
                [pg_tool("pg_dump"), "--format=custom", "--no-owner", "--no-privileges"]
                + ["--file", str(partial)],
                env=env,
                meter=meter,
                marker="dumping contents of table",
            )
        if code != 0:
            raise CommandError(f"pg_dump failed: {messages.strip()}")
        # A dump pg_restore cannot read is no backup.
        listing = subprocess.run(
            [pg_tool("pg_restore"), "--list", str(partial)], capture_output=True, text=True
        )
        if listing.returncode != 0:
            raise CommandError(f"pg_restore cannot read the dump: {listing.stderr.strip()}")
