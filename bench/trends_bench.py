#!/usr/bin/env python
"""Benchmark (not a test) of the nightly trends job (issue 5), on SQLite and PostgreSQL.

    .venv/bin/python bench/trends_bench.py                        # 1M emotions, 1,000 people
    .venv/bin/python bench/trends_bench.py --quick                # 50k emotions, 100 people
    .venv/bin/python bench/trends_bench.py --backends sqlite --emotions 200000 --people 300
    .venv/bin/python bench/trends_bench.py --pg-database bench_trends_mine --repeat 5

Settings read DATABASE_URL at import, so each backend runs in a child process. The child builds
(or reuses, keyed by DATA_VERSION and the sizes) a database: people with sessions spread over
the last 60 days, one user message (odd sequence numbers) plus its emotion and repetition rows
per reading, and Clara's message (even numbers) only where it told a story (narrative_usage).
Loading is raw: executemany on SQLite (data/bench/trends-*.sqlite3), COPY on PostgreSQL (the
database --pg-database, default clara_trends_bench). It then times, on one process:
- the job as the worker runs it, --repeat times: people_due_for_trends() and
  trends_batch.people_trends_compute per BATCH_SIZE people, cold (every row inserted) then
  warm (nothing changed, nothing written);
- for comparison, the old loop of person_trends_compute per person, cold then warm, and a
  batch run after it that must find every row unchanged (skip with --no-per-person);
- alerts_from_trends for each person.
Each timing has wall seconds, and CPU seconds of this process and of its PostgreSQL backend, so
that a run on a busy machine can be told apart from a slow one.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sqlite3
import statistics
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
        # NOT NULL columns the rows leave out get their model default (columns added later,
        # such as Person.persona); one without a default must be filled above.
        left = [a for a, f in fields.items() if not f.null and a not in names.split()]
        missing = [a for a in left if not fields[a].has_default()]
        assert not missing, f"{model._meta.db_table}: fill {missing}"
        defaults = tuple(fields[a].get_default() for a in left)
        columns_ = [fields[a].column for a in names.split() + left]
        out[kind] = (model._meta.db_table, columns_, defaults)
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
            table, names, defaults = cols[kind]
            rows[kind] = [(*row, *defaults) for row in rows[kind]]
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


def server_cpu() -> float | None:
    """CPU seconds used so far by this connection's PostgreSQL backend (same machine), else None.

    SQLite runs inside this process, so process CPU already counts it.
    """
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed_loop(func) -> dict:
    """Time each call `func` yields: wall total and per-call p50/p99, and CPU seconds spent
    by this process (client; SQLite too) and by the PostgreSQL backend (server)."""
    per, server = [], server_cpu()
    started, cpu = time.perf_counter(), time.process_time()
    for call in func():
        began = time.perf_counter()
        call()
        per.append((time.perf_counter() - began) * 1000)
    total, cpu = time.perf_counter() - started, time.process_time() - cpu
    server = None if server is None else server_cpu() - server
    return {
        "s": round(total, 2),
        "p50": percentile(per, 50),
        "p99": percentile(per, 99),
        "calls": len(per),
        "cpu": round(cpu, 2),
        "server_cpu": None if server is None else round(server, 2),
        "load": loadavg().split()[0],
    }


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
    from memory.core.crypto import development_key

    # DEBUG is off, so settings want real keys; a fixed one keeps reused data readable.
    os.environ.setdefault("CLARA_ENCRYPTION_KEYS", development_key("bench"))
    import django

    django.setup()
    from memory.insights import alerts, trends, trends_batch
    from memory.models import Alert, PersonTrend

    if vendor == "sqlite" and sqlite_stale(args, url):
        rebuild_database(vendor, url)
    now, load = prepare(args, vendor, url)
    Alert.objects.all().delete()
    day = now.date()
    result = {"backend": vendor, "load": load, "load_before": loadavg(), "runs": []}

    def batch_job():
        # What compute_all_trends and its compute_trends_batch tasks do, on one worker.
        due = trends.people_due_for_trends(now=now)
        for start in range(0, len(due), trends_batch.BATCH_SIZE):
            chunk = due[start : start + trends_batch.BATCH_SIZE]
            yield lambda c=chunk: trends_batch.people_trends_compute(person_ids=c, day=day, now=now)

    def per_person_job():
        # The job before batches: one person_trends_compute per person.
        for person_id in trends.people_due_for_trends(now=now):
            yield lambda p=person_id: trends.person_trends_compute(person_id=p, day=day, now=now)

    def alerts_job():
        for person_id in trends.people_due_for_trends(now=now):
            yield lambda p=person_id: alerts.alerts_from_trends(person_id=p, now=now)

    def run(label: str, job, *, cold: bool) -> None:
        if cold:  # every row is inserted; warm runs find them unchanged and write nothing
            PersonTrend.objects.all().delete()
        timing = {"label": label, **timed_loop(job)}
        result["runs"].append(timing)
        log(f"{vendor} {label}: {timing}")

    result["people_due"] = len(trends.people_due_for_trends(now=now))
    for _ in range(args.repeat):
        run("batch, cold", batch_job, cold=True)
        run("batch, warm", batch_job, cold=False)
    if args.per_person:
        run("per person, cold", per_person_job, cold=True)
        run("per person, warm", per_person_job, cold=False)
    # Both paths store the same data: the per-person rows are left for the batch to check.
    if args.per_person:
        before = dict(PersonTrend.objects.values_list("person_id", "data"))
        run("batch, after per person", batch_job, cold=False)
        after = dict(PersonTrend.objects.values_list("person_id", "data"))
        result["paths_agree"] = before == after
    run("alerts only", alerts_job, cold=False)
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
    parser.add_argument("--repeat", type=int, default=3, help="batch runs (cold + warm) to time")
    parser.add_argument(
        "--no-per-person",
        dest="per_person",
        action="store_false",
        help="skip timing the old per-person loop (for comparison)",
    )
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
        argv += ["--repeat", str(args.repeat)] + ([] if args.per_person else ["--no-per-person"])
        if subprocess.run(argv, cwd=ROOT, check=False).returncode or not out.exists():
            log(f"{vendor}: child failed")
            continue
        results.append(json.loads(out.read_text()))
    print(f"\n{args.people:,} people, {args.emotions:,} emotions; {os.cpu_count()} CPUs\n")
    print(
        "| Backend | Run | Total s, median (min–max) | Runs | CPU s client + server "
        "| ms per call p50 | Target ≤ 10 s | Load avg (1 min) |"
    )
    print("|---|---|---:|---:|---:|---:|---|---|")
    for r in results:
        labels = list(dict.fromkeys(run["label"] for run in r["runs"]))
        for label in labels:
            runs = [run for run in r["runs"] if run["label"] == label]
            totals = sorted(run["s"] for run in runs)
            median = statistics.median(totals)
            spread = f" ({totals[0]:.2f}–{totals[-1]:.2f})" if len(totals) > 1 else ""
            cpu = statistics.median(run["cpu"] for run in runs)
            server = [run["server_cpu"] for run in runs if run["server_cpu"] is not None]
            cpu_text = f"{cpu:.1f}" + (f" + {statistics.median(server):.1f}" if server else "")
            p50 = statistics.median(run["p50"] for run in runs)
            verdict = (
                "—" if label.startswith("alerts") else ("met" if median <= TARGET_S else "missed")
            )
            loads = ", ".join(run["load"] for run in runs)
            row = [r["backend"], label, f"{median:.2f}{spread}", str(len(runs)), cpu_text]
            row += [f"{p50:.1f}", verdict, loads]
            print("| " + " | ".join(row) + " |")
    for r in results:
        agree = r.get("paths_agree")
        print(
            f"\n{r['backend']}: {r['people_due']} people due, {r['alerts_raised']} alerts, "
            f"load {r['load'] or 'reused'}"
            + ("" if agree is None else f"; per-person and batch rows identical: {agree}")
        )
    return 0 if len(results) == len(args.backends.split(",")) else 1


if __name__ == "__main__":
    sys.exit(main())
