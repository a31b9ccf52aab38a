"""The companion's jobs: proactive check-ins.

Each task keeps the name it was first registered under (`memory.tasks.<name>`), so queued
messages and the beat schedule survive the move; `memory/tasks.py` imports them all.
"""

import uuid

from celery import shared_task

from memory.companion import checkins
from memory.core.jobs import RETRY_ON_DATABASE_ERRORS


@shared_task(name="memory.tasks.schedule_check_ins", **RETRY_ON_DATABASE_ERRORS)
def schedule_check_ins() -> int:
    """Fan out: one decide_check_ins per person with a passed, undecided check-in slot today."""
    people = checkins.people_due_for_check_ins()
    for person_id in people:
        decide_check_ins.delay(str(person_id))
    return len(people)


@shared_task(name="memory.tasks.decide_check_ins", **RETRY_ON_DATABASE_ERRORS)
def decide_check_ins(person_id: str) -> list[str]:
    """Decide the person's due check-in slots once each (send or suppress); returns the slots."""
    decided = checkins.check_ins_decide(person_id=uuid.UUID(person_id))
    return [f"{check_in.slot} {check_in.outcome} {check_in.reason}" for check_in in decided]
