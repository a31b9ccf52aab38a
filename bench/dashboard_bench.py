#!/usr/bin/env python
"""Benchmark (not a test) of the caregiver dashboard's person page (issue 6): server time.

    .venv/bin/python bench/dashboard_bench.py                  # a year for one person, SQLite
    .venv/bin/python bench/dashboard_bench.py --runs 50
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/clara_dashboard_bench \
        .venv/bin/python bench/dashboard_bench.py             # the same on PostgreSQL

Builds (or reuses: data/bench/dashboard-v<DATA_VERSION>-<days>d-<others>.sqlite3; delete it to
rebuild; on PostgreSQL the database named in DATABASE_URL must exist) a database with one person who talked
with Clara 2–3 times a day for a year (about 11,000 exchanges: both messages, an emotion and a
repetition record with its stored meaning each, a story on ~10% of Clara's replies, a summary per conversation, a few
alerts), beside 20 other people with a month each. Rows go in with bulk_create in one
transaction; the nightly trends are computed for the person with memory.insights.trends.

Then, in-process through Django's test client (the whole stack: middleware, session save,
login check, access check and its audit insert, selectors, charts, templates), it requests the
person page and each of its panels as htmx does, `--runs` times each after a warm-up, and prints
median, p95 and the number of SQL queries per request. Server time only: no network, no browser.
The target is 150 ms for the page and for each panel.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "data" / "bench"
DATA_VERSION = 4  # 2: message text encrypted at rest; 3, 4: each repetition record has its meaning
SEED = 20261122
TARGET_MS = 150.0
ZONE = "Europe/London"
QUESTIONS = [
    ("location", "Where am I?"),
    ("location", "Is this my house?"),
    ("location", "I don't recognise this room."),
    ("person", "When is Sarah coming?"),
    ("person", "Where is my husband?"),
    ("time", "What day is it today?"),
    ("time", "Is it time for lunch?"),
    ("identity", "Who are you?"),
    ("activity", "What should I be doing now?"),
    ("general", "I had a nice cup of tea."),
    ("general", "The birds were singing this morning."),
    ("general", "My knee is a bit stiff today."),
]
EMOTIONS = ["calm", "neutral", "lonely", "sad", "confused", "anxious", "fearful"]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def setup(database_url: str | None, *, days: int, others: int) -> None:
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    name = f"dashboard-v{DATA_VERSION}-{days}d-{others}.sqlite3"
    os.environ["DATABASE_URL"] = database_url or f"sqlite:///{BENCH_DIR / name}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")
    # Requests come from the test client; its host must be allowed.
    os.environ.setdefault("ALLOWED_HOSTS", "testserver,127.0.0.1,localhost")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("CLARA_API_RATE_LIMIT_PER_MINUTE", "1000000")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings

    # As in production: no per-query logging (DEBUG stays on only for static file names).
    settings.DEBUG = False
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def hour_for(rng: random.Random, slot: str) -> int:
    return {"morning": rng.randint(8, 11), "afternoon": rng.randint(13, 16)}.get(
        slot, rng.randint(17, 21)
    )


def meanings_of_questions() -> dict[str, bytes]:
    """The stored meaning of each question (memory.conversations.repeats), as the ORM takes it."""
    from memory.conversations import meaning

    return {text: meaning.to_stored(meaning.analyse(text)) for _, text in QUESTIONS}


def build_person(*, days: int, now: datetime, rng: random.Random, name: str, rows: dict):
    """One person's sessions, messages, emotions, repetitions and stories as unsaved objects."""
    from memory import models as m

    person = m.Person(
        id=uuid.uuid4(),
        display_name=name,
        created_at=now - timedelta(days=days + 1),
        last_active_at=now,
        caregiver_context={"timezone": ZONE, "preferredName": name, "pronouns": "she/her"},
    )
    rows["people"].append(person)
    stories = rows["story_ids"]
    last = person.created_at
    for day in range(days, 0, -1):
        date = (now - timedelta(days=day)).replace(minute=0, second=0, microsecond=0)
        slots = rng.sample(["morning", "afternoon", "evening"], rng.choice([2, 2, 3]))
        for slot in slots:
            start = date.replace(hour=hour_for(rng, slot), minute=rng.randint(0, 50))
            evening = slot == "evening"
            exchanges = rng.randint(8, 18) if evening else rng.randint(5, 12)
            session = m.Session(
                id=uuid.uuid4(),
                person_id=person.id,
                created_at=start,
                last_activity_at=start,
                status=m.Session.Status.CLOSED,
            )
            at, seen, feelings, repeats = start, {}, [], 0
            for n in range(exchanges):
                at += timedelta(seconds=rng.randint(25, 100))
                qtype, text = rng.choice(QUESTIONS)
                distress = min(0.97, max(0.02, rng.gauss(0.45 if evening else 0.2, 0.15)))
                emotion = EMOTIONS[min(6, int(distress * 7))]
                feelings.append(emotion)
                user = m.ChatMessage(
                    session_id=session.id,
                    person_id=person.id,
                    role="user",
                    content=text,
                    timestamp=at,
                    sequence_number=2 * n + 1,
                )
                reply = m.ChatMessage(
                    session_id=session.id,
                    person_id=person.id,
                    role="assistant",
                    content="You're safe here with me, and everything is taken care of.",
                    timestamp=at + timedelta(seconds=2),
                    sequence_number=2 * n + 2,
                )
                rows["messages"] += [user, reply]
                rows["emotions"].append(
                    m.DetectedEmotion(
                        message=user,
                        session_id=session.id,
                        person_id=person.id,
                        emotion=emotion,
                        confidence=0.8,
                        distress_score=round(distress, 3),
                        trajectory="stable",
                        timestamp=at,
                    )
                )
                count = seen.get(text, 0)
                seen[text] = count + 1
                repeats += count > 0
                rows["repetitions"].append(
                    m.RepetitionRecord(
                        session_id=session.id,
                        person_id=person.id,
                        message=user,
                        fingerprint=" ".join(sorted(set(text.lower().strip("?.").split()))),
                        original_message=text,
                        question_type=qtype,
                        repeat_count=count,
                        timestamp=at,
                        meaning=rows["meanings"][text],
                    )
                )
                if stories and rng.random() < 0.1:
                    story = rng.choice(stories)
                    rows["narratives"].append(
                        m.NarrativeUsage(
                            narrative_id=story[0],
                            session_id=session.id,
                            person_id=person.id,
                            message=reply,
                            mode="seed",
                            category=story[1],
                            emotion_at_usage=emotion,
                            timestamp=reply.timestamp,
                        )
                    )
            session.last_activity_at = at
            session.ended_at = at + timedelta(minutes=1)
            session.message_count = 2 * exchanges
            session.dominant_emotion = max(set(feelings), key=feelings.count)
            seconds = round((session.ended_at - start).total_seconds())
            session.session_summary = {
                "duration_seconds": seconds,
                "message_count": 2 * exchanges,
                "dominant_emotion": session.dominant_emotion,
                "one_liner": f"{name} talked with Clara for {seconds // 60} minutes.",
                "counts": {"repeats": repeats},
                "summarizer": "extractive",
                "version": 1,
            }
            rows["sessions"].append(session)
            last = session.ended_at
            if rng.random() < 0.02:
                rows["alerts"].append(
                    m.Alert(
                        person_id=person.id,
                        session_id=session.id,
                        kind=m.Alert.Kind.ESCALATION,
                        detail={"reason": "asks_for_help"},
                        dedupe_key=f"escalation:{session.id}",
                        created_at=at,
                        status=rng.choice(["open", "resolved", "resolved"]),
                    )
                )
    person.last_active_at = last
    return person


def build(*, days: int, others: int) -> None:
    from django.db import transaction
    from django.utils import timezone

    from memory import models as m
    from memory.insights.trends import person_trends_compute

    if m.Person.objects.filter(display_name="Bench Peggy").exists():
        log("reusing the database")
        return
    log(f"building: one person over {days} days, {others} others over 30 days")
    started = time.perf_counter()
    rng = random.Random(SEED)
    now = timezone.now().astimezone(UTC)
    rows = {k: [] for k in ("people", "sessions", "messages", "emotions", "repetitions")}
    rows |= {"narratives": [], "alerts": []}
    rows["story_ids"] = list(m.Narrative.objects.values_list("id", "category"))
    rows["meanings"] = meanings_of_questions()
    build_person(days=days, now=now, rng=rng, name="Bench Peggy", rows=rows)
    for index in range(others):
        build_person(days=30, now=now, rng=rng, name=f"Other {index:02d}", rows=rows)
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
    person = m.Person.objects.get(display_name="Bench Peggy")
    person_trends_compute(person_id=person.id)
    log(
        f"built in {time.perf_counter() - started:.0f} s: {len(rows['sessions'])} sessions, "
        f"{len(rows['messages'])} messages"
    )


def measure(*, runs: int) -> list[dict]:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from dashboard.models import CareRole, CareTeamMembership
    from memory.models import DetectedEmotion, OrganisationMembership, Person, Session

    person = Person.objects.get(display_name="Bench Peggy")
    user, _ = get_user_model().objects.get_or_create(username="bench-admin")
    OrganisationMembership.objects.get_or_create(user=user, organisation=person.organisation)
    CareTeamMembership.objects.update_or_create(
        user=user, person=person, defaults={"role": CareRole.ADMIN, "can_see_transcripts": True}
    )
    sessions = Session.objects.filter(person=person).count()
    readings = DetectedEmotion.objects.filter(person=person).count()
    log(f"the person: {sessions} conversations, {readings} readings")
    latest = Session.objects.filter(person=person).order_by("-created_at").first()
    client = Client()
    client.force_login(user)
    hx = {"HX-Request": "true"}
    p = person.id
    targets = [
        ("person page (the shell)", reverse("dashboard:person", args=[p]), {}),
        ("feelings over time (30 days)", reverse("dashboard:person_emotions", args=[p]), hx),
        (
            "time of day + weekly (90 days, 12 weeks)",
            reverse("dashboard:person_patterns", args=[p]),
            hx,
        ),
        (
            "questions (this week, 30 days, 20 conversations)",
            reverse("dashboard:person_repetition", args=[p]),
            hx,
        ),
        ("what helps", reverse("dashboard:person_calming", args=[p]), hx),
        ("conversations (first 20)", reverse("dashboard:person_sessions", args=[p]), hx),
        ("alerts", reverse("dashboard:person_alerts", args=[p]), hx),
        ("people list", reverse("dashboard:people"), {}),
        ("one conversation", reverse("dashboard:session", args=[p, latest.id]), {}),
        ("its transcript", reverse("dashboard:session_transcript", args=[p, latest.id]), hx),
        (
            "feelings over time (90 days)",
            reverse("dashboard:person_emotions", args=[p]) + "?days=90",
            hx,
        ),
    ]
    results = []
    for label, url, headers in targets:
        for _ in range(3):  # warm-up: templates, Plotly's validators, connection
            assert client.get(url, headers=headers).status_code == 200, url
        times, cpu = [], []
        for _ in range(runs):
            with CaptureQueriesContext(connection) as queries:
                started, started_cpu = time.perf_counter(), time.process_time()
                response = client.get(url, headers=headers)
                times.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - started_cpu) * 1000)
            assert response.status_code == 200
        times.sort()
        results.append(
            {
                "label": label,
                "median": statistics.median(times),
                "p95": times[max(0, round(0.95 * len(times)) - 1)],
                # This process's CPU time: what the request costs when the machine is not
                # shared (the wall clock also holds fsync waits and other processes' turns).
                "cpu": statistics.median(cpu),
                "queries": len(queries),
                "bytes": len(response.content),
            }
        )
        log(f"{label}: {results[-1]['median']:.1f} ms")
    return results


def report(results: list[dict], *, runs: int) -> None:
    from django.db import connection

    print(f"\nbackend: {connection.vendor}, {runs} runs each, load {os.getloadavg()[0]:.2f}\n")
    print("| request | median ms | p95 ms | CPU ms (median) | queries | KB | p95 ≤ 150 ms |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for row in results:
        met = "met" if row["p95"] <= TARGET_MS else "**missed**"
        print(
            f"| {row['label']} | {row['median']:.1f} | {row['p95']:.1f} | {row['cpu']:.1f} | "
            f"{row['queries']} | {row['bytes'] / 1024:.1f} | {met} |"
        )
    page = results[:7]
    print(
        f"\nThe whole person page (shell + 6 panels, one after another): "
        f"{sum(r['median'] for r in page):.0f} ms median sum; the browser asks for the panels "
        "in parallel."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--others", type=int, default=20)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    setup(os.environ.get("DATABASE_URL"), days=args.days, others=args.others)
    build(days=args.days, others=args.others)
    report(measure(runs=args.runs), runs=args.runs)


if __name__ == "__main__":
    main()
