"""Hybrid search over the memory store: meaning, keywords and the blend of recency, use and importance.

A scope's live memories (one person's, or one agent's store) are held in process memory as
numpy arrays: a matrix of embeddings, a keyword index, and columns for the filters. Each search
first reads the scope's generation (one indexed row); when another process has written since,
the copy catches up by reading only the rows whose revision is newer, or reloads after a
deletion. Searching 10k memories is then a matrix-vector product and a few masks.

Ranking, for the candidates that pass the filters:
  relevance = SIMILARITY_WEIGHT * cosine + KEYWORD_WEIGHT * keyword score (BM25, scaled to 0..1)
  score     = RELEVANCE_SHARE * relevance + recency (14-day half-life) + frequency (how many of
              the candidates share its entities) + importance, with the weights below.
`threshold` cuts on relevance, so a very important but unrelated fact never passes as a match.
"""

import math
import threading
import uuid
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from memory.core.embeddings import blas_threads, get_embedder
from memory.core.errors import Invalid
from memory.facts import ranking as retrieval
from memory.facts.models import Memory, MemoryType
from memory.facts.store import SEP, namespace_prefix_validate

SIMILARITY_WEIGHT = 0.65
KEYWORD_WEIGHT = 0.35
RELEVANCE_SHARE = 0.55
RECENCY_SHARE = 0.15
FREQUENCY_SHARE = 0.15
IMPORTANCE_SHARE = 0.15
HALF_LIFE_DAYS = 14.0
# The blend re-ranks this many of the most relevant candidates.
CANDIDATES = 50
MAX_LIMIT = 100
ENTITY_CARD_FACTS = 3
FOUNDATION_LIMIT = 20
TOP_PREFERENCES = 3

_TYPE_CODES = {value: code for code, value in enumerate(MemoryType.values)}
# Django's `Choices.values` builds a new list on every access; searches check against these.
_STATUSES = frozenset(Memory.Status.values)


@dataclass
class Hit:
    memory: Memory
    score: float
    relevance: float


@dataclass
class SearchResult:
    hits: list[Hit]
    entity_cards: list[str] = field(default_factory=list)


class _Keywords:
    """BM25 over a scope's rows: one index built when the copy is (re)built, plus the rows
    added since, scored with the index's statistics (idf, average length) so that a write costs
    one row's postings instead of a rebuild. Slots a later write replaced stay in the index;
    the copy's masks exclude them. Rebuilt with the copy once the added rows pass a share."""

    def __init__(self, docs: list[list[str]]):
        self.base = retrieval.BM25Index(docs)
        self.base_size = len(docs)
        self.added = 0
        # term -> [(slot after the base, precomputed tf weight)]
        self.postings: dict[str, list[tuple[int, float]]] = defaultdict(list)

    def add(self, tokens: list[str]) -> None:
        base, k1, b = self.base, self.base.k1, self.base.b
        norm = k1 * (1 - b + b * len(tokens) / base.avg)
        for term, count in Counter(tokens).items():
            self.postings[term].append((self.added, count * (k1 + 1) / (count + norm)))
        self.added += 1

    def scores(self, query) -> np.ndarray:
        base = self.base
        out = np.zeros(self.base_size + self.added, dtype=np.float32)
        out[: self.base_size] = base.scores(query)
        if not self.added:
            return out
        size = self.base_size + self.added
        for term in dict.fromkeys(query):
            posted = self.postings.get(term)
            if not posted:
                continue
            t = base.vocabulary.get(term)
            df = (int(base.df[t]) if t is not None else 0) + len(posted)
            idf = math.log(1 + (size - df + 0.5) / (df + 0.5))
            for slot, weight in posted:
                out[self.base_size + slot] += idf * weight
        return out


# Bytes a row costs beyond its vector (the Memory object, its strings and dicts, its
# tokens, index postings): resident memory grew 6.5 KB a memory at 1,000 scopes of 50, of which
# the vector and columns are ~1.7 KB (bench/search_memory.py, docs/benchmarks.md).
ROW_BYTES = 4_800


class _ScopeCopy:
    """The live memories of one scope as arrays. Built once from the database; a write patches
    the rows it changed (a changed or removed row's slot is retired, its new version appended),
    and the arrays are rebuilt only when retired and added slots pass a share of the copy."""

    def __init__(self, scope: str):
        self.scope = scope
        self.generation = -1
        self.epoch = None
        self.lock = threading.Lock()
        self.n = 0
        self.nbytes = 0
        self.memories: list[Memory] = []
        self.pos: dict[uuid.UUID, int] = {}
        self.retired = 0
        self._pending: dict[uuid.UUID, Memory | None] = {}
        self._rebuild: list[Memory] | None = []
        # What other rankings derive from these rows (the LangGraph store's per-field vectors),
        # dropped whenever the rows change.
        self.derived: dict = {}

    # -- keeping up with the database ----------------------------------------------------

    def refresh(self, generation: int, epoch: int) -> None:
        # A search that read the generation before another one brought the copy further (both
        # read it before taking the lock) leaves the newer copy as it is.
        if epoch == self.epoch and generation <= self.generation:
            return
        if epoch != self.epoch or self.generation < 0:
            self._rebuild = list(
                Memory.objects.filter(scope=self.scope, status=Memory.Status.ACTIVE)
            )
            self._pending = {}
        else:
            for memory in Memory.objects.filter(scope=self.scope, revision__gt=self.generation):
                self._pending[memory.id] = memory if memory.status == Memory.Status.ACTIVE else None
        self.generation, self.epoch = generation, epoch

    def arrays(self) -> None:
        if self._rebuild is None and not self._pending:
            return
        self.derived = {}
        if self._rebuild is None:
            limit = max(256, (self.n - self.retired) // 10)
            if self.retired + len(self._pending) + self.keyword.added > limit or not self._patch():
                live = {m.id: m for i, m in enumerate(self.memories) if self.alive[i]}
                for key, memory in self._pending.items():
                    if memory is None:
                        live.pop(key, None)
                    else:
                        live[key] = memory
                self._rebuild = list(live.values())
        if self._rebuild is not None:
            self._build(self._rebuild)
        self._rebuild = None
        self._pending = {}
        self.nbytes = int(self._vectors.nbytes) + self.n * ROW_BYTES

    def _build(self, rows: list[Memory]) -> None:
        n = len(rows)
        self.n, self.retired = n, 0
        self.memories = list(rows)
        self.ids = [m.id for m in rows]
        self.pos = {m.id: i for i, m in enumerate(rows)}
        # Only vectors of the query model's width compare with a query; a scope may also hold
        # rows a LangGraph store embedded with its own model, or as several vectors.
        self.dims = get_embedder().dim if any(m.embedding for m in rows) else 1
        width = self.dims * 4
        zero = bytes(width)
        # One join and one frombuffer instead of a row copy per memory; a missing or odd-sized
        # embedding is a zero row (no similarity), as before. Room for writes to come.
        blob = b"".join(
            bytes(m.embedding) if m.embedding and len(m.embedding) == width else zero for m in rows
        )
        capacity = max(16, n + n // 8)
        self._vectors = np.zeros((capacity, self.dims), np.float32)
        self._vectors[:n] = np.frombuffer(blob, dtype="<f4").reshape(n, self.dims)
        self.namespaces = sorted({m.namespace for m in rows})
        self._ns_codes = {ns: i for i, ns in enumerate(self.namespaces)}
        self.persona_codes: dict[str, int] = {}
        self._columns = {
            "ns_code": np.zeros(capacity, np.int32),
            "type_code": np.zeros(capacity, np.int16),
            "persona_code": np.zeros(capacity, np.int32),
            "confirmed": np.zeros(capacity, bool),
            "pinned": np.zeros(capacity, bool),
            "importance": np.zeros(capacity, np.float32),
            "updated": np.zeros(capacity, np.float64),
            "created": np.zeros(capacity, np.float64),
            "expires": np.zeros(capacity, np.float64),
            "alive": np.zeros(capacity, bool),
        }
        values = [self._row_values(m) for m in rows]
        for name, column in self._columns.items():
            column[:n] = np.fromiter((v[name] for v in values), column.dtype, n)
        self.by_entity: dict[str, list[int]] = defaultdict(list)
        for i, m in enumerate(rows):
            for ref in m.entity_refs:
                self.by_entity[ref].append(i)
        self.keyword = _Keywords([retrieval.tokenize(m.content) for m in rows])
        self._views()

    def _row_values(self, m: Memory) -> dict:
        persona = (
            -1
            if m.persona is None
            else self.persona_codes.setdefault(m.persona, len(self.persona_codes))
        )
        namespace = self._ns_codes.get(m.namespace)
        if namespace is None:
            namespace = self._ns_codes[m.namespace] = len(self.namespaces)
            self.namespaces.append(m.namespace)
        return {
            "ns_code": namespace,
            "type_code": _TYPE_CODES.get(m.type, -1),
            "persona_code": persona,
            "confirmed": m.confirmed,
            "pinned": m.pinned,
            "importance": m.importance,
            "updated": m.updated_at.timestamp(),
            "created": m.created_at.timestamp(),
            "expires": m.expires_at.timestamp() if m.expires_at else math.inf,
            "alive": True,
        }

    def _views(self) -> None:
        n = self.n
        self.vectors = self._vectors[:n]
        for name, column in self._columns.items():
            setattr(self, name, column[:n])

    def _patch(self) -> bool:
        """Apply the pending rows in place; False when only a rebuild will do."""
        width = self.dims * 4
        for memory in self._pending.values():
            if memory is not None and memory.embedding and len(memory.embedding) != width:
                return False  # a first embedding, or another model's width
        for key, memory in self._pending.items():
            slot = self.pos.pop(key, None)
            if slot is not None:
                # Retired: never live again (an infinite past expiry), its slot reused by none.
                self._columns["alive"][slot] = False
                self._columns["expires"][slot] = -math.inf
                self.retired += 1
            if memory is None:
                continue
            i = self.n
            if i == len(self._vectors):
                grown = max(16, i * 2)
                self._vectors = np.resize(self._vectors, (grown, self.dims))
                for name in self._columns:
                    self._columns[name] = np.resize(self._columns[name], grown)
            self._vectors[i] = (
                np.frombuffer(bytes(memory.embedding), dtype="<f4") if memory.embedding else 0.0
            )
            for name, value in self._row_values(memory).items():
                self._columns[name][i] = value
            for ref in memory.entity_refs:
                self.by_entity[ref].append(i)
            self.keyword.add(retrieval.tokenize(memory.content))
            self.memories.append(memory)
            self.ids.append(memory.id)
            self.pos[memory.id] = i
            self.n += 1
        self._views()
        return True


_copies: "OrderedDict[str, _ScopeCopy]" = OrderedDict()
_copies_lock = threading.Lock()


def _budget_bytes() -> int:
    return settings.CLARA_SEARCH_MEMORY_MB * 1024 * 1024


def _copy_for(scope: str) -> _ScopeCopy:
    with connection.cursor() as cursor:
        cursor.execute("SELECT generation, epoch FROM memory_scopes WHERE scope = %s", [scope])
        row = cursor.fetchone()
    generation, epoch = row if row else (0, 0)
    with _copies_lock:
        copy = _copies.get(scope)
        if copy is None:
            copy = _copies[scope] = _ScopeCopy(scope)
        _copies.move_to_end(scope)
    copy.lock.acquire()
    try:
        copy.refresh(generation, epoch)
        copy.arrays()
    except BaseException:
        copy.lock.release()
        raise
    _evict(keep=scope)
    return copy


def _evict(*, keep: str) -> None:
    """Least recently searched scopes out until the copies fit the budget (the one in use
    stays, however large: a search never fails for want of memory)."""
    budget = _budget_bytes()
    with _copies_lock:
        total = sum(c.nbytes for c in _copies.values())
        while total > budget and len(_copies) > 1:
            scope, oldest = next(iter(_copies.items()))
            if scope == keep:
                _copies.move_to_end(scope)
                continue
            del _copies[scope]
            total -= oldest.nbytes


def cache_stats() -> dict:
    """What this process holds: scopes, rows and estimated bytes against the budget."""
    with _copies_lock:
        copies = list(_copies.values())
    return {
        "scopes": len(copies),
        "rows": sum(c.n - c.retired for c in copies),
        "bytes": sum(c.nbytes for c in copies),
        "budget_bytes": _budget_bytes(),
    }


@contextmanager
def scope_copy(scope: str) -> Iterator[_ScopeCopy]:
    """A scope's live rows as this process holds them, brought up to date, for another ranking
    over the same rows (memory/langgraph_store.py). Locked while in use: read, don't change.
    Slots with `alive` false are retired rows: masks built on `expires` leave them out."""
    copy = _copy_for(scope)
    try:
        yield copy
    finally:
        copy.lock.release()


def clear_cache() -> None:
    with _copies_lock:
        _copies.clear()


# --- Search -----------------------------------------------------------------------------------


def _query_vector(query: str) -> np.ndarray:
    from memory.core.embeddings import get_embedder

    return get_embedder().encode([query])[0]


def _entity_cards(copy: _ScopeCopy, hits: list[int], mask: np.ndarray) -> list[str]:
    """`[person:sarah]: fact; fact; fact` for each entity the hits mention.

    Only facts that matter (importance 2+ or pinned), pinned first, then by importance, then the
    newest; at most three per entity.
    """
    cards = []
    seen: set[str] = set()
    for i in hits:
        for ref in copy.memories[i].entity_refs:
            if ref in seen:
                continue
            seen.add(ref)
            rows = [
                j
                for j in copy.by_entity.get(ref, ())
                if mask[j] and (copy.importance[j] >= 2 or copy.pinned[j])
            ]
            rows.sort(key=lambda j: (not copy.pinned[j], -copy.importance[j], -copy.created[j]))
            facts = [copy.memories[j].content for j in rows[:ENTITY_CARD_FACTS]]
            if facts:
                cards.append(f"[{ref}]: " + "; ".join(facts))
    return cards


def memory_search(
    *,
    prefix: Sequence[str],
    query: str | None = None,
    query_vector: np.ndarray | None = None,
    types: Sequence[str] = (),
    persona: str | None = None,
    confirmed: bool | None = None,
    status: str = Memory.Status.ACTIVE,
    metadata: dict | None = None,
    limit: int = 10,
    offset: int = 0,
    threshold: float | None = None,
    entity_cards: bool = False,
    semantic: bool = True,
    at: datetime | None = None,
    scopes: Sequence[str] | None = None,
) -> SearchResult:
    """Search live memories under a namespace prefix (at least the scope: two parts).

    `scopes`, when given, are the only scopes a wide prefix may reach (a caller's own:
    memory/facts/tenancy.py).

    With a query: ranked by the hybrid blend. Without: pinned, then important, then newest.
    Expired memories never come back. `persona` keeps that persona's memories and the global
    ones. `metadata` keeps rows whose metadata has these exact values.
    """
    at = at or timezone.now()
    prefix = namespace_prefix_validate(prefix)
    if not 1 <= limit <= MAX_LIMIT:
        raise Invalid(f"limit is between 1 and {MAX_LIMIT}.", field="limit")
    if offset < 0:
        raise Invalid("offset is not negative.", field="offset")
    for t in types:
        if t not in _TYPE_CODES:
            raise Invalid(f"Unknown memory type {t!r}.", field="types")
    if status not in _STATUSES:
        raise Invalid(f"Unknown status {status!r}.", field="status")
    if threshold is not None and not -1.0 <= threshold <= 1.0:
        raise Invalid("threshold is between -1 and 1.", field="threshold")
    if status != Memory.Status.ACTIVE:
        return _search_inactive(prefix, status=status, limit=limit, offset=offset, scopes=scopes)

    if len(prefix) >= 2:
        scopes = [SEP.join(prefix[:2])]
    elif scopes is not None:
        scopes = sorted(scopes)
    else:
        # A wide prefix spans several scopes: search each and merge (agent stores, not the
        # per-turn path, which always names the person's scope).
        scopes_qs = Memory.objects.filter(status=Memory.Status.ACTIVE)
        if prefix:
            scopes_qs = scopes_qs.filter(scope__startswith=prefix[0] + SEP)
        scopes = sorted(set(scopes_qs.values_list("scope", flat=True).distinct()))
    if query and query_vector is None and semantic:
        query_vector = _query_vector(query)
    merged = SearchResult([])
    for scope in scopes:
        part = _search_scope(
            scope,
            prefix=prefix,
            query=query,
            query_vector=query_vector,
            types=types,
            persona=persona,
            confirmed=confirmed,
            metadata=metadata,
            limit=offset + limit if len(scopes) > 1 else limit,
            offset=0 if len(scopes) > 1 else offset,
            threshold=threshold,
            entity_cards=entity_cards,
            at=at,
        )
        merged.hits.extend(part.hits)
        merged.entity_cards.extend(part.entity_cards)
    if len(scopes) > 1:
        if query or query_vector is not None:
            merged.hits.sort(key=lambda hit: -hit.score)
        else:
            merged.hits.sort(key=lambda hit: -hit.memory.updated_at.timestamp())
        merged.hits = merged.hits[offset : offset + limit]
    return merged


def _search_scope(scope: str, **kwargs) -> SearchResult:
    from memory.facts import vector_pg

    if vector_pg.vector_search_path() == "pgvector":
        return vector_pg.search_scope(scope, **kwargs)
    copy = _copy_for(scope)
    try:
        return _search_copy(copy, **kwargs)
    finally:
        copy.lock.release()


def metadata_matches(value: Any, wanted: Any) -> bool:
    """A filter value matches like a JSON document query: nested dicts, lists, and the
    operators $eq, $ne, $gt, $gte, $lt, $lte."""
    if isinstance(wanted, dict):
        if any(str(k).startswith("$") for k in wanted):
            return all(_operator(value, op, operand) for op, operand in wanted.items())
        return isinstance(value, dict) and all(
            metadata_matches(value.get(k), v) for k, v in wanted.items()
        )
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(metadata_matches(a, b) for a, b in zip(value, wanted, strict=True))
        )
    return value == wanted


def _operator(value: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return value == operand
    if op == "$ne":
        return value != operand
    if op not in ("$gt", "$gte", "$lt", "$lte"):
        raise Invalid(f"Unknown filter operator {op!r}.", field="filter")
    try:
        a, b = float(value), float(operand)
    except (TypeError, ValueError):
        return False
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def _mask(copy: _ScopeCopy, *, prefix, types, persona, confirmed, at) -> np.ndarray:
    mask = copy.expires > at.timestamp()
    # Set filters are a lookup table indexed by the row's code (a gather), cheaper than np.isin.
    if len(prefix) > 2:
        path = SEP.join(prefix)
        allowed = np.fromiter(
            (ns == path or ns.startswith(path + SEP) for ns in copy.namespaces),
            bool,
            len(copy.namespaces),
        )
        mask &= allowed[copy.ns_code]
    if types:
        allowed = np.zeros(len(_TYPE_CODES) + 1, bool)  # the last slot: an unknown type (-1)
        allowed[[_TYPE_CODES[t] for t in types]] = True
        mask &= allowed[copy.type_code]
    if confirmed is not None:
        mask &= copy.confirmed == confirmed
    if persona is not None:
        code = copy.persona_codes.get(persona)
        mask &= (copy.persona_code == -1) | (
            copy.persona_code == code if code is not None else False
        )
    return mask


def _search_copy(
    copy: _ScopeCopy,
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
    at,
) -> SearchResult:
    mask = _mask(copy, prefix=prefix, types=types, persona=persona, confirmed=confirmed, at=at)

    def metadata_ok(i: int) -> bool:
        return not metadata or metadata_matches(copy.memories[i].metadata, metadata)

    now = at.timestamp()
    if not query and query_vector is None:
        order = np.flatnonzero(mask)
        order = sorted(
            order, key=lambda i: (not copy.pinned[i], -copy.importance[i], -copy.updated[i])
        )
        picked = [i for i in order if metadata_ok(i)][offset : offset + limit]
        hits = [Hit(copy.memories[i], float(copy.importance[i] / 3), 0.0) for i in picked]
        cards = _entity_cards(copy, picked, mask) if entity_cards else []
        return SearchResult(hits, cards)

    if (
        query_vector is not None
        and len(copy.memories)
        and copy.vectors.shape[1] == query_vector.shape[0]
    ):
        # One BLAS thread: a matrix-vector product is memory-bound, and on a loaded 2-core
        # machine OpenBLAS's spinning helper threads made it several times slower (10k memories:
        # p50 22 ms with them, 3 ms without; bench/search_bench.py).
        with blas_threads(1):
            similarity = copy.vectors @ query_vector.astype(np.float32)
    else:
        similarity = np.zeros(len(copy.memories), np.float32)
    words = copy.keyword.scores(retrieval.tokenize(query)) if query else None
    if words is not None and words.size and words.max() > 0:
        relevance = SIMILARITY_WEIGHT * np.clip(similarity, 0, 1) + KEYWORD_WEIGHT * (
            words / words.max()
        )
    else:
        relevance = np.clip(similarity, 0, 1).astype(np.float64)
    relevance = np.where(mask, relevance, -np.inf)
    if threshold is not None:
        relevance = np.where(similarity >= threshold, relevance, -np.inf)

    wanted = max(CANDIDATES, offset + limit)
    live = int(np.count_nonzero(np.isfinite(relevance)))
    if live == 0:
        return SearchResult([])
    take = min(wanted * (4 if metadata else 1), live)
    top = (
        np.argpartition(-relevance, take - 1)[:take]
        if take < len(relevance)
        else np.arange(len(relevance))
    )
    top = [
        i for i in top[np.argsort(-relevance[top])] if np.isfinite(relevance[i]) and metadata_ok(i)
    ]
    top = top[:wanted]

    # Frequency: how many of the candidates share an entity with this one (a fact about someone
    # the person talks about a lot matters more), scaled to 0..1.
    ref_counts: dict[str, int] = defaultdict(int)
    for i in top:
        for ref in copy.memories[i].entity_refs:
            ref_counts[ref] += 1
    most = max(ref_counts.values(), default=1)
    scored = []
    for i in top:
        refs = copy.memories[i].entity_refs
        frequency = max((ref_counts[r] for r in refs), default=0) / most
        age_days = max(0.0, (now - copy.updated[i]) / 86400)
        recency = 0.5 ** (age_days / HALF_LIFE_DAYS)
        importance = 1.0 if copy.pinned[i] else copy.importance[i] / 3
        score = (
            RELEVANCE_SHARE * relevance[i]
            + RECENCY_SHARE * recency
            + FREQUENCY_SHARE * frequency
            + IMPORTANCE_SHARE * importance
        )
        scored.append((score, i))
    scored.sort(key=lambda pair: -pair[0])
    picked = scored[offset : offset + limit]
    hits = [Hit(copy.memories[i], float(score), float(relevance[i])) for score, i in picked]
    cards = _entity_cards(copy, [i for _, i in picked], mask) if entity_cards else []
    return SearchResult(hits, cards)


def _search_inactive(
    prefix, *, status: str, limit: int, offset: int, scopes: Sequence[str] | None = None
) -> SearchResult:
    """Deprecated or archived memories (history and audit): newest first, no ranking."""
    path = SEP.join(prefix)
    rows = Memory.objects.all()
    if path:
        rows = rows.filter(Q(namespace=path) | Q(namespace__startswith=path + SEP))
    if scopes is not None:
        rows = rows.filter(scope__in=list(scopes))
    rows = (
        rows.filter(status=status)
        .defer("embedding")
        .order_by("-updated_at")[offset : offset + limit]
    )
    return SearchResult([Hit(m, 0.0, 0.0) for m in rows])


# --- What the companion always has at hand ----------------------------------------------------


def foundation_memories(*, person_id: uuid.UUID, at: datetime | None = None) -> list[Memory]:
    """Pinned facts about the person (up to 20), confirmed ones only."""
    at = at or timezone.now()
    return list(
        Memory.objects.filter(
            person_id=person_id, status=Memory.Status.ACTIVE, pinned=True, confirmed=True
        )
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=at))
        .defer("embedding")
        .order_by("-updated_at")[:FOUNDATION_LIMIT]
    )


def always_inject(*, person_id: uuid.UUID, at: datetime | None = None) -> list[Memory]:
    """The tier injected every turn: the person's name and their top confirmed preferences."""
    at = at or timezone.now()
    live = (
        Memory.objects.filter(person_id=person_id, status=Memory.Status.ACTIVE, confirmed=True)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=at))
        .defer("embedding")
    )
    # memory_key is encrypted (no prefix match in SQL): the person's few confirmed profile
    # facts are read and the name picked here, newest first as before.
    name = [
        m
        for m in live.filter(type=MemoryType.PROFILE).order_by("-updated_at")
        if m.memory_key.startswith("profile:name")
    ][:1]
    preferences = list(
        live.filter(type=MemoryType.PREFERENCE).order_by(
            "-pinned", "-importance", "-use_count", "-updated_at"
        )[:TOP_PREFERENCES]
    )
    return name + preferences


def turn_facts(
    *, person_id: uuid.UUID, message: str, related: int = 3, at: datetime | None = None
) -> list[Memory]:
    """Everything the per-turn prompt may hold, from the person's in-memory copy in one pass:
    name and top preferences (always), pinned facts (foundation), and the facts whose words match
    the message (keywords only: no embedding on the turn's path). Confirmed facts only.

    One indexed read (the generation) when the copy is current, instead of a query per tier.
    """
    at = at or timezone.now()
    from memory.facts.store import person_namespace

    copy = _copy_for(SEP.join(person_namespace(person_id)))
    try:
        if not copy.memories:
            return []
        live = (copy.expires > at.timestamp()) & copy.confirmed
        order: list[int] = []
        profile = _TYPE_CODES[MemoryType.PROFILE]
        names = [
            i
            for i in np.flatnonzero(live & (copy.type_code == profile))
            if copy.memories[i].memory_key.startswith("profile:name")
        ]
        order += names[:1]
        preference = np.flatnonzero(live & (copy.type_code == _TYPE_CODES[MemoryType.PREFERENCE]))
        order += sorted(
            preference,
            key=lambda i: (
                not copy.pinned[i],
                -copy.importance[i],
                -copy.memories[i].use_count,
                -copy.updated[i],
            ),
        )[:TOP_PREFERENCES]
        pinned = np.flatnonzero(live & copy.pinned)
        order += sorted(pinned, key=lambda i: -copy.updated[i])[:FOUNDATION_LIMIT]
        words = copy.keyword.scores(retrieval.tokenize(message)) if message else None
        if words is not None and words.size:
            words = np.where(live, words, 0)
            best = np.argsort(-words)[:related]
            order += [i for i in best if words[i] > 0]
        return [copy.memories[i] for i in dict.fromkeys(int(i) for i in order)]
    finally:
        copy.lock.release()
