"""A LangGraph `BaseStore` over the memory store, so a LangGraph agent can use it directly.

    from memory.langgraph_store import ClaraStore
    graph = builder.compile(store=ClaraStore(index={"fields": ["text"]}))

An item's value (a JSON object) is kept as the memory's metadata, so filters match its keys;
the text that search looks at is the value's indexed fields (`index["fields"]`, default the
whole value as JSON), or none when a put says `index=False`. Writes replace the value, and the
previous one stays as history. Namespaces need at least two labels (Clara's rule: a root and an
owner). TTL is in minutes, as LangGraph counts it; reads renew it unless told not to.
"""

import json
from collections.abc import Iterable
from typing import Any

from asgiref.sync import sync_to_async
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)

from memory import search, store
from memory.errors import DomainError, NotFound
from memory.models import Memory


def _text_for(value: dict[str, Any], fields: list[str] | None) -> str:
    if not fields or fields == ["$"]:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    parts = []
    for path in fields:
        node: Any = value
        for step in path.split("."):
            node = node.get(step) if isinstance(node, dict) else None
        if node is not None:
            parts.append(node if isinstance(node, str) else json.dumps(node, default=str))
    return "\n".join(parts)


def _item(memory: Memory, cls=Item, **extra) -> Item:
    return cls(
        value=memory.metadata,
        key=memory.key,
        namespace=memory.namespace_tuple,
        created_at=memory.created_at,
        updated_at=memory.updated_at,
        **extra,
    )


class ClaraStore(BaseStore):
    """LangGraph's store interface on Clara's memory tables (see the module docstring)."""

    supports_ttl = True

    def __init__(self, *, index: dict | None = None, ttl: TTLConfig | None = None) -> None:
        self.index_config = index
        self.ttl_config = ttl
        self.fields = list((index or {}).get("fields") or []) or None

    # -- the batch interface -------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await sync_to_async(self.batch, thread_sensitive=True)(list(ops))

    def _run(self, op: Op) -> Result:
        validate_op_namespace(op)
        try:
            if isinstance(op, GetOp):
                return self._get(op)
            if isinstance(op, PutOp):
                return self._put(op)
            if isinstance(op, SearchOp):
                return self._search(op)
            if isinstance(op, ListNamespacesOp):
                return self._list(op)
        except DomainError as exc:
            if exc.field in ("namespace", "prefix"):
                raise InvalidNamespaceError(exc.detail) from exc
            raise ValueError(exc.detail) from exc
        raise ValueError(f"Unknown operation {type(op).__name__}")

    def _refresh(self, refresh_ttl: bool | None) -> bool:
        if refresh_ttl is not None:
            return refresh_ttl
        return (self.ttl_config or {}).get("refresh_on_read", True)

    def _get(self, op: GetOp) -> Item | None:
        self._check_namespace(op.namespace)
        try:
            memory = store.memory_get(
                namespace=op.namespace, key=op.key, refresh_ttl=self._refresh(op.refresh_ttl)
            )
        except NotFound:
            return None
        return _item(memory)

    def _put(self, op: PutOp) -> None:
        self._check_namespace(op.namespace)
        if op.value is None:
            store.memory_delete(namespace=op.namespace, key=op.key)
            return None
        value = dict(op.value)
        fields = self.fields if op.index is None else (op.index or None)
        text = _text_for(value, fields) or json.dumps(value, default=str) or "{}"
        ttl = op.ttl
        if ttl is None and self.ttl_config:
            ttl = self.ttl_config.get("default_ttl")
        store.memory_upsert(
            namespace=op.namespace,
            key=op.key,
            content=text,
            metadata=value,
            source=Memory.Source.TOOL,
            replace=True,
            embed=op.index is not False and self.index_config is not None,
            ttl_minutes=ttl,
        )
        return None

    def _search(self, op: SearchOp) -> list[SearchItem]:
        if op.limit < 1 or op.offset < 0:
            return []
        result = search.memory_search(
            prefix=op.namespace_prefix,
            query=op.query if self.index_config is not None or op.query else None,
            metadata=op.filter or None,
            limit=min(op.limit, search.MAX_LIMIT),
            offset=op.offset,
        )
        memories = [hit.memory for hit in result.hits]
        if self._refresh(op.refresh_ttl):
            store.ttl_refresh(memories)
        return [
            _item(hit.memory, SearchItem, score=hit.score if op.query else None)
            for hit in result.hits
        ]

    def _list(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        prefix: tuple[str, ...] = ()
        suffix: tuple[str, ...] = ()
        wild_prefix = wild_suffix = None
        for condition in op.match_conditions or ():
            if "*" in condition.path:
                if condition.match_type == "prefix":
                    wild_prefix = condition.path
                else:
                    wild_suffix = condition.path
            elif condition.match_type == "prefix":
                prefix = tuple(condition.path)
            else:
                suffix = tuple(condition.path)
        found = store.namespaces_list(
            prefix=prefix, suffix=suffix, max_depth=None, limit=10**6, offset=0
        )
        if wild_prefix:
            found = [ns for ns in found if _matches(ns, wild_prefix)]
        if wild_suffix:
            found = [
                ns for ns in found if _matches(tuple(reversed(ns)), tuple(reversed(wild_suffix)))
            ]
        if op.max_depth is not None:
            found = sorted({ns[: op.max_depth] for ns in found})
        return found[op.offset : op.offset + op.limit]

    @staticmethod
    def _check_namespace(namespace: tuple[str, ...]) -> None:
        if len(namespace) < 2:
            raise InvalidNamespaceError(
                f"Clara namespaces have at least two labels (a root and an owner); got {namespace}."
            )


def _matches(namespace: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    if len(namespace) < len(pattern):
        return False
    return all(p == "*" or n == p for n, p in zip(namespace, pattern, strict=False))
