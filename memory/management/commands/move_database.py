"""`manage.py move_database --to postgres://…`: the whole database into a new PostgreSQL.

Stop the web, worker and beat processes first: the source is read in one transaction, and
SQLite's writers wait for it. See memory/move.py and docs/deploy.md ("Moving to PostgreSQL").
"""

from django.core.management.base import BaseCommand, CommandError

from memory import move
from memory.core import progress


class Command(BaseCommand):
    help = (
        "Copy every table of the current database into a new, empty PostgreSQL (schema by "
        "migrations, encrypted values as stored, sequences reset), then compare row counts and "
        "checksums per table. Rerun after a failure to finish the tables left unfinished."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--to", required=True, help="the target, postgres://user@host:port/name"
        )

    def handle(self, *args, to: str, **options):
        def log(line: str) -> None:
            if options["verbosity"] >= 1:
                self.stdout.write(line)

        meter = progress.for_command(self, desc="copying rows")
        try:
            reports = move.move_database(url=to, log=log, progress=meter)
        except (move.MoveRefused, move.MoveFailed) as error:
            raise CommandError(str(error)) from error
        finally:
            meter.close()
        total = sum(r.rows for r in reports)
        seconds = sum(r.seconds for r in reports)
        self.stdout.write(
            f"moved {total} rows in {len(reports)} tables ({seconds:.1f} s copying); "
            "row counts and checksums match. Point DATABASE_URL at the target."
        )
