#!/usr/bin/env python
"""Benchmark (not a test): what encryption at rest costs where it is not on the per-turn path.

    .venv/bin/python bench/atrest_bench.py                    # 10,000 memories, 5 repeats
    .venv/bin/python bench/atrest_bench.py --memories 2000 --repeats 3

1. The search copy of a scope (memory/facts/search.py): the first search in a process reads the
   scope's live rows and keeps their vectors, decrypted, in memory. Timed with the rows as this
   release stores them (key, memory_key sealed; content, metadata, entity refs and labels,
   embedding encrypted and bound to their row) and with the same rows written back in plaintext
   by the reverse pass (`reencrypt.decrypt_all`, which the fields read as rows from before
   encryption): the difference is what decrypting costs the build.
2. Per value: sealing and opening one message-sized value, bound to column only and to a row,
   and a deterministic (AES-SIV) key.

One SQLite file under data/bench/ (rebuilt each run), medians of `--repeats`. Writes a markdown
summary to stdout.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "data" / "bench"
KEY = "YmVuY2gtb25seS1rZXktbm90LWZvci1yZWFsLWRhdGE"


def setup(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "clara.settings",
            "DATABASE_URL": f"sqlite:///{path}",
            "DEBUG": "0",
            "SECRET_KEY": "bench",
            "ALLOWED_HOSTS": "127.0.0.1",
            "CELERY_EMBEDDED_BROKER": "1",
            "LOG_LEVEL": "WARNING",
            "CLARA_ENCRYPTION_KEYS": KEY,
        }
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def populate(n: int) -> str:
    import numpy as np
    from django.utils import timezone

    from memory.facts import store
    from memory.facts.models import Memory, MemoryScope
    from memory.models import Person

    now = timezone.now()
    person = Person.objects.create(display_name="Bench Person", created_at=now, last_active_at=now)
    namespace = store.person_namespace(person.id, "event")
    path, scope = "\x1f".join(namespace), "\x1f".join(namespace[:2])
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((n, 384)).astype("<f4")
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = [
        Memory(
            namespace=path,
            scope=scope,
            key=f"event:{i}",
            memory_key=f"event|self|walk:{i}",
            person=person,
            content=f"Walked to the harbour with Margaret on day {i} and had tea",
            metadata={"source_text": f"We walked to the harbour on day {i}.", "value": "tea"},
            entity_refs=["person:margaret"],
            entity_labels={"person:margaret": "Margaret"},
            embedding=vectors[i].tobytes(),
            revision=1,
            created_at=now,
            updated_at=now,
        )
        for i in range(n)
    ]
    Memory.objects.bulk_create(rows, batch_size=1000)
    MemoryScope.objects.update_or_create(scope=scope, defaults={"generation": 1})
    return scope


def time_builds(scope: str, repeats: int) -> float:
    from memory.facts import search

    times = []
    for repeat in range(repeats + 1):
        search.clear_cache()
        began = time.perf_counter()
        with search.scope_copy(scope) as copy:
            assert len(copy.memories) > 0
        if repeat:  # the first loads the embedder (for its width): not timed
            times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def time_values(count: int = 20000) -> dict[str, float]:
    from memory.core import crypto

    ring = crypto.keyring()
    text = "When is my daughter coming? I want to go home now, please."
    row = str(uuid.uuid4())
    out = {}

    def each(name, fn):
        began = time.perf_counter()
        for _ in range(count):
            fn()
        out[name] = (time.perf_counter() - began) / count * 1e6

    sealed = ring.encrypt(text, context="chat_messages.content")
    bound = ring.encrypt(text, context="chat_messages.content", row=row)
    each("seal, column only (v2)", lambda: ring.encrypt(text, context="chat_messages.content"))
    each("seal, bound to a row (r1)", lambda: ring.encrypt(text, context="c.c", row=row))
    each("open, column only (v2)", lambda: ring.decrypt(sealed, context="chat_messages.content"))
    each(
        "open, bound to a row, checked (r1)",
        lambda: crypto.decrypt_optional(bound, context="chat_messages.content", row=row),
    )
    each("deterministic seal (d1, AES-SIV)", lambda: ring.seal_lookup(text, context="m.key"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    setup(BENCH_DIR / "atrest.sqlite3")
    from memory import reencrypt

    scope = populate(args.memories)
    encrypted = time_builds(scope, args.repeats)
    reencrypt.decrypt_all()
    plaintext = time_builds(scope, args.repeats)
    load = round(os.getloadavg()[0], 2)
    print(f"search copy of one scope, {args.memories:,} memories, median of {args.repeats}:")
    print("| rows stored | first search (copy build) ms |")
    print("|---|---:|")
    print(f"| encrypted and bound (this release) | {encrypted:.1f} |")
    print(f"| plaintext (reverse pass) | {plaintext:.1f} |")
    print(
        f"| difference | {encrypted - plaintext:+.1f} ms "
        f"({(encrypted - plaintext) / args.memories * 1000:.1f} µs per memory) |"
    )
    print()
    print("| one value (58 characters) | µs |")
    print("|---|---:|")
    for name, us in time_values().items():
        print(f"| {name} | {us:.1f} |")
    print(f"\nload average {load}")


if __name__ == "__main__":
    main()
