"""`manage.py prepare_run`: everything `make run` does before it starts web, worker and scheduler.

In one process, because each Django start-up costs seconds: migrate; replay the recovery log;
load the demo into an empty database (conversations, then their summaries, facts, trends and
alerts, all in process: nothing is left for the worker to catch up on); today's trends; the demo
logins; a new bot API key. The logins and the key are printed last, the key as the very last
line, so when they appear the dashboard is complete.

A second run on the same database skips the demo (it loads only into an empty database), so it
takes seconds. A local demo only: refused with DEBUG off (`make run` sets DEBUG=1).
"""

import time

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = (
        "Migrate, replay the recovery log, load the demo into an empty database with everything "
        "computed, then print the demo logins and a new API key (what `make run` does first)."
    )

    def handle(self, *args, **options):
        if not settings.DEBUG:
            raise CommandError(
                "prepare_run sets up a local demo (demo logins, a printed API key): it needs "
                "DEBUG=1, which `make run` sets. A deployment runs the Procfile instead."
            )
        started = time.monotonic()
        out = {"stdout": self.stdout, "stderr": self.stderr}
        call_command("migrate", interactive=False, verbosity=options["verbosity"], **out)
        call_command("replay_recovery_log", **out)
        call_command("load_demo", if_empty=True, **out)
        # Cheap, and current on a later day too (the scheduler's nightly run may not have come).
        call_command("compute_trends", **out)
        self.stdout.write(f"Ready in {time.monotonic() - started:.0f} s.")
        call_command("create_demo_caregivers", **out)
        call_command("create_api_key", "make run", **out)
