import uuid

from django.core.management.base import BaseCommand, CommandError

from memory.conversations.models import Person
from memory.insights import alerts, trends


class Command(BaseCommand):
    help = (
        "Compute today's trends (and trend alerts) now, for every person active in the last 30 "
        "days or for one person; the scheduler does this daily."
    )

    def add_arguments(self, parser):
        parser.add_argument("--person", help="one person's id (default: everyone active)")

    def handle(self, *args, person: str | None = None, **options):
        if person is not None:
            try:
                person_id = uuid.UUID(person)
            except ValueError:
                raise CommandError(
                    f"--person must be a person's id (a UUID), got {person!r}."
                ) from None
            if not Person.objects.filter(id=person_id).exists():
                raise CommandError(f"No person with id {person_id}.")
        people = [person_id] if person else trends.people_due_for_trends()
        raised = 0
        for person_id in people:
            trends.person_trends_compute(person_id=person_id)
            raised += len(alerts.alerts_from_trends(person_id=person_id))
        self.stdout.write(f"Trends computed for {len(people)} person(s); {raised} new alert(s).")
