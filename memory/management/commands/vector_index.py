"""`manage.py vector_index`: PostgreSQL's search columns (memory/facts/vector_pg.py), now.

Searches catch up by themselves, scope by scope; this does every scope at once, e.g. after
`move_database` (the columns are not copied), after installing pgvector on a running database
(`--install` adds the columns and indexes the migration skipped), or to check (`--check`).
"""

from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from memory.core import progress
from memory.facts import vector_pg


class Command(BaseCommand):
    help = "Bring PostgreSQL's pgvector search columns in step with every memory scope."

    def add_arguments(self, parser):
        parser.add_argument(
            "--install", action="store_true", help="Add the columns and indexes first."
        )
        parser.add_argument("--check", action="store_true", help="Only count scopes behind.")
        parser.add_argument("--force", action="store_true", help="Re-derive every row.")

    def handle(self, *args, install: bool, check: bool, force: bool, **options):
        connection = connections[vector_pg.ALIAS]
        if install and not vector_pg.install(connection):
            raise CommandError(
                "This database has no pgvector extension available (0.7.0 or later needed)."
            )
        if vector_pg.extension_version() is None:
            raise CommandError(
                "No pgvector search columns here (SQLite, or PostgreSQL without the extension): "
                "search runs in process."
            )
        if check:
            self.stdout.write(f"{vector_pg.pending_scopes()} scope(s) behind")
            return
        with progress.for_command(self, desc="search columns", unit="scopes") as meter:
            scopes, rows = vector_pg.sync_all(force=force, progress=meter)
        self.stdout.write(f"{rows} rows re-derived in {scopes} scopes; path: {vector_pg.status()}")
