from django.core.management.base import BaseCommand, CommandError

from memory import demo
from memory.core import progress
from memory.insights import alerts, trends


def _at_least_one(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = (
        "Load demo people and weeks of conversations with Clara, played by the reference "
        "companion with its offline replies through the services behind the bot API (in "
        "process: no API key, no rate limit), with every summary, fact, trend and alert "
        "computed before it returns. Only into an empty database: the same seed always gives "
        "the same data."
    )

    def add_arguments(self, parser):
        parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
        parser.add_argument(
            "--people", type=_at_least_one, default=4, help="how many people (default 4)"
        )
        parser.add_argument(
            "--days", type=_at_least_one, default=28, help="days of history (default 28)"
        )
        parser.add_argument(
            "--if-empty",
            action="store_true",
            help="do nothing (and succeed) when the database already has people or sessions",
        )

    def handle(self, *args, seed: int, people: int, days: int, if_empty: bool, **options):
        if not demo.database_is_empty():
            if if_empty:
                self.stdout.write("The database already has data: demo not loaded.")
                return
            raise CommandError(
                "The database already has people or sessions; the demo loads only into an empty "
                "one. Use --if-empty to skip quietly."
            )
        plan = demo.build_plan(seed=seed, people=people, days=days)
        with progress.for_command(self, desc="demo conversations", unit="exchanges") as meter:
            demo.load(plan, progress=meter)
        # Today's trends and the alerts they call for, as the scheduler would (nightly); their
        # delivery jobs run here too, so the worker starts with no backlog.
        with demo.jobs_run_here():
            for person in plan.people:
                trends.person_trends_compute(person_id=person.id)
                alerts.alerts_from_trends(person_id=person.id)
        self.stdout.write(
            f"Loaded demo data (seed {seed}, {days} days): {len(plan.people)} people, "
            f"{len(plan.sessions)} sessions, {plan.message_count} messages."
        )
