"""Long-term search inside PostgreSQL with pgvector: the HNSW index instead of in-process copies.

Chosen by `CLARA_VECTOR_SEARCH` (`inprocess`, the default; `pgvector`; `auto`: pgvector when
the database has it). When it runs, `memory/facts/search.py` hands a scope's ranked search here
(`_search_scope`) and ranks the same way: the same filters, the same BM25 keyword part scaled
by its maximum over the scope, the same blend of relevance, recency, frequency and importance.

What the database holds, beside the encrypted columns (migration `pgvector_search_columns`,
made only on PostgreSQL with the extension available):
- `memories.search_vector vector(384)`: the embedding turned by a keyed rotation (an orthogonal
  matrix drawn from the primary encryption key). A rotation keeps every inner product, so the
  ranking is exactly the in-process one, but a stored vector does not compare with the public
  model's vector of a guessed sentence without the key. It is not encryption: the vectors'
  distances to one another are kept (that is the point), and someone holding the table and a
  few hundred rows' known sentences could solve for the rotation. Hence opt-in (docs/deploy.md).
- `search_terms text[]`, `search_length`: the content's keyword tokens as keyed hashes (a blind
  index: equal words give equal tokens, no word can be read back without the key), for BM25.
- `search_entities text[]`: the entity refs as keyed hashes, for the entity cards.
- `memory_search_rows` (issue 19, round five): one narrow row per live memory for the keyword
  part: its distinct tokens as keyed hashes of (scope, word), so one person's words never
  compare with another's, their counts and the token count (BM25 without unnesting anything),
  and the rotated vector kept inline (no TOAST read per keyword row, and small scopes ranked
  exactly from it). Statement-level triggers delete a memory's row whenever the memory is
  deleted or the table truncated, whatever deletes it.
- `memory_scopes.vector_generation`, `vector_epoch`, `vector_key`: how far a scope's columns
  are in step with its rows, and under which key.

Keeping in step: every write to a scope's memories bumps its generation (store.py's
`_bump_scope`); that registers `sync_scope` to run once the write commits, which re-derives the
columns of the rows stamped since the scope's vector generation (deleted rows take theirs with
them; deprecated ones are cleared). A search first compares the two generations (one indexed
read) and catches up itself when they differ, so a sync lost to a crash, a database moved by
`move_database`, a key rotation or a setting switched on later never serves stale vectors.
"""

from __future__ import annotations

import functools
import logging
import threading
import weakref
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Sequence
from datetime import datetime

import numpy as np
from django.conf import settings
from django.db import DatabaseError, connections, transaction

from memory.core import crypto
from memory.core.progress import Progress
from memory.facts import ranking as retrieval

logger = logging.getLogger(__name__)

DIMS = 384
MODES = ("inprocess", "pgvector", "auto")
ALIAS = "default"
# HNSW candidates examined per search (pgvector's default is 40; at least the 50 candidates a
# search takes); iterative scans go further when the scope and filters leave too few. 64 instead
# of 200 since issue 19's third round: the same top 10 as the exact in-process ranking for every
# LoCoMo dev and synthetic question, at about half the scan (docs/benchmarks.md).
EF_SEARCH = 64
SYNC_BATCH = 500
# A sync that rewrote at least this many rows refreshes the planner's statistics of the search
# columns at once: until autovacuum's next ANALYZE the planner believes the new vectors are NULL
# (as they were when last sampled), estimates one matching row and sorts the scope's rows by exact
# distance instead of walking the HNSW index (57 ms against 5 ms at 10k, docs/benchmarks.md).
ANALYZE_ROWS = 1000
ANALYZE_SQL = "ANALYZE memories (scope, status, expires_at, search_vector, search_terms)"
TOKEN_CHARS = 16

# --- Schema -------------------------------------------------------------------------------------

ROWS_TABLE = "memory_search_rows"

INSTALL_SQL = [
    "ALTER TABLE memories ADD COLUMN IF NOT EXISTS search_vector vector(384)",
    "ALTER TABLE memories ADD COLUMN IF NOT EXISTS search_terms text[]",
    "ALTER TABLE memories ADD COLUMN IF NOT EXISTS search_length integer",
    "ALTER TABLE memories ADD COLUMN IF NOT EXISTS search_entities text[]",
    # Only live rows are ever searched. The graph is built over half-precision copies ordered by
    # the inner product (the in-process similarity): half the bytes per distance of the float
    # vectors, ~25-45 % faster a scan at 10k; the candidates' similarities are then computed from
    # the full vectors, so only which 50 rows are candidates can differ, as with any HNSW walk.
    "CREATE INDEX IF NOT EXISTS idx_memories_search_halfvec ON memories "
    "USING hnsw ((search_vector::halfvec(384)) halfvec_ip_ops) WHERE status = 'active'",
    # The first index (cosine over the float vectors), replaced by the one above.
    "DROP INDEX IF EXISTS idx_memories_search_vector",
    "CREATE INDEX IF NOT EXISTS idx_memories_search_terms ON memories "
    "USING gin (search_terms) WHERE status = 'active'",
    "ALTER TABLE memory_scopes ADD COLUMN IF NOT EXISTS vector_generation bigint",
    "ALTER TABLE memory_scopes ADD COLUMN IF NOT EXISTS vector_epoch bigint",
    "ALTER TABLE memory_scopes ADD COLUMN IF NOT EXISTS vector_key text",
    # The keyword part's rows (issue 19, round five): one narrow row per live memory, read
    # inline. `terms` are the content's distinct tokens as keyed hashes of (scope, word), so a
    # word's index entry holds one person's rows only and two people's tokens never compare;
    # `counts` their frequencies, `length` the token count (BM25 without unnesting anything);
    # `vec` the rotated vector, kept in the row (PLAIN, and no TOAST below 8 KB): the keyword
    # rows' similarities without a TOAST read each.
    f"CREATE TABLE IF NOT EXISTS {ROWS_TABLE} (id uuid PRIMARY KEY, scope varchar(300) NOT NULL, "
    "terms text[] NOT NULL, counts integer[] NOT NULL, length integer NOT NULL, "
    "vec vector(384)) WITH (toast_tuple_target = 8160)",
    f"ALTER TABLE {ROWS_TABLE} ALTER COLUMN vec SET STORAGE PLAIN",
    f"CREATE INDEX IF NOT EXISTS idx_{ROWS_TABLE}_terms ON {ROWS_TABLE} USING gin (terms)",
    f"CREATE INDEX IF NOT EXISTS idx_{ROWS_TABLE}_scope ON {ROWS_TABLE} (scope)",
    # Whatever deletes memories (forgetting, expiry, erasure, a flush) takes their rows along,
    # in the same statement: nothing derived from a deleted memory outlives it.
    f"CREATE OR REPLACE FUNCTION {ROWS_TABLE}_gone() RETURNS trigger LANGUAGE plpgsql AS $$ "
    f"BEGIN DELETE FROM {ROWS_TABLE} r USING gone g WHERE r.id = g.id; RETURN NULL; END $$",
    f"CREATE OR REPLACE FUNCTION {ROWS_TABLE}_truncated() RETURNS trigger LANGUAGE plpgsql AS $$ "
    f"BEGIN TRUNCATE {ROWS_TABLE}; RETURN NULL; END $$",
    f"DROP TRIGGER IF EXISTS {ROWS_TABLE}_gone ON memories",
    f"CREATE TRIGGER {ROWS_TABLE}_gone AFTER DELETE ON memories REFERENCING OLD TABLE AS gone "
    f"FOR EACH STATEMENT EXECUTE FUNCTION {ROWS_TABLE}_gone()",
    f"DROP TRIGGER IF EXISTS {ROWS_TABLE}_truncated ON memories",
    f"CREATE TRIGGER {ROWS_TABLE}_truncated AFTER TRUNCATE ON memories "
    f"FOR EACH STATEMENT EXECUTE FUNCTION {ROWS_TABLE}_truncated()",
]

# What migration 0028 added (its reverse drops only these).
ROWS_UNINSTALL_SQL = [
    f"DROP TRIGGER IF EXISTS {ROWS_TABLE}_gone ON memories",
    f"DROP TRIGGER IF EXISTS {ROWS_TABLE}_truncated ON memories",
    f"DROP TABLE IF EXISTS {ROWS_TABLE}",
    f"DROP FUNCTION IF EXISTS {ROWS_TABLE}_gone()",
    f"DROP FUNCTION IF EXISTS {ROWS_TABLE}_truncated()",
]

UNINSTALL_SQL = [
    *ROWS_UNINSTALL_SQL,
    "DROP INDEX IF EXISTS idx_memories_search_vector",
    "DROP INDEX IF EXISTS idx_memories_search_halfvec",
    "DROP INDEX IF EXISTS idx_memories_search_terms",
    "ALTER TABLE memories DROP COLUMN IF EXISTS search_vector, "
    "DROP COLUMN IF EXISTS search_terms, DROP COLUMN IF EXISTS search_length, "
    "DROP COLUMN IF EXISTS search_entities",
    "ALTER TABLE memory_scopes DROP COLUMN IF EXISTS vector_generation, "
    "DROP COLUMN IF EXISTS vector_epoch, DROP COLUMN IF EXISTS vector_key",
]


def install(connection) -> bool:
    """Create the extension, columns and indexes when PostgreSQL offers pgvector; True if done.

    Never fails for want of the extension (SQLite, or a PostgreSQL without it): the migration
    and `manage.py vector_index --install` call this.
    """
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        if cursor.fetchone() is None:
            return False
        try:
            with transaction.atomic(using=connection.alias):
                cursor.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except DatabaseError as error:  # e.g. not allowed to create extensions
            logger.warning("pgvector is available but could not be enabled: %s", error)
            return False
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        version = cursor.fetchone()[0]
        if not supported(version):
            logger.warning("pgvector %s is older than %s (halfvec): not used", version, MIN_VERSION)
            return False
        cursor.execute("SELECT to_regclass(%s) IS NULL", [ROWS_TABLE])
        new_rows_table = cursor.fetchone()[0]
        for statement in INSTALL_SQL:
            cursor.execute(statement)
        if new_rows_table:
            # Every scope's rows are derived again (the next search of each catches up, or
            # `manage.py vector_index`): the table starts empty.
            cursor.execute("UPDATE memory_scopes SET vector_generation = NULL")
    _installed.clear()
    return True


def uninstall(connection) -> None:
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for statement in UNINSTALL_SQL:
            cursor.execute(statement)
    _installed.clear()


# halfvec and its HNSW operator classes came with pgvector 0.7.0.
MIN_VERSION = (0, 7, 0)


def supported(version: str | None) -> bool:
    if not version:
        return False
    try:
        return tuple(int(part) for part in version.split(".")[:3]) >= MIN_VERSION
    except ValueError:
        return False


# --- Which path runs ----------------------------------------------------------------------------

_installed: dict[tuple, str | None] = {}
_installed_lock = threading.Lock()


def extension_version(alias: str = ALIAS) -> str | None:
    """pgvector's version when this database has the extension and the search columns, else None
    (asked once per database and process)."""
    connection = connections[alias]
    if connection.vendor != "postgresql":
        return None
    key = (connection.settings_dict.get("HOST"), connection.settings_dict.get("NAME"))
    with _installed_lock:
        if key in _installed:
            return _installed[key]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT e.extversion FROM pg_extension e WHERE e.extname = 'vector' AND EXISTS ("
            "SELECT 1 FROM information_schema.columns WHERE table_name = 'memories' "
            "AND column_name = 'search_vector' AND table_schema = current_schema())"
        )
        row = cursor.fetchone()
    version = row[0] if row and supported(row[0]) else None
    with _installed_lock:
        _installed[key] = version
    return version


def vector_search_path() -> str:
    """`pgvector` or `inprocess`: the path long-term search takes in this process now."""
    mode = settings.CLARA_VECTOR_SEARCH
    if mode == "inprocess":
        return "inprocess"
    try:
        available = extension_version() is not None
    except DatabaseError:
        available = False
    return "pgvector" if available else "inprocess"


def status() -> dict:
    """For /readyz's details and the admin: the setting, the path taken and why."""
    mode = settings.CLARA_VECTOR_SEARCH
    try:
        version = extension_version()
    except DatabaseError:
        version = None
    path = "pgvector" if mode != "inprocess" and version else "inprocess"
    info = {"setting": mode, "path": path, "pgvector": version}
    if mode == "pgvector" and path != "pgvector":
        info["note"] = "CLARA_VECTOR_SEARCH=pgvector but the database has no pgvector columns"
    return info


# --- Keyed rotation and blind tokens ------------------------------------------------------------


@functools.lru_cache(maxsize=4)
def _rotation_for(kid: str, seed_hex: str) -> np.ndarray:
    """A random orthogonal matrix (QR of a Gaussian, signs fixed so it is uniformly drawn)."""
    from memory.core.embeddings import blas_threads

    rng = np.random.default_rng(int(seed_hex, 16))
    # One BLAS thread: on a loaded machine the helper threads made this take seconds.
    with blas_threads(1):
        q, r = np.linalg.qr(rng.standard_normal((DIMS, DIMS)))
    return (q * np.sign(np.diag(r))).astype(np.float32)


def _key() -> tuple[str, np.ndarray]:
    ring = crypto.keyring()
    seed = ring.keyed_hash("rotation", purpose="clara vector search rotation v1")
    return ring.primary.kid, _rotation_for(ring.primary.kid, seed)


@functools.lru_cache(maxsize=200_000)
def _token(kid: str, purpose: str, word: str) -> str:
    return crypto.keyring().keyed_hash(word, purpose=purpose)[:TOKEN_CHARS]


def term_tokens(words: Sequence[str]) -> list[str]:
    kid = crypto.keyring().primary.kid
    return [_token(kid, "clara vector search term v1", w) for w in words]


def scoped_term_tokens(scope: str, words: Sequence[str]) -> list[str]:
    """Keyword tokens of one scope: the same word in two scopes gives unrelated tokens."""
    kid = crypto.keyring().primary.kid
    return [_token(kid, "clara vector search scoped term v1", f"{scope}\x1f{w}") for w in words]


def entity_tokens(refs: Sequence[str]) -> list[str]:
    kid = crypto.keyring().primary.kid
    return [_token(kid, "clara vector search entity v1", r) for r in refs]


def _literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.8g}" for x in vector.tolist()) + "]"


# --- Keeping in step with the rows --------------------------------------------------------------


def after_write(scope: str) -> None:
    """Called by every write to a scope (store.py's `_bump_scope`): sync once it commits."""
    if vector_search_path() != "pgvector":
        return
    transaction.on_commit(functools.partial(sync_scope, scope), using=ALIAS, robust=True)


def sync_scope(scope: str, *, force: bool = False, analyze: bool = True) -> int:
    """Bring the scope's search columns up to its generation; returns the rows re-derived."""
    connection = connections[ALIAS]
    kid, rotation = _key()
    with transaction.atomic(using=ALIAS), connection.cursor() as cursor:
        # The scope's row lock, as writers take it: every write up to this generation is in.
        cursor.execute(
            "SELECT generation, epoch, vector_generation, vector_epoch, vector_key "
            "FROM memory_scopes WHERE scope = %s FOR UPDATE",
            [scope],
        )
        row = cursor.fetchone()
        if row is None:
            return 0
        generation, epoch, done, done_epoch, done_key = row
        whole = force or done is None or done_epoch != epoch or done_key != kid
        if not whole and done >= generation:
            return 0
        from memory.facts.models import Memory

        rows = Memory.objects.using(ALIAS).filter(scope=scope)
        if not whole:
            rows = rows.filter(revision__gt=done)
        rows = rows.only("id", "scope", "status", "content", "entity_refs", "embedding")
        count = 0
        batch: list = []
        for memory in rows.iterator(chunk_size=SYNC_BATCH):
            batch.append(memory)
            if len(batch) >= SYNC_BATCH:
                count += _write_columns(cursor, batch, rotation)
                batch = []
        if batch:
            count += _write_columns(cursor, batch, rotation)
        cursor.execute(
            "UPDATE memory_scopes SET vector_generation = %s, vector_epoch = %s, vector_key = %s "
            "WHERE scope = %s",
            [generation, epoch, kid, scope],
        )
    if analyze and count >= ANALYZE_ROWS:
        _analyze()
    return count


def _analyze() -> None:
    with connections[ALIAS].cursor() as cursor:
        cursor.execute(ANALYZE_SQL)
        cursor.execute(f"ANALYZE {ROWS_TABLE}")


def _write_columns(cursor, memories: list, rotation: np.ndarray) -> int:
    from memory.facts.models import Memory

    width = DIMS * 4
    ids, vectors, terms, lengths, entities = [], [], [], [], []
    live, scopes, scoped, counts = [], [], [], []
    for m in memories:
        ids.append(str(m.id))
        if m.status != Memory.Status.ACTIVE:
            # Out of search for good: nothing derived from it stays.
            vectors.append(None)
            terms.append(None)
            lengths.append(None)
            entities.append(None)
            continue
        if m.embedding and len(m.embedding) == width:
            vector = rotation @ np.frombuffer(bytes(m.embedding), dtype="<f4")
            vectors.append(_literal(vector))
        else:
            vectors.append(None)  # no embedding, or another model's: no similarity, as in-process
        tokens = retrieval.tokenize(m.content)
        terms.append(" ".join(term_tokens(tokens)))
        lengths.append(len(tokens))
        entities.append(" ".join(entity_tokens(m.entity_refs)))
        frequencies = Counter(tokens)
        live.append(len(ids) - 1)
        scopes.append(m.scope)
        scoped.append(" ".join(scoped_term_tokens(m.scope, list(frequencies))))
        counts.append(" ".join(str(c) for c in frequencies.values()))
    # The keyword rows: the batch's old ones out, the live ones' in (a deprecated row's stay out).
    cursor.execute(f"DELETE FROM {ROWS_TABLE} WHERE id = ANY(%s::uuid[])", [ids])
    if live:
        cursor.execute(
            f"INSERT INTO {ROWS_TABLE} (id, scope, terms, counts, length, vec) "
            "SELECT id, scope, string_to_array(terms, ' ', ''), "
            "string_to_array(counts, ' ', '')::integer[], len, vec::vector "
            "FROM unnest(%s::uuid[], %s::text[], %s::text[], %s::text[], %s::int[], %s::text[]) "
            "AS v(id, scope, terms, counts, len, vec)",
            [
                [ids[i] for i in live],
                scopes,
                scoped,
                counts,
                [lengths[i] for i in live],
                [vectors[i] for i in live],
            ],
        )
    cursor.execute(
        "UPDATE memories AS m SET search_vector = v.vec::vector, "
        "search_terms = CASE WHEN v.terms IS NULL THEN NULL "
        "ELSE string_to_array(v.terms, ' ', '') END, "
        "search_length = v.len, "
        "search_entities = CASE WHEN v.ents IS NULL THEN NULL "
        "ELSE string_to_array(v.ents, ' ', '') END "
        "FROM (SELECT unnest(%s::uuid[]) AS id, unnest(%s::text[]) AS vec, "
        "unnest(%s::text[]) AS terms, unnest(%s::int[]) AS len, unnest(%s::text[]) AS ents) AS v "
        "WHERE m.id = v.id",
        [ids, vectors, terms, lengths, entities],
    )
    return len(ids)


def sync_all(*, force: bool = False, progress: Progress | None = None) -> tuple[int, int]:
    """Every scope (`manage.py vector_index`, after `rotate_keys` or `move_database`);
    `progress` counts the scopes done."""
    with connections[ALIAS].cursor() as cursor:
        cursor.execute("SELECT scope FROM memory_scopes ORDER BY scope")
        scopes = [row[0] for row in cursor.fetchall()]
    if progress is not None:
        progress.add_total(len(scopes))
    rows = 0
    for scope in scopes:
        rows += sync_scope(scope, force=force, analyze=False)
        if progress is not None:
            progress.update()
    if rows >= ANALYZE_ROWS:
        _analyze()
    return len(scopes), rows


def pending_scopes() -> int:
    """Scopes whose search columns are behind their rows (or under another key)."""
    kid, _ = _key()
    with connections[ALIAS].cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM memory_scopes WHERE vector_generation IS NULL "
            "OR vector_generation < generation OR vector_epoch <> epoch OR vector_key <> %s",
            [kid],
        )
        return cursor.fetchone()[0]


def _catch_up(scope: str) -> tuple | None:
    """Sync the scope if its columns are behind; returns what identifies its rows' state
    (generation, epoch, key), or None for a scope with no row."""
    kid, _ = _key()
    with connections[ALIAS].cursor() as cursor:
        cursor.execute(
            "SELECT generation = vector_generation AND epoch = vector_epoch AND vector_key = %s, "
            "generation, epoch FROM memory_scopes WHERE scope = %s",
            [kid, scope],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    if not row[0]:
        sync_scope(scope)
    return row[1], row[2], kid


# BM25's statistics of a scope (live rows, their total length) by the state they were counted
# at: they change only with the scope's generation, so each process counts once per change
# instead of aggregating the scope on every search (15 ms at 10k).
_STATS_SIZE = 10_000
_stats: OrderedDict = OrderedDict()
_stats_lock = threading.Lock()
# Scopes up to this many live rows rank their vector candidates exactly instead of walking HNSW.
# The size is the last one `_stats` holds, at whatever state: it only picks how the candidates
# are found (both ways give the same rows, the exact one exactly), so it may be stale.
EXACT_ROWS = 2000


# --- Search -------------------------------------------------------------------------------------

# The rows searches returned, decrypted, by (id, revision, key epoch): a row's version is
# immutable (every write stamps a new revision, a key rotation or a move a new epoch), so a
# later search returning the same version takes it from here instead of reading and decrypting
# it again, as the in-process copy keeps the rows it loaded (~4 KB each; at most READ_ROWS).
READ_ROWS = 2_000
_read_rows: OrderedDict = OrderedDict()
_read_lock = threading.Lock()


def _read(revisions: dict, epoch, fetch) -> dict:
    """The Memory of each id at the given revision: from `_read_rows`, else read (`fetch`)."""
    found, missing = {}, []
    with _read_lock:
        for i, revision in revisions.items():
            memory = _read_rows.get((i, revision, epoch))
            if memory is None:
                missing.append(i)
            else:
                _read_rows.move_to_end((i, revision, epoch))
                found[i] = memory
    if missing:
        read = fetch(missing)
        with _read_lock:
            for i, memory in read.items():
                found[i] = memory
                if memory.revision == revisions[i] and epoch is not None:
                    _read_rows[(i, memory.revision, epoch)] = memory
            while len(_read_rows) > READ_ROWS:
                _read_rows.popitem(last=False)
    return found


# What the blend reads of each candidate, as plain columns (no row is decrypted for it).
# `updated_at` crosses as seconds since the epoch (the same double as Python's `timestamp()`):
# parsing ~100 timestamps with time zones per search cost more client time than the blend itself.
# `revision` names the row's version: the page's rows are read whole only when this process
# has not read that version under this key epoch already (`_read`).
_BLEND = (
    "pinned, importance, extract(epoch FROM updated_at)::float8 AS updated_s, search_entities, "
    "revision"
)
_BLEND_COLUMNS = "pinned, importance, updated_s, search_entities, revision"
# The same columns read from a lateral `memories` row named `b`.
_BLEND_OF_B = ", ".join(f"b.{c.strip()}" for c in _BLEND_COLUMNS.split(","))
# BM25 as the in-process copy scores it (search.py), term by term in the query's order so that
# the sum is the same float: idf from the matching rows' document frequencies, tf from the row's
# tokens. `top` is the best score over every row sharing a word, `ok` the search's filters.
_K1, _B = 1.2, 0.75


def _keyword_ctes(sim: str) -> str:
    """The keyword part over the narrow rows: BM25 of every row of the scope sharing a word.

    One index probe per query word (its scoped token in the GIN index) gives that word's rows,
    and each row's frequency of it is read by position in the row's own distinct tokens
    (`counts[array_position(terms, t)]`): ~1.1 lookups per matching row instead of one per row
    and query word. Document frequencies are counts per word; a row's BM25 sums its words in the
    query's order (`ORDER BY i`: the same floats however the rows come). `sim` is read from the
    row's inline vector.
    """
    return (
        "qt AS (SELECT t, i FROM unnest(%s::text[]) WITH ORDINALITY AS q(t, i)), "
        "p AS MATERIALIZED (SELECT qt.i, r.id, r.length, "
        f"r.counts[array_position(r.terms, qt.t)]::float8 AS f, {sim} AS sim "
        # `scope || ''`: never the scope's btree (all of a person's rows, once per word), which
        # statistics taken before a person's rows arrived make look cheap (a second 10k person
        # in the table: 16 ms instead of 12, docs/benchmarks.md); the word's GIN entry holds
        # this scope's rows only.
        f"FROM qt CROSS JOIN LATERAL (SELECT * FROM {ROWS_TABLE} r WHERE (r.scope || '') = %s "
        "AND r.terms && ARRAY[qt.t]) r), "
        "df AS (SELECT qt.i, ln(1 + ((st.n - count(p.id))::float8 + 0.5) "
        "/ (count(p.id)::float8 + 0.5)) AS idf FROM qt CROSS JOIN st "
        "LEFT JOIN p ON p.i = qt.i GROUP BY qt.i, st.n), "
        "k AS (SELECT %s::float8 AS k1, %s::float8 AS one_b, %s::float8 AS b, %s::float8 AS k1p1, "
        "CASE WHEN st.n > 0 AND st.total > 0 THEN st.total::float8 / st.n "
        "ELSE 1.0::float8 END AS avg FROM st), "
        "sc AS MATERIALIZED (SELECT p.id, max(p.sim) AS sim, sum(df.idf * p.f * k.k1p1 "
        "/ (p.f + k.k1 * (k.one_b + k.b * p.length::float8 / k.avg)) ORDER BY p.i) AS score "
        "FROM p JOIN df ON df.i = p.i CROSS JOIN k GROUP BY p.id), "
        # The best score over every row sharing a word, once (not a window over each row).
        "tw AS MATERIALIZED (SELECT max(score) AS top FROM sc), "
        "scored AS (SELECT sc.id, sc.sim, sc.score, "
        "CASE WHEN tw.top > 0 THEN "
        "%s::float8 * least(greatest(coalesce(sc.sim, 0), 0), 1) "
        "+ %s::float8 * (sc.score / tw.top) "
        "ELSE least(greatest(coalesce(sc.sim, 0), 0), 1) END AS relevance "
        "FROM sc CROSS JOIN tw)"
    )


# Database connections whose session already searches with this hnsw.ef_search.
_ef_set: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _ef_search(connection, cursor, ef: int) -> None:
    """HNSW's candidate list and iterative scans: set once per database connection, or for the
    transaction when the search runs inside one (which may roll back, taking the setting)."""
    raw = connection.connection
    local = connection.in_atomic_block
    if not local and _ef_set.get(raw) == ef:
        return
    cursor.execute(
        "SELECT set_config('hnsw.ef_search', %s, %s), "
        "set_config('hnsw.iterative_scan', 'relaxed_order', %s)",
        [str(ef), local, local],
    )
    if not local:
        _ef_set[raw] = ef


def _client_bound(cursor) -> bool:
    """Whether the query's parameters are bound by the client (Django's default for psycopg),
    so that one message may carry several statements."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg 2
        return False
    return isinstance(getattr(cursor, "cursor", None), psycopg.ClientCursor)


def _without_seqscan(connection, cursor, sql: str, params: list) -> list:
    """Run the keyword statement with sequential scans off, then put the setting back.

    The rows sharing a query word come from the GIN index on `search_terms`, but when the
    statistics say a word is common the planner may read the whole table instead (every person's
    rows, each one's tokens): forced on 20 LoCoMo questions at 10k memories in one scope that
    plan took 31-67 ms against 9-13 ms with the index (docs/benchmarks.md). With sequential scans
    priced out it takes the index, or the scope's btree.
    """
    if not connection.in_atomic_block and _client_bound(cursor):
        # One round trip instead of three: outside a transaction, a message of two statements
        # runs as one implicit transaction, which `SET LOCAL` lasts for (an error ends it too).
        cursor.execute("SET LOCAL enable_seqscan = off; " + sql, params)
        cursor.nextset()
        return cursor.fetchall()
    cursor.execute(
        "SELECT current_setting('enable_seqscan'), set_config('enable_seqscan', 'off', false)"
    )
    previous = cursor.fetchone()[0]
    try:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    except Exception:
        # Inside a transaction its rollback restores the setting; outside, this connection
        # would keep it.
        if not connection.in_atomic_block:
            cursor.execute("SELECT set_config('enable_seqscan', %s, false)", [previous])
        raise
    cursor.execute("SELECT set_config('enable_seqscan', %s, false)", [previous])
    return rows


def _filters(scope, *, prefix, types, persona, confirmed, at) -> tuple[str, list]:
    """The in-process mask (search.py's `_mask`) as SQL over the plain columns."""
    from memory.facts.store import SEP

    sql = ["scope = %s", "status = 'active'", "(expires_at IS NULL OR expires_at > %s)"]
    params: list = [scope, at]
    if len(prefix) > 2:
        path = SEP.join(prefix)
        sql.append("(namespace = %s OR starts_with(namespace, %s))")
        params += [path, path + SEP]
    if types:
        sql.append("type = ANY(%s)")
        params.append(list(types))
    if confirmed is not None:
        sql.append("confirmed = %s")
        params.append(confirmed)
    if persona is not None:
        sql.append("(persona IS NULL OR persona = %s)")
        params.append(persona)
    return " AND ".join(sql), params


def search_scope(
    scope: str,
    *,
    prefix,
    query,
    query_vector,
    types,
    persona,
    confirmed,
    metadata,
    limit,
    offset,
    threshold,
    entity_cards,
    at: datetime,
):
    """One scope's ranked search in PostgreSQL: search.py's `_search_copy`, candidate for
    candidate, with the vector part from the HNSW index and the keyword part from the blind
    index."""
    from memory.facts import search as s
    from memory.facts.models import Memory

    state = _catch_up(scope)
    where, params = _filters(
        scope, prefix=prefix, types=types, persona=persona, confirmed=confirmed, at=at
    )
    connection = connections[ALIAS]

    def fetch(ids) -> dict:
        return {m.id: m for m in Memory.objects.using(ALIAS).filter(id__in=list(ids))}

    def metadata_ok(memory) -> bool:
        return not metadata or s.metadata_matches(memory.metadata, metadata)

    if not query and query_vector is None:
        picked: list = []
        skip = offset
        chunk = max(offset + limit, 100)
        start = 0
        while len(picked) < limit:
            with connection.cursor() as cursor:
                cursor.execute(
                    f"SELECT id FROM memories WHERE {where} "
                    "ORDER BY pinned DESC, importance DESC, updated_at DESC, id "
                    "LIMIT %s OFFSET %s",
                    [*params, chunk, start],
                )
                ids = [r[0] for r in cursor.fetchall()]
            if not ids:
                break
            rows = fetch(ids)
            for i in ids:
                memory = rows.get(i)
                if memory is None or not metadata_ok(memory):
                    continue
                if skip:
                    skip -= 1
                    continue
                picked.append(memory)
                if len(picked) == limit:
                    break
            if not metadata and len(ids) < chunk:
                break
            start += chunk
        hits = [s.Hit(m, float(m.importance / 3), 0.0) for m in picked]
        cards = _cards(picked, where, params) if entity_cards else []
        return s.SearchResult(hits, cards)

    q = None
    if query_vector is not None and len(query_vector) == DIMS:
        _, rotation = _key()
        q = _literal(rotation @ np.asarray(query_vector, dtype=np.float32))
    tokens = retrieval.tokenize(query) if query else []
    hashed = scoped_term_tokens(scope, list(dict.fromkeys(tokens))) if tokens else []
    wanted = max(s.CANDIDATES, offset + limit)
    take = wanted * (4 if metadata else 1)

    # One statement: the keyword candidates ranked by BM25 in SQL and cut to the best `take` by
    # relevance (only those rows cross to Python, not every row sharing a word), the scope's size
    # for BM25 when this process has not counted it at this state, and the vector candidates from
    # the HNSW index. The blend's inputs (pinned, importance, updated_at, hashed entity refs) come
    # as plain columns: no row is decrypted for it.
    ctes, cte_params, parts, part_params = [], [], [], []
    if q:
        # The query vector crosses once (4 KB of text), referred to below as `(SELECT v FROM qv)`,
        # which the HNSW index scan still takes as its ordering argument.
        ctes.append("qv AS (SELECT %s::vector AS v)")
        cte_params.append(q)
    with _stats_lock:
        known = _stats.get(scope)  # (state, (live rows, total tokens)) as last counted
    stats = known if known is not None and state is not None and known[0] == state else None
    if hashed:
        if stats is None:
            ctes.append(
                "st AS (SELECT count(*) AS n, coalesce(sum(search_length), 0) AS total "
                "FROM memories WHERE scope = %s AND status = 'active')"
            )
            cte_params.append(scope)
        else:
            ctes.append("st AS (SELECT %s::bigint AS n, %s::bigint AS total)")
            cte_params += list(stats[1])
        ctes.append(_keyword_ctes("-(r.vec <#> (SELECT v FROM qv))" if q else "0::float8"))
        cte_params += [hashed, scope]
        cte_params += [_K1, 1 - _B, _B, _K1 + 1, s.SIMILARITY_WEIGHT, s.KEYWORD_WEIGHT]
        # The best `take` by relevance that pass the filters: the rows are visited in order of
        # relevance and each one's memory read by its key until enough have passed (the filters'
        # and the blend's columns live in `memories`; most searches read ~take of them, not the
        # ~2,200 rows sharing a word at 10k).
        parts.append(
            "(SELECT 1 AS part, o.id, o.score, NULL::float8, o.sim, st.n, st.total, "
            f"{_BLEND_OF_B} "
            "FROM (SELECT * FROM scored ORDER BY relevance DESC) o CROSS JOIN st "
            f"CROSS JOIN LATERAL (SELECT {_BLEND} FROM memories WHERE id = o.id AND {where}) b "
            "ORDER BY o.relevance DESC LIMIT %s)"
        )
        part_params += [*params, take]
        # The best score and the scope's size even when no row sharing a word passes the filters.
        parts.append(
            "(SELECT 0, NULL, NULL, tw.top, NULL, st.n, st.total, "
            "NULL, NULL, NULL, NULL, NULL FROM st CROSS JOIN tw)"
        )
    exact = q is not None and known is not None and known[1][0] <= EXACT_ROWS
    if exact:
        # A small scope is ranked exactly from the narrow rows' inline vectors (every row of
        # the scope, best first, each one's memory read by key until `take` pass the filters):
        # ~0.4-0.8 ms at 1k, where the shared HNSW graph walks mostly other people's rows (~4
        # ms for a 1k person beside a 10k one, docs/benchmarks.md), and no approximation.
        parts.append(
            "(SELECT 2, o.id, NULL::float8, NULL::float8, o.sim, NULL::bigint, NULL::bigint, "
            f"{_BLEND_OF_B} "
            "FROM (SELECT r.id, -(r.vec <#> (SELECT v FROM qv)) AS sim "
            f"FROM {ROWS_TABLE} r WHERE r.scope = %s AND r.vec IS NOT NULL ORDER BY sim DESC) o "
            f"CROSS JOIN LATERAL (SELECT {_BLEND} FROM memories WHERE id = o.id AND {where}) b "
            "ORDER BY o.sim DESC LIMIT %s)"
        )
        part_params += [scope, *params, take]
    elif q:
        parts.append(
            "(SELECT 2, id, NULL::float8, NULL::float8, -(search_vector <#> (SELECT v FROM qv)), "
            f"NULL::bigint, NULL::bigint, {_BLEND} FROM memories WHERE {where} "
            "AND search_vector IS NOT NULL ORDER BY search_vector::halfvec(384) <#> "
            "(SELECT v::halfvec(384) FROM qv) LIMIT %s)"
        )
        part_params += [*params, take]

    similarity: dict = {}
    words: dict = {}
    blend: dict = {}  # id -> (pinned, importance, updated_at in epoch seconds, hashed entity refs)
    top_words = 0.0
    matched, found = [], []
    if parts:
        with_sql = ("WITH " + ", ".join(ctes) + " ") if ctes else ""
        with connection.cursor() as cursor:
            if q:
                _ef_search(connection, cursor, max(EF_SEARCH, take))
            statement = (with_sql + " UNION ALL ".join(parts), cte_params + part_params)
            if hashed:
                result = _without_seqscan(connection, cursor, *statement)
            else:
                cursor.execute(*statement)
                result = cursor.fetchall()
            for row in result:
                if row[0] == 1:
                    matched.append(row)
                elif row[0] == 0:
                    top_words = row[3] or 0.0
                    if stats is None and state is not None and row[5] is not None:
                        with _stats_lock:
                            _stats[scope] = (state, (row[5], row[6]))
                            _stats.move_to_end(scope)
                            while len(_stats) > _STATS_SIZE:
                                _stats.popitem(last=False)
                else:
                    found.append(row)
            if q and not exact and len(found) < take:
                # An index scan can stop short when the scope is a sliver of a large table (its
                # tuple budget spent on other people's rows): the scope's rows are then few
                # enough to rank exactly (`+ 0` keeps the planner off the index).
                cursor.execute(
                    f"SELECT 2, id, NULL, NULL, -(search_vector <#> %s::vector), NULL, NULL, "
                    f"{_BLEND} FROM memories WHERE {where} "
                    "AND search_vector IS NOT NULL ORDER BY (search_vector <#> %s::vector) + 0 "
                    "LIMIT %s",
                    [q, *params, q, take],
                )
                found = cursor.fetchall()
    for row in matched:
        words[row[1]] = row[2]
        similarity[row[1]] = float(row[4]) if row[4] is not None else 0.0
        blend[row[1]] = row[7:]
    for row in found:
        similarity.setdefault(row[1], float(row[4]))
        blend.setdefault(row[1], row[7:])

    def relevance_of(id_) -> float:
        sim = similarity.get(id_, 0.0)
        if top_words > 0:
            return s.SIMILARITY_WEIGHT * min(max(sim, 0.0), 1.0) + s.KEYWORD_WEIGHT * (
                words.get(id_, 0.0) / top_words
            )
        return min(max(sim, 0.0), 1.0)

    candidates = set(similarity) | set(words)
    if threshold is not None:
        candidates = {i for i in candidates if similarity.get(i, 0.0) >= threshold}
    elif len(candidates) < take:
        # In-process, every row that passes the filters is a candidate, at relevance 0 when
        # neither part found it: small scopes return their rows however unrelated.
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id, {_BLEND} FROM memories WHERE {where} AND NOT (id = ANY(%s)) "
                "ORDER BY pinned DESC, importance DESC, updated_at DESC LIMIT %s",
                [*params, list(candidates), take - len(candidates)],
            )
            for row in cursor.fetchall():
                candidates.add(row[0])
                blend.setdefault(row[0], row[1:])
    if not candidates:
        return s.SearchResult([])
    ordered = sorted(candidates, key=lambda i: -relevance_of(i))[:take]
    if metadata:
        # Metadata is encrypted: the candidates are read whole to filter on it.
        rows = fetch(ordered)
        top = [i for i in ordered if i in rows and metadata_ok(rows[i])][:wanted]
    else:
        rows = {}
        top = ordered[:wanted]

    ref_counts: dict[str, int] = defaultdict(int)
    for i in top:
        for ref in blend[i][3] or ():
            ref_counts[ref] += 1
    most = max(ref_counts.values(), default=1)
    now = at.timestamp()
    scored = []
    for i in top:
        pinned, importance_, updated_s, refs, _ = blend[i]
        frequency = max((ref_counts[r] for r in refs or ()), default=0) / most
        age_days = max(0.0, (now - updated_s) / 86400)
        recency = 0.5 ** (age_days / s.HALF_LIFE_DAYS)
        importance = 1.0 if pinned else importance_ / 3
        relevance = relevance_of(i)
        score = (
            s.RELEVANCE_SHARE * relevance
            + s.RECENCY_SHARE * recency
            + s.FREQUENCY_SHARE * frequency
            + s.IMPORTANCE_SHARE * importance
        )
        scored.append((score, relevance, i))
    scored.sort(key=lambda triple: -triple[0])
    page = scored[offset : offset + limit]
    # Only the page's rows are read whole (and decrypted).
    missing = [i for _, _, i in page if i not in rows]
    if missing:
        epoch = state[1] if state is not None else None
        rows.update(_read({i: blend[i][4] for i in missing}, epoch, fetch))
    hits = [
        s.Hit(rows[i], float(score), float(relevance)) for score, relevance, i in page if i in rows
    ]
    cards = _cards([hit.memory for hit in hits], where, params) if entity_cards else []
    return s.SearchResult(hits, cards)


def _cards(hits: list, where: str, params: list) -> list[str]:
    """search.py's `_entity_cards`, the entity's rows found by their keyed tokens."""
    from memory.facts import search as s
    from memory.facts.models import Memory

    cards = []
    seen: set[str] = set()
    connection = connections[ALIAS]
    for memory in hits:
        for ref in memory.entity_refs:
            if ref in seen:
                continue
            seen.add(ref)
            with connection.cursor() as cursor:
                cursor.execute(
                    f"SELECT id FROM memories WHERE {where} AND search_entities @> %s::text[] "
                    "AND (importance >= 2 OR pinned) "
                    "ORDER BY pinned DESC, importance DESC, created_at DESC LIMIT %s",
                    [*params, entity_tokens([ref]), s.ENTITY_CARD_FACTS],
                )
                ids = [r[0] for r in cursor.fetchall()]
            rows = {m.id: m for m in Memory.objects.using(ALIAS).filter(id__in=ids)}
            # A hash collision (one in 2^64) would bring a stranger's fact: check the ref itself.
            facts = [rows[i].content for i in ids if i in rows and ref in rows[i].entity_refs]
            if facts:
                cards.append(f"[{ref}]: " + "; ".join(facts))
    return cards
