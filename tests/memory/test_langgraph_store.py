"""The LangGraph adapter behaves like LangGraph's own stores (the behaviours their tests check)."""

import asyncio
from datetime import timedelta

import pytest
from django.utils import timezone
from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, PutOp, SearchOp

from memory.langgraph_store import ClaraStore
from memory.models import Memory

pytestmark = pytest.mark.django_db


@pytest.fixture
def lg():
    return ClaraStore(index={"fields": ["text"]})


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


def test_namespaces_are_validated(lg):
    with pytest.raises(InvalidNamespaceError):
        lg.put(("only-one",), "k", {"text": "x"})
    with pytest.raises(InvalidNamespaceError):
        lg.put(("a.b", "c"), "k", {"text": "x"})
    with pytest.raises(InvalidNamespaceError):
        lg.put(("a", ""), "k", {"text": "x"})


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


def test_semantic_search_ranks_by_meaning(lg):
    ns = ("memories", "user9")
    lg.put(ns, "a", {"text": "My daughter Sarah visits every Sunday"})
    lg.put(ns, "b", {"text": "I like strong tea with milk"})
    lg.put(ns, "c", {"text": "The dog needs a walk in the morning"})
    results = lg.search(ns, query="Which family member comes to see her?", limit=3)
    assert results[0].key == "a"
    assert results[0].score is not None
    assert results[0].score >= results[-1].score


def test_list_namespaces_with_prefix_suffix_and_depth(lg):
    for ns in (("a", "b", "c"), ("a", "b", "d"), ("a", "e"), ("x", "y", "c")):
        lg.put(ns, "k", {"text": "v"})
    assert lg.list_namespaces(prefix=("a",)) == [("a", "b", "c"), ("a", "b", "d"), ("a", "e")]
    assert lg.list_namespaces(suffix=("c",)) == [("a", "b", "c"), ("x", "y", "c")]
    assert lg.list_namespaces(max_depth=2) == [("a", "b"), ("a", "e"), ("x", "y")]
    assert lg.list_namespaces(prefix=("*", "b")) == [("a", "b", "c"), ("a", "b", "d")]
    assert lg.list_namespaces(limit=2, offset=1) == [("a", "b", "d"), ("a", "e")]


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


@pytest.mark.django_db(transaction=True)
def test_abatch_works_from_async_code(lg):
    from asgiref.sync import sync_to_async
    from django.db import connections

    async def run():
        await lg.aput(("async", "ns"), "k", {"text": "v"})
        item = await lg.aget(("async", "ns"), "k")
        # The worker thread's connection would keep the test database open.
        await sync_to_async(connections.close_all, thread_sensitive=True)()
        return item

    assert asyncio.run(run()).value == {"text": "v"}


def test_ttl_expires_items_and_reads_refresh_it(lg):
    ns = ("ttl", "ns")
    lg.put(ns, "short", {"text": "soon gone"}, ttl=1)
    lg.put(ns, "kept", {"text": "stays"})
    memory = Memory.objects.get(key="short")
    assert memory.ttl_minutes == 1
    # Pretend two minutes went by: the item is gone from get and search.
    Memory.objects.filter(id=memory.id).update(expires_at=timezone.now() - timedelta(seconds=1))
    from memory import search, store

    store._bump_scope(memory.scope)
    assert lg.get(ns, "short") is None
    assert [i.key for i in lg.search(ns)] == ["kept"]
    search.clear_cache()


def test_reading_renews_the_ttl_unless_told_not_to(lg):
    ns = ("ttl", "renew")
    lg.put(ns, "k", {"text": "v"}, ttl=10)
    before = Memory.objects.get(key="k").expires_at
    lg.get(ns, "k", refresh_ttl=False)
    assert Memory.objects.get(key="k").expires_at == before
    lg.get(ns, "k")
    assert Memory.objects.get(key="k").expires_at > before


def test_default_ttl_from_the_store_config():
    lg = ClaraStore(ttl={"default_ttl": 30, "refresh_on_read": False})
    lg.put(("cfg", "ns"), "k", {"text": "v"})
    memory = Memory.objects.get(key="k")
    assert memory.ttl_minutes == 30
    assert timedelta(minutes=29) < memory.expires_at - memory.created_at <= timedelta(minutes=30)
