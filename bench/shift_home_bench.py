#!/usr/bin/env python
"""Benchmark (not a test) of the shift's home view (issue 18 item 6) at 200 residents.

    .venv/bin/python bench/shift_home_bench.py                    # SQLite, a file in the bench dir
    .venv/bin/python bench/shift_home_bench.py --people 200 --runs 30
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/clara_shift_bench \
        .venv/bin/python bench/shift_home_bench.py               # the database must exist

Builds once (CLARA_BENCH_DIR, default data/bench/: shift-home-v1-<people>.sqlite3; delete it to
rebuild) `--people` residents of one organisation with a week each of conversations as
bench/dashboard_bench.py makes them (both messages, an emotion reading, a repetition record and
now and then a story and an alert), plus a short conversation in the last two hours for one in
three of them (so "upset now" has readings to find). One care-staff login is in every resident's
care team.

Then, in-process through Django's test client (middleware, session, login, the access scoping,
the selectors, the template), it requests in turn, `--runs` times each after a warm-up and
alternated round by round so the machine's load falls on all alike: the home page (a full load,
audited), the home table as the minute's htmx poll sends it (X-Clara-Poll: 1), and for scale the
people list. Prints median and p95 wall time, median CPU time, SQL queries and size, and the load
average. Server time only. The target (issue 18): 250 ms on the server.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import uuid
from datetime import UTC, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import dashboard_bench  # noqa: E402  (the same rows as the person page's benchmark)

BENCH_DIR = Path(os.environ.get("CLARA_BENCH_DIR") or ROOT / "data" / "bench").resolve()
DATA_VERSION = 1
SEED = 20261124
TARGET_MS = 250.0
log = dashboard_bench.log


def setup(database_url: str | None, *, people: int) -> None:
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    name = f"shift-home-v{DATA_VERSION}-{people}.sqlite3"
    os.environ["DATABASE_URL"] = database_url or f"sqlite:///{BENCH_DIR / name}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver,127.0.0.1,localhost")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings

    settings.DEBUG = False  # as in production: no per-query logging
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _recent(person, *, now, rng: random.Random, rows: dict) -> None:
    """A short conversation in the last two hours (what 'upset now' reads)."""
    from memory import models as m

    start = now - timedelta(minutes=rng.randint(10, 110))
    session = m.Session(
        id=uuid.uuid4(),
        person_id=person.id,
        created_at=start,
        last_activity_at=start + timedelta(minutes=3),
        status=m.Session.Status.ACTIVE,
        message_count=3,
    )
    rows["sessions"].append(session)
    for n in range(3):
        distress = min(0.97, max(0.02, rng.gauss(0.5, 0.25)))
        message = m.ChatMessage(
            session_id=session.id,
            person_id=person.id,
            role="user",
            content="Is anyone coming to see me today?",
            timestamp=start + timedelta(minutes=n),
            sequence_number=n + 1,
        )
        rows["messages"].append(message)
        rows["emotions"].append(
            m.DetectedEmotion(
                message=message,
                session_id=session.id,
                person_id=person.id,
                emotion=dashboard_bench.EMOTIONS[min(6, int(distress * 7))],
                confidence=0.8,
                distress_score=round(distress, 3),
                trajectory="stable",
                timestamp=message.timestamp,
            )
        )
    person.last_active_at = session.last_activity_at


def build(*, people: int) -> None:
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.utils import timezone

    from dashboard.models import CareRole, CareTeamMembership
    from memory import models as m
    from memory.conversations import tenancy

    if m.Person.objects.filter(display_name="Resident 000").exists():
        log("reusing the database")
        return
    log(f"building: {people} residents, a week each")
    started = time.perf_counter()
    rng = random.Random(SEED)
    now = timezone.now().astimezone(UTC)
    organisation = tenancy.organisation_get_or_create()
    rows = {k: [] for k in ("people", "sessions", "messages", "emotions", "repetitions")}
    rows |= {"narratives": [], "alerts": []}
    rows["story_ids"] = list(m.Narrative.objects.values_list("id", "category"))
    rows["meanings"] = dashboard_bench.meanings_of_questions()
    for index in range(people):
        person = dashboard_bench.build_person(
            days=7, now=now, rng=rng, name=f"Resident {index:03d}", rows=rows
        )
        person.organisation_id = organisation.pk
        if index % 3 == 0:
            _recent(person, now=now, rng=rng, rows=rows)
    for session in rows["sessions"]:
        session.organisation_id = organisation.pk
    user, _ = get_user_model().objects.get_or_create(username="bench-nurse")
    m.OrganisationMembership.objects.get_or_create(user=user, organisation=organisation)
    with transaction.atomic():
        m.Person.objects.bulk_create(rows["people"], batch_size=500)
        m.Session.objects.bulk_create(rows["sessions"], batch_size=1000)
        m.ChatMessage.objects.bulk_create(rows["messages"], batch_size=2000)
        for kind, model in (
            ("emotions", m.DetectedEmotion),
            ("repetitions", m.RepetitionRecord),
            ("narratives", m.NarrativeUsage),
            ("alerts", m.Alert),
        ):
            model.objects.bulk_create(rows[kind], batch_size=2000)
        CareTeamMembership.objects.bulk_create(
            CareTeamMembership(user=user, person=person, role=CareRole.STAFF)
            for person in rows["people"]
        )
    log(
        f"built in {time.perf_counter() - started:.0f} s: {len(rows['people'])} people, "
        f"{len(rows['sessions'])} sessions, {len(rows['emotions'])} readings, "
        f"{len(rows['alerts'])} alerts"
    )


def measure(*, runs: int) -> list[dict]:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    user = get_user_model().objects.get(username="bench-nurse")
    client = Client()
    client.force_login(user)
    home = reverse("dashboard:home")
    targets = [
        ("home page (full load, audited)", home + "?sort=upset", {}),
        (
            "home table, the minute's poll",
            home + "?sort=upset",
            {"HX-Request": "true", "X-Clara-Poll": "1"},
        ),
        ("home table sorted by name (htmx)", home + "?sort=name", {"HX-Request": "true"}),
        ("people list (for scale)", reverse("dashboard:people"), {}),
    ]
    results = {name: {"wall": [], "cpu": [], "queries": 0, "kb": 0.0} for name, *_ in targets}
    for name, url, headers in targets:  # warm-up
        assert client.get(url, headers=headers).status_code == 200, name
    for _ in range(runs):  # alternated: each round asks for every target once
        for name, url, headers in targets:
            with CaptureQueriesContext(connection) as queries:
                wall, cpu = time.perf_counter(), time.process_time()
                response = client.get(url, headers=headers)
                cpu = time.process_time() - cpu
                wall = time.perf_counter() - wall
            assert response.status_code == 200, name
            found = results[name]
            found["wall"].append(wall * 1000)
            found["cpu"].append(cpu * 1000)
            found["queries"] = len(queries.captured_queries)
            found["kb"] = len(response.content) / 1024
    return [
        {
            "name": name,
            "median": statistics.median(r["wall"]),
            "p95": sorted(r["wall"])[int(0.95 * (len(r["wall"]) - 1))],
            "cpu": statistics.median(r["cpu"]),
            "queries": r["queries"],
            "kb": r["kb"],
        }
        for name, r in results.items()
    ]


def report(rows: list[dict], *, runs: int, people: int) -> None:
    from django.db import connection

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nbackend: {connection.vendor}, {people} residents, {runs} runs each, load {load}\n")
    print("| request | median / p95 ms | CPU ms | queries | KB |")
    print("|---|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['name']} | {row['median']:.1f} / {row['p95']:.1f} | {row['cpu']:.1f} "
            f"| {row['queries']} | {row['kb']:.1f} |"
        )
    worst = max(row["median"] for row in rows if row["name"].startswith("home"))
    print(f"\nslowest home request: {worst:.0f} ms median (target {TARGET_MS:.0f} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--people", type=int, default=200)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    setup(os.environ.get("DATABASE_URL"), people=args.people)
    build(people=args.people)
    report(measure(runs=args.runs), runs=args.runs, people=args.people)


if __name__ == "__main__":
    main()
