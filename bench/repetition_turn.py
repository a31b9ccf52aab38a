#!/usr/bin/env python
"""What the semantic repeat check (issue 17, item 3) or the urgent-moment recogniser (issue 28,
`--measure urgency`) adds to the whole /context turn.

    CLARA_BENCH_DIR=../bench-data .venv/bin/python bench/memory_bench.py --sizes 1000000 \\
        --queries 20 --writes 20 --no-http            # once: builds messages-1000000.sqlite3
    CLARA_BENCH_DIR=../bench-data .venv/bin/python bench/repetition_turn.py --size 1000000

Reuses the database bench/memory_bench.py builds (same data, same encryption key) and copies it
to `turn-<size>.sqlite3` beside it. Then, for `--calls` random (session, message) pairs, it calls
`context_build` (the whole /context turn, in-process, as memory_bench.py times it) twice, once
with `CLARA_SEMANTIC_REPEATS` on and once off, in a random order per pair, so load changes fall
on both alike:

- cold: every meaning cache of the process is cleared before each call (not timed), so with the
  check on the turn analyses its message (one MiniLM pass) and decodes the session's stored
  meanings: a message this process has not seen, the usual case;
- warm: the same pair again at once (the message's meaning cached; the exchange write after
  /context, or a message said again).

Printed: wall and CPU (thread time) p50 / p99 of each, the difference of the p50s and of the
p99s, and the p50 / p99 of the per-pair difference (on − off), with the load average before and
after. The messages are the evaluation set's texts (bench/repetition/pairs.jsonl), so their
lengths are what the detector was measured on, rambling ones included.

`--measure urgency`: the same pairs of turns with the recogniser on and off (off: every message
read as calm), the repeat check on in both; cold clears the recogniser's caches and the repeat
check's (the message's MiniLM pass is paid either way: the repeat check needs it). Messages are
the urgency evaluation set's (bench/urgent/eval/, every language, calm and urgent) beside the
repeat pairs'.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import memory_bench as mb  # noqa: E402  (no Django yet: settings read the environment below)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--calls", type=int, default=1000, help="pairs of turns (on and off)")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--measure", choices=("repeats", "urgency"), default="repeats")
    parser.add_argument(
        "--languages",
        default="",
        help="urgency: only these evaluation files (en,pl,...; none: the repeat pairs alone)",
    )
    args = parser.parse_args()
    files = {path.stem: path for path in (ROOT / "bench" / "urgent" / "eval").glob("*.jsonl")}
    wanted = set(filter(None, args.languages.split(","))) or set(files)
    if unknown := wanted - set(files) - {"none"}:
        parser.error(f"--languages: no evaluation file for {', '.join(sorted(unknown))}")

    pristine = mb.db_path(args.size)
    if not mb.pristine_is_valid(pristine, args.size):
        print(
            f"{pristine} is missing or stale: build it with bench/memory_bench.py --sizes {args.size}"
        )
        return 2
    work = mb.BENCH_DIR / f"turn-{args.size}.sqlite3"
    mb.remove_sqlite(work)
    shutil.copyfile(pristine, work)
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "clara.settings",
            "DATABASE_URL": f"sqlite:///{work}",
            "DEBUG": "0",
            "CELERY_EMBEDDED_BROKER": "1",
            "SECRET_KEY": "bench",
            "ALLOWED_HOSTS": "127.0.0.1",
            "CLARA_RECOVERY_LOG": str(mb.BENCH_DIR / "recovery-bench.jsonl"),
            "LOG_LEVEL": "WARNING",
            "CLARA_ENCRYPTION_KEYS": mb.BENCH_ENCRYPTION_KEY,
        }
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import override_settings

    from memory.companion.context import context_build
    from memory.conversations import repeats
    from memory.models import Session

    call_command("migrate", verbosity=0)
    rng = random.Random(args.seed)
    session_ids = list(Session.objects.values_list("id", flat=True))
    pairs = ROOT / "bench" / "repetition" / "pairs.jsonl"
    texts = sorted(
        {
            t
            for line in pairs.read_text().splitlines()
            for t in json.loads(line).values()
            if isinstance(t, str) and " " in t and t[0].isupper()
        }
    )
    scope = mb.caller_scope(context_build)
    on, off = (
        override_settings(CLARA_SEMANTIC_REPEATS=True),
        override_settings(CLARA_SEMANTIC_REPEATS=False),
    )
    if args.measure == "urgency":
        from memory.conversations import escalation, urgency
        from memory.conversations.urgency.recogniser import CALM

        for name in sorted(wanted & set(files)):
            lines = files[name].read_text().splitlines()
            texts += [json.loads(line)["text"] for line in lines if line]
        recognise = escalation.recognise
        on = off = override_settings(CLARA_SEMANTIC_REPEATS=True)

    def switch(flag):
        if args.measure == "urgency":
            escalation.recognise = recognise if flag else (lambda message: CALM)

    def turn(flag, sid, message, cold):
        if cold:
            repeats.clear_caches()
            if args.measure == "urgency":
                urgency.clear_caches()
        switch(flag)
        with on if flag else off:
            c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
            context_build(session_id=sid, message=message, **scope)
            return time.perf_counter_ns() - t0, time.thread_time_ns() - c0

    for _ in range(args.warmup):
        for flag in (True, False):
            turn(flag, rng.choice(session_ids), rng.choice(texts), cold=True)

    samples = {(k, f): ([], []) for k in ("cold", "warm") for f in ("on", "off")}
    load_before = mb.loadavg()
    started = time.perf_counter()
    for _ in range(args.calls):
        sid, message = rng.choice(session_ids), rng.choice(texts)
        order = [True, False] if rng.random() < 0.5 else [False, True]
        for flag in order:
            for kind in ("cold", "warm"):
                wall, cpu = turn(flag, sid, message, cold=kind == "cold")
                samples[(kind, "on" if flag else "off")][0].append(wall / 1e6)
                samples[(kind, "on" if flag else "off")][1].append(cpu / 1e6)
    seconds = time.perf_counter() - started
    load_after = mb.loadavg()

    def pct(values, q):
        return mb.percentile(sorted(values), q)

    print(
        f"{args.size:,} messages, {len(session_ids):,} sessions, {args.calls} pairs of turns, "
        f"{seconds:.0f} s, load average {load_before:.1f} → {load_after:.1f}"
    )
    print()
    print(
        "| turn | measure | off p50 | on p50 | added p50 | off p99 | on p99 | added p99 "
        "| per-pair difference p50 / p99 |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for kind in ("cold", "warm"):
        for m, name in ((0, "wall ms"), (1, "CPU ms")):
            a, b = samples[(kind, "on")][m], samples[(kind, "off")][m]
            diff = [x - y for x, y in zip(a, b, strict=True)]
            print(
                f"| {kind} | {name} | {pct(b, 50):.2f} | {pct(a, 50):.2f} | "
                f"{pct(a, 50) - pct(b, 50):+.2f} | {pct(b, 99):.2f} | {pct(a, 99):.2f} | "
                f"{pct(a, 99) - pct(b, 99):+.2f} | {pct(diff, 50):+.2f} / {pct(diff, 99):+.2f} |"
            )
    mb.remove_sqlite(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
