"""The stores LangGraph's store tests get once run.py has retargeted them (a pytest plugin).

run.py swaps the tests' store imports (`InMemoryStore`, `SqliteStore`, `AsyncSqliteStore`) for
the names below and changes nothing else in their files. Each name builds the store the test
asked for, with the same `index` and `ttl`, over an empty database, as a new `InMemoryStore` or a
new SQLite file starts empty. CLARA_CONFORMANCE_TARGET picks the store: `clara` (ClaraStore and
AsyncClaraStore on Clara's database) or `inmemory` (LangGraph's InMemoryStore, the baseline).

SqliteStore's index settings call the indexed fields `text_fields` where the other stores say
`fields`; the translation is the only change to what a test asked for.
"""

import os
import threading
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore as LangGraphInMemoryStore

TARGET = os.environ.get("CLARA_CONFORMANCE_TARGET", "clara")
if TARGET not in ("clara", "inmemory"):
    raise RuntimeError(f"CLARA_CONFORMANCE_TARGET is 'clara' or 'inmemory', not {TARGET!r}")


def _off_the_loop(fn) -> None:
    """Run `fn` where Django allows database calls: not on a thread running an event loop."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        fn()
        return
    errors: list[BaseException] = []

    def call():
        from django.db import connections

        try:
            fn()
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=call)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]


def _empty_database() -> None:
    from memory.facts import search
    from memory.models import Memory, MemoryScope

    def empty():
        Memory.objects.all().delete()
        MemoryScope.objects.all().delete()

    _off_the_loop(empty)
    search.clear_cache()


def _sqlite_index(index: dict | None) -> dict | None:
    if index is None:
        return None
    index = dict(index)
    fields = index.pop("text_fields", None)
    if fields is not None:
        index["fields"] = fields
    return index


def _given(**kwargs: Any) -> dict[str, Any]:
    return {name: value for name, value in kwargs.items() if value is not None}


def _stores() -> dict[str, type]:
    """The target's store classes, built on first use (Django is set up by then)."""
    if _STORES:
        return _STORES
    if TARGET == "clara":
        from memory.facts.langgraph_store import AsyncClaraStore, ClaraStore

        class FreshClaraStore(ClaraStore):
            """A new ClaraStore over an empty database, for tests written for InMemoryStore."""

            def __init__(self, **kwargs: Any) -> None:
                _empty_database()
                super().__init__(**kwargs)

        class FreshAsyncClaraStore(AsyncClaraStore):
            def __init__(self, **kwargs: Any) -> None:
                _empty_database()
                super().__init__(**kwargs)

        _STORES.update(memory=FreshClaraStore, sync=FreshClaraStore, aio=FreshAsyncClaraStore)
    else:

        class BaselineStore(LangGraphInMemoryStore):
            # InMemoryStore has no schema to set up; SqliteStore's tests call setup() first.
            def setup(self) -> None:
                return None

        class BaselineAsyncStore(LangGraphInMemoryStore):
            async def setup(self) -> None:
                return None

        _STORES.update(memory=LangGraphInMemoryStore, sync=BaselineStore, aio=BaselineAsyncStore)
    return _STORES


_STORES: dict[str, type] = {}


def __getattr__(name: str) -> Any:
    # `from clara_conformance import InMemoryStore` in LangGraph's checkpoint tests.
    if name == "InMemoryStore":
        return _stores()["memory"]
    raise AttributeError(name)


class SqliteStore:
    """`SqliteStore.from_conn_string(conn, index=..., ttl=...)`: the target store instead."""

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string: str, *, index=None, ttl=None):
        yield _stores()["sync"](**_given(index=_sqlite_index(index), ttl=ttl))


class AsyncSqliteStore:
    """`AsyncSqliteStore.from_conn_string(...)`: the target's async store instead."""

    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, conn_string: str, *, index=None, ttl=None):
        store = _stores()["aio"](**_given(index=_sqlite_index(index), ttl=ttl))
        try:
            yield store
        finally:
            if TARGET == "clara":
                await store.stop_ttl_sweeper(timeout=5)


def pytest_addoption(parser) -> None:
    parser.addini(
        "clara_not_applicable",
        "tests (file::name) left out: they build no store or read SQLite internals",
        type="linelist",
    )


def pytest_collection_modifyitems(config, items) -> None:
    skip = set(config.getini("clara_not_applicable"))
    kept, dropped = [], []
    for item in items:
        file = item.nodeid.split("::")[0]
        name = getattr(item, "originalname", None) or item.name
        (dropped if f"{file}::{name}" in skip else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    if TARGET == "clara":
        # A real database that every thread sees: committed writes, no test transaction (the
        # stores run database work on worker threads), emptied after each test.
        for item in items:
            item.add_marker(pytest.mark.django_db(transaction=True))


@pytest.fixture(autouse=True)
def _clara_database():
    """Connections opened off the main thread are closed before the database is emptied."""
    yield
    if TARGET != "clara":
        return
    from asgiref.sync import SyncToAsync
    from django.db import connections

    from memory.facts import search

    # abatch runs the database work on asgiref's thread for sync code; close its connection.
    SyncToAsync.single_thread_executor.submit(connections.close_all).result()
    search.clear_cache()
