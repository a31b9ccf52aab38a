#!/usr/bin/env python
"""Load test (not a test): people talking to the bot, driven over HTTP at rising numbers.

    .venv/bin/python bench/load_test.py --levels 250,500,1000                  # PostgreSQL + Redis
    .venv/bin/python bench/load_test.py --levels 250,500,1000 --redis-url '' \\
        --database-url sqlite:////abs/path/clara_load.sqlite3                  # SQLite, embedded broker
    .venv/bin/python bench/load_test.py --url http://host:8000 --key clara_...  # a running server
    .venv/bin/python bench/load_test.py --levels 50 --turn-every 0 --think 0   # closed loop: saturation

Unless --url is given it deploys the Procfile's shape on this machine: a fresh PostgreSQL
database (--database-url; dropped and created, then migrated) or SQLite file
(--database-url sqlite:////abs/path/clara_*.sqlite3; deleted, then migrated), the Procfile's `web`
line (gunicorn, --web-processes x --threads) with DEBUG off, and one Procfile `worker`
(--worker-concurrency). With --redis-url Redis is the broker, cache and rate-limit store; with
--redis-url '' the embedded broker is used (files under data/bench/, as a single small machine
runs it).

The people. Each person is one conversation: POST /sessions, then a turn every --turn-every
seconds (uniform, default 10-20 s, measured from the start of one turn to the start of the
next, whatever the answers took: the people do not slow down when the server does, so queueing
shows in the latencies instead of hiding in a slower pace). A turn is POST .../context, the think
time while the LLM writes its reply (--think, uniform, default 1-3 s), then POST .../exchanges
with an idempotency key. What the person says: a question already asked in this conversation
(--repeat-share, default 0.3: people living with dementia repeat themselves), a distress or
urgent line with a high distress reading (--distress-share, default 0.05: it raises alerts and
their jobs), a line never heard before (--fresh-share, default 0.2: made from parts, so the
sentence model reads it the first time), else an everyday line from a bank of about forty. People
start at a random moment within one turn, as conversations that began at different times do,
and after the level's time each closes at a random moment within one turn.

The generator is one asyncio loop with one keep-alive connection per person (reopened when the
server closed it between turns: counted as a reconnect, not an error), so a thousand people cost
it a few percent of a core; it reports its own CPU time beside the server's. Latency is measured
from the moment the request is written (connection setup included) to the last byte of the
answer. Errors are non-2xx answers and requests that fail.

CPU per level: the web processes (gunicorn's master and workers), the Celery worker and its pool,
PostgreSQL's backends serving this database (not Redis: other work shares it), and this process,
from /proc via psutil, sampled every second; as CPU seconds per second of the level (1.0 = one
core), with the load average before and after and the machine's whole busy share. And the jobs
waiting in the queue at the start and the end of each level (from /metrics): a worker that falls
behind shows there first. The warm-up's jobs are waited for (up to 3 min) before the first level.

The per-key rate limit stays on with a limit this run cannot reach (CLARA_API_RATE_LIMIT_PER_MINUTE),
so its cost is in the figures but it never refuses a request.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import resource
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

import psutil

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"
STEPS = ("session", "context", "exchange", "close")

# What people living with dementia often say; each is also what a repeat asks again.
EVERYDAY = [
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
    "Is it morning or afternoon?",
    "Where are my glasses?",
    "I used to work at the post office.",
    "My mother made the best apple pie.",
    "Is anyone coming to see me today?",
    "I don't remember what I was doing.",
    "Can we go for a walk?",
    "What is for dinner?",
    "I like the birds outside the window.",
    "Have you seen my handbag?",
    "When is the bus coming?",
    "I need to pick up the children from school.",
    "It is very quiet here.",
    "Tell me about the garden again.",
    "Did my son ring?",
    "I would like a cup of tea.",
    "What is the weather like?",
    "Is it Sunday?",
    "I want to call my sister.",
    "Where did I put my keys?",
    "I had a dog called Rex.",
    "Are we going out today?",
    "My feet are cold.",
    "Who was that lady this morning?",
    "Can you sing me a song?",
    "I have to go to work.",
    "What's your name again?",
    "The nurse was kind to me.",
    "Is my husband at work?",
    "I think I am a bit tired.",
]
# Distress and urgent moments: they raise alerts (and the delivery jobs that follow).
DISTRESS = [
    "I've fallen and I can't get up.",
    "Help me, I don't know where I am.",
    "I want to go home, let me out of here!",
    "There is a man in my room and I'm scared.",
    "My chest hurts.",
    "Nobody is coming, I'm all alone.",
    "I can't breathe properly.",
    "Where is everybody? I'm frightened.",
]
# Parts of lines never heard before: a new sentence for the sentence model to read.
_FRESH_OPENERS = [
    "I remember when {who} and I went to {where}",
    "{who} used to take me to {where}",
    "Did you know {who} lived near {where}",
    "We had a picnic with {who} at {where}",
    "I think {who} is waiting for me at {where}",
    "Last summer {who} drove us to {where}",
]
_FRESH_WHO = [
    "my brother", "my sister", "Auntie Joan", "my father", "Mr Patel", "our neighbour",
    "my best friend", "the vicar", "my cousin Alan", "grandma", "my husband", "Doctor Evans",
]  # fmt: skip
_FRESH_WHERE = [
    "the seaside", "Brighton", "the market", "the old mill", "the church hall", "the lake",
    "the football ground", "the bakery", "the train station", "the dance hall", "Blackpool",
    "the allotment", "the library", "the park", "the cinema", "the farm",
]  # fmt: skip
_FRESH_WHEN = [
    "in the spring", "on a Sunday", "after the war", "every Christmas", "when I was little",
    "before the children came", "in nineteen sixty", "on my birthday", "in the rain", "at dawn",
]  # fmt: skip
REPLY = "You are safe here, and I am right here with you. Shall we talk about your garden?"
CALM = [("calm", 0.1), ("confused", 0.35), ("anxious", 0.5), ("lonely", 0.3), ("neutral", 0.05)]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1] if ordered else float("nan")


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def seconds_range(text: str) -> tuple[float, float]:
    low, _, high = text.partition("-")
    low_s, high_s = float(low), float(high or low)
    if not 0 <= low_s <= high_s:
        raise argparse.ArgumentTypeError(f"{text!r}: expected LOW-HIGH seconds, LOW <= HIGH")
    return low_s, high_s


def share(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r}: a share between 0 and 1")
    return value


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
    """The Procfile's web and one worker on a fresh database; stopped on exit."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.processes: list[subprocess.Popen] = []
        self.log_dir = ROOT / "data" / "bench"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        run = uuid.uuid4().hex[:8]
        self.env = {
            **os.environ,
            "PATH": f"{VENV_BIN}:{os.environ['PATH']}",
            "DEBUG": "0",
            "SECRET_KEY": "load-test-" + uuid.uuid4().hex + uuid.uuid4().hex,
            "ALLOWED_HOSTS": "127.0.0.1",
            "DATABASE_URL": args.database_url,
            "CLARA_ENCRYPTION_KEYS": _bench_key() if args.from_sqlite else _encryption_key(),
            "CELERY_QUEUE": f"clara-load-{run}",
            "CLARA_DATA_DIR": str(self.log_dir / "load"),
            "SECURE_SSL_REDIRECT": "0",
            "CLARA_API_RATE_LIMIT_PER_MINUTE": "10000000",
            "PORT": str(self.port),
            "WEB_CONCURRENCY": str(args.web_processes),
            "WEB_THREADS": str(args.threads),
            "CELERY_CONCURRENCY": str(args.worker_concurrency),
            "PROMETHEUS_MULTIPROC_DIR": str(self.log_dir / f"metrics-web-{run}"),
            "PYTHONUNBUFFERED": "1",
        }
        self.worker_metrics = str(self.log_dir / f"metrics-worker-{run}")
        if args.redis_url:
            self.env["REDIS_URL"] = args.redis_url
        else:
            self.env.pop("REDIS_URL", None)
            self.env["CELERY_EMBEDDED_BROKER"] = "1"
            self.env["CELERY_BROKER_DIR"] = str(self.log_dir / f"broker-{run}")

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
        import psycopg

        name = target.path.lstrip("/")
        if not name.startswith("clara_"):
            raise SystemExit("--database-url must name a database starting with clara_ (dropped).")
        admin = target._replace(path="/postgres").geturl()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')

    # Migrating an empty database takes a minute or two on a busy 2-core machine; with
    # --reuse-migrated a migrated copy is kept beside it (SQLite: a file; PostgreSQL: a template
    # database) and used while the migrations are unchanged.
    def _migrations_digest(self) -> str:
        import hashlib

        digest = hashlib.sha256()
        for path in sorted(ROOT.glob("*/migrations/*.py")):
            digest.update(path.name.encode() + path.read_bytes())
        return digest.hexdigest()[:16]

    def _copy_names(self) -> tuple[str, str]:
        target = urlsplit(self.args.database_url)
        if target.scheme == "sqlite":
            path = target.path[1:] if target.path.startswith("//") else target.path
            return "sqlite", f"{path}.migrated-{self._migrations_digest()}"
        return "postgres", f"{target.path.lstrip('/')}_migrated_{self._migrations_digest()}"

    def _from_migrated_copy(self) -> bool:
        if not self.args.reuse_migrated or self.args.from_sqlite:
            return False
        engine, copy = self._copy_names()
        target = urlsplit(self.args.database_url)
        if engine == "sqlite":
            if not Path(copy).exists():
                return False
            shutil.copyfile(copy, target.path[1:] if target.path.startswith("//") else target.path)
        else:
            import psycopg

            name = target.path.lstrip("/")
            admin = target._replace(path="/postgres").geturl()
            with psycopg.connect(admin, autocommit=True) as conn:
                exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [copy])
                if exists.fetchone() is None:
                    return False
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{copy}"')
        log(f"migrated copy {copy} used")
        return True

    def _keep_migrated_copy(self) -> None:
        if not self.args.reuse_migrated or self.args.from_sqlite:
            return
        engine, copy = self._copy_names()
        target = urlsplit(self.args.database_url)
        if engine == "sqlite":
            shutil.copyfile(target.path[1:] if target.path.startswith("//") else target.path, copy)
            return
        import psycopg

        admin = target._replace(path="/postgres").geturl()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{copy}"')
            conn.execute(f'CREATE DATABASE "{copy}" TEMPLATE "{target.path.lstrip("/")}"')

    def start(self) -> str:
        """Deploy; returns a new API key."""
        log(f"fresh database {self.args.database_url}; migrating")
        self._fresh_database()
        if not self._from_migrated_copy():
            self._manage("migrate", "--noinput")
            self._keep_migrated_copy()
        key = self._manage("create_api_key", "load test").strip().splitlines()[-1]
        procfile = _procfile()
        commands = [("web", procfile["web"], self.env)]
        if not self.args.no_worker:
            flags = "--without-mingle --without-gossip --without-heartbeat"
            worker_env = {**self.env, "PROMETHEUS_MULTIPROC_DIR": self.worker_metrics}
            commands.append(("worker", f"{procfile['worker']} -n load@%h {flags}", worker_env))
        for name, command, env in commands:
            out = open(self.log_dir / f"load-{name}.log", "w")  # noqa: SIM115 - lives with it
            self.processes.append(
                subprocess.Popen(
                    ["sh", "-c", command],
                    cwd=ROOT,
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        deadline = time.monotonic() + 120
        import http.client

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

    def groups(self) -> dict[str, callable]:
        """The processes whose CPU is counted, by part: each a function listing them now."""

        def tree(process: subprocess.Popen):
            def listed() -> list[psutil.Process]:
                try:
                    root = psutil.Process(process.pid)
                    return [root, *root.children(recursive=True)]
                except psutil.NoSuchProcess:
                    return []

            return listed

        found = {"web": tree(self.processes[0])}
        if len(self.processes) > 1:
            found["worker"] = tree(self.processes[1])
        target = urlsplit(self.args.database_url)
        if target.scheme.startswith("postgres"):
            name = target.path.lstrip("/")

            def backends() -> list[psutil.Process]:
                # "postgres: USER DATABASE HOST(PORT) STATE": this database's backends only.
                marker = f" {name} "
                return [
                    p
                    for p in psutil.process_iter(["name", "cmdline"])
                    if (p.info["name"] or "").startswith("postgres")
                    and marker in " ".join(p.info["cmdline"] or []) + " "
                ]

            found["database"] = backends
        return found

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
                pass
            # The shell of a Procfile line can end before what it started (a Celery worker's main
            # process was once left running after its shell): whatever is left in the group goes.
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
        for folder in (self.env["PROMETHEUS_MULTIPROC_DIR"], self.worker_metrics):
            shutil.rmtree(folder, ignore_errors=True)
        if "CELERY_BROKER_DIR" in self.env:
            shutil.rmtree(self.env["CELERY_BROKER_DIR"], ignore_errors=True)


# --- CPU --------------------------------------------------------------------------------------


def _busy_jiffies() -> tuple[int, int]:
    """The machine's busy and total CPU time so far (all cores), from /proc/stat."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


class CpuMeter(threading.Thread):
    """CPU seconds of each group of processes between two marks, sampled every second.

    A process's user + system time is read from /proc (psutil); one that starts after the mark is
    counted from zero, one that ends between samples loses at most its last second (gunicorn
    recycles a worker every few thousand requests). The sampling itself runs in this thread and is
    reported apart from the generator's work (`meter_s`)."""

    def __init__(self, groups: dict) -> None:
        super().__init__(daemon=True)
        self.groups = groups
        self.lock = threading.Lock()
        self.halt = threading.Event()
        self.seen: dict[str, dict[int, list[float]]] = {name: {} for name in groups}
        self.marked_at = time.time()
        self.own_cpu = 0.0

    @staticmethod
    def _cpu(process: psutil.Process) -> float:
        times = process.cpu_times()
        return times.user + times.system

    def _sample(self) -> None:
        for name, listed in self.groups.items():
            for process in listed():
                try:
                    cpu = self._cpu(process)
                    born = process.create_time()
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
                entry = self.seen[name].get(process.pid)
                if entry is None:
                    first = 0.0 if born > self.marked_at else cpu
                    self.seen[name][process.pid] = [first, cpu]
                else:
                    entry[1] = cpu

    def run(self) -> None:
        while not self.halt.wait(1.0):
            started = time.thread_time()
            with self.lock:
                self._sample()
            self.own_cpu += time.thread_time() - started

    def mark(self) -> dict:
        """The CPU seconds of each group since the previous mark; starts a new interval."""
        started = time.thread_time()
        with self.lock:
            self._sample()
            used = {
                name: sum(last - first for first, last in pids.values())
                for name, pids in self.seen.items()
            }
            self.marked_at = time.time()
            for pids in self.seen.values():
                for entry in pids.values():
                    entry[0] = entry[1]
        self.own_cpu += time.thread_time() - started
        return used


# --- the people ----------------------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.recording = False
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.error_samples: list[str] = []
        self.reconnects = 0
        self.repeats = self.distress = self.fresh = 0

    def ok(self, step: str, ms: float) -> None:
        if self.recording or step == "close":
            self.latencies[step].append(ms)

    def error(self, step: str, what: str) -> None:
        self.errors[step] += 1
        if len(self.error_samples) < 10:
            self.error_samples.append(f"{step}: {what}")

    def reset(self) -> None:
        self.latencies.clear()
        self.errors.clear()
        self.error_samples.clear()
        self.reconnects = self.repeats = self.distress = self.fresh = 0


class Options:
    def __init__(self, args: argparse.Namespace) -> None:
        self.turn_every: tuple[float, float] = args.turn_every
        self.think: tuple[float, float] = args.think
        self.conversation: tuple[int, int] = args.conversation_turns
        self.repeat_share: float = args.repeat_share
        self.distress_share: float = args.distress_share
        self.fresh_share: float = args.fresh_share

    def __str__(self) -> str:
        low, high = self.turn_every
        return (
            f"turn every {low:g}-{high:g} s, think {self.think[0]:g}-{self.think[1]:g} s, "
            f"repeats {self.repeat_share:g}, distress {self.distress_share:g}, "
            f"fresh {self.fresh_share:g}, {self.conversation[0]}-{self.conversation[1]} turns "
            "a conversation"
        )


class Connection:
    """One keep-alive HTTP/1.1 connection: a request written whole, the answer read by its
    Content-Length. Kept this small so a thousand people cost the generator little."""

    def __init__(self, host: str, port: int, key: str) -> None:
        self.host, self.port = host, port
        self.head = (
            f"Host: {host}:{port}\r\nAuthorization: Bearer {key}\r\n"
            "Content-Type: application/json\r\n"
        )
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def _open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    async def post(self, path: str, body: bytes) -> tuple[int, bytes, bool]:
        """(status, body, reopened): reopened when the server had closed the kept connection."""
        reopened = False
        if self.reader is None or self.reader.at_eof():
            reopened = self.reader is not None
            self.close()
            await self._open()
        message = (
            f"POST {path} HTTP/1.1\r\n{self.head}Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        self.writer.write(message)
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionResetError("closed before answering")
        status = int(status_line.split(None, 2)[1])
        length, keep = None, True
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"connection" and value.strip().lower() == b"close":
                keep = False
        if length is None:
            data = await self.reader.read()
            keep = False
        else:
            data = await self.reader.readexactly(length)
        if not keep:
            self.close()
        return status, data, reopened


class Person:
    """One person talking to the bot: conversations of a few dozen turns, one after another."""

    def __init__(self, n: int, host: str, port: int, key: str, opts: Options, rec: Recorder):
        self.random = random.Random(n)
        self.conn = Connection(host, port, key)
        self.opts, self.rec = opts, rec
        self.user_id = str(uuid.UUID(int=self.random.getrandbits(128)))
        self.said: list[str] = []

    async def _call(self, step: str, path: str, body: dict) -> dict | None:
        payload = json.dumps(body).encode()
        for attempt in (1, 2):
            started = time.perf_counter()
            try:
                async with asyncio.timeout(30):
                    status, data, reopened = await self.conn.post(path, payload)
            except (ConnectionError, asyncio.IncompleteReadError) as exc:
                self.conn.close()
                if attempt == 1:
                    # The server closed the kept connection as we wrote: sent again once.
                    self.rec.reconnects += 1
                    continue
                self.rec.error(step, type(exc).__name__)
                return None
            except (OSError, TimeoutError, ValueError, IndexError) as exc:
                self.conn.close()
                self.rec.error(step, type(exc).__name__)
                return None
            ms = (time.perf_counter() - started) * 1000
            self.rec.reconnects += reopened
            if 200 <= status < 300:
                self.rec.ok(step, ms)
                return json.loads(data)
            self.rec.error(step, f"{status} {data[:200]!r}")
            return None
        return None

    def _line(self) -> tuple[str, dict]:
        """What the person says this turn, and the bot's reading of how they feel."""
        r, opts = self.random.random(), self.opts
        if r < opts.distress_share:
            self.rec.distress += self.rec.recording
            line = self.random.choice(DISTRESS)
            reading = {"emotion": "fearful", "distress_score": 0.85, "trajectory": "escalating"}
        else:
            emotion, distress = self.random.choice(CALM)
            reading = {"emotion": emotion, "distress_score": distress, "trajectory": "stable"}
            if self.said and r < opts.distress_share + opts.repeat_share:
                self.rec.repeats += self.rec.recording
                line = self.random.choice(self.said)
            elif r < opts.distress_share + opts.repeat_share + opts.fresh_share:
                self.rec.fresh += self.rec.recording
                line = (
                    self.random.choice(_FRESH_OPENERS).format(
                        who=self.random.choice(_FRESH_WHO), where=self.random.choice(_FRESH_WHERE)
                    )
                    + f" {self.random.choice(_FRESH_WHEN)}."
                )
            else:
                line = self.random.choice(EVERYDAY)
            self.said.append(line)
        return line, {**reading, "confidence": 0.8}

    async def run(self, stop: asyncio.Event, first_turns: int) -> None:
        low, high = self.opts.turn_every
        await _wait(stop, self.random.uniform(0, high))
        turns = first_turns
        while not stop.is_set():
            session = await self._call("session", "/api/v1/sessions", {"user_id": self.user_id})
            if session is None:
                await _wait(stop, self.random.uniform(low, high))
                continue
            base = f"/api/v1/sessions/{session['session_id']}"
            self.said = []
            for turn in range(1, turns + 1):
                started = time.monotonic()
                message, reading = self._line()
                body = {"message": message, "emotion": reading}
                await self._call("context", f"{base}/context", body)
                await _wait(stop, self.random.uniform(*self.opts.think))
                if stop.is_set():
                    break
                await self._call(
                    "exchange",
                    f"{base}/exchanges",
                    {
                        "user_message": message,
                        "assistant_message": REPLY,
                        "idempotency_key": f"turn-{turn}",
                        "emotion": reading,
                    },
                )
                pause = self.random.uniform(low, high) - (time.monotonic() - started)
                if await _wait(stop, pause):
                    break
            if stop.is_set():
                # The run is over: conversations end within a few seconds, not all at once.
                await asyncio.sleep(self.random.uniform(0, 5))
            await self._call("close", f"{base}/close", {})
            turns = self.random.randint(*self.opts.conversation)
        self.conn.close()


async def _wait(stop: asyncio.Event, seconds: float) -> bool:
    """Sleep `seconds` or until the run stops; whether it stopped."""
    if seconds > 0 and not stop.is_set():
        try:
            async with asyncio.timeout(seconds):
                await stop.wait()
        except TimeoutError:
            pass
    return stop.is_set()


def _summary(values: list[float]) -> dict:
    return {
        "count": len(values),
        "p50": round(percentile(values, 50), 1),
        "p95": round(percentile(values, 95), 1),
        "p99": round(percentile(values, 99), 1),
        "max": round(max(values), 1) if values else float("nan"),
    }


def jobs_waiting(base: str) -> int | None:
    """The jobs waiting in the broker's queue, as /metrics reports them (clara_celery_queue_depth;
    the server answers /metrics to its own machine): a worker that falls behind shows here
    before it shows anywhere else. None when /metrics does not answer."""
    import urllib.request

    try:
        with urllib.request.urlopen(f"{base}/metrics", timeout=5) as answer:
            text = answer.read().decode()
    except OSError:
        return None
    found = [
        int(float(line.rsplit(" ", 1)[1]))
        for line in text.splitlines()
        if line.startswith(("clara_celery_queue_depth ", "clara_celery_queue_depth{"))
    ]
    return sum(found) if found else None


def drain(base: str, *, seconds: float) -> None:
    """Wait (up to `seconds`) for the jobs the warm-up's closed loop queued, so the first level
    does not work them off: its worker CPU and its "jobs waiting" are then its own."""
    deadline = time.monotonic() + seconds
    waiting = jobs_waiting(base)
    while waiting and time.monotonic() < deadline:
        time.sleep(1)
        waiting = jobs_waiting(base)
    log(f"jobs the warm-up queued still waiting: {waiting}")


async def run_levels(base: str, key: str, levels: list[int], args, groups: dict) -> list[dict]:
    """Adds people level by level (those of a level stay for the next); each level is measured
    for `duration` seconds once its newcomers have all started (one turn's time)."""
    parts = urlsplit(base)
    host, port = parts.hostname, parts.port or 80
    opts = Options(args)
    rec = Recorder()
    stop = asyncio.Event()
    meter = CpuMeter(groups)
    meter.start()
    tasks: list[asyncio.Task] = []
    results = []
    for people in levels:
        log(f"{people} people: {people - len(tasks)} joining over {opts.turn_every[1]:g} s")
        for n in range(len(tasks), people):
            person = Person(n, host, port, key, opts, rec)
            first = person.random.randint(1, opts.conversation[1])
            tasks.append(asyncio.create_task(person.run(stop, first)))
        rec.recording = False
        await asyncio.sleep(opts.turn_every[1])
        log(f"{people} people: measuring {args.duration:g} s")
        rec.reset()
        rec.recording = True
        meter.mark()
        meter_before = meter.own_cpu
        own_before = resource.getrusage(resource.RUSAGE_SELF)
        busy_before = _busy_jiffies()
        load_before = loadavg()
        jobs_before = await asyncio.to_thread(jobs_waiting, base)
        started = time.perf_counter()
        await asyncio.sleep(args.duration)
        elapsed = time.perf_counter() - started
        rec.recording = False
        jobs_after = await asyncio.to_thread(jobs_waiting, base)
        cpu = meter.mark()
        own_after = resource.getrusage(resource.RUSAGE_SELF)
        busy_after = _busy_jiffies()
        own = (own_after.ru_utime + own_after.ru_stime) - (
            own_before.ru_utime + own_before.ru_stime
        )
        meter_s = meter.own_cpu - meter_before
        machine = (busy_after[0] - busy_before[0]) / max(1, busy_after[1] - busy_before[1])
        steps = {step: _summary(rec.latencies.get(step, [])) for step in STEPS}
        for step in STEPS:
            steps[step]["errors"] = rec.errors.get(step, 0)
        total = sum(steps[s]["count"] for s in STEPS)
        result = {
            "people": people,
            "seconds": round(elapsed, 1),
            "pace": str(opts),
            "requests": total,
            "requests_per_s": round(total / elapsed, 1),
            "turns_per_s": round(steps["exchange"]["count"] / elapsed, 1),
            "said": {"repeats": rec.repeats, "distress": rec.distress, "fresh": rec.fresh},
            "errors": sum(rec.errors.values()),
            "error_samples": list(rec.error_samples),
            "reconnects": rec.reconnects,
            "cpu": {name: round(seconds / elapsed, 3) for name, seconds in cpu.items()},
            "generator_cpu": round((own - meter_s) / elapsed, 3),
            "meter_cpu": round(meter_s / elapsed, 3),
            "machine_busy": round(machine * psutil.cpu_count(), 2),
            "load_before": load_before,
            "load_after": loadavg(),
            "jobs_waiting": [jobs_before, jobs_after],
            "steps": steps,
        }
        server = sum(result["cpu"].values())
        result["server_cpu"] = round(server, 3)
        result["server_cpu_ms_per_request"] = round(1000 * server * elapsed / max(1, total), 2)
        results.append(result)
        ctx, exc = steps["context"], steps["exchange"]
        log(
            f"  {result['requests_per_s']} req/s, /context p50/p95/p99 {ctx['p50']}/{ctx['p95']}/"
            f"{ctx['p99']} ms, /exchanges p99 {exc['p99']} ms, errors {result['errors']}, "
            f"server CPU {server:.2f} ({result['cpu']}), generator {result['generator_cpu']}, "
            f"machine busy {result['machine_busy']} of {psutil.cpu_count()}, load "
            f"{load_before} -> {result['load_after']}, jobs waiting {jobs_before} -> {jobs_after}"
        )
        for sample in result["error_samples"]:
            log(f"  error: {sample}")
    log("closing the conversations")
    stop.set()
    await asyncio.gather(*tasks)
    meter.halt.set()
    closes = rec.latencies.get("close", [])
    if results:
        results[-1]["closes_at_end"] = {**_summary(closes), "errors": rec.errors.get("close", 0)}
    return results


async def warm_up(base: str, key: str, seconds: float) -> None:
    """Every web process meets the models and the first statements (not recorded)."""
    parts = urlsplit(base)
    rec = Recorder()
    stop = asyncio.Event()
    opts = argparse.Namespace(
        turn_every=(0.0, 0.0),
        think=(0.0, 0.0),
        conversation_turns=(5, 5),
        repeat_share=0.3,
        distress_share=0.1,
        fresh_share=0.3,
    )
    people = [
        Person(-1 - n, parts.hostname, parts.port or 80, key, Options(opts), rec) for n in range(12)
    ]
    tasks = [asyncio.create_task(p.run(stop, 5)) for p in people]
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.gather(*tasks)
    if rec.errors:
        log(f"warm-up errors: {dict(rec.errors)} {rec.error_samples[:3]}")


def markdown(results: list[dict]) -> str:
    lines = [
        "| people | requests/s | `/context` p50 / p95 / p99 ms | `/exchanges` p99 ms | errors "
        "| server CPU (web + worker + database) | ms CPU / request | generator CPU | machine busy "
        "| load before → after | jobs waiting, start → end |",
        "|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---|",
    ]
    for r in results:
        ctx, exc = r["steps"]["context"], r["steps"]["exchange"]
        parts = " + ".join(f"{v:.2f}" for v in r["cpu"].values())
        lines.append(
            f"| {r['people']} | {r['requests_per_s']} | {ctx['p50']} / {ctx['p95']} / "
            f"{ctx['p99']} | {exc['p99']} | {r['errors']} | {r['server_cpu']:.2f} ({parts}) "
            f"| {r['server_cpu_ms_per_request']} | {r['generator_cpu']:.3f} "
            f"| {r['machine_busy']} | {r['load_before']} → {r['load_after']} "
            f"| {' → '.join(str(n) for n in r.get('jobs_waiting', []))} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--levels", default="250,500,1000", help="people talking at once, per level"
    )
    parser.add_argument("--duration", type=float, default=60, help="seconds measured per level")
    parser.add_argument(
        "--turn-every",
        type=seconds_range,
        default=(10.0, 20.0),
        help="LOW-HIGH s from one turn's start to the next's, per person (default 10-20)",
    )
    parser.add_argument(
        "--think",
        type=seconds_range,
        default=(1.0, 3.0),
        help="LOW-HIGH s between /context and /exchanges: the LLM writes its reply (default 1-3)",
    )
    parser.add_argument(
        "--conversation-turns",
        type=lambda text: tuple(int(v) for v in seconds_range(text)),
        default=(20, 60),
        help="LOW-HIGH turns a conversation lasts before it is closed and the next begins",
    )
    parser.add_argument("--repeat-share", type=share, default=0.3, help="turns that repeat")
    parser.add_argument("--distress-share", type=share, default=0.05, help="distress lines")
    parser.add_argument("--fresh-share", type=share, default=0.2, help="lines never heard before")
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/clara_load_test"
    )
    parser.add_argument(
        "--from-sqlite",
        help="start from a copy of this database made by memory_bench.py (e.g. its 1M messages, "
        "messages-1000000.sqlite3 under CLARA_BENCH_DIR) instead of an empty one; SQLite only",
    )
    parser.add_argument(
        "--redis-url",
        default="redis://127.0.0.1:6379/12",
        help="broker, cache and rate-limit store; '' for the embedded broker (SQLite)",
    )
    parser.add_argument(
        "--web-processes", type=int, default=3, help="gunicorn processes (WEB_CONCURRENCY)"
    )
    parser.add_argument(
        "--threads", type=int, default=4, help="threads per gunicorn process (WEB_THREADS)"
    )
    parser.add_argument("--worker-concurrency", type=int, default=1, help="Celery pool processes")
    parser.add_argument("--no-worker", action="store_true", help="don't start a Celery worker")
    parser.add_argument(
        "--reuse-migrated",
        action="store_true",
        help="keep a migrated copy of the empty database and start from it while the migrations "
        "are unchanged (saves the minute or two of migrating)",
    )
    parser.add_argument("--url", help="drive a server that is already running instead")
    parser.add_argument("--key", help="API key for --url")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    if args.repeat_share + args.distress_share + args.fresh_share > 1:
        parser.error("--repeat-share, --distress-share and --fresh-share add up to more than 1")
    levels = [int(level) for level in args.levels.split(",")]
    # A thousand people hold a thousand connections.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 65536)), hard))

    # A stopped run (Ctrl-C, kill) still stops the deployment it started.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    deployment = None
    if args.url:
        if not args.key:
            raise SystemExit("--url needs --key")
        base, key, groups = args.url.rstrip("/"), args.key, {}
    else:
        deployment = Deployment(args)
        key = deployment.start()
        base, groups = deployment.url, deployment.groups()
    log(f"pace: {Options(args)}")
    try:
        asyncio.run(warm_up(base, key, 10))
        drain(base, seconds=180)
        results = asyncio.run(run_levels(base, key, levels, args, groups))
    finally:
        if deployment is not None:
            deployment.stop()
    print(markdown(results))
    if results and "closes_at_end" in results[-1]:
        c = results[-1]["closes_at_end"]
        print(
            f"\nclosing {c['count']} conversations at the end: p99 {c['p99']} ms, errors {c['errors']}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "results": results}, indent=2))


if __name__ == "__main__":
    main()
