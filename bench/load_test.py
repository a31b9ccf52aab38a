#!/usr/bin/env python
"""Load test (not a test): bot sessions drive the API of a real deployment at rising concurrency.

    .venv/bin/python bench/load_test.py                          # 10, 25, 50 sessions, 60 s each
    .venv/bin/python bench/load_test.py --levels 50 --think 0 --duration 30   # saturation
    .venv/bin/python bench/load_test.py --url http://host:8000 --key clara_...  # a running server
    .venv/bin/python bench/load_test.py --database-url sqlite:////abs/clara_load.sqlite3 \
        --from-sqlite $CLARA_BENCH_DIR/messages-1000000.sqlite3     # against 1M stored messages

Unless --url is given it deploys the Procfile's shape on this machine: a fresh PostgreSQL
database (--database-url; dropped and created, then migrated) or SQLite file
(--database-url sqlite:////abs/path/clara_load.sqlite3; deleted, then migrated), the Procfile's `web` line
(gunicorn, WEB_CONCURRENCY processes x WEB_THREADS threads) with DEBUG off and Redis as broker,
cache and rate-limit store, and one Procfile `worker` (the write path enqueues a rolling summary
every fourth turn). This process is the second one: it drives the bot flow over HTTP.

Each concurrent bot session is one thread with a keep-alive connection: POST /sessions, then per
turn POST .../context, a pause (the LLM writing its reply), POST .../exchanges with an idempotency
key, a pause (the person answering), and finally POST .../close.

Pacing. By default each session paces itself like a real conversation: after /context the LLM
writes its reply (--reply-pause, uniform 1-3 s), after /exchanges the person hears it and answers
(--person-pause, uniform 5-15 s; people living with dementia often take longer). A turn is then
about 12 s, so one session asks about 2 / 12 = 0.17 requests/s and 100 sessions about 17
requests/s: at the ~13 ms of server CPU a /context or /exchanges cost before issue 20, 0.22 CPU
s/s, a ninth of this machine's 2 cores. Sessions start at a random moment within one turn, as
conversations that began at different times do, not all in the same millisecond, and end the
same way: when a level's time is up each session closes at a random moment within one turn.
--think S replaces both pauses by one exponential pause with mean S seconds (the earlier model:
--think 0.5 makes 100 sessions ask about 200 requests/s, beyond 2 cores at ~13 ms each), and
--think 0 is a closed loop that measures capacity, not latency.

Errors are non-2xx answers and requests that fail. A request on a kept-alive connection that the
server closed in between (gunicorn recycles workers after --max-requests) is sent again once on a
new connection, as a real client would; those are counted as reconnects, not errors. The per-key
rate limit stays on with a limit this run cannot reach (CLARA_API_RATE_LIMIT_PER_MINUTE), so its
cost is in the figures but it never refuses a request.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"
STEPS = ("session", "context", "exchange", "close")

# What people living with dementia often ask, again and again; the repeats exercise the
# repetition tracking and the warmth rules on the write and read paths.
QUESTIONS = [
    "Where am I?",
    "What day is it today?",
    "When is my daughter coming?",
    "Have I had my lunch?",
    "Where is my husband?",
    "Is it time to go home?",
    "Who are you?",
    "I want to go to the garden.",
    "Did I feed the cat?",
    "What time is it?",
]
REPLY = "You are safe at home, and I am right here with you. Shall we talk about your garden?"
EMOTIONS = [("calm", 0.1), ("confused", 0.4), ("anxious", 0.6), ("lonely", 0.3)]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1] if ordered else float("nan")


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


# --- deployment ----------------------------------------------------------------------------


def _procfile() -> dict[str, str]:
    lines = (ROOT / "Procfile").read_text().splitlines()
    entries = [line.split(":", 1) for line in lines if line and not line.startswith("#")]
    return {name.strip(): command.strip() for name, command in entries}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _bench_key() -> str:
    """memory_bench.py's key: its databases are encrypted with it."""
    sys.path.insert(0, str(ROOT / "bench"))
    from memory_bench import BENCH_ENCRYPTION_KEY

    return BENCH_ENCRYPTION_KEY


def _encryption_key() -> str:
    """A fresh key, as `memory.core.crypto.generate_key` makes them (32 bytes, base64url)."""
    import base64

    return base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()


class Deployment:
    """The Procfile's web and one worker on a fresh PostgreSQL database; stopped on exit."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.processes: list[subprocess.Popen] = []
        self.log_dir = ROOT / "data" / "bench"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.env = {
            **os.environ,
            "PATH": f"{VENV_BIN}:{os.environ['PATH']}",
            "DEBUG": "0",
            "SECRET_KEY": "load-test-" + uuid.uuid4().hex + uuid.uuid4().hex,
            "ALLOWED_HOSTS": "127.0.0.1",
            "DATABASE_URL": args.database_url,
            "CLARA_ENCRYPTION_KEYS": _bench_key() if args.from_sqlite else _encryption_key(),
            "REDIS_URL": args.redis_url,
            "CELERY_QUEUE": f"clara-load-{uuid.uuid4().hex[:8]}",
            "CLARA_DATA_DIR": str(self.log_dir / "load"),
            "SECURE_SSL_REDIRECT": "0",
            "CLARA_API_RATE_LIMIT_PER_MINUTE": "10000000",
            "PORT": str(self.port),
            "WEB_CONCURRENCY": str(args.workers),
            "WEB_THREADS": str(args.threads),
            "CELERY_CONCURRENCY": "1",
            "PYTHONUNBUFFERED": "1",
        }

    def _manage(self, *command: str) -> str:
        done = subprocess.run(
            [str(VENV_BIN / "python"), "manage.py", *command],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"manage.py {' '.join(command)} failed:\n{done.stderr}")
        return done.stdout

    def _fresh_database(self) -> None:
        import psycopg

        target = urlsplit(self.args.database_url)
        if target.scheme == "sqlite":
            # sqlite:////abs/path/clara_*.sqlite3: the file (and its WAL) removed, then migrated.
            path = Path(target.path[1:] if target.path.startswith("//") else target.path)
            if not path.name.startswith("clara_"):
                raise SystemExit("--database-url must name a file starting with clara_ (deleted).")
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            path.parent.mkdir(parents=True, exist_ok=True)
            if self.args.from_sqlite:
                # A copy of memory_bench.py's database (1,000 people, 1M messages), so the load
                # runs against a full table; the copy is migrated like a fresh one.
                log(f"copying {self.args.from_sqlite}")
                shutil.copyfile(self.args.from_sqlite, path)
            return
        if self.args.from_sqlite:
            raise SystemExit("--from-sqlite needs a SQLite --database-url.")
        name = target.path.lstrip("/")
        if not name.startswith("clara_"):
            raise SystemExit("--database-url must name a database starting with clara_ (dropped).")
        admin = target._replace(path="/postgres").geturl()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')

    def start(self) -> str:
        """Deploy; returns a new API key."""
        log(f"fresh database {self.args.database_url}; migrating")
        self._fresh_database()
        self._manage("migrate", "--noinput")
        key = self._manage("create_api_key", "load test").strip().splitlines()[-1]
        procfile = _procfile()
        commands = [("web", procfile["web"])]
        if not self.args.no_worker:
            flags = "--without-mingle --without-gossip --without-heartbeat"
            commands.append(("worker", f"{procfile['worker']} -n load@%h {flags}"))
        for name, command in commands:
            out = open(self.log_dir / f"load-{name}.log", "w")  # noqa: SIM115 - lives with it
            self.processes.append(
                subprocess.Popen(
                    ["sh", "-c", command],
                    cwd=ROOT,
                    env=self.env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/readyz")
                if conn.getresponse().status == 200:
                    log(f"gunicorn ready at {self.url}")
                    return key
            except OSError:
                pass
            time.sleep(0.5)
        raise SystemExit(f"the deployment did not become ready; see {self.log_dir}/load-web.log")

    def stop(self) -> None:
        for process in self.processes:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


# --- the bot sessions ------------------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.error_samples: list[str] = []
        self.reconnects = 0

    def ok(self, step: str, ms: float) -> None:
        with self.lock:
            self.latencies[step].append(ms)

    def error(self, step: str, what: str) -> None:
        with self.lock:
            self.errors[step] += 1
            if len(self.error_samples) < 10:
                self.error_samples.append(f"{step}: {what}")

    def reconnect(self) -> None:
        with self.lock:
            self.reconnects += 1


class Pacing:
    """The pauses of a bot session: one exponential pause of mean `think` seconds after every
    call, or (think None) the LLM's reply after /context and the person's answer after
    /exchanges, each uniform within its (low, high) range in seconds."""

    def __init__(
        self,
        think: float | None,
        reply: tuple[float, float] = (1.0, 3.0),
        person: tuple[float, float] = (5.0, 15.0),
    ):
        self.think, self.reply, self.person = think, reply, person

    def __str__(self) -> str:
        if self.think is not None:
            return f"think {self.think}"
        return f"reply {self.reply[0]:g}-{self.reply[1]:g}, person {self.person[0]:g}-{self.person[1]:g}"

    def after(self, step: str, rng: random.Random) -> float:
        if self.think is not None:
            return rng.expovariate(1 / self.think) if self.think > 0 else 0.0
        low, high = self.reply if step == "context" else self.person
        return rng.uniform(low, high)

    def start_offset(self, rng: random.Random) -> float:
        """When a session starts, or closes after the level's time is up: anywhere within one
        turn (0 with --think)."""
        if self.think is not None:
            return 0.0
        return rng.uniform(0, self.reply[1] + self.person[1])


def seconds_range(text: str) -> tuple[float, float]:
    low, _, high = text.partition("-")
    low_s, high_s = float(low), float(high or low)
    if not 0 <= low_s <= high_s:
        raise argparse.ArgumentTypeError(f"{text!r}: expected LOW-HIGH seconds, LOW <= HIGH")
    return low_s, high_s


class BotSession(threading.Thread):
    def __init__(self, n: int, base: str, key: str, pacing: Pacing, stop: threading.Event, rec):
        super().__init__(daemon=True)
        parts = urlsplit(base)
        self.host, self.port = parts.hostname, parts.port or 80
        self.headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        self.random = random.Random(n)
        self.pacing, self.stop_event, self.rec = pacing, stop, rec
        self.conn: http.client.HTTPConnection | None = None

    def _connect(self) -> http.client.HTTPConnection:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        conn.connect()
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn

    def _call(self, step: str, path: str, body: dict) -> dict | None:
        payload = json.dumps(body)
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = self._connect()
            started = time.perf_counter()
            try:
                self.conn.request("POST", path, payload, self.headers)
                response = self.conn.getresponse()
                data = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
                self.conn.close()
                self.conn = None
                if attempt == 1:
                    # The server closed the kept-alive connection in between: resend once.
                    self.rec.reconnect()
                    continue
                self.rec.error(step, type(exc).__name__)
                return None
            except OSError as exc:
                self.conn.close()
                self.conn = None
                self.rec.error(step, type(exc).__name__)
                return None
            ms = (time.perf_counter() - started) * 1000
            if 200 <= response.status < 300:
                self.rec.ok(step, ms)
                return json.loads(data)
            self.rec.error(step, f"{response.status} {data[:200]!r}")
            return None
        return None

    def _pause(self, after: str) -> None:
        seconds = self.pacing.after(after, self.random)
        if seconds > 0:
            self.stop_event.wait(seconds)

    def run(self) -> None:
        offset = self.pacing.start_offset(self.random)
        if offset and self.stop_event.wait(offset):
            return
        session = self._call("session", "/api/v1/sessions", {"user_id": str(uuid.uuid4())})
        if session is None:
            return
        base = f"/api/v1/sessions/{session['session_id']}"
        turn = 0
        while not self.stop_event.is_set():
            message = self.random.choice(QUESTIONS)
            emotion, distress = self.random.choice(EMOTIONS)
            reading = {
                "emotion": emotion,
                "confidence": 0.8,
                "distress_score": distress,
                "trajectory": "stable",
            }
            self._call("context", f"{base}/context", {"message": message, "emotion": reading})
            self._pause("context")
            if self.stop_event.is_set():
                break
            turn += 1
            self._call(
                "exchange",
                f"{base}/exchanges",
                {
                    "user_message": message,
                    "assistant_message": REPLY,
                    "idempotency_key": f"turn-{turn}",
                    "emotion": reading,
                },
            )
            self._pause("exchange")
        # Conversations end at different moments, as they started: not all 100 in the same
        # millisecond when the level's time is up.
        time.sleep(self.pacing.start_offset(self.random))
        self._call("close", f"{base}/close", {})
        if self.conn is not None:
            self.conn.close()


def run_level(base: str, key: str, sessions: int, seconds: float, pacing: Pacing) -> dict:
    rec = Recorder()
    stop = threading.Event()
    threads = [BotSession(n, base, key, pacing, stop, rec) for n in range(sessions)]
    load_before = loadavg()
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    stop.wait(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    steps = {}
    for step in STEPS:
        values = rec.latencies.get(step, [])
        steps[step] = {
            "count": len(values),
            "per_s": round(len(values) / elapsed, 1),
            "p50": round(percentile(values, 50), 1),
            "p95": round(percentile(values, 95), 1),
            "p99": round(percentile(values, 99), 1),
            "max": round(max(values), 1) if values else float("nan"),
            "errors": rec.errors.get(step, 0),
        }
    total = sum(step["count"] for step in steps.values())
    return {
        "sessions": sessions,
        "seconds": round(elapsed, 1),
        "pacing": str(pacing),
        "requests": total,
        "requests_per_s": round(total / elapsed, 1),
        "turns_per_s": round(steps["exchange"]["count"] / elapsed, 1),
        "errors": sum(rec.errors.values()),
        "error_samples": rec.error_samples,
        "reconnects": rec.reconnects,
        "load_before": load_before,
        "load_after": loadavg(),
        "steps": steps,
    }


def markdown(results: list[dict]) -> str:
    lines = [
        "| sessions | pacing s | requests/s | turns/s | step | count | p50 ms | p95 ms | p99 ms "
        "| max ms | errors | reconnects | load before → after |",
        "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for result in results:
        for i, step in enumerate(("context", "exchange", "session", "close")):
            s = result["steps"][step]
            head = (
                f"| {result['sessions']} | {result['pacing']} | {result['requests_per_s']} "
                f"| {result['turns_per_s']} "
                if i == 0
                else "| | | | "
            )
            tail = (
                f"| {result['errors']} | {result['reconnects']} "
                f"| {result['load_before']} → {result['load_after']} |"
                if i == 0
                else "| | | |"
            )
            lines.append(
                f"{head}| {step} | {s['count']} | {s['p50']} | {s['p95']} | {s['p99']} "
                f"| {s['max']} {tail}"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="10,25,50", help="concurrent bot sessions per level")
    parser.add_argument("--duration", type=float, default=60, help="seconds per level")
    parser.add_argument(
        "--think",
        type=float,
        default=None,
        help="one exponential pause of this mean after every call, s (default: --reply-pause "
        "and --person-pause)",
    )
    parser.add_argument(
        "--reply-pause",
        type=seconds_range,
        default=(1.0, 3.0),
        help="LOW-HIGH s after /context: the LLM writes its reply (default 1-3)",
    )
    parser.add_argument(
        "--person-pause",
        type=seconds_range,
        default=(5.0, 15.0),
        help="LOW-HIGH s after /exchanges: the person hears it and answers (default 5-15)",
    )
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/clara_load_test"
    )
    parser.add_argument(
        "--from-sqlite",
        help="start from a copy of this database made by memory_bench.py (e.g. its 1M messages, "
        "messages-1000000.sqlite3 under CLARA_BENCH_DIR) instead of an empty one; SQLite only",
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/12")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn processes")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn process")
    parser.add_argument("--no-worker", action="store_true", help="don't start a Celery worker")
    parser.add_argument("--url", help="drive a server that is already running instead")
    parser.add_argument("--key", help="API key for --url")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    levels = [int(level) for level in args.levels.split(",")]
    pacing = Pacing(args.think, args.reply_pause, args.person_pause)

    deployment = None
    if args.url:
        if not args.key:
            raise SystemExit("--url needs --key")
        base, key = args.url.rstrip("/"), args.key
    else:
        deployment = Deployment(args)
        key = deployment.start()
        base = deployment.url
    try:
        log("warm-up: 10 sessions for 5 s (not recorded)")
        run_level(base, key, 10, 5, Pacing(0.5))
        results = []
        for sessions in levels:
            log(f"{sessions} concurrent bot sessions for {args.duration:.0f} s")
            result = run_level(base, key, sessions, args.duration, pacing)
            results.append(result)
            ctx, exc = result["steps"]["context"], result["steps"]["exchange"]
            log(
                f"  {result['requests_per_s']} req/s, context p99 {ctx['p99']} ms, exchange "
                f"p99 {exc['p99']} ms, errors {result['errors']}, reconnects {result['reconnects']}"
            )
            for sample in result["error_samples"]:
                log(f"  error: {sample}")
    finally:
        if deployment is not None:
            deployment.stop()
    print(markdown(results))
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "results": results}, indent=2))


if __name__ == "__main__":
    main()
