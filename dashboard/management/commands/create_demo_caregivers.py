"""Demo logins for the caregiver dashboard: `demo` (team admin of everyone, may read full
conversations), `family` (family member of everyone, may not), `orgadmin` (the organisation's
admin, who reads its audit) and `nurse` (care staff of one unit of the demo's home, given by
the unit: in the care team of whoever lives there). Prints the passwords, and the admins'
authenticator keys.

All belong to the default organisation (the demo's) and are in the care team of each of its
people. Organisation admins and team admins (who export and erase a person) must pass a second
factor (dashboard/two_factor.py), so `demo` and `orgadmin` get an authenticator-app device whose
key is printed (add it to any TOTP app, or compute codes from it); `family` logs in with a
password alone.

Run by `make run` (manage.py prepare_run) after load_demo. Running it again resets both passwords and memberships.
Refuses when DEBUG is off unless --force: demo logins do not belong on a real deployment.
"""

import os
import secrets
from base64 import b32encode

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from dashboard.models import CareRole, CareTeamMembership
from dashboard.second_factor.models import AuthenticatorDevice
from dashboard.second_factor.services import AUTHENTICATOR
from dashboard.units import services as units
from memory import demo
from memory.conversations import tenancy
from memory.models import OrganisationMembership, Person, Unit

DEMO_USERS = [
    # username, full name (pages name people, never logins), role, may read full
    # conversations, the organisation's admin
    ("demo", ("Sam", "Taylor"), CareRole.ADMIN, True, False),
    ("family", ("Claire", "Morgan"), CareRole.FAMILY, False, False),
    ("orgadmin", ("Priya", "Shah"), CareRole.ADMIN, True, True),
]


class Command(BaseCommand):
    help = "Create (or reset) the demo caregiver logins for every person and print them."

    def add_arguments(self, parser):
        parser.add_argument("--password", help="Use this password for both (default: random).")
        parser.add_argument("--force", action="store_true", help="Run even with DEBUG off.")

    def handle(self, *args, password=None, force=False, **options):
        if not settings.DEBUG and not force:
            raise CommandError(
                "Demo logins are for development (DEBUG on); pass --force to insist."
            )
        organisation = tenancy.organisation_get_or_create()
        # Names are encrypted: sorted here, after reading.
        people = sorted(
            Person.objects.filter(organisation=organisation), key=lambda p: p.display_name
        )
        User = get_user_model()
        lines = []
        with transaction.atomic():
            for username, (first_name, last_name), role, transcripts, org_admin in DEMO_USERS:
                user, _ = User.objects.get_or_create(username=username)
                chosen = password or secrets.token_urlsafe(9)
                user.first_name, user.last_name = first_name, last_name
                # An address, so the demo's alerts are e-mailed (under `make run`: files in
                # data/mail/). example.org is reserved: nothing could ever reach a real inbox.
                user.email = user.email or f"{username}@example.org"
                user.set_password(chosen)
                user.save()
                OrganisationMembership.objects.update_or_create(
                    user=user, organisation=organisation, defaults={"is_admin": org_admin}
                )
                for person in people:
                    CareTeamMembership.objects.update_or_create(
                        user=user,
                        person=person,
                        defaults={"role": role, "can_see_transcripts": transcripts},
                    )
                line = (
                    f"  {username} / {chosen}   ({first_name} {last_name}: {role}, "
                    f"{len(people)} people)"
                )
                if org_admin or role == CareRole.ADMIN:
                    # A new key each run, like the password.
                    AuthenticatorDevice.objects.filter(user=user).delete()
                    device = AuthenticatorDevice.objects.create(
                        user=user, name=AUTHENTICATOR, confirmed=True
                    )
                    key = b32encode(device.bin_key).decode().rstrip("=")
                    line += f"\n      second step: authenticator key {key}"
                lines.append(line)
            lines.extend(self._unit_nurse(organisation, password))
        port = os.environ.get("PORT", "8000")
        self.stdout.write(f"Caregiver dashboard logins (http://127.0.0.1:{port}/login/):")
        self.stdout.write("\n".join(lines))

    def _unit_nurse(self, organisation, password) -> list[str]:
        """`nurse`: care staff of the demo home's first unit, given by the unit (by `orgadmin`,
        never by itself); nothing when the demo's home is not loaded."""
        unit = (
            Unit.objects.select_related("home")
            .filter(
                home__organisation=organisation,
                home__name=demo.DEMO_HOME,
                name=demo.DEMO_UNITS[0],
            )
            .first()
        )
        if unit is None:
            return []
        User = get_user_model()
        nurse, _ = User.objects.get_or_create(username="nurse")
        chosen = password or secrets.token_urlsafe(9)
        nurse.first_name, nurse.last_name = "Jo", "Evans"
        nurse.email = nurse.email or "nurse@example.org"
        nurse.set_password(chosen)
        nurse.save()
        OrganisationMembership.objects.get_or_create(user=nurse, organisation=organisation)
        units.unit_team_set(
            unit=unit,
            user=nurse,
            role=CareRole.STAFF,
            can_see_transcripts=False,
            by=User.objects.get(username="orgadmin"),
        )
        count = Person.objects.filter(unit=unit).count()
        return [
            f"  nurse / {chosen}   (Jo Evans: staff of {unit.home.name} · {unit.name}, "
            f"{count} people)"
        ]
