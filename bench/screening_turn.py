#!/usr/bin/env python
"""The prompt firewall's cost in the /context turn (issue 31, item 9), on the 1M-message database
`bench/memory_bench.py --sizes 1000000` builds (its work copy, after a run):

    CLARA_BENCH_DIR=/path .venv/bin/python bench/screening_turn.py           # every text first seen
    FIRST=1 CLARA_BENCH_DIR=/path .venv/bin/python bench/screening_turn.py   # each person new

A/B in one process: `context_build` with the screen's prefilter on and off (off: every pattern
on every variant, the cost before memory/core/prefilter.py), alternated call by call. Without
FIRST the screen's cache is cleared before every call (every text the turn may quote is met for
the first time: a worker's first turn); with FIRST=1 each turn is a person not met before, the
story library cached. Reports thread CPU time (less inflated by a loaded machine) and wall time.
"""

import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(os.environ.get("CLARA_BENCH_DIR") or ROOT / "data" / "bench").resolve()
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.update(
    {
        "DJANGO_SETTINGS_MODULE": "clara.settings",
        "DATABASE_URL": f"sqlite:///{BENCH / 'work-1000000.sqlite3'}",
        "DEBUG": "0",
        "CELERY_EMBEDDED_BROKER": "1",
        "SECRET_KEY": "bench",
        "ALLOWED_HOSTS": "127.0.0.1",
        "LOG_LEVEL": "WARNING",
        "CLARA_RECOVERY_LOG": str(BENCH / "recovery-bench.jsonl"),
    }
)


def _quantile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


def main() -> None:
    sys.argv = sys.argv[:1]
    import memory_bench as mb

    os.environ["CLARA_ENCRYPTION_KEYS"] = mb.BENCH_ENCRYPTION_KEY
    import django

    django.setup()
    from clara.celery import app as celery_app

    celery_app.conf.update(broker_url="memory://", result_backend="cache+memory://")
    from memory.companion.context import context_build
    from memory.conversations.models import default_organisation_id
    from memory.core import screening
    from memory.models import Session

    first = os.environ.get("FIRST") == "1"
    n = int(os.environ.get("N", "400"))
    org, rng = default_organisation_id(), random.Random(31)
    sessions = list(Session.objects.values_list("id", flat=True))
    people: list = []
    if first:
        by_person: dict = {}
        for sid, pid in Session.objects.filter(person__isnull=False).values_list("id", "person_id"):
            by_person.setdefault(pid, sid)
        people = list(by_person.values())
        rng.shuffle(people)

    def pick():
        return people.pop() if first else rng.choice(sessions)

    for _ in range(100):  # warm-up
        context_build(session_id=pick(), message=rng.choice(mb.PHRASES), organisation_id=org)
    results: dict[bool, tuple[list, list]] = {True: ([], []), False: ([], [])}
    for i in range(n):
        mode = i % 2 == 0
        screening._flags.__kwdefaults__["filtered"] = mode
        sid, message = pick(), rng.choice(mb.PHRASES)
        if not first:
            screening.screen.cache_clear()
            screening.withheld.cache_clear()
        c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
        context_build(session_id=sid, message=message, organisation_id=org)
        results[mode][0].append((time.thread_time_ns() - c0) / 1e6)
        results[mode][1].append((time.perf_counter_ns() - t0) / 1e6)
    print("load", os.getloadavg())
    for mode, label in ((False, "prefilter off"), (True, "prefilter on")):
        cpu, wall = results[mode]
        print(
            f"{label}: n={len(cpu)} CPU p50 {_quantile(cpu, 0.5):.2f} p99 {_quantile(cpu, 0.99):.2f}"
            f" ms | wall p50 {_quantile(wall, 0.5):.2f} p99 {_quantile(wall, 0.99):.2f} ms"
        )


if __name__ == "__main__":
    main()
