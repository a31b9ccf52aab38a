"""LangGraph's `BaseStore` on Clara's memory tables: a drop-in for `InMemoryStore` and friends.

    from memory.facts.langgraph_store import ClaraStore
    graph = builder.compile(store=ClaraStore(index={"dims": 384, "fields": ["text"]}))

LangGraph's own store tests run against it (`make test-langgraph`, docs/langgraph.md lists what
still differs and why). An item is a `Memory` row: its value (a JSON object) is the row's
metadata, so filters match its keys; the text Clara's own keyword search reads is the value's
indexed fields (or the whole value as JSON). Writes replace the value and keep the previous one
as history, as every write to Clara's store does.

Namespaces. Clara's namespaces have at least two labels: a root and an owner, whose pair (the
scope) is the unit of locking, versioning and search caching. Every LangGraph namespace belongs to
the store's organisation (`ClaraStore(organisation="<slug>")`, the default organisation's when not
given: the one place it comes from; a named one that does not exist is an `UnknownOrganisation`
error unless `create_organisation=True`) and is stored, as every organisation's own namespace is,
under `("org", "<organisation id>", ...)` (memory/facts/tenancy.py): two organisations never meet,
and a one-label namespace such as `("notes",)` is still two labels deep when stored. Reads
translate back: get, search and list_namespaces return `("notes",)`, and other organisations'
namespaces are never shown. A person's namespace, `("memories", "<person id>", ...)`, stays as it
is, so an agent can read and write the memories of one of its organisation's people. The third
label of a `("memories", <id>, <kind>)` namespace sets the memory type when it names one
(`memory_type_of`), else `other`. A label Clara would refuse (one that starts or ends with
whitespace, say `"alice\\n"`) is stored percent-quoted behind a leading period and read back as it
was.

Search. With `index` configured, each indexed field of an item (`index["fields"]`, default the
whole value, `"$"`) gets its own vector from `index["embed"]` (a LangChain `Embeddings`, or a
sync or async function of a list of texts, as LangGraph accepts), or from Clara's MiniLM model
when no `embed` is given. The vectors are kept, unit length, one after another in the row's
`embedding` bytes; an item's score is the best cosine similarity among them, as in LangGraph's
stores. Items without vectors (`index=False`) come after the scored ones, with `score=None`.
Without a query, or without an index, items come newest first. Search reads the process's
in-memory copy of each scope (memory/facts/search.py), so it is a matrix product, not a table scan.

TTL is in minutes, as LangGraph counts it. `ttl=None` keeps an item until it is deleted; the
store's `ttl["default_ttl"]` applies when a put does not say. As in LangGraph's SQLite and
Postgres stores, reads renew a lifetime when the store's TTL config says `refresh_on_read` and
the read does not say `refresh_ttl=False`. Expired items are invisible at once; `sweep_ttl()` deletes them (Clara's own
hourly sweep does too), and `start_ttl_sweeper()` runs that in a thread.

Batches are checked whole (namespaces, keys, values, limits, filters) and embedded before
anything is written; then the operations run in order, consecutive writes in one transaction.
Sync methods work inside a running event loop (an `async def` node calling `store.put`): the
work then runs in a worker thread, as Django forbids database calls on the loop's thread.
`AsyncClaraStore` is the same store with LangGraph's async store API (`await store.setup()`,
`await store.sweep_ttl()`, an asyncio sweeper task).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import math
import sys
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

import numpy as np
from asgiref.sync import sync_to_async
from django.db import connections, transaction
from django.utils import timezone
from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    ensure_embeddings,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)

from memory.conversations import tenancy
from memory.conversations.models import Organisation, Person
from memory.core.errors import DomainError, NotFound
from memory.facts import search, store
from memory.facts.models import Memory, MemoryType
from memory.facts.namespaces import PERSON_ROOT
from memory.facts.tenancy import ORG_ROOT

logger = logging.getLogger(__name__)

SEP = Memory.NAMESPACE_SEPARATOR
# The organisation of every caller until organisations exist (a later issue gives each API key
# one); `ClaraStore(organisation=...)` is the one place it comes from.
DEFAULT_ORGANISATION = "default"
MAX_ORGANISATION = 96
# What Clara's keyword search reads of an item is cut to Clara's content limit; the value itself
# is kept whole.
MAX_CONTENT = store.MAX_CONTENT_TOKENS * store.CHARS_PER_TOKEN
# The index settings read; `distance_type` (cosine only) and `ann_index_config` are other
# LangGraph stores' and change nothing here.
_INDEX_KEYS = {"dims", "embed", "fields", "distance_type", "ann_index_config"}
_FILTER_OPERATORS = {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"}


# --- Labels and namespaces --------------------------------------------------------------------


def _clara_accepts(label: str) -> bool:
    return label == label.strip() and SEP not in label


def _encode_label(label: str) -> str:
    """A LangGraph label as a Clara label: itself, or percent-quoted behind a period."""
    if _clara_accepts(label):
        return label
    return "." + quote(label, safe="")


def _decode_label(label: str) -> str | None:
    """The LangGraph label a Clara label stands for; None if no LangGraph label does."""
    if label.startswith("."):
        raw = unquote(label[1:])
        return raw if _encode_label(raw) == label else None
    # LangGraph labels never hold a period: this one was written through Clara's own API.
    return None if "." in label else label


class UnknownOrganisation(ValueError):
    """The store names an organisation that does not exist (and may not be created)."""

    def __init__(self, slug: str) -> None:
        super().__init__(
            f"No organisation {slug!r}. Check the name, or pass create_organisation=True to "
            "ClaraStore to create it."
        )


def memory_type_of(namespace: Sequence[str]) -> str:
    """The memory type a namespace's kind names: `("memories", <id>, "<kind>", ...)`, as Clara's
    own person namespaces are laid out. The kind matches a type by name, ignoring case, `-` for
    `_` and a plural `s` ("Preferences" is `preference`); any other kind, or a namespace of
    another shape, is `other` (the kind stays in the namespace, where filters and prefixes see
    it)."""
    if len(namespace) < 3 or namespace[0] != PERSON_ROOT:
        return MemoryType.OTHER
    kind = namespace[2].strip().lower().replace("-", "_").replace(" ", "_")
    for candidate in (kind, kind.removesuffix("s")):
        if candidate in MemoryType.values:
            return candidate
    return MemoryType.OTHER


def _check_organisation(organisation: str) -> None:
    if (
        not isinstance(organisation, str)
        or not organisation
        or not _clara_accepts(organisation)
        or len(organisation) > MAX_ORGANISATION
    ):
        raise ValueError(
            f"The organisation is a non-empty label of at most {MAX_ORGANISATION} characters, "
            f"without leading or trailing spaces; got {organisation!r}."
        )


def _does_match(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    else:
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    return all(p == "*" or n == p for n, p in pairs)


# --- Values, filters and vectors --------------------------------------------------------------


def _lookup(value: Mapping[str, Any], key: str) -> Any:
    """A filter key: the value's own key, else a dotted path into nested objects."""
    if key in value or "." not in key:
        return value.get(key)
    node: Any = value
    for step in key.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(step)
    return node


def _filter_matches(value: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    return all(search.metadata_matches(_lookup(value, k), v) for k, v in wanted.items())


def _check_filter(wanted: Any, *, top: bool = True) -> None:
    if top and not isinstance(wanted, Mapping):
        raise ValueError(f"A search filter is a dict of value keys; got {type(wanted).__name__}.")
    if isinstance(wanted, Mapping):
        for k, v in wanted.items():
            if not isinstance(k, str):
                raise ValueError(f"Filter keys are strings; got {k!r}.")
            if k.startswith("$") and k not in _FILTER_OPERATORS:
                raise ValueError(
                    f"Unknown filter operator {k!r}; use one of {sorted(_FILTER_OPERATORS)}."
                )
            _check_filter(v, top=False)
    elif isinstance(wanted, list | tuple):
        for v in wanted:
            _check_filter(v, top=False)


def _unit_rows(vectors: Sequence[Sequence[float]], dims: int) -> np.ndarray:
    """Vectors as float32 rows of unit length (zero stays zero), checked against `dims`."""
    try:
        matrix = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"The embedding function returned something other than vectors: {exc}"
        ) from exc
    if matrix.ndim != 2 or matrix.shape[1] != dims:
        got = matrix.shape[1] if matrix.ndim == 2 else "uneven"
        raise ValueError(
            f"The embedding function returned {got}-dimensional vectors; index['dims'] is {dims}."
        )
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix.astype("<f4")


class _ClaraModel(Embeddings):
    """Clara's own model (memory/core/embeddings.py) as LangChain embeddings."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        from memory.core.embeddings import get_embedder

        return get_embedder().encode(list(texts)).tolist() if texts else []

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


# --- Thread hops ------------------------------------------------------------------------------


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


_off_loop_executor: concurrent.futures.ThreadPoolExecutor | None = None
_off_loop_lock = threading.Lock()


def _off_loop(fn, *args):
    """Run `fn` in a worker thread and wait: sync store calls made on an event loop's thread.

    Django refuses database calls on a thread running an event loop, where LangGraph's stores
    accept them (an `async def` node calling `store.put`). The call blocks the loop, as it would
    with those stores; the worker's connection is closed after each call, so none is left open.
    """
    global _off_loop_executor
    with _off_loop_lock:
        if _off_loop_executor is None:
            _off_loop_executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=4, thread_name_prefix="clara-store"
            )

    def call():
        try:
            return fn(*args)
        finally:
            connections.close_all()

    return _off_loop_executor.submit(call).result()


# --- A checked batch --------------------------------------------------------------------------


@dataclass
class _Step:
    """One operation, checked, with what it needs to run."""

    op: Op
    namespace: tuple[str, ...] = ()
    key: str = ""
    texts: list[str] = field(default_factory=list)
    content: str = ""
    embedding: bytes | None = None
    query: np.ndarray | None = None
    # A read that can only find nothing (a key or namespace nothing can be stored under).
    empty: bool = False


class ClaraStore(BaseStore):
    """LangGraph's store interface on Clara's memory tables (see the module docstring)."""

    supports_ttl = True

    def __init__(
        self,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        organisation: str | None = None,
        create_organisation: bool = False,
    ) -> None:
        self.organisation = DEFAULT_ORGANISATION if organisation is None else organisation
        _check_organisation(self.organisation)
        # A mistyped name must not open a new, empty organisation and write there unseen. No
        # name at all, or its name, is Clara's default organisation, made when missing as
        # everywhere else in Clara (tenancy.default_caller).
        self.create_organisation = create_organisation or self.organisation == DEFAULT_ORGANISATION
        self._organisation_id: str | None = None
        self._people: set[str] = set()
        self.ttl_config = ttl
        self.index_config: dict[str, Any] | None = None
        self.embeddings: Embeddings | None = None
        self.dims: int | None = None
        self._fields: list[tuple[str, Any]] = []
        if index is not None:
            self._configure_index(index)
        if ttl is not None:
            default = ttl.get("default_ttl")
            if default is not None and not (_is_number(default) and default > 0):
                raise ValueError("ttl['default_ttl'] is a positive number of minutes or None.")
        self._ttl_stop = threading.Event()
        self._ttl_thread: threading.Thread | None = None

    def _configure_index(self, index: IndexConfig) -> None:
        if not isinstance(index, Mapping):
            raise ValueError("index is a dict: {'dims': ..., 'embed': ..., 'fields': [...]}.")
        unknown = set(index) - _INDEX_KEYS
        if unknown:
            hint = (
                " (SqliteStore's text_fields is 'fields' here)" if "text_fields" in unknown else ""
            )
            raise ValueError(
                f"Unknown index settings {sorted(unknown)}{hint}; "
                f"ClaraStore reads {sorted(_INDEX_KEYS)}."
            )
        if index.get("distance_type", "cosine") != "cosine":
            raise ValueError("ClaraStore scores by cosine similarity only.")
        config = dict(index)
        embed = config.get("embed")
        dims = config.get("dims")
        if embed is None:
            from memory.core.embeddings import get_embedder

            model_dims = get_embedder().dim
            if dims is not None and dims != model_dims:
                raise ValueError(
                    f"Without index['embed'], vectors come from Clara's model, which gives "
                    f"{model_dims} dimensions; index['dims'] is {dims}."
                )
            dims = model_dims
            self.embeddings = _ClaraModel()
        else:
            if not (isinstance(dims, int) and not isinstance(dims, bool) and dims > 0):
                raise ValueError("index['dims'] (a positive int) is required with index['embed'].")
            self.embeddings = ensure_embeddings(embed)
        config["dims"] = dims
        fields = config.get("fields") or ["$"]
        if isinstance(fields, str) or not all(isinstance(f, str) and f for f in fields):
            raise ValueError("index['fields'] is a list of field paths, such as ['text'].")
        self.dims = dims
        self._fields = [(f, f if f == "$" else tokenize_path(f)) for f in fields]
        self.index_config = config

    # -- LangGraph's batch interface -----------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        if _loop_running():
            return _off_loop(self._batch, ops)
        return self._batch(ops)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        steps = self._check(list(ops))
        await self._aembed(steps)
        return await sync_to_async(self._run, thread_sensitive=True)(steps)

    def _batch(self, ops: list[Op]) -> list[Result]:
        steps = self._check(ops)
        self._embed(steps)
        return self._run(steps)

    # -- Checking: the whole batch before anything is written -----------------------------

    def _check(self, ops: list[Op]) -> list[_Step]:
        return [self._check_op(op) for op in ops]

    def _check_op(self, op: Op) -> _Step:
        if not isinstance(op, GetOp | PutOp | SearchOp | ListNamespacesOp):
            raise ValueError(f"Unknown operation {type(op).__name__}.")
        validate_op_namespace(op)
        if isinstance(op, GetOp):
            if not op.namespace or not _key_ok(op.key):
                return _Step(op, empty=True)
            return _Step(op, namespace=self._namespace(op.namespace), key=op.key)
        if isinstance(op, PutOp):
            return self._check_put(op)
        if isinstance(op, SearchOp):
            self._check_window(op.limit, op.offset)
            if op.filter is not None:
                _check_filter(op.filter)
            if op.query is not None and not isinstance(op.query, str):
                raise ValueError("A search query is a string.")
            return _Step(op)
        for condition in op.match_conditions or ():
            if condition.match_type not in ("prefix", "suffix"):
                raise ValueError(f"Unknown match type {condition.match_type!r}.")
        if op.max_depth is not None and (not _is_int(op.max_depth) or op.max_depth < 1):
            raise ValueError("max_depth is a whole number of at least 1, or None.")
        self._check_window(op.limit, op.offset)
        return _Step(op)

    def _check_put(self, op: PutOp) -> _Step:
        if not op.namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        namespace = self._namespace(op.namespace)
        if not _key_ok(op.key):
            raise ValueError(
                f"Keys are 1 to {store.MAX_KEY} characters, not only spaces; got {op.key!r}."
            )
        step = _Step(op, namespace=namespace, key=op.key)
        if op.value is None:
            return step
        if not isinstance(op.value, Mapping):
            raise ValueError(f"A value is a dict; got {type(op.value).__name__}.")
        value = dict(op.value)
        try:
            as_json = json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"A value must be JSON (it is stored as JSON): {exc}") from exc
        if op.ttl is not None and not (_is_number(op.ttl) and op.ttl > 0):
            raise ValueError(f"ttl is a positive number of minutes or None; got {op.ttl!r}.")
        if op.index is not None and op.index is not False:
            if isinstance(op.index, str) or not all(isinstance(f, str) and f for f in op.index):
                raise ValueError("index is False or a list of field paths, such as ['text'].")
        if self.embeddings is not None and op.index is not False:
            paths = (
                self._fields
                if op.index is None
                else [(f, f if f == "$" else tokenize_path(f)) for f in op.index]
            )
            for _, tokens in paths:
                step.texts.extend(get_text_at_path(value, tokens))
        content = "\n".join(step.texts)[:MAX_CONTENT]
        step.content = content if content.strip() else as_json[:MAX_CONTENT]
        return step

    @property
    def _org_id(self) -> str:
        """The organisation's id, looked up on first use, not when the graph is built; made
        only with `create_organisation=True` (UnknownOrganisation otherwise)."""
        if self._organisation_id is None:
            slug, create = self.organisation, self.create_organisation

            def lookup() -> str:
                if create:
                    return str(tenancy.organisation_get_or_create(slug).pk)
                found = Organisation.objects.filter(slug=slug).values_list("pk", flat=True)
                if not found:
                    raise UnknownOrganisation(slug)
                return str(found[0])

            self._organisation_id = _off_loop(lookup) if _loop_running() else lookup()
        return self._organisation_id

    def _namespace(self, namespace: tuple[str, ...]) -> tuple[str, ...]:
        """A LangGraph namespace as the Clara namespace it is stored under (checked).

        A person's namespace (`("memories", "<person id>", ...)`) stays as it is and must be a
        person of this store's organisation; any other is the organisation's own, stored under
        `("org", "<organisation id>", ...)` (memory/facts/tenancy.py).
        """
        labels = tuple(_encode_label(label) for label in namespace)
        if len(labels) >= 2 and labels[0] == PERSON_ROOT and self._is_ours(labels[1]):
            stored = labels
        else:
            stored = (ORG_ROOT, self._org_id, *labels)
        try:
            return store.namespace_validate(stored)
        except DomainError as exc:
            raise InvalidNamespaceError(f"{exc.detail} Got {namespace}.") from exc

    def _is_ours(self, person_label: str) -> bool:
        """Whether a label names one of this organisation's people (whose namespace it is).

        `("memories", "user-9")`, LangGraph's usual shape, is then the organisation's own
        namespace; so is another organisation's person id, exactly like an unknown one.
        """
        if person_label not in self._people:
            try:
                person_id = uuid.UUID(person_label)
            except ValueError:
                return False
            org = self._org_id

            def exists() -> bool:
                return Person.objects.filter(id=person_id, organisation_id=org).exists()

            if not (_off_loop(exists) if _loop_running() else exists()):
                return False
            self._people.add(person_label)
        return True

    def _view(self, parts: tuple[str, ...]) -> tuple[str, ...] | None:
        """The LangGraph namespace a Clara namespace stands for; None if not this store's."""
        if parts[0] == ORG_ROOT:
            if len(parts) < 3 or parts[1] != self._org_id:
                return None
            parts = parts[2:]
        elif parts[0] != PERSON_ROOT or len(parts) < 2 or not self._is_ours(parts[1]):
            return None
        labels = tuple(_decode_label(part) for part in parts)
        return None if None in labels else labels  # type: ignore[return-value]

    def _own_scopes(self, prefix: tuple[str, ...]) -> list[str]:
        """The scopes a search or listing under `prefix` may read: only this organisation's."""
        labels = tuple(_encode_label(label) for label in prefix)
        own = SEP.join((ORG_ROOT, self._org_id))
        if labels and labels[0] == PERSON_ROOT:
            if len(labels) >= 2:
                return [SEP.join(labels[:2]) if self._is_ours(labels[1]) else own]
            people = (
                Memory.objects.filter(
                    status=Memory.Status.ACTIVE,
                    scope__startswith=PERSON_ROOT + SEP,
                    person__organisation_id=self._org_id,
                )
                .values_list("scope", flat=True)
                .distinct()
            )
            # The people's scopes, and the organisation's own ("memories", ...) namespaces.
            return sorted({own, *people})
        if not labels:
            return self._own_scopes((PERSON_ROOT,))
        return [own]

    @staticmethod
    def _check_window(limit: Any, offset: Any) -> None:
        if not _is_int(limit) or limit < 0:
            raise ValueError(f"limit is a whole number, 0 or more; got {limit!r}.")
        if not _is_int(offset) or offset < 0:
            raise ValueError(f"offset is a whole number, 0 or more; got {offset!r}.")

    # -- Embedding: puts' texts and searches' queries, before anything is written --------------

    def _embed(self, steps: list[_Step]) -> None:
        if self.embeddings is None:
            return
        texts = [text for step in steps for text in step.texts]
        if texts:
            self._attach_vectors(steps, self.embeddings.embed_documents(texts))
        queries = {s.op.query for s in steps if isinstance(s.op, SearchOp) and s.op.query}
        vectors = {q: self.embeddings.embed_query(q) for q in queries}
        self._attach_queries(steps, vectors)

    async def _aembed(self, steps: list[_Step]) -> None:
        if self.embeddings is None:
            return
        texts = [text for step in steps for text in step.texts]
        if texts:
            self._attach_vectors(steps, await self.embeddings.aembed_documents(texts))
        queries = list({s.op.query for s in steps if isinstance(s.op, SearchOp) and s.op.query})
        found = await asyncio.gather(*(self.embeddings.aembed_query(q) for q in queries))
        self._attach_queries(steps, dict(zip(queries, found, strict=True)))

    def _attach_vectors(self, steps: list[_Step], vectors: list[list[float]]) -> None:
        wanted = sum(len(step.texts) for step in steps)
        if len(vectors) != wanted:
            raise ValueError(
                f"The embedding function returned {len(vectors)} vectors for {wanted} texts."
            )
        matrix = _unit_rows(vectors, self.dims)
        at = 0
        for step in steps:
            if step.texts:
                step.embedding = matrix[at : at + len(step.texts)].tobytes()
                at += len(step.texts)

    def _attach_queries(self, steps: list[_Step], vectors: dict[str, list[float]]) -> None:
        unit = {q: _unit_rows([v], self.dims)[0] for q, v in vectors.items()}
        for step in steps:
            if isinstance(step.op, SearchOp) and step.op.query:
                step.query = unit[step.op.query]

    # -- Running, in order; consecutive writes share a transaction ---------------------------

    def _run(self, steps: list[_Step]) -> list[Result]:
        results: list[Result] = [None] * len(steps)
        i = 0
        while i < len(steps):
            if isinstance(steps[i].op, PutOp):
                j = i
                while j < len(steps) and isinstance(steps[j].op, PutOp):
                    j += 1
                with _domain_errors(), transaction.atomic():
                    for step in steps[i:j]:
                        self._put(step)
                i = j
                continue
            with _domain_errors():
                results[i] = self._read(steps[i])
            i += 1
        return results

    def _read(self, step: _Step) -> Result:
        if isinstance(step.op, GetOp):
            return self._get(step)
        if isinstance(step.op, SearchOp):
            return self._search(step)
        return self._list(step.op)

    def _refresh(self, refresh_ttl: bool | None) -> bool:
        # As LangGraph's SQLite and Postgres stores: a read renews lifetimes when it asks to
        # (the default) and the store's TTL config turns `refresh_on_read` on.
        return bool(refresh_ttl) and bool((self.ttl_config or {}).get("refresh_on_read", False))

    def _get(self, step: _Step) -> Item | None:
        if step.empty:
            return None
        op: GetOp = step.op  # type: ignore[assignment]
        try:
            memory = store.memory_get(
                namespace=step.namespace, key=step.key, refresh_ttl=self._refresh(op.refresh_ttl)
            )
        except NotFound:
            return None
        return self._item(memory, op.namespace)

    def _put(self, step: _Step) -> None:
        op: PutOp = step.op  # type: ignore[assignment]
        if op.value is None:
            store.memory_delete(namespace=step.namespace, key=step.key)
            return
        store.memory_upsert(
            namespace=step.namespace,
            key=step.key,
            content=step.content,
            metadata=dict(op.value),
            type=memory_type_of(op.namespace),
            source=Memory.Source.TOOL,
            replace=True,
            embed=False,
            embedding=step.embedding,
            ttl_minutes=op.ttl,
        )

    def _search(self, step: _Step) -> list[SearchItem]:
        op: SearchOp = step.op  # type: ignore[assignment]
        if op.limit == 0:
            return []
        at = timezone.now()
        prefix = tuple(op.namespace_prefix)
        query = step.query if self.embeddings is not None else None
        # (score or None, -updated, namespace, key, memory): scored first, best first; then the
        # rest newest first.
        found: list[tuple[float | None, float, tuple[str, ...], str, Memory]] = []
        for scope in self._scopes(prefix):
            with search.scope_copy(scope) as copy:
                found.extend(self._search_copy(copy, prefix, op.filter, query, at))
        found.sort(key=lambda row: (row[0] is None, -(row[0] or 0.0), row[1], row[2], row[3]))
        picked = found[op.offset : op.offset + op.limit]
        if self._refresh(op.refresh_ttl):
            store.ttl_refresh([row[4] for row in picked], at=at)
        return [
            self._item(memory, namespace, SearchItem, score=score)
            for score, _, namespace, _, memory in picked
        ]

    def _scopes(self, prefix: tuple[str, ...]) -> list[str]:
        return self._own_scopes(prefix)

    def _search_copy(self, copy, prefix, wanted, query, at):
        if not copy.memories:
            return []
        views = [self._view(tuple(path.split(SEP))) for path in copy.namespaces]
        n = len(prefix)
        visible = np.fromiter(
            (view is not None and view[:n] == prefix for view in views), bool, len(views)
        )
        mask = (copy.expires > at.timestamp()) & visible[copy.ns_code]
        rows = np.flatnonzero(mask)
        if wanted:
            rows = [i for i in rows if _filter_matches(copy.memories[i].metadata, wanted)]
        best = None
        if query is not None and len(rows):
            matrix, owner = self._vectors(copy)
            best = np.full(len(copy.memories), -np.inf)
            if len(owner):
                np.maximum.at(best, owner, matrix @ query)
        out = []
        for i in rows:
            score = None
            if best is not None and np.isfinite(best[i]):
                score = float(best[i])
            memory = copy.memories[i]
            out.append((score, -copy.updated[i], views[copy.ns_code[i]], memory.key, memory))
        return out

    def _vectors(self, copy) -> tuple[np.ndarray, np.ndarray]:
        """Every vector of this store's width in the scope, and the row each belongs to.

        Kept on the scope's copy until the copy changes. Rows embedded at another width (by a
        store with another model, or by Clara's API) have none here and are not scored.
        """
        cache_key = ("langgraph", self.dims)
        cached = copy.derived.get(cache_key)
        if cached is not None:
            return cached
        width = self.dims * 4
        blobs, owner = [], []
        for i, memory in enumerate(copy.memories):
            data = memory.embedding
            if data and len(data) % width == 0:
                blobs.append(bytes(data))
                owner.extend([i] * (len(data) // width))
        matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(owner), self.dims)
        cached = (matrix.astype(np.float32), np.asarray(owner, dtype=np.intp))
        copy.derived[cache_key] = cached
        return cached

    def _list(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = list(op.match_conditions or ())
        # Narrow the query by the leading labels of a prefix (up to its first wildcard).
        lead: list[str] = []
        for condition in conditions:
            if condition.match_type == "prefix":
                for label in condition.path:
                    if label == "*":
                        break
                    lead.append(_encode_label(label))
                break
        found = set()
        scopes = self._own_scopes(tuple(_decode_label(label) or label for label in lead))
        for parts in store.namespaces_list(prefix=(), limit=sys.maxsize, offset=0, scopes=scopes):
            view = self._view(parts)
            if view is not None and all(_does_match(c, view) for c in conditions):
                found.add(view[: op.max_depth] if op.max_depth else view)
        return sorted(found)[op.offset : op.offset + op.limit]

    def _item(self, memory: Memory, namespace: tuple[str, ...], cls=Item, **extra) -> Item:
        return cls(
            value=memory.metadata,
            key=memory.key,
            namespace=tuple(namespace),
            created_at=memory.created_at,
            updated_at=memory.updated_at,
            **extra,
        )

    # -- Setup and TTL -------------------------------------------------------------------

    def setup(self) -> None:
        """Check that Clara's tables exist (Django's migrations own them; nothing is created)."""
        if _loop_running():
            return _off_loop(_check_tables)
        _check_tables()

    def sweep_ttl(self) -> int:
        """Delete every memory whose lifetime is over; returns how many went."""
        if _loop_running():
            return _off_loop(_sweep)
        return _sweep()

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Sweep expired items every `sweep_interval_minutes` (else the TTL config's, else 5)
        in a daemon thread, until `stop_ttl_sweeper()`. Without a TTL config there is nothing
        to sweep for and no thread starts."""
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        if not self.ttl_config:
            future.set_result(None)
            return future
        if self._ttl_thread is not None and self._ttl_thread.is_alive():
            future.add_done_callback(lambda f: self._ttl_stop.set() if f.cancelled() else None)
            return future
        interval = _sweep_interval(self.ttl_config, sweep_interval_minutes)
        self._ttl_stop.clear()
        stop = self._ttl_stop

        def loop() -> None:
            try:
                while not stop.wait(interval * 60):
                    try:
                        swept = _sweep()
                        if swept:
                            logger.info("LangGraph store sweep deleted %d expired items", swept)
                    except Exception:
                        logger.exception("LangGraph store sweep failed")
                    finally:
                        connections.close_all()
                future.set_result(None)
            except Exception as exc:  # pragma: no cover - the loop itself does not raise
                future.set_exception(exc)

        self._ttl_thread = threading.Thread(target=loop, daemon=True, name="clara-ttl-sweeper")
        self._ttl_thread.start()
        future.add_done_callback(lambda f: stop.set() if f.cancelled() else None)
        return future

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; False if it was still running after `timeout` seconds."""
        thread = self._ttl_thread
        if thread is None or not thread.is_alive():
            return True
        self._ttl_stop.set()
        thread.join(timeout)
        if thread.is_alive():
            return False
        self._ttl_thread = None
        return True

    def __del__(self) -> None:
        if getattr(self, "_ttl_thread", None) is not None:
            self.stop_ttl_sweeper(timeout=0.1)


class AsyncClaraStore(ClaraStore):
    """ClaraStore with LangGraph's async store API for setup and TTL (as AsyncPostgresStore):
    `await store.setup()`, `await store.sweep_ttl()`, and a sweeper that is an asyncio task."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._ttl_task: asyncio.Task[None] | None = None
        self._ttl_astop = asyncio.Event()

    async def setup(self) -> None:  # type: ignore[override]
        await sync_to_async(_check_tables, thread_sensitive=True)()

    async def sweep_ttl(self) -> int:  # type: ignore[override]
        return await sync_to_async(_sweep, thread_sensitive=True)()

    async def start_ttl_sweeper(  # type: ignore[override]
        self, sweep_interval_minutes: float | None = None
    ) -> asyncio.Task[None]:
        if not self.ttl_config:
            return asyncio.create_task(asyncio.sleep(0))
        if self._ttl_task is not None and not self._ttl_task.done():
            return self._ttl_task
        interval = _sweep_interval(self.ttl_config, sweep_interval_minutes)
        self._ttl_astop = asyncio.Event()
        stop = self._ttl_astop

        async def loop() -> None:
            while not stop.is_set():
                try:
                    await asyncio.wait_for(stop.wait(), timeout=interval * 60)
                    break
                except TimeoutError:
                    pass
                try:
                    swept = await self.sweep_ttl()
                    if swept:
                        logger.info("LangGraph store sweep deleted %d expired items", swept)
                except Exception:
                    logger.exception("LangGraph store sweep failed")

        self._ttl_task = asyncio.create_task(loop())
        return self._ttl_task

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:  # type: ignore[override]
        task = self._ttl_task
        if task is None or task.done():
            return True
        self._ttl_astop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=timeout)
        except TimeoutError:
            return False
        self._ttl_task = None
        return True

    def __del__(self) -> None:
        task = getattr(self, "_ttl_task", None)
        if task is not None and not task.done():
            task.cancel()


# --- Helpers ----------------------------------------------------------------------------------


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _key_ok(key: Any) -> bool:
    return isinstance(key, str) and bool(key.strip()) and len(key) <= store.MAX_KEY


def _sweep_interval(config: TTLConfig, minutes: float | None) -> float:
    interval = minutes or config.get("sweep_interval_minutes") or 5
    if not _is_number(interval) or interval <= 0:
        raise ValueError(f"The sweep interval is a positive number of minutes; got {interval!r}.")
    return float(interval)


def _sweep() -> int:
    from memory.facts import curation

    return curation.memories_expire()


def _check_tables() -> None:
    from django.db import connection

    missing = {Memory._meta.db_table, "memory_scopes"} - set(connection.introspection.table_names())
    if missing:
        raise RuntimeError(
            f"Clara's memory tables are missing ({', '.join(sorted(missing))}): "
            "run `python manage.py migrate`."
        )


@contextmanager
def _domain_errors() -> Iterator[None]:
    """Clara's domain errors as the errors LangGraph callers expect."""
    try:
        yield
    except DomainError as exc:
        if exc.field in ("namespace", "prefix"):
            raise InvalidNamespaceError(exc.detail) from exc
        raise ValueError(exc.detail) from exc
