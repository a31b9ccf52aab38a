#!/usr/bin/env python
"""Benchmark (not a test) of the nightly trends job (issue 5), on SQLite and PostgreSQL.

    .venv/bin/python bench/trends_bench.py                        # 1M emotions, 1,000 people
    .venv/bin/python bench/trends_bench.py --quick                # 50k emotions, 100 people
    .venv/bin/python bench/trends_bench.py --backends sqlite --emotions 200000 --people 300

Settings read DATABASE_URL at import, so each backend runs in a child process. The child builds
(or reuses, keyed by DATA_VERSION and the sizes) a database: people with sessions spread over
the last 60 days, one user message (odd sequence numbers) plus its emotion and repetition rows
per reading, and Clara's message (even numbers) only where it told a story (narrative_usage).
Loading is raw: executemany on SQLite (data/bench/trends-*.sqlite3), COPY on PostgreSQL (the
dedicated database clara_trends_bench). It then times the job's loop: people_due_for_trends()
and person_trends_compute for each person (cold, then warm), then alerts_from_trends for each.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sqlite3
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "data" / "bench"
PG_SERVER = "postgres://postgres@127.0.0.1:5432/test"
PG_NAME = "clara_trends_bench"  # the default; --pg-database names another
DATA_VERSION = 1
SEED = 20261122
SPAN_DAYS = 60
TARGET_S = 10.0
ZONES = ["Europe/London", "America/New_York", "Europe/Paris", "Australia/Sydney", "UTC"]
QTYPES = [("general", 40), ("location", 15), ("time", 15), ("identity", 10), ("activity", 10)]
QTYPES += [("person", 10)]
EMOTIONS = ["calm", "neutral", "lonely", "sad", "confused", "anxious", "fearful"]
CATEGORIES = ["calming", "reminiscence", "orientation", "family"]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1] if ordered else float("nan")


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


# --- data ----------------------------------------------------------------------------------


def person_rows(index: int, per_person: int, now: datetime, rng: random.Random) -> dict:
    """All rows of one person, as Python values, by table."""
    pid = uuid.UUID(int=rng.getrandbits(128), version=4)
    rows = {t: [] for t in ("sessions", "messages", "emotions", "repetitions", "narratives")}
    sessions, left = [], per_person
    while left > 0:
        count = min(left, rng.randint(5, 30))
        sessions.append((now - timedelta(seconds=rng.uniform(7200, SPAN_DAYS * 86400)), count))
        left -= count
    sessions.sort()
    qtypes, weights = zip(*QTYPES, strict=True)
    for start, count in sessions:
        sid, at, seen = uuid.uuid4(), start, {}
        for n in range(count):
            at += timedelta(seconds=rng.uniform(20, 90), microseconds=rng.randrange(1, 999_999))
            mid, seq = uuid.uuid4(), 2 * n + 1
            rows["messages"].append((mid, sid, pid, "user", "Where is my husband?", at, seq))
            distress = min(1.0, max(0.0, rng.betavariate(2, 5)))
            emotion = EMOTIONS[min(6, int(distress * 7))]
            trajectory = rng.choice(["stable", "stable", "escalating", "de-escalating"])
            row = (uuid.uuid4(), mid, sid, pid, emotion, rng.uniform(0.5, 1), distress)
            rows["emotions"].append((*row, trajectory, at))
            qtype = rng.choices(qtypes, weights)[0]
            repeat = seen.get(qtype, 0) if qtype != "general" and rng.random() < 0.5 else 0
            seen[qtype] = seen.get(qtype, 0) + 1
            row = (uuid.uuid4(), sid, pid, mid, f"{qtype} words", "Where am I?", qtype, repeat)
            rows["repetitions"].append((*row, at))
            if rng.random() < 0.08:  # Clara told a story in her reply (message seq + 1)
                told = at + timedelta(seconds=3)
                cid, story = uuid.uuid4(), f"story-{rng.randrange(60):03d}"
                rows["messages"].append((cid, sid, pid, "assistant", "Once...", told, seq + 1))
                row = (uuid.uuid4(), story, sid, pid, cid, "seed", rng.choice(CATEGORIES))
                rows["narratives"].append((*row, emotion, told))
        ended = at + timedelta(minutes=2)
        rows["sessions"].append((sid, pid, start, at, ended, "ended", 2 * count, False, False))
    context = {"timezone": ZONES[index % len(ZONES)], "preferredName": f"P{index}"}
    last = max(s[3] for s in rows["sessions"])
    rows["people"] = [(pid, f"Person {index:04d}", start, last, context, "active", True)]
    return rows


def columns() -> dict:
    """Table and column names per kind of row (checked: every NOT NULL column is filled)."""
    from memory import models as m

    spec = {
        "people": (
            m.Person,
            "id display_name created_at last_active_at caregiver_context status memory_enabled",
        ),
        "sessions": (
            m.Session,
            "id person_id created_at last_activity_at ended_at status message_count "
            "escalation_triggered chronic_repetition_pattern",
        ),
        "messages": (
            m.ChatMessage,
            "id session_id person_id role content timestamp sequence_number",
        ),
        "emotions": (
            m.DetectedEmotion,
            "id message_id session_id person_id emotion confidence distress_score trajectory "
            "timestamp",
        ),
        "repetitions": (
            m.RepetitionRecord,
            "id session_id person_id message_id fingerprint original_message question_type "
            "repeat_count timestamp",
        ),
        "narratives": (
            m.NarrativeUsage,
            "id narrative_id session_id person_id message_id mode category emotion_at_usage "
            "timestamp",
        ),
    }
    out = {}
    for kind, (model, names) in spec.items():
        fields = {f.attname: f for f in model._meta.concrete_fields}
        missing = [a for a, f in fields.items() if not f.null and a not in names.split()]
        assert not missing, f"{model._meta.db_table}: fill {missing}"
        out[kind] = (model._meta.db_table, [fields[a].column for a in names.split()])
    return out


ORDER = ["people", "sessions", "messages", "emotions", "repetitions", "narratives"]


def sqlite_value(value):
    # What Django's SQLite backend stores (uuid hex, naive UTC text, JSON text, 0/1).
    if isinstance(value, uuid.UUID):
        return value.hex
    if isinstance(value, datetime):
        return str(value.astimezone(UTC).replace(tzinfo=None))
    if isinstance(value, dict):
        return json.dumps(value)
    return int(value) if isinstance(value, bool) else value


def populate(args, now: datetime, vendor: str) -> dict:
    from contextlib import nullcontext

    from django.db import connection, transaction

    cols = columns()
    started, counts = time.perf_counter(), dict.fromkeys(ORDER, 0)
    rng = random.Random(SEED)
    if vendor == "sqlite":
        raw = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
        raw.execute("PRAGMA synchronous=OFF")
        raw.execute("BEGIN")
    else:
        connection.ensure_connection()
        raw = connection.connection
    with nullcontext() if vendor == "sqlite" else transaction.atomic():
        _load(args, now, vendor, raw, cols, counts, rng)
    meta = (DATA_VERSION, args.people, args.emotions, now.isoformat())
    if vendor == "sqlite":
        raw.execute("INSERT INTO bench_meta VALUES (?, ?, ?, ?)", meta)
        raw.execute("COMMIT")
        raw.execute("ANALYZE")
        raw.close()
    else:
        with raw.cursor() as cursor:
            cursor.execute("INSERT INTO bench_meta VALUES (%s, %s, %s, %s)", meta)
            cursor.execute("VACUUM ANALYZE")
    return {"seconds": round(time.perf_counter() - started, 1), **counts}


def _load(args, now, vendor, raw, cols, counts, rng) -> None:
    from psycopg.types.json import Jsonb

    per_person = args.emotions // args.people
    for index in range(args.people):
        extra = 1 if index < args.emotions % args.people else 0
        rows = person_rows(index, per_person + extra, now, rng)
        for kind in ORDER:
            table, names = cols[kind]
            counts[kind] += len(rows[kind])
            if vendor == "sqlite":
                sql = (
                    f"INSERT INTO {table} ({','.join(names)}) VALUES ({','.join('?' * len(names))})"
                )
                raw.executemany(sql, ([sqlite_value(v) for v in row] for row in rows[kind]))
                continue
            with raw.cursor() as cursor:
                with cursor.copy(f"COPY {table} ({','.join(names)}) FROM STDIN") as copy:
                    for row in rows[kind]:
                        copy.write_row([Jsonb(v) if isinstance(v, dict) else v for v in row])
        if index % 100 == 99:
            log(f"{vendor}: {index + 1} people loaded, {counts['emotions']:,} emotions")


# --- child ---------------------------------------------------------------------------------


def prepare(args, vendor: str, url: str) -> tuple[datetime, dict | None]:
    """Migrate; reuse the data if bench_meta matches, else (re)build. Returns (now, load stats)."""
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE IF NOT EXISTS bench_meta"
            " (version integer, people integer, emotions integer, built_at text)"
        )
        cursor.execute("SELECT version, people, emotions, built_at FROM bench_meta")
        meta = cursor.fetchone()
    if meta and tuple(meta[:3]) == (DATA_VERSION, args.people, args.emotions):
        log(f"{vendor}: reusing data built at {meta[3]}")
        return datetime.fromisoformat(meta[3]), None
    if meta:  # stale: start from an empty database
        connection.close()
        rebuild_database(vendor, url)
        return prepare(args, vendor, url)
    now = datetime.now(UTC).replace(microsecond=0)
    log(f"{vendor}: building {args.people} people, {args.emotions:,} emotions")
    return now, populate(args, now, vendor)


def rebuild_database(vendor: str, url: str) -> None:
    if vendor == "sqlite":
        path = Path(url.removeprefix("sqlite:///"))
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        return
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(PG_SERVER, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")


def timed_loop(func) -> dict:
    per, started = [], time.perf_counter()
    for call in func():
        began = time.perf_counter()
        call()
        per.append((time.perf_counter() - began) * 1000)
    total = time.perf_counter() - started
    return {"s": round(total, 2), "p50": percentile(per, 50), "p99": percentile(per, 99)}


def run_child(args) -> None:
    vendor, url = args.child, args.child_url
    os.environ.update(
        DATABASE_URL=url,
        DEBUG="0",
        SECRET_KEY="bench",
        ALLOWED_HOSTS="x",
        CELERY_EMBEDDED_BROKER="1",
        CELERY_BROKER_DIR=str(BENCH_DIR / "broker"),
        DJANGO_SETTINGS_MODULE="clara.settings",
        LOG_LEVEL="WARNING",
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from memory import alerts, trends
    from memory.models import Alert, PersonTrend

    if vendor == "sqlite" and sqlite_stale(args, url):
        rebuild_database(vendor, url)
    now, load = prepare(args, vendor, url)
    PersonTrend.objects.all().delete()
    Alert.objects.all().delete()
    day = now.date()
    result = {"backend": vendor, "load": load, "load_before": loadavg()}

    def trends_job():
        for person_id in trends.people_due_for_trends(now=now):
            yield lambda p=person_id: trends.person_trends_compute(person_id=p, day=day, now=now)

    def alerts_job():
        for person_id in trends.people_due_for_trends(now=now):
            yield lambda p=person_id: alerts.alerts_from_trends(person_id=p, now=now)

    result["people_due"] = len(trends.people_due_for_trends(now=now))
    for label, job in (("cold", trends_job), ("warm", trends_job), ("alerts", alerts_job)):
        result[label] = timed_loop(job)
        log(f"{vendor} {label}: {result[label]}")
    result["alerts_raised"] = Alert.objects.count()
    result["load_after"] = loadavg()
    Path(args.child_out).write_text(json.dumps(result))


def sqlite_stale(args, url: str) -> bool:
    path = url.removeprefix("sqlite:///")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        meta = conn.execute("SELECT version, people, emotions FROM bench_meta").fetchone()
        conn.close()
    except sqlite3.Error:
        return True
    return tuple(meta or ()) != (DATA_VERSION, args.people, args.emotions)


# --- parent --------------------------------------------------------------------------------


def database_url(vendor: str, args) -> str:
    if vendor == "sqlite":
        return f"sqlite:///{BENCH_DIR / f'trends-{args.people}-{args.emotions}.sqlite3'}"
    import psycopg

    name = args.pg_database
    if not name.isidentifier():
        raise SystemExit(f"--pg-database must be a plain name, got {name!r}")
    with psycopg.connect(PG_SERVER, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(f"CREATE DATABASE {name}")
    return PG_SERVER.rsplit("/", 1)[0] + f"/{name}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--emotions", type=int, default=1_000_000)
    parser.add_argument("--people", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="50k emotions, 100 people")
    parser.add_argument("--pg-database", default=PG_NAME, help="PostgreSQL database to use")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-url", help=argparse.SUPPRESS)
    parser.add_argument("--child-out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.emotions, args.people = 50_000, 100
    if args.child:
        run_child(args)
        return 0
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    results = []
    for vendor in args.backends.split(","):
        out = BENCH_DIR / f"trends-result-{vendor}.json"
        out.unlink(missing_ok=True)
        argv = [sys.executable, __file__, "--child", vendor, "--child-url"]
        argv += [database_url(vendor, args), "--child-out", str(out)]
        argv += ["--emotions", str(args.emotions), "--people", str(args.people)]
        if subprocess.run(argv, cwd=ROOT, check=False).returncode or not out.exists():
            log(f"{vendor}: child failed")
            continue
        results.append(json.loads(out.read_text()))
    print(f"\n{args.people:,} people, {args.emotions:,} emotions; {os.cpu_count()} CPUs\n")
    print("| Backend | Run | Total s | ms/person p50 | ms/person p99 | Target ≤ 10 s | Load avg |")
    print("|---|---|---:|---:|---:|---|---|")
    for r in results:
        for label in ("cold", "warm", "alerts"):
            t = r[label]
            verdict = "—" if label == "alerts" else ("met" if t["s"] <= TARGET_S else "missed")
            name = {"cold": "trends, cold", "warm": "trends, warm", "alerts": "alerts only"}
            row = [r["backend"], name[label], f"{t['s']:.2f}", f"{t['p50']:.1f}"]
            row += [f"{t['p99']:.1f}", verdict, f"{r['load_before']} → {r['load_after']}"]
            print("| " + " | ".join(row) + " |")
    for r in results:
        print(
            f"\n{r['backend']}: {r['people_due']} people due, {r['alerts_raised']} alerts, "
            f"load {r['load'] or 'reused'}"
        )
    return 0 if len(results) == len(args.backends.split(",")) else 1


if __name__ == "__main__":
    sys.exit(main())
