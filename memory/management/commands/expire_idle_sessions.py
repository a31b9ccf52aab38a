from django.core.management.base import BaseCommand

from memory.conversations import services


class Command(BaseCommand):
    help = "Expire sessions idle for CLARA_SESSION_IDLE_MINUTES (the scheduler runs this too)."

    def handle(self, *args, **options):
        expired = services.sessions_expire_idle()
        self.stdout.write(f"Expired {expired} idle session(s).")
