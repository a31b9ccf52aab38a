"""`manage.py rotate_keys`: re-encrypt every encrypted column with the current primary key.

Rotation, with no downtime:
1. generate a key (`python -c 'from memory.core.crypto import generate_key; print(generate_key())'`);
2. set CLARA_ENCRYPTION_KEYS=NEW,OLD everywhere and restart (new values use NEW, old ones still
   read with OLD);
3. run `manage.py rotate_keys` (batches of --batch-size rows, each its own transaction, so the
   service keeps writing meanwhile; safe to interrupt and run again);
4. `manage.py rotate_keys --check` reports 0 to rewrite: set CLARA_ENCRYPTION_KEYS=NEW. Recovery
   codes (kept as keyed hashes only) cannot be rewritten: the command counts those made under an
   old key; their logins make new ones (Second step → Make new recovery codes) before it goes.

The same pass encrypts rows stored before encryption existed, rewrites repetition
fingerprints as the new key's tokens, and makes each repetition record's meaning again under
the new key (one model pass a record: the slow part, ~11 ms of CPU each). Keep the old key until the backups made with it have
expired: a backup is unreadable without the key that wrote it.
"""

from django.core.management.base import BaseCommand, CommandParser

from memory import reencrypt
from memory.core import crypto, progress
from memory.facts import vector_pg


class Command(BaseCommand):
    help = "Re-encrypt every encrypted column with the first key of CLARA_ENCRYPTION_KEYS."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch-size", type=int, default=reencrypt.BATCH_SIZE)
        parser.add_argument(
            "--check",
            action="store_true",
            help="Only count the values not yet under the primary key; write nothing.",
        )

    def handle(self, *args, batch_size: int, check: bool, **options) -> None:
        ring = crypto.keyring()
        self.stdout.write(
            f"primary key {ring.primary.kid}; {len(ring.keys)} key(s) configured "
            f"({', '.join(key.kid for key in ring.keys)})"
        )
        lines = (lambda line: self.stdout.write(line)) if options["verbosity"] > 1 else None
        with progress.for_command(self, desc="encrypted rows") as meter:
            counts = reencrypt.reencrypt_all(
                batch_size=batch_size, progress=lines, dry_run=check, meter=meter
            )
        verb = "to rewrite" if check else "rewritten"
        for count in counts:
            line = f"{count.table}.{count.column}: {count.rows} rows, {count.rewritten} {verb}"
            if count.stale:
                # Recovery codes: only their keyed hashes are kept, so they cannot be moved.
                line += (
                    f"; {count.stale} made under an old key, which cannot be remade: they stop "
                    "matching when that key is dropped (their logins should make new ones first)"
                )
            self.stdout.write(line)
        total = sum(count.rewritten for count in counts)
        self.stdout.write(f"total: {total} value(s) {verb}")
        if not check and vector_pg.vector_search_path() == "pgvector":
            # The search columns' rotation and tokens come from the primary key: redo them now
            # rather than at each scope's first search.
            with progress.for_command(self, desc="search columns", unit="scopes") as meter:
                scopes, rows = vector_pg.sync_all(progress=meter)
            self.stdout.write(f"search columns: {rows} rows in {scopes} scopes re-derived")
