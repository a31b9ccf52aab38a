from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from memory.conversations import services, tenancy
from memory.conversations.models import Scope
from memory.core.errors import DomainError


class Command(BaseCommand):
    help = (
        "Create a bot API key for an organisation (created if new; the default one without "
        "--org). The key is printed once, as the last line; only its hash is kept."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="who the key is for, e.g. 'clara-bot production'")
        parser.add_argument(
            "--org", default=None, help="the organisation's slug (default: the default one)"
        )
        parser.add_argument(
            "--scopes",
            nargs="+",
            choices=Scope.values,
            default=None,
            help="what the key may do (default: everything)",
        )
        parser.add_argument(
            "--expires", type=int, default=None, metavar="DAYS", help="days until it expires"
        )

    def handle(self, *args, name: str, org: str | None, scopes, expires: int | None, **options):
        if expires is not None and expires < 1:
            raise CommandError("--expires must be at least 1 day.")
        try:
            organisation = tenancy.organisation_get_or_create(org)
            key, raw_key = services.api_key_create(
                name=name,
                organisation_id=organisation.pk,
                scopes=scopes,
                expires_at=timezone.now() + timedelta(days=expires) if expires else None,
            )
        except DomainError as exc:
            raise CommandError(exc.detail) from None
        self.stderr.write(
            f"Created API key {key.prefix}… for {key.name!r} in {organisation.slug!r} "
            f"({', '.join(key.scopes)}). Store it now:"
        )
        self.stdout.write(raw_key)
