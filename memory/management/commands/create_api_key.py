from django.core.management.base import BaseCommand

from memory import services


class Command(BaseCommand):
    help = "Create a bot API key. The key is printed once, as the last line; only its hash is kept."

    def add_arguments(self, parser):
        parser.add_argument("name", help="who the key is for, e.g. 'clara-bot production'")

    def handle(self, *args, name: str, **options):
        key, raw_key = services.api_key_create(name=name)
        self.stderr.write(f"Created API key {key.prefix}… for {key.name!r}. Store it now:")
        self.stdout.write(raw_key)
