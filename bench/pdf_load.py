#!/usr/bin/env python
"""Benchmark (not a test): the bot's /context while caregivers download PDFs (issue 30, step 6).

    .venv/bin/python bench/pdf_load.py                    # this checkout
    .venv/bin/python bench/pdf_load.py --code /tmp/base   # another checkout (e.g. before the fix)

Starts the Procfile's `web` line (gunicorn, 3 processes x 4 threads) on a fresh SQLite database
under a temporary folder (DEBUG on, so no production secrets or Redis are needed), with one
person who has talked with Clara (--exchanges exchanges over the bot API, so the record PDF is a
real one of several pages) and a logged-in team admin. Then, for --seconds each:
1. idle: one bot asks /context back to back (one request at a time, as a conversation does);
2. under PDF load: the same, while --pdfs clients each download the person's record PDF in a
   loop (a 503 "busy" or 429 answer is counted, and that client tries again after 1 s).
Prints /context p50 and p99 for both phases, their ratio, and the PDFs served / refused. The
PDF limit per login is turned off here (CLARA_PDF_RENDERS_PER_HOUR=0) so the clients keep
rendering; the per-process cap on waiting renders (CLARA_PDF_MAX_WAITING) stays as configured.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
GUNICORN = ROOT / ".venv" / "bin" / "gunicorn"

SETUP = """
import json, uuid
from django.contrib.auth import get_user_model
from django.test import Client
from django_otp import DEVICE_ID_SESSION_KEY
from dashboard.models import CareRole, CareTeamMembership
from dashboard.second_factor.models import AuthenticatorDevice
from memory.conversations import services, tenancy
from memory.models import OrganisationMembership

organisation = tenancy.organisation_get_or_create()
_, raw_key = services.api_key_create(name="pdf bench", organisation_id=organisation.id)
session, _ = services.session_resolve(user_id=uuid.UUID("{person_id}"), display_name="Peggy Bench")
user = get_user_model().objects.create_user("admin-bench", password="x" * 20, first_name="Ada")
OrganisationMembership.objects.create(user=user, organisation=organisation)
CareTeamMembership.objects.create(
    user=user, person_id=session.person_id, role=CareRole.ADMIN, can_see_transcripts=True
)
device = AuthenticatorDevice.objects.create(user=user, name="app", confirmed=True)
client = Client()
client.force_login(user)
store = client.session
store[DEVICE_ID_SESSION_KEY] = device.persistent_id
store.save()
print(json.dumps({{"key": raw_key, "session_id": str(session.id), "person_id": str(session.person_id),
                  "cookie": client.cookies["sessionid"].value}}))
"""

QUESTIONS = [
    "Where am I?",
    "When is my daughter coming?",
    "Have I had my lunch?",
    "I used to grow roses in the garden behind our house in Leeds.",
    "My husband Arthur worked on the railways for forty years.",
]
REPLY = "You are safe at home, and I am right here with you. Tell me about your garden?"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def request(conn, method: str, path: str, body=None, headers=None) -> tuple[int, bytes]:
    conn.request(method, path, json.dumps(body) if body is not None else None, headers or {})
    response = conn.getresponse()
    return response.status, response.read()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def context_loop(port: int, key: str, session_id: str, seconds: float) -> list[float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    body = {
        "message": "Where am I?",
        "emotion": {
            "emotion": "confused",
            "confidence": 0.8,
            "distress_score": 0.4,
            "trajectory": "stable",
        },
    }
    times = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.perf_counter()
        status, data = request(
            conn, "POST", f"/api/v1/sessions/{session_id}/context", body, headers
        )
        times.append(time.perf_counter() - started)
        if status != 200:
            raise SystemExit(f"/context answered {status}: {data[:200]!r}")
    conn.close()
    return times


def pdf_loop(port: int, cookie: str, person_id: str, stop: threading.Event, counts: dict) -> None:
    headers = {"Cookie": f"sessionid={cookie}"}
    while not stop.is_set():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        try:
            status, data = request(conn, "GET", f"/people/{person_id}/record.pdf", None, headers)
        finally:
            conn.close()
        if status == 200 and data.startswith(b"%PDF"):
            counts["served"] += 1
        elif status in (429, 503):
            counts[str(status)] += 1
            stop.wait(1.0)
        else:
            raise SystemExit(f"record.pdf answered {status}: {data[:200]!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout to serve")
    parser.add_argument("--pdfs", type=int, default=8, help="concurrent PDF clients (8)")
    parser.add_argument("--seconds", type=float, default=40.0, help="each phase (40)")
    parser.add_argument("--exchanges", type=int, default=60, help="the person's exchanges (60)")
    args = parser.parse_args()
    code = args.code.resolve()

    folder = Path(tempfile.mkdtemp(prefix="clara-pdf-bench-"))
    port = free_port()
    env = {
        **os.environ,
        "DEBUG": "1",
        "CLARA_DATA_DIR": str(folder),
        "DATABASE_URL": f"sqlite:///{folder / 'clara.sqlite3'}",
        "CLARA_API_RATE_LIMIT_PER_MINUTE": "0",
        "CLARA_PDF_RENDERS_PER_HOUR": "0",
        "STATIC_COLLECTED": "0",
        "PYTHONPATH": str(code),
        # The repeat check's ONNX graphs, built by this checkout's `make install`.
        "CLARA_MODEL_CACHE_DIR": str(ROOT / "data" / "onnx"),
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    server = None
    try:
        log(f"migrating a fresh database in {folder}")
        manage = [str(PYTHON), str(code / "manage.py")]
        subprocess.run([*manage, "migrate", "-v", "0"], cwd=code, env=env, check=True)
        person_id = str(uuid.uuid4())
        done = subprocess.run(
            [*manage, "shell", "-c", SETUP.format(person_id=person_id)],
            cwd=code,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        setup = json.loads(done.stdout.strip().splitlines()[-1])
        log(f"serving {code} on port {port} (gunicorn, 3 processes x 4 threads)")
        server = subprocess.Popen(
            [
                str(GUNICORN),
                "clara.wsgi:application",
                "--preload",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "3",
                "--worker-class",
                "gthread",
                "--threads",
                "4",
                "--timeout",
                "30",
                "--log-level",
                "warning",
            ],
            cwd=code,
            env=env,
            start_new_session=True,
        )
        conn = None
        for _ in range(300):
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                conn.connect()
                break
            except OSError:
                time.sleep(0.2)
        headers = {"Authorization": f"Bearer {setup['key']}", "Content-Type": "application/json"}
        log(f"the person's {args.exchanges} exchanges, over the bot API")
        for turn in range(args.exchanges):
            status, data = request(
                conn,
                "POST",
                f"/api/v1/sessions/{setup['session_id']}/exchanges",
                {
                    "user_message": QUESTIONS[turn % len(QUESTIONS)],
                    "assistant_message": REPLY,
                    "idempotency_key": f"turn-{turn}",
                },
                headers,
            )
            if status not in (200, 201):
                raise SystemExit(f"/exchanges answered {status}: {data[:200]!r}")
        conn.close()
        # Warm-up: every gunicorn process answers /context and renders a PDF once.
        context_loop(port, setup["key"], setup["session_id"], 5)
        warm = {"served": 0, "429": 0, "503": 0}
        stop = threading.Event()
        warmers = [
            threading.Thread(
                target=pdf_loop, args=(port, setup["cookie"], setup["person_id"], stop, warm)
            )
            for _ in range(3)
        ]
        for t in warmers:
            t.start()
        time.sleep(10)
        stop.set()
        for t in warmers:
            t.join()

        log(f"idle: /context for {args.seconds:.0f} s")
        idle = context_loop(port, setup["key"], setup["session_id"], args.seconds)
        log(f"under load: /context for {args.seconds:.0f} s beside {args.pdfs} PDF clients")
        counts = {"served": 0, "429": 0, "503": 0}
        stop = threading.Event()
        clients = [
            threading.Thread(
                target=pdf_loop, args=(port, setup["cookie"], setup["person_id"], stop, counts)
            )
            for _ in range(args.pdfs)
        ]
        for t in clients:
            t.start()
        time.sleep(3)  # the renders are under way
        loaded = context_loop(port, setup["key"], setup["session_id"], args.seconds)
        stop.set()
        for t in clients:
            t.join()
    finally:
        if server is not None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)

    def ms(values: list[float], q: float) -> float:
        return percentile(values, q) * 1000

    print(f"code: {code}")
    print(
        f"/context idle:       n={len(idle):5d}  p50 {ms(idle, 0.5):7.1f} ms  p99 {ms(idle, 0.99):7.1f} ms"
    )
    print(
        f"/context {args.pdfs} PDFs:     n={len(loaded):5d}  p50 {ms(loaded, 0.5):7.1f} ms  "
        f"p99 {ms(loaded, 0.99):7.1f} ms"
    )
    print(
        f"ratio under load / idle: p50 {statistics.median(loaded) / statistics.median(idle):.2f}x"
        f"  p99 {percentile(loaded, 0.99) / percentile(idle, 0.99):.2f}x"
    )
    print(
        f"PDFs during the load phase: {counts['served']} served, {counts['503']} busy (503), "
        f"{counts['429']} limited (429)"
    )


if __name__ == "__main__":
    main()
