"""The LangGraph adapter behaves like LangGraph's own stores (their own tests run in
tests/langgraph_conformance); these check what is Clara's: namespaces, vectors, TTL, threads."""

import asyncio
import math
import time
from datetime import timedelta
from typing import Annotated

import numpy as np
import pytest
from django.db import connections, transaction
from django.utils import timezone
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedStore, ToolNode
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    PutOp,
    SearchOp,
)

from memory.core.embeddings import get_embedder
from memory.facts import search, store
from memory.facts.langgraph_store import (
    DEFAULT_ORGANISATION,
    AsyncClaraStore,
    ClaraStore,
    UnknownOrganisation,
)
from memory.models import Memory, Organisation, Person

pytestmark = pytest.mark.django_db

SEP = Memory.NAMESPACE_SEPARATOR

LETTERS = "abcdefgh"


def letters(texts):
    """A tiny embedding: how often each of eight letters occurs (8 dimensions)."""
    return [[float(text.count(ch)) for ch in LETTERS] for text in texts]


async def aletters(texts):
    return letters(texts)


class LetterEmbeddings(Embeddings):
    def embed_documents(self, texts):
        return letters(texts)

    def embed_query(self, text):
        return letters([text])[0]


def cosine(a: str, b: str) -> float:
    va, vb = np.array(letters([a])[0]), np.array(letters([b])[0])
    return float(va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb)))


@pytest.fixture
def lg():
    return ClaraStore(index={"fields": ["text"]})


@pytest.fixture(autouse=True)
def _fresh_search_copies():
    search.clear_cache()
    yield
    search.clear_cache()


def close_worker_connections():
    """Connections opened by asgiref's worker thread would keep the test database open."""
    from asgiref.sync import SyncToAsync

    SyncToAsync.single_thread_executor.submit(connections.close_all).result()


# --- Items ------------------------------------------------------------------------------------


def test_put_get_update_delete(lg):
    ns = ("test", "foo")
    lg.put(ns, "k1", {"text": "hello", "n": 1})
    item = lg.get(ns, "k1")
    assert item.value == {"text": "hello", "n": 1}
    assert item.key == "k1"
    assert item.namespace == ns
    first_updated = item.updated_at

    lg.put(ns, "k1", {"text": "hello again", "n": 2})
    item = lg.get(ns, "k1")
    assert item.value == {"text": "hello again", "n": 2}
    assert item.updated_at >= first_updated
    # A put of the same value is not a new version.
    lg.put(ns, "k1", {"text": "hello again", "n": 2})
    assert Memory.objects.filter(key="k1").count() == 2

    lg.delete(ns, "k1")
    assert lg.get(ns, "k1") is None
    assert lg.get(ns, "never") is None


def test_values_are_replaced_not_merged(lg):
    ns = ("test", "merge")
    lg.put(ns, "k", {"text": "same", "a": 1})
    lg.put(ns, "k", {"text": "same", "b": 2})
    assert lg.get(ns, "k").value == {"text": "same", "b": 2}


def test_a_value_longer_than_claras_content_limit_is_kept_whole(lg):
    long = "word " * 5000
    lg.put(("docs", "long"), "k", {"text": long})
    lg.put(("docs", "long"), "plain", {"body": long}, index=False)
    assert lg.get(("docs", "long"), "k").value == {"text": long}
    assert lg.get(("docs", "long"), "plain").value == {"body": long}
    assert len(Memory.objects.get(key="k").content) <= store.MAX_CONTENT_TOKENS * 4


def test_bad_labels_keys_and_values_are_refused_with_clear_errors(lg):
    with pytest.raises(InvalidNamespaceError):
        lg.put(("a.b", "c"), "k", {"text": "x"})
    with pytest.raises(InvalidNamespaceError):
        lg.put(("a", ""), "k", {"text": "x"})
    with pytest.raises(InvalidNamespaceError, match="at most 100 characters"):
        lg.put(("a", "x" * 101), "k", {"text": "x"})
    with pytest.raises(ValueError, match="Keys are 1 to 200 characters"):
        lg.put(("a", "b"), " ", {"text": "x"})
    with pytest.raises(ValueError, match="must be JSON"):
        lg.put(("a", "b"), "k", {"when": timezone.now()})
    with pytest.raises(ValueError, match="must be JSON"):
        lg.put(("a", "b"), "k", {"n": math.nan})
    with pytest.raises(ValueError, match="ttl is a positive number"):
        lg.put(("a", "b"), "k", {"text": "x"}, ttl=-1)
    with pytest.raises(ValueError, match="Unknown filter operator"):
        lg.search(("a",), filter={"n": {"$like": 1}})
    with pytest.raises(ValueError, match="limit is a whole number"):
        lg.search(("a",), limit=-1)
    with pytest.raises(ValueError, match="Unknown index settings"):
        ClaraStore(index={"dims": 8, "embed": letters, "feilds": ["text"]})
    with pytest.raises(ValueError, match="dims"):
        ClaraStore(index={"embed": letters})
    assert not Memory.objects.exists()


# --- Namespaces: one label, the organisation, and labels Clara would refuse -------------------


def test_one_label_namespaces_round_trip_through_the_organisation(lg):
    lg.put(("notes",), "k", {"text": "tea at four"})
    lg.put(("notes", "deep"), "k", {"text": "below"})

    org = str(Organisation.objects.get(slug=DEFAULT_ORGANISATION).pk)
    row = Memory.objects.get(key="k", namespace__endswith="notes")
    assert row.namespace_tuple == ("org", org, "notes")
    assert lg.get(("notes",), "k").namespace == ("notes",)
    assert {i.namespace for i in lg.search(("notes",))} == {("notes",), ("notes", "deep")}
    assert [i.namespace for i in lg.search(("notes", "deep"))] == [("notes", "deep")]
    assert lg.list_namespaces() == [("notes",), ("notes", "deep")]
    assert lg.list_namespaces(max_depth=1) == [("notes",)]


def test_one_label_namespaces_are_the_organisations_own():
    ours = ClaraStore(organisation="care-home-a", create_organisation=True)
    Organisation.objects.create(slug="care-home-b", name="Care home B")
    theirs = ClaraStore(organisation="care-home-b")
    ours.put(("notes",), "k", {"text": "ours"})
    theirs.put(("notes",), "k", {"text": "theirs"})
    ours.put(("shared", "board"), "k", {"text": "ours too"})

    assert ours.get(("notes",), "k").value == {"text": "ours"}
    assert theirs.get(("notes",), "k").value == {"text": "theirs"}
    assert [i.value for i in ours.search(("notes",))] == [{"text": "ours"}]
    assert ours.list_namespaces() == [("notes",), ("shared", "board")]
    # Every namespace is the organisation's own, however many labels it has.
    assert theirs.get(("shared", "board"), "k") is None
    assert theirs.list_namespaces() == [("notes",)]
    with pytest.raises(ValueError, match="organisation"):
        ClaraStore(organisation=" spaced ")


def test_an_unknown_organisation_is_an_error_and_nothing_is_created():
    Organisation.objects.create(slug="sunrise-care", name="Sunrise")
    mistyped = ClaraStore(organisation="sunrise-cars")
    before = Organisation.objects.count()
    with pytest.raises(UnknownOrganisation, match="sunrise-cars.*create_organisation=True"):
        mistyped.put(("notes",), "k", {"text": "tea at four"})
    with pytest.raises(UnknownOrganisation):
        mistyped.search(("notes",))
    assert Organisation.objects.count() == before
    assert not Memory.objects.filter(key="k").exists()
    # The right name reaches the existing organisation; creating one is explicit.
    ClaraStore(organisation="sunrise-care").put(("notes",), "k", {"text": "tea at four"})
    made = ClaraStore(organisation="new-home", create_organisation=True)
    made.put(("notes",), "k", {"text": "hello"})
    assert Organisation.objects.filter(slug="new-home").exists()
    assert Memory.objects.filter(key="k").count() == 2


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("preference", "preference"),
        ("Preferences", "preference"),
        ("life-story", "life_story"),
        ("people", "people"),
        ("event", "event"),
        ("semantic", "other"),  # not a Clara type: other, the kind stays in the namespace
    ],
)
def test_the_namespaces_kind_sets_the_memory_type_of_a_persons_memory(lg, kind, expected):
    now = timezone.now()
    person = Person.objects.create(display_name="Nana", created_at=now, last_active_at=now)
    lg.put(("memories", str(person.id), kind), "k", {"text": "tea with two sugars"})
    row = Memory.objects.get(key="k")
    assert row.person_id == person.id and row.type == expected
    assert lg.get(("memories", str(person.id), kind), "k").value == {"text": "tea with two sugars"}


def test_the_kind_sets_the_type_in_the_organisations_own_namespaces_too(lg):
    lg.put(("memories", "user-9", "routine"), "a", {"text": "walks at ten"})
    lg.put(("memories", "user-9"), "b", {"text": "no kind"})
    lg.put(("notes", "user-9", "routine"), "c", {"text": "another shape"})
    assert dict(Memory.objects.values_list("key", "type")) == {
        "a": "routine",
        "b": "other",
        "c": "other",
    }


def test_a_one_label_memories_namespace_is_never_a_persons(lg):
    now = timezone.now()
    person = Person.objects.create(display_name="Nana", created_at=now, last_active_at=now)
    store.memory_upsert(
        namespace=store.person_namespace(person.id, "people"), key="sarah", content="Sarah"
    )
    lg.put(("memories",), "k", {"text": "an agent's note"})

    note = Memory.objects.get(key="k")
    assert note.person is None
    assert note.scope != store.scope_of(store.person_namespace(person.id))
    assert lg.get(("memories",), "k").value == {"text": "an agent's note"}
    # The person's memories are where they were, under the person's own namespace.
    assert lg.get(("memories", str(person.id), "people"), "sarah") is not None


def test_labels_clara_would_refuse_are_kept_as_given(lg):
    lg.put(("users", "alice\n"), "k", {"v": 2})
    lg.put(("users", "alice"), "k", {"v": 1})

    assert lg.get(("users", "alice\n"), "k").value == {"v": 2}
    assert set(lg.list_namespaces(prefix=("users",))) == {("users", "alice"), ("users", "alice\n")}
    assert lg.list_namespaces(suffix=("alice",)) == [("users", "alice")]


def test_namespaces_written_through_claras_api_that_langgraph_cannot_spell_are_hidden(lg):
    store.memory_upsert(namespace=("agent", "v1.2"), key="k", content="a release note")
    lg.put(("agent", "notes"), "k", {"text": "seen"})
    assert lg.list_namespaces() == [("agent", "notes")]
    assert [i.namespace for i in lg.search(("agent",))] == [("agent", "notes")]


# --- Search -----------------------------------------------------------------------------------


def test_search_by_prefix_filter_limit_and_offset(lg):
    for i in range(6):
        lg.put(("docs", "user1", "notes"), f"n{i}", {"text": f"note {i}", "kind": "note", "i": i})
    lg.put(("docs", "user1", "todo"), "t1", {"text": "buy milk", "kind": "todo", "i": 99})
    lg.put(("docs", "user2"), "x", {"text": "other user", "kind": "note", "i": 0})

    user1 = lg.search(("docs", "user1"), limit=20)
    assert {item.key for item in user1} == {f"n{i}" for i in range(6)} | {"t1"}
    assert len(lg.search(("docs",), limit=20)) == 8

    todos = lg.search(("docs", "user1"), filter={"kind": "todo"})
    assert [item.key for item in todos] == ["t1"]
    big = lg.search(("docs", "user1"), filter={"i": {"$gte": 4}}, limit=20)
    assert {item.key for item in big} == {"n4", "n5", "t1"}
    not_notes = lg.search(("docs",), filter={"kind": {"$ne": "note"}}, limit=20)
    assert [item.key for item in not_notes] == ["t1"]

    page1 = lg.search(("docs", "user1", "notes"), limit=3)
    page2 = lg.search(("docs", "user1", "notes"), limit=3, offset=3)
    assert len(page1) == 3 and len(page2) == 3
    assert not {i.key for i in page1} & {i.key for i in page2}


def test_filters_reach_into_nested_values_with_dotted_keys(lg):
    lg.put(("docs", "a"), "hyphen", {"user": {"access-level": "nested"}})
    lg.put(("docs", "a"), "flat", {"user.access-level": "flat"})
    assert [i.key for i in lg.search(("docs",), filter={"user.access-level": "nested"})] == [
        "hyphen"
    ]
    assert [i.key for i in lg.search(("docs",), filter={"user.access-level": "flat"})] == ["flat"]


def test_search_returns_more_than_a_hundred_when_asked(lg):
    lg.batch([PutOp(("many", "items"), f"k{i}", {"i": i}, index=False) for i in range(150)])
    assert len(lg.search(("many",), limit=150)) == 150
    assert len(lg.search(("many",), limit=200, offset=120)) == 30


def test_semantic_search_with_claras_model_ranks_by_meaning_with_cosine_scores(lg):
    ns = ("memories", "user9")
    lg.put(ns, "a", {"text": "My daughter Sarah visits every Sunday"})
    lg.put(ns, "b", {"text": "I like strong tea with milk"})
    lg.put(ns, "c", {"text": "The dog needs a walk in the morning"})
    query = "Which family member comes to see her?"
    results = lg.search(ns, query=query, limit=3)
    assert results[0].key == "a"
    model = get_embedder()
    vectors = model.encode([query, "My daughter Sarah visits every Sunday"])
    assert results[0].score == pytest.approx(float(vectors[0] @ vectors[1]), abs=1e-5)
    assert results[0].score >= results[1].score >= results[2].score


@pytest.mark.parametrize("embed", [letters, LetterEmbeddings()], ids=["function", "embeddings"])
def test_the_configured_embeddings_give_the_vectors_and_scores_are_cosine(embed):
    lg = ClaraStore(index={"dims": 8, "embed": embed, "fields": ["text"]})
    lg.put(("docs",), "ab", {"text": "aab"})
    lg.put(("docs",), "cd", {"text": "cdd"})
    lg.put(("docs",), "plain", {"text": "abc"}, index=False)

    results = lg.search(("docs",), query="abba")
    assert [r.key for r in results] == ["ab", "cd", "plain"]
    assert results[0].score == pytest.approx(cosine("abba", "aab"), abs=1e-6)
    assert results[1].score == pytest.approx(0.0, abs=1e-6)
    assert results[2].score is None
    # Eight float32s per vector, as the store was told.
    assert len(Memory.objects.get(key="ab").embedding) == 8 * 4


@pytest.mark.django_db(transaction=True)
def test_an_async_embedding_function_serves_the_async_api():
    lg = ClaraStore(index={"dims": 8, "embed": aletters, "fields": ["text"]})

    async def run():
        await lg.aput(("docs",), "ab", {"text": "aab"})
        found = await lg.asearch(("docs",), query="ab")
        close_worker_connections()
        return found

    found = asyncio.run(run())
    assert found[0].key == "ab"
    assert found[0].score == pytest.approx(cosine("ab", "aab"), abs=1e-6)


def test_each_indexed_field_is_its_own_vector_and_the_best_one_scores():
    lg = ClaraStore(index={"dims": 8, "embed": letters, "fields": ["title", "tags[*]"]})
    lg.put(("docs",), "d", {"title": "hhh", "tags": ["aaa", "ccc"], "body": "bbb"})
    assert len(Memory.objects.get(key="d").embedding) == 3 * 8 * 4
    for query in ("aaa", "ccc", "hhh"):
        assert lg.search(("docs",), query=query)[0].score == pytest.approx(1.0, abs=1e-6)
    assert lg.search(("docs",), query="bbb")[0].score == pytest.approx(0.0, abs=1e-6)
    # A put can name its own fields.
    lg.put(("docs",), "d", {"title": "hhh", "body": "bbb"}, index=["body"])
    assert lg.search(("docs",), query="bbb")[0].score == pytest.approx(1.0, abs=1e-6)


def test_vectors_of_the_wrong_size_are_refused_and_nothing_is_stored():
    lg = ClaraStore(index={"dims": 4, "embed": letters, "fields": ["text"]})
    with pytest.raises(ValueError, match="8-dimensional vectors; index\\['dims'\\] is 4"):
        lg.put(("docs",), "k", {"text": "abc"})
    assert not Memory.objects.exists()
    with pytest.raises(ValueError, match="Clara's model"):
        ClaraStore(index={"dims": 12, "fields": ["text"]})


def test_claras_own_search_still_works_on_a_scope_with_langgraph_vectors():
    lg = ClaraStore(index={"dims": 8, "embed": letters, "fields": ["text"]})
    lg.put(("agent", "notes"), "letters", {"text": "aab"})
    # The same namespace through Clara's own store: stored as the organisation's.
    namespace = (
        "org",
        str(Organisation.objects.get(slug=DEFAULT_ORGANISATION).pk),
        "agent",
        "notes",
    )
    store.memory_upsert(namespace=namespace, key="minilm", content="My daughter visits on Sundays")
    result = search.memory_search(prefix=namespace, query="Who visits her?", limit=5)
    by_key = {hit.memory.key: hit for hit in result.hits}
    assert by_key["minilm"].relevance > 0.3
    assert set(by_key) == {"letters", "minilm"}


def test_list_namespaces_with_prefix_suffix_and_depth(lg):
    for ns in (("a", "b", "c"), ("a", "b", "d"), ("a", "e"), ("x", "y", "c")):
        lg.put(ns, "k", {"text": "v"})
    assert lg.list_namespaces(prefix=("a",)) == [("a", "b", "c"), ("a", "b", "d"), ("a", "e")]
    assert lg.list_namespaces(suffix=("c",)) == [("a", "b", "c"), ("x", "y", "c")]
    assert lg.list_namespaces(max_depth=2) == [("a", "b"), ("a", "e"), ("x", "y")]
    assert lg.list_namespaces(prefix=("*", "b")) == [("a", "b", "c"), ("a", "b", "d")]
    assert lg.list_namespaces(limit=2, offset=1) == [("a", "b", "d"), ("a", "e")]


# --- Batches ----------------------------------------------------------------------------------


def test_batch_runs_ops_in_order(lg):
    ns = ("batch", "one")
    results = lg.batch(
        [
            PutOp(ns, "k", {"text": "v"}),
            GetOp(ns, "k"),
            SearchOp(ns, limit=5),
            ListNamespacesOp(max_depth=1),
            PutOp(ns, "k", None),
            GetOp(ns, "k"),
        ]
    )
    assert results[0] is None
    assert results[1].value == {"text": "v"}
    assert [i.key for i in results[2]] == ["k"]
    assert results[3] == [("batch",)]
    assert results[5] is None


@pytest.mark.parametrize(
    "bad",
    [
        PutOp(("valid", "ns"), "k", {"n": math.inf}),
        PutOp(("no.dots",), "k", {"v": 1}),
        PutOp((), "k", {"v": 1}),
        PutOp(("valid", "ns"), "k", {"v": 1}, ttl=0),
        SearchOp(("valid",), limit=-5),
        ListNamespacesOp(max_depth=0),
    ],
    ids=["value", "label", "empty-namespace", "ttl", "limit", "depth"],
)
def test_a_batch_with_a_bad_op_writes_nothing(lg, bad):
    with pytest.raises(ValueError):
        lg.batch([PutOp(("first", "ns"), "k", {"v": 1}), bad, PutOp(("last", "ns"), "k", {})])
    assert not Memory.objects.exists()


def test_a_failing_embedding_writes_nothing():
    def broken(texts):
        raise RuntimeError("the model is down")

    lg = ClaraStore(index={"dims": 8, "embed": broken, "fields": ["text"]})
    with pytest.raises(RuntimeError, match="the model is down"):
        lg.batch(
            [PutOp(("a", "b"), "k1", {"v": 1}, index=False), PutOp(("a", "b"), "k2", {"text": "x"})]
        )
    assert not Memory.objects.exists()


# --- TTL --------------------------------------------------------------------------------------


def expire_now(key: str) -> None:
    memory = Memory.objects.get(key=key, status=Memory.Status.ACTIVE)
    Memory.objects.filter(id=memory.id).update(expires_at=timezone.now() - timedelta(seconds=1))
    with transaction.atomic():
        store._bump_scope(memory.scope)


def test_ttl_expires_items_and_sweep_deletes_them(lg):
    ns = ("ttl", "ns")
    lg.put(ns, "short", {"text": "soon gone"}, ttl=1)
    lg.put(ns, "kept", {"text": "stays"})
    assert Memory.objects.get(key="short").ttl_minutes == 1
    expire_now("short")
    assert lg.get(ns, "short") is None
    assert [i.key for i in lg.search(ns)] == ["kept"]
    assert lg.sweep_ttl() == 1
    assert not Memory.objects.filter(key="short").exists()
    assert lg.sweep_ttl() == 0


def test_ttl_none_means_no_expiry_whatever_the_default():
    lg = ClaraStore(ttl={"default_ttl": 30, "refresh_on_read": False})
    lg.put(("cfg", "ns"), "default", {"text": "v"})
    lg.put(("cfg", "ns"), "forever", {"text": "v"}, ttl=None)
    memory = Memory.objects.get(key="default")
    assert memory.ttl_minutes == 30
    assert timedelta(minutes=29) < memory.expires_at - memory.created_at <= timedelta(minutes=30)
    forever = Memory.objects.get(key="forever")
    assert forever.expires_at is None and forever.ttl_minutes is None
    # Putting the same value again with no lifetime takes the lifetime away.
    lg.put(("cfg", "ns"), "default", {"text": "v"}, ttl=None)
    assert Memory.objects.get(key="default", status=Memory.Status.ACTIVE).expires_at is None


def test_reads_renew_the_ttl_when_the_store_says_so_and_the_read_does_not_refuse():
    lg = ClaraStore(ttl={"refresh_on_read": True})
    ns = ("ttl", "renew")
    lg.put(ns, "k", {"text": "v"}, ttl=10)
    before = Memory.objects.get(key="k").expires_at
    lg.get(ns, "k", refresh_ttl=False)
    assert Memory.objects.get(key="k").expires_at == before
    lg.get(ns, "k")
    assert Memory.objects.get(key="k").expires_at > before

    quiet = ClaraStore()
    again = Memory.objects.get(key="k").expires_at
    quiet.get(ns, "k")
    quiet.search(ns)
    assert Memory.objects.get(key="k").expires_at == again


@pytest.mark.django_db(transaction=True)
def test_the_sweeper_thread_deletes_expired_items_until_stopped():
    lg = ClaraStore(ttl={"default_ttl": 1})
    lg.put(("ttl", "swept"), "k", {"text": "v"})
    expire_now("k")
    lg.start_ttl_sweeper(sweep_interval_minutes=0.2 / 60)
    deadline = time.monotonic() + 10
    while Memory.objects.filter(key="k").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert lg.stop_ttl_sweeper(timeout=5)
    assert not Memory.objects.filter(key="k").exists()


@pytest.mark.django_db(transaction=True)
def test_the_async_store_sweeps_with_an_asyncio_task():
    lg = AsyncClaraStore(ttl={"default_ttl": 1})

    async def run():
        await lg.setup()
        await lg.aput(("ttl", "async"), "k", {"text": "v"})
        await asyncio.to_thread(expire_now, "k")
        task = await lg.start_ttl_sweeper(sweep_interval_minutes=0.2 / 60)
        for _ in range(100):
            if await lg.aget(("ttl", "async"), "k") is None and not await asyncio.to_thread(
                Memory.objects.filter(key="k").exists
            ):
                break
            await asyncio.sleep(0.1)
        stopped = await lg.stop_ttl_sweeper(timeout=5)
        close_worker_connections()
        return task, stopped

    task, stopped = asyncio.run(run())
    assert stopped and task.done()
    assert not Memory.objects.filter(key="k").exists()


# --- Threads and event loops ------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_abatch_works_from_async_code(lg):
    async def run():
        await lg.aput(("async", "ns"), "k", {"text": "v"})
        item = await lg.aget(("async", "ns"), "k")
        close_worker_connections()
        return item

    assert asyncio.run(run()).value == {"text": "v"}


@pytest.mark.django_db(transaction=True)
def test_sync_calls_work_on_a_running_event_loop():
    lg = ClaraStore(index={"dims": 8, "embed": letters, "fields": ["text"]})

    async def node():
        # What an `async def` node that calls the sync API does: Django would refuse the
        # database call on this thread; the store moves it to a worker thread.
        lg.put(("loop", "ns"), "k", {"text": "aab"})
        return lg.get(("loop", "ns"), "k"), lg.search(("loop",), query="ab"), lg.sweep_ttl()

    item, found, swept = asyncio.run(node())
    assert item.value == {"text": "aab"}
    assert [r.key for r in found] == ["k"]
    assert swept == 0


# --- A real graph -----------------------------------------------------------------------------


def remember(text: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Remember a note about the person."""
    store.put(("notes",), text, {"text": text})
    return f"stored {text}"


def recall(query: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Find the note closest to the query."""
    found = store.search(("notes",), query=query, limit=1)
    return found[0].value["text"] if found else "nothing"


def build_graph(lg: BaseStore, *, async_node: bool):
    """A scripted agent: it asks the tools to remember two notes, then to recall one; a
    summary node reads the store itself (sync API, from an `async def` node if asked)."""
    script = [
        [("remember", {"text": "aab"}), ("remember", {"text": "ccd"})],
        [("recall", {"query": "abba"})],
    ]

    def agent(state: MessagesState):
        turn = sum(isinstance(m, AIMessage) for m in state["messages"])
        if turn >= len(script):
            return {"messages": [AIMessage(content="done")]}
        calls = [
            {"name": name, "args": args, "id": f"call-{turn}-{i}", "type": "tool_call"}
            for i, (name, args) in enumerate(script[turn])
        ]
        return {"messages": [AIMessage(content="", tool_calls=calls)]}

    def route(state: MessagesState):
        return "tools" if state["messages"][-1].tool_calls else "summary"

    def summarise(state: MessagesState, *, store: BaseStore):
        notes = sorted(item.value["text"] for item in store.search(("notes",)))
        store.put(("summaries",), "last", {"notes": notes})
        return {"messages": [AIMessage(content=", ".join(notes))]}

    async def asummarise(state: MessagesState, *, store: BaseStore):
        return summarise(state, store=store)

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([remember, recall]))
    builder.add_node("summary", asummarise if async_node else summarise)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", "summary"])
    builder.add_edge("tools", "agent")
    builder.add_edge("summary", END)
    return builder.compile(store=lg)


def check_run(lg: ClaraStore, messages) -> None:
    tool_results = [m.content for m in messages if isinstance(m, ToolMessage)]
    assert tool_results == ["stored aab", "stored ccd", "aab"]
    assert messages[-1].content == "aab, ccd"
    assert lg.get(("summaries",), "last").value == {"notes": ["aab", "ccd"]}
    stored = Memory.objects.filter(status=Memory.Status.ACTIVE, namespace__endswith=SEP + "notes")
    assert {m.metadata["text"] for m in stored} == {"aab", "ccd"}


@pytest.mark.django_db(transaction=True)
def test_a_graph_uses_the_store_through_injected_tools_and_nodes():
    lg = ClaraStore(index={"dims": 8, "embed": letters, "fields": ["text"]})
    state = build_graph(lg, async_node=False).invoke({"messages": [("user", "hello")]})
    check_run(lg, state["messages"])


@pytest.mark.django_db(transaction=True)
def test_an_async_graph_uses_the_store_from_sync_tools_and_an_async_node():
    lg = ClaraStore(index={"dims": 8, "embed": letters, "fields": ["text"]})
    graph = build_graph(lg, async_node=True)

    async def run():
        state = await graph.ainvoke({"messages": [("user", "hello")]})
        close_worker_connections()
        return state

    check_run(lg, asyncio.run(run())["messages"])
