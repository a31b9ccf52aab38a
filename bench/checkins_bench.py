#!/usr/bin/env python
"""Benchmark (not a test) of the check-in scheduler: the 5-minute scan and the per-person decision.

    .venv/bin/python bench/checkins_bench.py                  # 1,000 people, SQLite
    .venv/bin/python bench/checkins_bench.py --people 200
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/clara_checkins_bench \\
        .venv/bin/python bench/checkins_bench.py              # PostgreSQL (database created)

Builds a fresh database (data/bench/checkins.sqlite3, or the PostgreSQL database named in
DATABASE_URL, dropped and created): N people in five time zones with check-ins at 09:00 and
15:00 local and a short closed conversation each, some recent enough to suppress. Then, at a
fixed instant, it times `people_due_for_check_ins` (the beat task's scan, median of 5),
`check_ins_decide` for every due person (median and p95 per person, queries per decision),
and the scan again once everything is decided (the common case: nothing to do).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ZONES = ["Europe/London", "America/New_York", "Europe/Paris", "Australia/Sydney", "UTC"]
AT = datetime(2026, 3, 2, 16, 0, tzinfo=UTC)  # 16:00 London: both London slots have passed


def _database() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith("postgres"):
        import psycopg

        server, name = url.rsplit("/", 1)
        with psycopg.connect(f"{server}/postgres", autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
            connection.execute(f'CREATE DATABASE "{name}"')
        return url
    path = ROOT / "data" / "bench" / "checkins.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    os.environ["DATABASE_URL"] = f"sqlite:///{path}"
    return os.environ["DATABASE_URL"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--people", type=int, default=1000)
    args = parser.parse_args()
    url = _database()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    from memory.companion import checkins
    from memory.conversations import services
    from memory.models import CheckIn, CheckInSettings, Person

    call_command("migrate", verbosity=0)
    start = time.perf_counter()
    setup_at = AT - timedelta(days=30)
    for index in range(args.people):
        person = Person.objects.create(
            id=uuid.uuid4(),
            display_name=f"Person {index}",
            created_at=setup_at,
            last_active_at=setup_at,
            caregiver_context={"timezone": ZONES[index % len(ZONES)], "preferredName": "Ann"},
        )
        CheckInSettings.objects.create(person=person, enabled=True, times=["09:00", "15:00"])
        # One in ten talked within the quiet window; the rest earlier in the day.
        talked = AT - timedelta(minutes=50 if index % 10 == 0 else 400)
        session, _ = services.session_resolve(user_id=person.id, at=talked)
        services.exchange_record(
            session_id=session.id,
            user_message="Hello?",
            assistant_message="Hello, love.",
            at=talked,
        )
        services.session_close(session_id=session.id, at=talked + timedelta(minutes=1))
    CheckInSettings.objects.update(updated_at=setup_at)
    built = time.perf_counter() - start

    def scan() -> tuple[float, list]:
        began = time.perf_counter()
        due = checkins.people_due_for_check_ins(now=AT)
        return (time.perf_counter() - began) * 1000, due

    scans = [scan() for _ in range(5)]
    due = scans[0][1]
    per_person, queries = [], []
    for person_id in due:
        reset_queries()  # the query log is capped; start each capture empty
        with CaptureQueriesContext(connection) as captured:
            began = time.perf_counter()
            checkins.check_ins_decide(person_id=person_id, now=AT)
            per_person.append((time.perf_counter() - began) * 1000)
        queries.append(len(captured.captured_queries))
    idle = [scan() for _ in range(5)]
    outcomes = {
        (outcome, reason): CheckIn.objects.filter(outcome=outcome, reason=reason).count()
        for outcome, reason in CheckIn.objects.values_list("outcome", "reason").distinct()
    }
    p95 = sorted(per_person)[max(0, int(len(per_person) * 0.95) - 1)] if per_person else 0
    print(f"| backend | {connection.vendor} ({url.split('://')[0]}) |")
    print(f"| people with check-ins on | {args.people:,} (built in {built:.0f} s) |")
    print(
        f"| scan, slots due | {statistics.median(s[0] for s in scans):.1f} ms median "
        f"({len(due):,} people due) |"
    )
    print(
        f"| decide, per person | {statistics.median(per_person):.2f} ms median, "
        f"{p95:.2f} ms p95, {statistics.median(queries):.0f} queries median |"
    )
    print(f"| scan, all decided | {statistics.median(s[0] for s in idle):.1f} ms median |")
    print(f"| decisions | {dict(sorted(outcomes.items()))} |")


if __name__ == "__main__":
    main()
