from django.core.management.base import BaseCommand, CommandError

from memory import services
from memory.errors import DomainError


class Command(BaseCommand):
    help = "Create a bot API key. The key is printed once, as the last line; only its hash is kept."

    def add_arguments(self, parser):
        parser.add_argument("name", help="who the key is for, e.g. 'clara-bot production'")

    def handle(self, *args, name: str, **options):
        try:
            key, raw_key = services.api_key_create(name=name)
        except DomainError as exc:
            raise CommandError(exc.detail) from None
        self.stderr.write(f"Created API key {key.prefix}… for {key.name!r}. Store it now:")
        self.stdout.write(raw_key)
