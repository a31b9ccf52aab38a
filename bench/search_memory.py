#!/usr/bin/env python
"""Benchmark (not a test): a web process's memory for long-term search copies at many scopes.

    DEBUG=1 .venv/bin/python bench/search_memory.py                  # 1,000 people × 100 memories
    DEBUG=1 .venv/bin/python bench/search_memory.py --scopes 1000 --per-scope 100
    DEBUG=1 .venv/bin/python bench/search_memory.py --per-scope 50 --baseline d2f1391  # an earlier search.py

A new SQLite database in a temporary folder gets `--scopes` people with `--per-scope` memories
each (random 384-d vectors, short sentences, written with bulk_create). One process then searches
every person's scope once, with the budget lifted so no copy is dropped, and reports the process's
resident memory before and after (Linux /proc), the copies' own estimate (`search.cache_stats()`)
and the time per cold and warm search; then, with the default budget (CLARA_SEARCH_MEMORY_MB),
how many copies stay.
"""

import argparse
import os
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
WORDS = (
    "garden roses daughter sunday tea sugar choir music dog walk park bus market bread church "
    "letters photos wedding school teacher nurse kitchen piano dance holiday seaside"
).split()


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scopes", type=int, default=1000)
    parser.add_argument("--per-scope", type=int, default=100)
    parser.add_argument(
        "--baseline",
        help="measure memory/facts/search.py of this git revision instead of the working tree's",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="clara-search-memory-"))
    os.environ.setdefault("DEBUG", "1")
    os.environ["CLARA_DATA_DIR"] = str(work)
    os.environ["DATABASE_URL"] = f"sqlite:///{work / 'bench.sqlite3'}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "clara.settings"
    import django

    django.setup()
    import numpy as np
    from django.conf import settings
    from django.core.management import call_command
    from django.db import transaction

    from memory.facts import search, store
    from memory.models import Memory, Person

    if args.baseline:
        sys.path.insert(0, str(ROOT / "bench"))
        from search_bench import baseline_search

        search = baseline_search(args.baseline)
    call_command("migrate", verbosity=0)
    rng = np.random.default_rng(7)
    now = datetime.now(UTC)
    people = []
    began = time.perf_counter()
    for p in range(args.scopes):
        person = Person.objects.create(display_name=f"P{p}", created_at=now, last_active_at=now)
        people.append(person)
        vectors = rng.standard_normal((args.per_scope, 384)).astype("<f4")
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        with transaction.atomic():
            ns = store.person_namespace(person.id, "facts")
            revision = store._bump_scope(store.scope_of(ns))
            Memory.objects.bulk_create(
                Memory(
                    namespace=store.SEP.join(ns),
                    scope=store.scope_of(ns),
                    key=uuid.uuid4().hex,
                    person=person,
                    content=" ".join(rng.choice(WORDS, 8)),
                    type="other",
                    embedding=vectors[i].tobytes(),
                    revision=revision,
                    created_at=now,
                    updated_at=now,
                )
                for i in range(args.per_scope)
            )
    print(
        f"search module: {args.baseline or 'working tree'}; load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"loaded {args.scopes} × {args.per_scope} memories in {time.perf_counter() - began:.0f} s"
    )

    query = rng.standard_normal(384).astype(np.float32)
    query /= np.linalg.norm(query)
    settings.CLARA_SEARCH_MEMORY_MB = 1 << 20
    search.clear_cache()
    before = rss_mb()
    cold = time.perf_counter()
    for person in people:
        search.memory_search(
            prefix=store.person_namespace(person.id), query="garden tea", query_vector=query
        )
    cold = (time.perf_counter() - cold) / len(people) * 1000
    after = rss_mb()
    warm = time.perf_counter()
    for person in people:
        search.memory_search(
            prefix=store.person_namespace(person.id), query="garden tea", query_vector=query
        )
    warm = (time.perf_counter() - warm) / len(people) * 1000
    stats = search.cache_stats()
    print(
        f"{stats['scopes']} scopes, {stats['rows']} memories held: resident memory "
        f"{before:.0f} -> {after:.0f} MB (+{after - before:.0f} MB, "
        f"{(after - before) * 1e6 / max(stats['rows'], 1):.0f} bytes a memory); the copies' "
        f"estimate {stats['bytes'] / 1e6:.0f} MB; cold search {cold:.2f} ms, warm {warm:.2f} ms"
    )
    settings.CLARA_SEARCH_MEMORY_MB = int(os.environ.get("CLARA_SEARCH_MEMORY_MB", 256))
    search._evict(keep="")
    kept = search.cache_stats()
    print(
        f"with CLARA_SEARCH_MEMORY_MB={settings.CLARA_SEARCH_MEMORY_MB}: {kept['scopes']} "
        f"scopes kept, estimate {kept['bytes'] / 1e6:.0f} MB"
    )


if __name__ == "__main__":
    main()
