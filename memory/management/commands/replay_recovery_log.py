from django.core.management.base import BaseCommand

from memory.conversations import recovery, services


class Command(BaseCommand):
    help = "Store the exchanges waiting in the recovery log. Safe to run any number of times."

    def handle(self, *args, **options):
        if recovery.pending_count() == 0:
            self.stdout.write("Recovery log: nothing to replay.")
            return
        report = services.recovery_replay()
        self.stdout.write(
            f"Recovery log: {report.stored} stored, {report.already_stored} already stored, "
            f"{report.remaining} still waiting, {report.rejected} rejected."
        )
