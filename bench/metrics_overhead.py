#!/usr/bin/env python
"""What /metrics and tracing cost each request (issue 34): a micro-benchmark, not a test.

    .venv/bin/python bench/metrics_overhead.py                     # both parts, defaults
    .venv/bin/python bench/metrics_overhead.py --middleware 20000 --turns 400

1. The middleware alone. One routed request to the per-turn route
   (`api/v1/sessions/<session_id>/context`) whose view runs 6 `SELECT 1` on SQLite, answered by
   the view alone and by clara.metrics.MetricsMiddleware around it, interleaved in rounds; in a
   process with values in memory (`runserver`, tests) and in one with PROMETHEUS_MULTIPROC_DIR
   (the Procfile's gunicorn: every value an mmap'd file).
2. A whole /context turn through Django's test client (every middleware, the real view, a
   person with a few dozen messages on a fresh SQLite file), in three processes on the same
   file: without the metrics middleware, with it (the default), and with it and tracing on
   (clara.tracing.configure: Django, Celery and sqlite3 instrumented, spans through the privacy
   filter to an exporter that drops them, in batches as in production), every request sampled
   and one in ten (CLARA_OTEL_SAMPLE_RATIO's default).

Prints markdown tables; the difference of the medians is the cost.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STATEMENTS = 6
MESSAGES = [
    "Good morning, is it raining today?",
    "Where did I put my glasses?",
    "Is my daughter coming to see me?",
    "What day is it?",
    "I had porridge for breakfast.",
    "The garden looks lovely this morning.",
]


def _setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DEBUG", "1")
    os.environ["DJANGO_SETTINGS_MODULE"] = "clara.settings"
    import django

    django.setup()


def _summary(values: list[int]) -> dict:
    values = sorted(values)
    return {
        "p50_us": values[len(values) // 2] / 1000,
        "p99_us": values[int(len(values) * 0.99)] / 1000,
        "n": len(values),
    }


def middleware_child(requests: int) -> dict:
    _setup()
    from django.db import connection
    from django.http import HttpResponse
    from django.test import RequestFactory
    from django.urls import resolve

    from clara.metrics import MetricsMiddleware

    path = "/api/v1/sessions/0190a000-0000-7000-8000-000000000001/context"
    request = RequestFactory().post(path, b"{}", content_type="application/json")
    request.resolver_match = resolve(path)

    def view(_request):
        with connection.cursor() as cursor:
            for _ in range(STATEMENTS):
                cursor.execute("SELECT 1")
                cursor.fetchone()
        return HttpResponse(b"{}", content_type="application/json")

    runners = {"view alone": view, "with MetricsMiddleware": MetricsMiddleware(view)}
    times: dict[str, list[int]] = {name: [] for name in runners}
    for run in runners.values():
        for _ in range(500):
            run(request)
    rounds = 20
    for _ in range(rounds):
        for name, run in runners.items():
            for _ in range(max(1, requests // rounds)):
                started = time.perf_counter_ns()
                run(request)
                times[name].append(time.perf_counter_ns() - started)
    return {name: _summary(values) for name, values in times.items()}


def prepare_child(folder: str) -> dict:
    """Migrate a fresh SQLite file, make a key and a session with some history."""
    _setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    import uuid

    from memory.conversations import services

    _, key = services.api_key_create(name="bench")
    from django.test import Client

    client = Client(HTTP_HOST="localhost")  # an allowed host, as under runserver
    headers = {"Authorization": f"Bearer {key}"}
    resolved = client.post(
        "/api/v1/sessions",
        json.dumps({"user_id": str(uuid.uuid4())}),
        content_type="application/json",
        headers=headers,
    )
    sid = resolved.json()["session_id"]
    for n in range(30):
        client.post(
            f"/api/v1/sessions/{sid}/exchanges",
            json.dumps(
                {"user_message": MESSAGES[n % len(MESSAGES)], "assistant_message": "I see."}
            ),
            content_type="application/json",
            headers=headers,
        )
    return {"key": key, "session": sid}


def turn_child(mode: str, turns: int, key: str, sid: str) -> dict:
    _setup()
    from django.conf import settings
    from django.test import Client

    if mode == "no metrics":
        settings.MIDDLEWARE = [
            m for m in settings.MIDDLEWARE if m != "clara.metrics.MetricsMiddleware"
        ]
    if mode.startswith("metrics + tracing"):
        from opentelemetry.sdk.trace.export import SpanExportResult

        from clara import tracing

        class Drop:
            def export(self, spans):
                return SpanExportResult.SUCCESS

            def shutdown(self):
                pass

        # As in production: spans exported in batches by a thread of their own.
        ratio = 1.0 if "every" in mode else 0.1
        tracing.configure(exporter=Drop(), batch=True, sample_ratio=ratio)
    client = Client(HTTP_HOST="localhost")  # an allowed host, as under runserver
    headers = {"Authorization": f"Bearer {key}"}
    path = f"/api/v1/sessions/{sid}/context"
    times = []
    for n in range(turns + 30):
        body = json.dumps({"message": MESSAGES[n % len(MESSAGES)]})
        started = time.perf_counter_ns()
        response = client.post(path, body, content_type="application/json", headers=headers)
        elapsed = time.perf_counter_ns() - started
        assert response.status_code == 200, response.content
        if n >= 30:  # warm-up: models loaded, caches filled
            times.append(elapsed)
    return _summary(times)


def _run(args: list[str], env: dict) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, *args], env=env, check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--middleware", type=int, default=20000, help="requests per runner")
    parser.add_argument("--turns", type=int, default=300, help="/context turns per mode")
    parser.add_argument("--rounds", type=int, default=3, help="turn runs per mode, interleaved")
    parser.add_argument("--child", nargs="+")
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        if kind == "middleware":
            result = middleware_child(args.middleware)
        elif kind == "prepare":
            result = prepare_child(*rest)
        else:
            result = turn_child(rest[0], args.turns, rest[1], rest[2])
        print(json.dumps(result))
        return

    base = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    base["DEBUG"] = "1"
    print(f"## The middleware alone ({STATEMENTS} statements per request)\n")
    print("| metric values | runner | p50 µs | p99 µs |")
    print("|---|---|---|---|")
    for label in ("in memory", "multiprocess files"):
        with tempfile.TemporaryDirectory() as folder:
            env = dict(base)
            if label == "multiprocess files":
                env["PROMETHEUS_MULTIPROC_DIR"] = folder
            result = _run(["--child", "middleware", "--middleware", str(args.middleware)], env)
        for name, figures in result.items():
            print(f"| {label} | {name} | {figures['p50_us']:.1f} | {figures['p99_us']:.1f} |")

    folder = Path(tempfile.mkdtemp(prefix="clara-overhead-"))
    try:
        env = dict(base, CLARA_DATA_DIR=str(folder))
        env["DATABASE_URL"] = f"sqlite:///{folder / 'bench.sqlite3'}"
        # Thousands of turns a minute on one key: the per-key limit would answer 429.
        env["CLARA_API_RATE_LIMIT_PER_MINUTE"] = "0"
        env.pop("REDIS_URL", None)
        prepared = _run(["--child", "prepare", str(folder)], env)
        modes = (
            "no metrics",
            "metrics",
            "metrics + tracing every request",
            "metrics + tracing 1 in 10",
        )
        results: dict[str, list[dict]] = {mode: [] for mode in modes}
        for _ in range(args.rounds):
            for mode in modes:
                child = ["--child", "turn", mode, prepared["key"], prepared["session"]]
                results[mode].append(_run([*child, "--turns", str(args.turns)], env))
        print(f"\n## A whole /context turn ({args.rounds} runs × {args.turns} turns per mode)\n")
        print("| mode | p50 ms (each run) | p99 ms (each run) |")
        print("|---|---|---|")
        for mode in modes:
            p50 = ", ".join(f"{r['p50_us'] / 1000:.2f}" for r in results[mode])
            p99 = ", ".join(f"{r['p99_us'] / 1000:.2f}" for r in results[mode])
            print(f"| {mode} | {p50} | {p99} |")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
