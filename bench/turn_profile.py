#!/usr/bin/env python
"""Where a turn's CPU goes: the per-turn calls in process, and the two HTTP endpoints through
Django's whole request stack (middleware, API-key check, rate limit, ninja, JSON), without a server.

    .venv/bin/python bench/turn_profile.py                 # 10k messages (built by memory_bench)
    .venv/bin/python bench/turn_profile.py --size 1000000 --calls 300
    CLARA_BENCH_DIR=../bench-data .venv/bin/python bench/turn_profile.py --profile

It reuses memory_bench.py's pristine database of the size (build it with memory_bench.py first),
on a copy of its own (`profile-<size>.sqlite3`), with the production settings that memory_bench's
gunicorn runs with (DEBUG off, the HTTPS redirect on behind a trusted X-Forwarded-Proto).

CPU time (time.process_time, this one process: SQLite runs in it too) is what the issue's HTTP
targets are about, and it is much less disturbed by a busy machine than wall time. It prints the
CPU ms per call (p50, p90, mean) of each stage; with --profile, the cProfile top functions of each
(saved under bench/results/, git-ignored). This is what the figures in docs/benchmarks.md
("Where a turn's CPU goes") come from.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import shutil
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import memory_bench as mb  # noqa: E402


def cpu_ms(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {
        "n": len(ordered),
        "p50": round(mb.percentile(ordered, 0.50), 3),
        "p90": round(mb.percentile(ordered, 0.90), 3),
        "mean": round(statistics.fmean(ordered), 3),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=300, help="timed calls per stage")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--profile", action="store_true", help="also cProfile each stage")
    parser.add_argument("--only", default="", help="comma-separated stages (default: all)")
    args = parser.parse_args(argv)

    pristine = mb.db_path(args.size)
    if not mb.pristine_is_valid(pristine, args.size):
        raise SystemExit(f"{pristine} is missing or stale: run memory_bench.py --sizes {args.size}")
    work = mb.BENCH_DIR / f"profile-{args.size}.sqlite3"
    mb.remove_sqlite(work)
    shutil.copyfile(pristine, work)
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "clara.settings",
            "DATABASE_URL": f"sqlite:///{work}",
            "DEBUG": "0",
            "CELERY_EMBEDDED_BROKER": "1",
            "CELERY_BROKER_DIR": str(mb.BENCH_DIR / "broker"),
            "SECRET_KEY": "bench",
            "ALLOWED_HOSTS": "127.0.0.1,testserver",
            "CLARA_RECOVERY_LOG": str(mb.BENCH_DIR / "recovery-bench.jsonl"),
            "LOG_LEVEL": "WARNING",
            "CLARA_ENCRYPTION_KEYS": mb.BENCH_ENCRYPTION_KEY,
            "SECURE_PROXY_SSL_HEADER": "1",
        }
    )
    import django

    django.setup()
    from clara.celery import app as celery_app

    celery_app.conf.update(broker_url="memory://", result_backend="cache+memory://")
    from django.core.management import call_command
    from django.test import Client

    from memory.companion.context import context_build
    from memory.conversations import services
    from memory.conversations.selectors import memory_query
    from memory.models import Session

    call_command("migrate", verbosity=0)
    rng = random.Random(mb.SEED)
    session_ids = list(Session.objects.values_list("id", flat=True))
    _, raw_key = services.api_key_create(name="profile")
    client = Client(
        HTTP_AUTHORIZATION=f"Bearer {raw_key}", HTTP_X_FORWARDED_PROTO="https", secure=False
    )

    def http_post(path: str, body: dict, expect: int) -> None:
        response = client.post(path, json.dumps(body), content_type="application/json")
        if response.status_code != expect:
            raise SystemExit(f"{path} answered {response.status_code}: {response.content[:300]!r}")

    stages = {
        "memory_query": lambda: memory_query(
            session_id=rng.choice(session_ids), message=rng.choice(mb.PHRASES)
        ),
        "context_build": lambda: context_build(
            session_id=rng.choice(session_ids), message=rng.choice(mb.PHRASES)
        ),
        "exchange_record": lambda: services.exchange_record(
            session_id=rng.choice(session_ids),
            user_message=rng.choice(mb.PHRASES),
            assistant_message=rng.choice(mb.REPLIES),
            idempotency_key=f"bench-{uuid.uuid4().hex}",
        ),
        "http_query": lambda: http_post(
            f"/api/v1/sessions/{rng.choice(session_ids)}/query",
            {"message": rng.choice(mb.PHRASES)},
            200,
        ),
        "http_context": lambda: http_post(
            f"/api/v1/sessions/{rng.choice(session_ids)}/context",
            {"message": rng.choice(mb.PHRASES)},
            200,
        ),
        "http_exchange": lambda: http_post(
            f"/api/v1/sessions/{rng.choice(session_ids)}/exchanges",
            {
                "user_message": rng.choice(mb.PHRASES),
                "assistant_message": rng.choice(mb.REPLIES),
                "idempotency_key": f"bench-{uuid.uuid4().hex}",
            },
            201,
        ),
    }
    only = [s for s in args.only.split(",") if s]
    results = {}
    mb.RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    for name, call in stages.items():
        if only and name not in only:
            continue
        for _ in range(args.warmup):
            call()
        samples = []
        wall = []
        for _ in range(args.calls):
            w0, c0 = time.perf_counter(), time.process_time()
            call()
            samples.append((time.process_time() - c0) * 1000)
            wall.append((time.perf_counter() - w0) * 1000)
        results[name] = {"cpu_ms": cpu_ms(samples), "wall_ms": cpu_ms(wall)}
        line = f"{name}: CPU ms {results[name]['cpu_ms']}  wall ms {results[name]['wall_ms']}"
        print(line, flush=True)
        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(args.calls):
                call()
            profiler.disable()
            out = io.StringIO()
            stats = pstats.Stats(profiler, stream=out)
            stats.sort_stats("cumulative").print_stats(45)
            stats.sort_stats("tottime").print_stats(25)
            path = mb.RESULTS_DIR / f"turn-profile-{name}-{args.size}.txt"
            path.write_text(out.getvalue())
            # The raw profile too, for `pstats` (print_callees) or snakeviz.
            profiler.dump_stats(path.with_suffix(".prof"))
            print(f"  profile: {path}", flush=True)
    print(f"load average {mb.loadavg()}")
    mb.remove_sqlite(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
