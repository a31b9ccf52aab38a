#!/usr/bin/env python3
"""The README's first command, as a new user runs it: `make run` on a fresh clone, nothing set.

    python3 tests/smoke/first_run.py                    # SQLite and the embedded broker
    python3 tests/smoke/first_run.py --engine postgres  # PostgreSQL and Redis
    python3 tests/smoke/first_run.py --runs 5           # five fresh clones in a row
    python3 tests/smoke/first_run.py --cold             # with an empty package cache

Each run clones the repository (its committed HEAD) into a temporary folder and starts `make run`
there in a process group of its own, on a free port, with none of the project's variables set
(only PATH, HOME, the language and this machine's TLS and package-index settings go through).
It waits for /readyz, then checks what `make run` promised before it started the processes:

- the API key it printed works for one bot turn: /sessions, /context, /exchanges;
- the `demo` login it printed opens the dashboard, a person's page and their conversations,
  and no conversation is still waiting for its summary;

then stops `make run` as Ctrl-C would (SIGINT to its process group) and checks that no process
is left in the clone. Then `make run` again on the same clone (the second run: no demo to load),
with the same checks. It prints how long each took, from `git clone` to a server that answers
with all of the above. On a failure it prints the tail of the log and exits 1.

With --engine postgres it creates a throwaway database (dropped afterwards) and needs a Redis
database of its own that is empty (--redis-url, default db 6; flushed afterwards).
Standard library only: it runs before any virtualenv exists.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What a new user's shell has: programs, home, language, and this machine's TLS trust and package
# index settings. None of the project's variables (DEBUG, DATABASE_URL, CLARA_*...), no PYTHON*.
PASSED_THROUGH = {
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TERM", "TMPDIR",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
}  # fmt: skip
PASSED_THROUGH_PREFIXES = ("PIP_", "UV_")
KEY = re.compile(r"^(clara_[0-9a-f]{8}_\S+)$", re.MULTILINE)
LOGIN = re.compile(r"^\s+(demo|family) / (\S+)\s", re.MULTILINE)
# A team admin's and an organisation admin's second step (create_demo_caregivers prints it).
AUTHENTICATOR = re.compile(
    r"^\s+(demo|orgadmin) / \S+.*\n\s+second step: authenticator key (\w+)", re.MULTILINE
)
PERSON_LINK = re.compile(r'href="(/people/[0-9a-f-]{36}/)"')
NOT_SUMMARISED = "Summary not written yet"


class SmokeFailure(Exception):
    pass


# --- Small HTTP helpers (urllib, no redirects followed unless asked) -------------------------


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def _opener(jar: http.cookiejar.CookieJar | None = None) -> urllib.request.OpenerDirector:
    handlers = [_NoRedirect()]
    if jar is not None:
        handlers.append(urllib.request.HTTPCookieProcessor(jar))
    return urllib.request.build_opener(*handlers)


def _call(opener, method: str, url: str, *, body=None, headers=None, timeout=30.0):
    """(status, headers, text) of one request; an HTTP error status is returned, not raised."""
    data = None
    headers = dict(headers or {})
    if isinstance(body, dict) and headers.get("Content-Type") == "application/json":
        data = json.dumps(body).encode()
    elif isinstance(body, dict):
        data = urllib.parse.urlencode(body).encode()
        headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with opener.open(request, timeout=timeout) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read().decode(errors="replace")


def _expect(what: str, status: int, wanted: int, text: str) -> None:
    if status != wanted:
        raise SmokeFailure(f"{what}: {status}, expected {wanted}: {text[:300]}")


# --- The checks --------------------------------------------------------------------------------


def bot_turn(base: str, key: str) -> None:
    """One turn as the README's bot flow: start a session, ask for context, store the exchange."""
    opener = _opener()
    api = f"{base}/api/v1"
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    session_id, person_id = uuid.uuid4(), uuid.uuid4()
    body = {"session_id": str(session_id), "user_id": str(person_id), "display_name": "Smoke"}
    status, _, text = _call(opener, "POST", f"{api}/sessions", body=body, headers=headers)
    _expect("POST /sessions", status, 201, text)
    body = {"message": "Where am I?"}
    status, _, text = _call(
        opener, "POST", f"{api}/sessions/{session_id}/context", body=body, headers=headers
    )
    _expect("POST /context", status, 200, text)
    if not json.loads(text).get("system_prompt"):
        raise SmokeFailure(f"/context has no system_prompt: {text[:300]}")
    body = {
        "user_message": "Where am I?",
        "assistant_message": "You are at home, safe and warm.",
        "idempotency_key": "smoke-turn-1",
    }
    status, _, text = _call(
        opener, "POST", f"{api}/sessions/{session_id}/exchanges", body=body, headers=headers
    )
    _expect("POST /exchanges", status, 201, text)


def totp_code(key: str, at: float | None = None) -> str:
    """The code an authenticator app shows now for this base32 key (RFC 6238: SHA-1, 30 s, six
    digits, as django-otp's TOTP devices)."""
    import base64
    import hashlib
    import hmac
    import struct

    secret = base64.b32decode(key + "=" * (-len(key) % 8))
    counter = int((time.time() if at is None else at) // 30)
    digest = hmac.new(secret, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    code = (struct.unpack(">I", digest[offset : offset + 4])[0] & 0x7FFFFFFF) % 10**6
    return f"{code:06d}"


def _second_step(opener, base: str, username: str, key: str) -> None:
    """Give the second-factor page the current code of the printed authenticator key."""
    status, _, text = _call(opener, "GET", f"{base}/account/two-factor/")
    _expect("GET /account/two-factor/", status, 200, text)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', text)
    if token is None:
        raise SmokeFailure("the second-factor page has no CSRF token")
    form = {"token": totp_code(key), "next": "/", "csrfmiddlewaretoken": token.group(1)}
    status, _, text = _call(opener, "POST", f"{base}/account/two-factor/", body=form)
    if status != 302:
        raise SmokeFailure(f"the second step as {username}: {status} {text[:200]}")


def dashboard_visit(
    base: str, username: str, password: str, authenticator_key: str | None = None
) -> int:
    """Log in (with the second step when the login has one), open the people page, a person's
    page and their conversations; returns how many people the login sees. Every conversation
    shown must have its summary."""
    jar = http.cookiejar.CookieJar()
    opener = _opener(jar)
    status, _, text = _call(opener, "GET", f"{base}/login/")
    _expect("GET /login/", status, 200, text)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', text)
    if token is None:
        raise SmokeFailure("the login page has no CSRF token")
    form = {"username": username, "password": password, "csrfmiddlewaretoken": token.group(1)}
    status, headers, text = _call(opener, "POST", f"{base}/login/", body=form)
    if status != 302:
        raise SmokeFailure(f"logging in as {username}: {status} (wrong password?) {text[:200]}")
    if authenticator_key:
        _second_step(opener, base, username, authenticator_key)
    status, _, text = _call(opener, "GET", f"{base}/")
    _expect("GET / (people)", status, 200, text)
    people = sorted(set(PERSON_LINK.findall(text)))
    if not people:
        raise SmokeFailure("the people page lists nobody: was the demo loaded?")
    for path in (people[0], f"{people[0]}conversations/"):
        status, _, text = _call(opener, "GET", f"{base}{path}")
        _expect(f"GET {path}", status, 200, text)
        if NOT_SUMMARISED in text:
            raise SmokeFailure(f"{path} still shows '{NOT_SUMMARISED}': the demo is catching up")
    return len(people)


# --- Running `make run` -----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _environment(port: int, extra: dict[str, str]) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if name in PASSED_THROUGH or name.startswith(PASSED_THROUGH_PREFIXES)
    }
    env.update(PORT=str(port), **extra)
    return env


def _processes_in(folder: Path) -> list[tuple[int, str]]:
    """(pid, command line) of every process working in `folder` or started from a file in it."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
        except OSError:
            continue  # gone meanwhile, or not ours to read
        if cwd == str(folder) or cwd.startswith(f"{folder}/") or str(folder) in cmdline:
            found.append((int(entry.name), cmdline))
    return found


class MakeRun:
    """`make run` in `clone`, in its own process group; its output, each line with the seconds
    since `started`, in `log`."""

    def __init__(self, clone: Path, env: dict[str, str], log: Path, started: float):
        self.clone, self.log, self.started = clone, log, started
        self.lines: list[tuple[float, str]] = []
        self.output = open(log, "w")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            ["make", "run"],
            cwd=clone,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for raw in self.process.stdout:
            at, line = time.monotonic() - self.started, raw.decode(errors="replace")
            self.lines.append((at, line))
            self.output.write(f"[{at:6.1f}] {line}")
            self.output.flush()

    def text(self) -> str:
        return "".join(line for _, line in self.lines)

    def first(self, pattern: str) -> float | None:
        """Seconds from `started` to the first line matching `pattern`."""
        return next((at for at, line in list(self.lines) if re.search(pattern, line)), None)

    def wait_until_ready(self, base: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SmokeFailure(f"make run exited ({self.process.returncode}) before /readyz")
            try:
                with urllib.request.urlopen(f"{base}/readyz", timeout=2) as response:
                    if response.status == 200:
                        return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.2)
        raise SmokeFailure(f"/readyz did not answer 200 within {timeout:.0f} s")

    def stop(self, timeout: float = 60.0) -> None:
        """Ctrl-C: SIGINT to the process group; then check that nothing is left in the clone."""
        try:
            os.killpg(self.process.pid, signal.SIGINT)
            self.process.wait(timeout=timeout)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            raise SmokeFailure(f"make run did not stop within {timeout:.0f} s of SIGINT") from None
        finally:
            self.reader.join(timeout=10)
            self.output.close()
        # honcho gives each process a group of its own: look for anything still in the clone.
        deadline = time.monotonic() + 10
        while (left := _processes_in(self.clone)) and time.monotonic() < deadline:
            time.sleep(0.5)
        if left:
            for pid, _ in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            listing = "\n".join(f"  {pid} {cmdline}" for pid, cmdline in left)
            raise SmokeFailure(f"still running after make run stopped:\n{listing}")


def _cpu_seconds() -> float:
    """CPU time (user and system) of every child process waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_start(
    clone: Path, env: dict[str, str], log: Path, *, started: float, cpu: float, expect_demo: bool
) -> float:
    """Start `make run`, check everything, stop it; returns seconds from `started` to ready.

    Also prints the CPU seconds its processes used since `cpu` (a busy machine stretches the
    wall time; the CPU time is what a quiet one would come close to)."""
    port = int(env["PORT"])
    base = f"http://127.0.0.1:{port}"
    run = MakeRun(clone, env, log, started)
    try:
        run.wait_until_ready(base, timeout=900)
        ready = time.monotonic() - started
        steps = {
            "installed": run.first(r"manage\.py prepare_run"),
            "prepared": run.first(r"^Ready in"),
            "key printed": run.first(KEY.pattern),
        }
        output = run.text()
        keys, logins = KEY.findall(output), dict(LOGIN.findall(output))
        if len(keys) != 1 or "demo" not in logins:
            raise SmokeFailure("make run printed no API key or no demo login")
        loaded = "Loaded demo data" in output
        if loaded != expect_demo:
            raise SmokeFailure(f"demo {'loaded' if loaded else 'not loaded'}, expected otherwise")
        bot_turn(base, keys[0])
        # demo is a team admin (it exports and erases): it passes the second step.
        second_steps = dict(AUTHENTICATOR.findall(output))
        people = dashboard_visit(base, "demo", logins["demo"], second_steps.get("demo"))
        dashboard_visit(base, "family", logins["family"])
        shown = ", ".join(f"{name} {at:.1f}" for name, at in steps.items() if at is not None)
        print(f"    {shown}, answering {ready:.1f} s; bot turn ok; {people} people shown")
    except BaseException:
        try:
            run.stop()
        except SmokeFailure as exc:
            print(f"    (also: {exc})")
        raise
    run.stop()
    print(f"    {_cpu_seconds() - cpu:.1f} CPU seconds, start to stop")
    return ready


# --- Engines -----------------------------------------------------------------------------------


class Postgres:
    """A throwaway database on the server at `admin_url`, and an empty Redis database."""

    def __init__(self, admin_url: str, redis_url: str):
        self.admin_url, self.redis_url = admin_url, redis_url
        self.name = f"clara_smoke_{os.getpid()}_{int(time.time())}"

    def _psql(self, sql: str) -> None:
        subprocess.run(["psql", self.admin_url, "-qc", sql], check=True, capture_output=True)

    def _redis(self, *command: str) -> str:
        done = subprocess.run(
            ["redis-cli", "-u", self.redis_url, *command], check=True, capture_output=True
        )
        return done.stdout.decode().strip()

    def __enter__(self) -> dict[str, str]:
        if self._redis("DBSIZE") != "0":
            raise SmokeFailure(f"{self.redis_url} is not empty: give the smoke its own database")
        self._psql(f'CREATE DATABASE "{self.name}"')
        base = self.admin_url.rsplit("/", 1)[0]
        return {"DATABASE_URL": f"{base}/{self.name}", "REDIS_URL": self.redis_url}

    def __exit__(self, *exc_info) -> None:
        self._psql(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        self._redis("FLUSHDB")


# --- Main ----------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--runs", type=int, default=1, help="fresh clones in a row (default 1)")
    parser.add_argument("--repo", default=str(ROOT), help="what to clone (default: this one)")
    parser.add_argument("--cold", action="store_true", help="an empty uv and pip cache")
    parser.add_argument(
        "--postgres-url",
        default="postgres://postgres@127.0.0.1:5432/postgres",
        help="a server to create the throwaway database on (--engine postgres)",
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/6")
    args = parser.parse_args()

    firsts, seconds = [], []
    with tempfile.TemporaryDirectory(prefix="clara-first-run-") as tmp:
        for number in range(1, args.runs + 1):
            folder = Path(tmp) / f"run{number}"
            folder.mkdir()
            clone, extra = folder / "clara", {}
            if args.cold:
                extra = {"UV_CACHE_DIR": str(folder / "uv-cache"), "PIP_NO_CACHE_DIR": "1"}
            engine = (
                Postgres(args.postgres_url, args.redis_url) if args.engine == "postgres" else None
            )
            logs = [folder / "first.log", folder / "second.log"]
            print(
                f"== run {number}/{args.runs}: {args.engine}{', cold cache' if args.cold else ''}"
            )
            try:
                if engine is not None:
                    extra.update(engine.__enter__())
                env = _environment(_free_port(), extra)
                started, cpu = time.monotonic(), _cpu_seconds()
                subprocess.run(["git", "clone", "-q", args.repo, str(clone)], check=True)
                print("  first make run (fresh clone):")
                firsts.append(
                    one_start(clone, env, logs[0], started=started, cpu=cpu, expect_demo=True)
                )
                print("  second make run (same clone):")
                started, cpu = time.monotonic(), _cpu_seconds()
                seconds.append(
                    one_start(clone, env, logs[1], started=started, cpu=cpu, expect_demo=False)
                )
            except (SmokeFailure, subprocess.CalledProcessError) as exc:
                print(f"FAILED: {exc}", file=sys.stderr)
                for log in logs:
                    if log.exists():
                        tail = log.read_text(errors="replace").splitlines()[-60:]
                        print(f"--- last lines of {log.name}:", *tail, sep="\n", file=sys.stderr)
                return 1
            finally:
                if engine is not None:
                    engine.__exit__(None, None, None)
                # The clone's .venv is large; the next run clones afresh anyway.
                shutil.rmtree(folder, ignore_errors=True)

    def summary(times: list[float]) -> str:
        return f"median {statistics.median(times):.1f} s ({', '.join(f'{t:.1f}' for t in times)})"

    print(f"first run, git clone to ready: {summary(firsts)}")
    print(f"second run, make run to ready: {summary(seconds)}")
    print(f"first-run smoke: {len(firsts)} fresh clone(s) ok on {args.engine}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
