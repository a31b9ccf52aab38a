#!/usr/bin/env python
"""CPU per bot request, in process, with the load test's people: where a turn's server time goes.

    .venv/bin/python bench/request_cpu.py                            # SQLite, embedded broker
    .venv/bin/python bench/request_cpu.py --profile                  # + cProfile of each endpoint
    .venv/bin/python bench/request_cpu.py --database-url postgres://postgres@127.0.0.1:5432/clara_x \\
        --redis-url redis://127.0.0.1:6379/14                        # PostgreSQL + Redis

The same people as bench/load_test.py (its lines: repeats, distress, lines never heard before,
everyday ones; conversations of 20-60 turns), but one after another in this process through
Django's whole request stack (every middleware, the API-key check, the rate limit, ninja, the
jobs queued on the real broker), with the production settings the load test deploys (DEBUG off).
No server and no waiting, so CPU time (time.process_time: SQLite runs in this process too;
PostgreSQL's own CPU is not in it) is steady on a busy machine, where wall time is not. What
gunicorn adds (HTTP parsing, its threads) is not in it either: the load test's server CPU per
request, less this, is that.

Prints CPU ms per request (p50, p90, mean) for /sessions, /context, /exchanges and /close, and
the SQL statements each request and job sends (mean) and, on PostgreSQL (on this machine), the
CPU its backend spent on them; with
--profile the cProfile top functions of /context and /exchanges (bench/results/, git-ignored).

`--jobs`: also the worker's side. Each job a turn queues (it is still sent to the broker, as the
web process sends it) is run here after the turn, the way a worker runs it (`Task.apply`: the
task's own code and its database work, not the broker's delivery), and timed by task name: CPU
ms per job (p50, p90, mean), and per turn (the sum over a turn's jobs, averaged). Jobs a job
queues (an alert's delivery steps) are run and counted too. With --profile, the jobs get a
profile of their own (bench/results/job-cpu-profile.txt).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import load_test as lt  # noqa: E402


def summary(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {
        "n": len(ordered),
        "p50": round(lt.percentile(ordered, 50), 3),
        "p90": round(lt.percentile(ordered, 90), 3),
        "mean": round(statistics.fmean(ordered), 3) if ordered else float("nan"),
    }


def _write_profile(profiler: cProfile.Profile, name: str) -> Path:
    """The profile's top functions (cumulative, then own time) as text, and its raw .prof, under
    bench/results/ (git-ignored)."""
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(70)
    stats.sort_stats("tottime").print_stats(40)
    path = ROOT / "bench" / "results" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(out.getvalue())
    profiler.dump_stats(path.with_suffix(".prof"))
    return path


def _backend_cpu_reader(connection):
    """A function giving the CPU ms the PostgreSQL backend of `connection` has used so far
    (its /proc/<pid>/schedstat; 0 on SQLite, where the engine's CPU is this process's own)."""
    if connection.vendor != "postgresql":
        return lambda: 0.0
    connection.ensure_connection()
    stat = Path(f"/proc/{connection.connection.info.backend_pid}/schedstat")
    return lambda: int(stat.read_text().split()[0]) / 1e6


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--people", type=int, default=50)
    parser.add_argument("--turns", type=int, default=12, help="turns measured per person")
    parser.add_argument("--warmup-turns", type=int, default=3, help="turns per person first")
    parser.add_argument("--database-url", default=f"sqlite:///{ROOT}/data/bench/clara_cpu.sqlite3")
    parser.add_argument("--redis-url", default="", help="'' for the embedded broker")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--jobs", action="store_true", help="run and time the jobs each turn queues"
    )
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)

    work = ROOT / "data" / "bench" / f"cpu-{uuid.uuid4().hex[:8]}"
    work.mkdir(parents=True)
    env = {
        "DJANGO_SETTINGS_MODULE": "clara.settings",
        "DATABASE_URL": args.database_url,
        "DEBUG": "0",
        "SECRET_KEY": "bench-" + uuid.uuid4().hex * 2,
        "ALLOWED_HOSTS": "127.0.0.1,testserver",
        "CLARA_DATA_DIR": str(work),
        "CLARA_ENCRYPTION_KEYS": lt._encryption_key(),
        "CLARA_API_RATE_LIMIT_PER_MINUTE": "10000000",
        "SECURE_SSL_REDIRECT": "0",
        "CELERY_QUEUE": f"clara-cpu-{uuid.uuid4().hex[:8]}",
        "LOG_LEVEL": "WARNING",
    }
    if args.redis_url:
        env["REDIS_URL"] = args.redis_url
    else:
        os.environ.pop("REDIS_URL", None)
        env.update({"CELERY_EMBEDDED_BROKER": "1", "CELERY_BROKER_DIR": str(work / "broker")})
    os.environ.update(env)
    deployment = lt.Deployment.__new__(lt.Deployment)
    deployment.args = argparse.Namespace(database_url=args.database_url, from_sqlite=None)
    deployment._fresh_database()

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from memory.conversations import services

    call_command("migrate", verbosity=0)
    _, raw_key = services.api_key_create(name="cpu")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {raw_key}")

    opts = lt.Options(
        argparse.Namespace(
            turn_every=(0, 0),
            think=(0, 0),
            conversation_turns=(20, 60),
            repeat_share=0.3,
            distress_share=0.05,
            fresh_share=0.2,
        )
    )
    rec = lt.Recorder()
    people = [lt.Person(n, "127.0.0.1", 80, raw_key, opts, rec) for n in range(args.people)]
    samples: dict[str, list[float]] = {step: [] for step in lt.STEPS}
    # SQL statements sent, by request step and by job: each costs the database's CPU too.
    statements: dict[str, list[int]] = {}
    sent = [0]

    def _count(execute, sql, params, many, context):
        sent[0] += 1
        return execute(sql, params, many, context)

    connection.execute_wrappers.append(_count)
    # PostgreSQL's side: the CPU its backend for this connection spent (Linux's schedstat, in ns;
    # the server runs on this machine), by request step and by job.
    database_ms: dict[str, list[float]] = {}
    backend_cpu = _backend_cpu_reader(connection)

    @contextlib.contextmanager
    def sql_counted(name: str):
        """The statements sent and the backend's CPU inside the block, kept under `name`."""
        before, db_before = sent[0], backend_cpu()
        yield
        statements.setdefault(name, []).append(sent[0] - before)
        database_ms.setdefault(name, []).append(backend_cpu() - db_before)

    # CPU ms by task name: of the jobs the measured turns queued, and of those the closes queued.
    job_samples: dict[str, list[float]] = {}
    at_close: dict[str, list[float]] = {}
    measuring: dict[str, list[float]] | None = None  # where run_jobs counts (None: warm-up)
    # CPU time of this thread (the requests run in it): a busy machine does not move it.
    profiler = cProfile.Profile(time.thread_time) if args.profile else None
    queued: list[tuple[str, tuple, dict]] = []
    job_profiler = cProfile.Profile(time.thread_time) if args.profile and args.jobs else None
    if args.jobs:
        from celery.signals import before_task_publish

        def _record(sender=None, body=None, **kwargs):
            job_args, job_kwargs, _embed = body
            queued.append((sender, tuple(job_args), dict(job_kwargs)))

        before_task_publish.connect(_record, weak=False)

    def run_jobs() -> None:
        from clara.celery import app as celery_app

        profiled = job_profiler if measuring is not None else None
        while queued:
            name, job_args, job_kwargs = queued.pop(0)
            if profiled:
                profiled.enable()
            short = name.rsplit(".", 1)[-1]
            started = time.process_time()
            with sql_counted(f"job {short}"):
                celery_app.tasks[name].apply(args=job_args, kwargs=job_kwargs, throw=True)
            spent = (time.process_time() - started) * 1000
            if profiled:
                profiled.disable()
            if measuring is not None:
                measuring.setdefault(short, []).append(spent)

    def post(step: str, path: str, body: dict) -> dict:
        started = time.process_time()
        with sql_counted(step):
            response = client.post(path, json.dumps(body), content_type="application/json")
        samples[step].append((time.process_time() - started) * 1000)
        if not 200 <= response.status_code < 300:
            raise SystemExit(f"{path}: {response.status_code} {response.content[:300]!r}")
        return response.json()

    sessions = {}
    for person in people:
        sessions[person] = post("session", "/api/v1/sessions", {"user_id": person.user_id})

    def turn(person, n: int, step_names=("context", "exchange")) -> None:
        base = f"/api/v1/sessions/{sessions[person]['session_id']}"
        message, reading = person._line()
        post(step_names[0], f"{base}/context", {"message": message, "emotion": reading})
        post(
            step_names[1],
            f"{base}/exchanges",
            {
                "user_message": message,
                "assistant_message": lt.REPLY,
                "idempotency_key": f"turn-{n}",
                "emotion": reading,
            },
        )
        if args.jobs:
            if profiler:
                profiler.disable()
            run_jobs()
            if profiler:
                profiler.enable()

    for n in range(args.warmup_turns):
        for person in people:
            turn(person, n)
    for step in samples:
        samples[step].clear()
    statements.clear()
    database_ms.clear()
    measuring = job_samples
    if profiler:
        profiler.enable()
    for n in range(args.warmup_turns, args.warmup_turns + args.turns):
        for person in people:
            turn(person, n)
    if profiler:
        profiler.disable()
    for person in people:
        post("close", f"/api/v1/sessions/{sessions[person]['session_id']}/close", {})
    measuring = at_close
    run_jobs()

    results = {step: summary(values) for step, values in samples.items()}
    for step, result in results.items():
        print(f"{step}: CPU ms {result}")
    if args.jobs:
        turns = args.people * args.turns
        results["jobs"] = {name: summary(values) for name, values in sorted(job_samples.items())}
        for name, values in sorted(job_samples.items(), key=lambda item: -sum(item[1])):
            print(
                f"job {name}: {len(values) / turns:.2f} a turn, CPU ms {summary(values)}, "
                f"{sum(values) / turns:.2f} ms a turn"
            )
        total = sum(sum(values) for values in job_samples.values()) / turns
        results["jobs_per_turn_ms"] = round(total, 3)
        print(f"jobs: {total:.2f} CPU ms a turn")
        results["jobs_at_close"] = {name: summary(values) for name, values in at_close.items()}
        for name, values in sorted(at_close.items()):
            print(f"job at close {name}: CPU ms {summary(values)}")
    results["statements"] = {
        name: round(statistics.fmean(counts), 2) for name, counts in statements.items()
    }
    print("SQL statements (mean):", results["statements"])
    if connection.vendor == "postgresql":
        results["database_cpu_ms"] = {
            name: round(statistics.fmean(values), 3) for name, values in database_ms.items()
        }
        print("PostgreSQL backend CPU ms (mean):", results["database_cpu_ms"])
    print(f"load average {lt.loadavg()}")
    if profiler:
        print(f"profile: {_write_profile(profiler, 'request-cpu-profile.txt')}")
    if job_profiler:
        print(f"job profile: {_write_profile(job_profiler, 'job-cpu-profile.txt')}")
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
