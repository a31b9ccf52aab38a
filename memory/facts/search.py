"""Hybrid search over the memory store: meaning, keywords and the blend of recency, use and importance.

A scope's live memories (one person's, or one agent's store) are held in process memory as
numpy arrays: a matrix of embeddings, a keyword index, and columns for the filters. Each search
first reads the scope's generation (one indexed row); when another process has written since,
the copy catches up by reading only the rows whose revision is newer, or reloads after a
deletion. Searching 10k memories is then a matrix-vector product and a few masks.

A copy holds what ranking needs (vectors, filter columns, keyword tokens, entity refs), read from
those columns alone; the full Memory of a row is read when a search returns it (or filters on its
metadata), and kept. Rows are grouped by (confirmed, type) so the common filters multiply only
their blocks.

Ranking, for the candidates that pass the filters:
  relevance = SIMILARITY_WEIGHT * cosine + KEYWORD_WEIGHT * keyword score (BM25, scaled to 0..1)
  score     = RELEVANCE_SHARE * relevance + recency (14-day half-life) + frequency (how many of
              the candidates share its entities) + importance, with the weights below.
`threshold` cuts on relevance, so a very important but unrelated fact never passes as a match.
"""

import json
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
from django.db.models import Q
from django.utils import timezone

from memory.conversations.sql import fetch
from memory.core import metrics
from memory.core.embeddings import blas_threads, get_embedder
from memory.core.errors import Invalid
from memory.facts import ranking as retrieval
from memory.facts import snapshots
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

    def __init__(self, docs: list[list[str]], *, index: retrieval.BM25Index | None = None):
        # `index`: one made already (a snapshot's), instead of indexing `docs`.
        self.base = index if index is not None else retrieval.BM25Index(docs)
        self.base_size = self.base.size
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


# Bytes a row costs beyond its vector (its id, columns, tokens, entity refs, index postings, and
# the Memory of rows a search returned): resident memory grew 2.8 KB a memory at 1,000 scopes of
# 50, 1.5 KB of it the vector (bench/search_memory.py, docs/benchmarks.md).
ROW_BYTES = 1_200
# A Memory object read for a search (its decrypted strings and dicts).
MEMORY_BYTES = 4_000


def _record(m: Memory) -> tuple:
    return (
        m.id,
        m.namespace,
        _TYPE_CODES.get(m.type, -1),
        m.persona,
        m.confirmed,
        m.pinned,
        m.importance,
        m.use_count,
        m.updated_at.timestamp(),
        m.created_at.timestamp(),
        m.expires_at.timestamp() if m.expires_at else math.inf,
        m.embedding,
        retrieval.tokenize(m.content),
        tuple(m.entity_refs),
    )


def _load_records(scope: str) -> list[tuple]:
    """A scope's live rows as records, reading only the columns ranking needs.

    The encrypted columns are read as stored (no ORM object, no converter) and opened here with
    the same keyring and the same row check as an ORM load: a value moved from another row
    fails. The rest of a Memory (key, metadata, labels...) is read only for the rows a search
    returns or filters on (_Rows)."""
    from django.db.models import BinaryField, ExpressionWrapper, F, JSONField, TextField

    from memory.core import crypto
    from memory.core.fields import context_of

    def raw(name, output):
        return ExpressionWrapper(F(name), output_field=output)

    fields = {f.name: f for f in Memory._meta.concrete_fields}
    ctx_embedding = context_of(fields["embedding"])
    ctx_content = context_of(fields["content"])
    ctx_refs = context_of(fields["entity_refs"])
    keyring = crypto.keyring()
    decrypt_bytes = keyring.decrypt_bytes_bound
    decrypt = keyring.decrypt_bound
    rows = Memory.objects.filter(scope=scope, status=Memory.Status.ACTIVE).values_list(
        "id",
        "namespace",
        "type",
        "persona",
        "confirmed",
        "pinned",
        "importance",
        "use_count",
        "updated_at",
        "created_at",
        "expires_at",
        raw("embedding", BinaryField()),
        raw("content", TextField()),
        raw("entity_refs", JSONField()),
    )
    tokenize = retrieval.tokenize
    codes = _TYPE_CODES
    out = []
    for (
        id_,
        namespace,
        type_,
        persona,
        confirmed,
        pinned,
        importance,
        use_count,
        updated,
        created,
        expires,
        embedding,
        content,
        refs,
    ) in rows:
        row = str(id_)
        if embedding is not None:
            embedding, bound = decrypt_bytes(bytes(embedding), context=ctx_embedding)
            crypto.check_row(bound, row, context=ctx_embedding)
        if content is not None:
            content, bound = decrypt(content, context=ctx_content)
            crypto.check_row(bound, row, context=ctx_content)
        if crypto.is_encrypted(refs):
            refs, bound = decrypt(refs, context=ctx_refs)
            crypto.check_row(bound, row, context=ctx_refs)
            refs = json.loads(refs)
        out.append(
            (
                id_,
                namespace,
                codes.get(type_, -1),
                persona,
                confirmed,
                pinned,
                importance,
                use_count,
                updated.timestamp(),
                created.timestamp(),
                expires.timestamp() if expires else math.inf,
                embedding,
                tokenize(content or ""),
                tuple(refs or ()),
            )
        )
    # In id order (time order: uuid7), the order a copy that caught up keeps them in, so rows
    # that tie in a ranking come out the same in every process and on either database. Sorted
    # here: in SQL the database would sort every selected column, ciphertexts included.
    keys = np.frombuffer(b"".join(record[0].bytes for record in out), dtype="V16")
    return [out[i] for i in np.argsort(keys, kind="stable")] if len(out) > 1 else out


class _Rows:
    """The copy's rows as Memory objects, read from the database only when a search needs them
    (its hits, rows it filters on metadata, entity-card facts), a batch per query, then kept.
    Indexed by slot like the copy's arrays; `len` counts retired slots too."""

    BATCH = 500

    def __init__(self, copy: "_ScopeCopy", loaded: dict[int, Memory] | None = None):
        self.copy = copy
        self.loaded: dict[int, Memory] = loaded or {}

    def __len__(self) -> int:
        return self.copy.n

    def __bool__(self) -> bool:
        return self.copy.n > 0

    def __getitem__(self, slot) -> Memory:
        slot = int(slot)
        memory = self.loaded.get(slot)
        if memory is None:
            self.load([slot])
            memory = self.loaded[slot]
        return memory

    def __iter__(self) -> Iterator[Memory]:
        self.load(range(self.copy.n))
        return (self.loaded[i] for i in range(self.copy.n))

    def load(self, slots) -> None:
        missing: dict[uuid.UUID, list[int]] = defaultdict(list)
        for slot in slots:
            slot = int(slot)
            if slot not in self.loaded:
                missing[self.copy.ids[slot]].append(slot)
        keys = list(missing)
        for start in range(0, len(keys), self.BATCH):
            for memory in Memory.objects.filter(id__in=keys[start : start + self.BATCH]):
                for slot in missing.pop(memory.id, ()):
                    self.loaded[slot] = memory
        # Retired slots of rows deleted since: a blank row (masks never let it through).
        for key, left in missing.items():
            for slot in left:
                self.loaded[slot] = Memory(
                    id=key, content="", metadata={}, entity_refs=[], embedding=None
                )


class _ScopeCopy:
    """The live memories of one scope as arrays. Built once from the database; a write patches
    the rows it changed (a changed or removed row's slot is retired, its new version appended),
    and the arrays are rebuilt (from the copy itself) only when retired and added slots pass a
    share of the copy."""

    def __init__(self, scope: str):
        self.scope = scope
        self.generation = -1
        self.epoch = None
        self.lock = threading.Lock()
        self.n = 0
        self._nbytes = 0
        self.counted = 0  # nbytes when eviction last counted it (_evict)
        self.memories = _Rows(self)
        self.ids: list[uuid.UUID] = []
        self.tokens: list[list[str]] = []
        self.refs: list[tuple[str, ...]] = []
        self.pos: dict[uuid.UUID, int] = {}
        self.retired = 0
        self._pending: dict[uuid.UUID, Memory | None] = {}
        self._reload = True
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
            self._reload = True
            self._pending = {}
        else:
            changed = Memory.objects.filter(scope=self.scope, revision__gt=self.generation)
            for memory in changed.order_by("id"):
                self._pending[memory.id] = memory if memory.status == Memory.Status.ACTIVE else None
        self.generation, self.epoch = generation, epoch

    def arrays(self) -> None:
        if not self._reload and not self._pending:
            return
        self.derived = {}
        built = False
        if self._reload and not self._restore():
            self._build(_load_records(self.scope), {})
            built = True
        if self._pending:
            limit = max(256, (self.n - self.retired) // 10)
            if self.retired + len(self._pending) + self.keyword.added > limit or not self._patch():
                self._rebuild()
                built = True
        self._reload = False
        self._pending = {}
        self._nbytes = int(self._vectors.nbytes) + self.n * ROW_BYTES
        if built:
            # Another process's first search of this scope reads this instead of every row.
            snapshots.write(self)

    def _restore(self) -> bool:
        """The copy from the scope's snapshot (memory/facts/snapshots.py), with the rows written
        since it was taken pending; False (build from rows) when there is no usable one."""
        stored = snapshots.read(self.scope, generation=self.generation, epoch=self.epoch)
        if stored is None:
            return False
        try:
            state = snapshots.decode(stored.meta, stored.arrays)
        except (ValueError, KeyError, TypeError):
            return False
        if state.dims != 1 and state.dims != get_embedder().dim:
            return False  # made with another embedding model: its vectors compare with nothing
        n = state.n
        self.base = self.n = n
        self.retired = 0
        self.memories = _Rows(self)
        self.ids = state.ids
        self.pos = snapshots.Positions(state.ids)
        self.tokens = state.tokens
        self.refs = state.refs
        self.by_entity = state.by_entity
        self.blocks = state.blocks
        self.dims = state.dims
        self.namespaces = state.namespaces
        self._ns_codes = {ns: i for i, ns in enumerate(self.namespaces)}
        self.personas = state.personas
        self.persona_codes = {persona: i for i, persona in enumerate(self.personas)}
        # The vectors as the snapshot holds them (read-only, no copy); the first write grows
        # them and the columns into new arrays (_patch).
        self._vectors = state.vectors
        self._columns = dict(state.columns)
        self._columns["alive"] = np.ones(n, bool)
        self.keyword = _Keywords([], index=state.index)
        self._views()
        changed = Memory.objects.filter(scope=self.scope, revision__gt=stored.generation)
        for memory in changed.order_by("id"):
            self._pending[memory.id] = memory if memory.status == Memory.Status.ACTIVE else None
        return True

    @property
    def nbytes(self) -> int:
        """Estimated bytes held: the arrays and per-row data, and the Memory objects read so
        far (a scope searched for long may come to hold many of them)."""
        return self._nbytes + len(self.memories.loaded) * MEMORY_BYTES

    def _rebuild(self) -> None:
        """The live rows, changed ones in their new version, and the new rows, in id order as
        a fresh load reads them: a build from the copy's own arrays, no read."""
        rows: list[tuple[tuple, Memory | None]] = []
        pending = dict(self._pending)
        for i in np.flatnonzero(self.alive):
            key = self.ids[i]
            if key in pending:
                memory = pending.pop(key)
                if memory is not None:
                    rows.append((_record(memory), memory))
                continue
            rows.append((self._slot_record(int(i)), self.memories.loaded.get(i)))
        for memory in pending.values():
            if memory is not None:
                rows.append((_record(memory), memory))
        rows.sort(key=lambda row: row[0][0])
        loaded = {i: memory for i, (_, memory) in enumerate(rows) if memory is not None}
        self._build([record for record, _ in rows], loaded)

    def _slot_record(self, i: int) -> tuple:
        persona = self.personas[self.persona_code[i]] if self.persona_code[i] >= 0 else None
        return (
            self.ids[i],
            self.namespaces[self.ns_code[i]],
            int(self.type_code[i]),
            persona,
            bool(self.confirmed[i]),
            bool(self.pinned[i]),
            int(self.importance[i]),
            int(self.use_count[i]),
            float(self.updated[i]),
            float(self.created[i]),
            float(self.expires[i]),
            self.vectors[i] if self.has_vector[i] else None,
            self.tokens[i],
            self.refs[i],
        )

    def _build(self, records: list[tuple], loaded: dict[int, Memory]) -> None:
        n = len(records)
        # Rows grouped by (confirmed first, type), in their order within a group: the common
        # filters (confirmed facts only, a few types) then select whole blocks, and the matrix
        # product reads only those rows (_ScopeCopy.spans).
        order = sorted(range(n), key=lambda i: (not records[i][4], records[i][2]))
        records = [records[i] for i in order]
        slot_of = {old: new for new, old in enumerate(order)}
        loaded = {slot_of[old]: memory for old, memory in loaded.items()}
        self.blocks: dict[tuple[bool, int], tuple[int, int]] = {}
        for i, r in enumerate(records):
            lo, _ = self.blocks.get((r[4], r[2]), (i, i))
            self.blocks[(r[4], r[2])] = (lo, i + 1)
        self.base = n
        self.n, self.retired = n, 0
        self.memories = _Rows(self, loaded)
        self.ids = [r[0] for r in records]
        self.pos = {key: i for i, key in enumerate(self.ids)}
        self.tokens = [r[12] for r in records]
        self.refs = [r[13] for r in records]
        # Only vectors of the query model's width compare with a query; a scope may also hold
        # rows a LangGraph store embedded with its own model, or as several vectors.
        self.dims = (
            get_embedder().dim if any(r[11] is not None and len(r[11]) for r in records) else 1
        )
        width = self.dims * 4
        zero = bytes(width)
        # One join and one frombuffer instead of a row copy per memory; a missing or odd-sized
        # embedding is a zero row (no similarity), as before. Room for writes to come.
        blobs = [_vector_bytes(r[11], width) for r in records]
        blob = b"".join(b if b is not None else zero for b in blobs)
        capacity = max(16, n + n // 8)
        self._vectors = np.zeros((capacity, self.dims), np.float32)
        self._vectors[:n] = np.frombuffer(blob, dtype="<f4").reshape(n, self.dims)
        self.namespaces = sorted({r[1] for r in records})
        self._ns_codes = {ns: i for i, ns in enumerate(self.namespaces)}
        self.personas: list[str] = []
        self.persona_codes: dict[str, int] = {}
        self._columns = {
            "ns_code": np.zeros(capacity, np.int32),
            "type_code": np.zeros(capacity, np.int16),
            "persona_code": np.zeros(capacity, np.int32),
            "confirmed": np.zeros(capacity, bool),
            "pinned": np.zeros(capacity, bool),
            "importance": np.zeros(capacity, np.float32),
            "use_count": np.zeros(capacity, np.int64),
            "updated": np.zeros(capacity, np.float64),
            "created": np.zeros(capacity, np.float64),
            "expires": np.zeros(capacity, np.float64),
            "alive": np.zeros(capacity, bool),
            "has_vector": np.zeros(capacity, bool),
        }
        columns = self._columns
        ns_codes = self._ns_codes
        columns["ns_code"][:n] = np.fromiter((ns_codes[r[1]] for r in records), np.int32, n)
        columns["type_code"][:n] = np.fromiter((r[2] for r in records), np.int16, n)
        columns["persona_code"][:n] = np.fromiter(
            (self._persona_code(r[3]) for r in records), np.int32, n
        )
        for name, at in (
            ("confirmed", 4),
            ("pinned", 5),
            ("importance", 6),
            ("use_count", 7),
            ("updated", 8),
            ("created", 9),
            ("expires", 10),
        ):
            columns[name][:n] = np.fromiter((r[at] for r in records), columns[name].dtype, n)
        columns["alive"][:n] = True
        columns["has_vector"][:n] = np.fromiter((b is not None for b in blobs), bool, n)
        self.by_entity: dict[str, list[int]] = defaultdict(list)
        for i, refs in enumerate(self.refs):
            for ref in refs:
                self.by_entity[ref].append(i)
        self.keyword = _Keywords(self.tokens)
        self._views()

    def spans(self, type_codes: frozenset[int] | None, confirmed: bool | None) -> list:
        """The slot ranges whose rows can pass these filters (whole blocks of the built rows,
        then every row patched in since), adjacent ones merged."""
        if type_codes is None and confirmed is None:
            return [(0, self.n)]
        picked = sorted(
            span
            for (is_confirmed, code), span in self.blocks.items()
            if (confirmed is None or is_confirmed == confirmed)
            and (type_codes is None or code in type_codes)
        )
        if self.n > self.base:
            picked.append((self.base, self.n))
        merged: list[tuple[int, int]] = []
        for lo, hi in picked:
            if merged and merged[-1][1] == lo:
                merged[-1] = (merged[-1][0], hi)
            else:
                merged.append((lo, hi))
        return merged

    def _persona_code(self, persona: str | None) -> int:
        if persona is None:
            return -1
        code = self.persona_codes.get(persona)
        if code is None:
            code = self.persona_codes[persona] = len(self.personas)
            self.personas.append(persona)
        return code

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
                # Room for an eighth more: a copy is rebuilt before a tenth of it has changed.
                grown = i + max(16, i // 8)
                self._vectors = np.resize(self._vectors, (grown, self.dims))
                for name in self._columns:
                    self._columns[name] = np.resize(self._columns[name], grown)
            record = _record(memory)
            vector = _vector_bytes(record[11], width)
            self._vectors[i] = np.frombuffer(vector, dtype="<f4") if vector is not None else 0.0
            namespace = self._ns_codes.get(record[1])
            if namespace is None:
                namespace = self._ns_codes[record[1]] = len(self.namespaces)
                self.namespaces.append(record[1])
            columns = self._columns
            columns["ns_code"][i] = namespace
            columns["type_code"][i] = record[2]
            columns["persona_code"][i] = self._persona_code(record[3])
            columns["confirmed"][i] = record[4]
            columns["pinned"][i] = record[5]
            columns["importance"][i] = record[6]
            columns["use_count"][i] = record[7]
            columns["updated"][i] = record[8]
            columns["created"][i] = record[9]
            columns["expires"][i] = record[10]
            columns["alive"][i] = True
            columns["has_vector"][i] = vector is not None
            for ref in record[13]:
                self.by_entity[ref].append(i)
            self.keyword.add(record[12])
            self.memories.loaded[i] = memory
            self.ids.append(memory.id)
            self.tokens.append(record[12])
            self.refs.append(record[13])
            self.pos[memory.id] = i
            self.n += 1
        self._views()
        return True


def _vector_bytes(value, width: int) -> bytes | None:
    """A row's embedding as `width` bytes, or None (none, or another model's width)."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        value = value.astype("<f4").tobytes()
    value = bytes(value)
    return value if value and len(value) == width else None


_copies: "OrderedDict[str, _ScopeCopy]" = OrderedDict()
_copies_lock = threading.Lock()
# The sum of the copies' bytes as each was last counted (`_ScopeCopy.counted`): eviction runs on
# every search, and summing a thousand people's copies each time was a tenth of a web process's
# CPU under load (bench/load_test.py, py-spy). A copy grows only while it is searched, so it is
# counted again each time it is.
_counted_total = 0


def _budget_bytes() -> int:
    return settings.CLARA_SEARCH_MEMORY_MB * 1024 * 1024


_SCOPE_STATE = "SELECT generation, epoch FROM memory_scopes WHERE scope = %s"


def _person_scope(person_id: uuid.UUID) -> str:
    from memory.facts.store import person_namespace

    return SEP.join(person_namespace(person_id))


def turn_scope_read(person_id: uuid.UUID) -> tuple[str, list]:
    """The read that tells whether this process's copy of the person's memories is current
    (`turn_facts(scope_rows=...)`), for a caller that sends it with its own reads."""
    return _SCOPE_STATE, [_person_scope(person_id)]


def _copy_for(scope: str, scope_rows: list[tuple] | None = None) -> _ScopeCopy:
    """The scope's copy, brought up to date. `scope_rows`: `_SCOPE_STATE`'s rows for `scope`,
    when the caller read them with its own reads."""
    if scope_rows is None:
        scope_rows = fetch((_SCOPE_STATE, [scope]))
    generation, epoch = scope_rows[0] if scope_rows else (0, 0)
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
    global _counted_total
    budget = _budget_bytes()
    with _copies_lock:
        kept = _copies.get(keep)
        if kept is not None:
            now = kept.nbytes
            _counted_total += now - kept.counted
            kept.counted = now
        while _counted_total > budget and len(_copies) > 1:
            scope, oldest = next(iter(_copies.items()))
            if scope == keep:
                _copies.move_to_end(scope)
                continue
            del _copies[scope]
            _counted_total -= oldest.counted
        total = _counted_total
    metrics.SEARCH_MEMORY_BYTES.set(total)


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
    global _counted_total
    with _copies_lock:
        _copies.clear()
        _counted_total = 0
    metrics.SEARCH_MEMORY_BYTES.set(0)


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
    picked: list[tuple[str, list[int]]] = []
    for i in hits:
        for ref in copy.refs[i]:
            if ref in seen:
                continue
            seen.add(ref)
            rows = [
                j
                for j in copy.by_entity.get(ref, ())
                if mask[j] and (copy.importance[j] >= 2 or copy.pinned[j])
            ]
            rows.sort(key=lambda j: (not copy.pinned[j], -copy.importance[j], -copy.created[j]))
            picked.append((ref, rows[:ENTITY_CARD_FACTS]))
    copy.memories.load(j for _, rows in picked for j in rows)
    for ref, rows in picked:
        facts = [copy.memories[j].content for j in rows]
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
        if metadata:
            copy.memories.load(order)
            order = [i for i in order if metadata_ok(i)]
        picked = order[offset : offset + limit]
        copy.memories.load(picked)
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
        query_vector = query_vector.astype(np.float32)
        spans = copy.spans(frozenset(_TYPE_CODES[t] for t in types) if types else None, confirmed)
        with blas_threads(1):
            if spans == [(0, copy.n)]:
                similarity = copy.vectors @ query_vector
            else:
                # Only the rows the filters can keep; the others are masked out below.
                similarity = np.zeros(copy.n, np.float32)
                for lo, hi in spans:
                    np.matmul(copy.vectors[lo:hi], query_vector, out=similarity[lo:hi])
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
    top = top[np.argsort(-relevance[top])]
    top = top[np.isfinite(relevance[top])]
    if metadata:
        copy.memories.load(top)
        top = np.asarray([i for i in top if metadata_ok(i)], dtype=np.intp)
    top = top[:wanted]
    if not len(top):
        return SearchResult([])

    # Frequency: how many of the candidates share an entity with this one (a fact about someone
    # the person talks about a lot matters more), scaled to 0..1.
    refs = [copy.refs[i] for i in top]
    ref_counts: dict[str, int] = defaultdict(int)
    for row in refs:
        for ref in row:
            ref_counts[ref] += 1
    most = max(ref_counts.values(), default=1)
    frequency = np.fromiter(
        (max((ref_counts[r] for r in row), default=0) / most for row in refs), np.float64, len(top)
    )
    # The blend, for all candidates at once, in float64 (the relevance's float32, where the
    # keyword part made it so, widens exactly) and in the same order of sums as one at a time.
    age_days = np.maximum(0.0, (now - copy.updated[top]) / 86400)
    recency = 0.5 ** (age_days / HALF_LIFE_DAYS)
    importance = np.where(
        copy.pinned[top],
        IMPORTANCE_SHARE * 1.0,
        (IMPORTANCE_SHARE * (copy.importance[top] / 3)).astype(np.float64),
    )
    score = (
        RELEVANCE_SHARE * relevance[top]
        + RECENCY_SHARE * recency
        + FREQUENCY_SHARE * frequency
        + importance
    )
    order = np.argsort(-score, kind="stable")[offset : offset + limit]
    picked = top[order]
    copy.memories.load(picked)
    hits = [
        Hit(copy.memories[i], float(score[k]), float(relevance[i]))
        for k, i in zip(order, picked, strict=True)
    ]
    cards = _entity_cards(copy, list(picked), mask) if entity_cards else []
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


def pinned_beyond_prompt(*, person_id: uuid.UUID, at: datetime | None = None) -> int:
    """How many confirmed, pinned facts do not reach the per-turn prompt: past FOUNDATION_LIMIT
    the most recently changed are given, and staff are told how many are left out."""
    at = at or timezone.now()
    pinned = (
        Memory.objects.filter(
            person_id=person_id, status=Memory.Status.ACTIVE, pinned=True, confirmed=True
        )
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=at))
        .count()
    )
    return max(0, pinned - FOUNDATION_LIMIT)


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
    *,
    person_id: uuid.UUID,
    message: str,
    related: int = 3,
    at: datetime | None = None,
    scope_rows: list[tuple] | None = None,
) -> list[Memory]:
    """Everything the per-turn prompt may hold, from the person's in-memory copy in one pass:
    name and top preferences (always), pinned facts (foundation), and the facts whose words match
    the message (keywords only: no embedding on the turn's path). Confirmed facts only.

    One indexed read (the generation) when the copy is current, instead of a query per tier;
    none when the caller passes its rows (`turn_scope_read`, read with the turn's own reads).
    """
    at = at or timezone.now()
    copy = _copy_for(_person_scope(person_id), scope_rows)
    try:
        if not copy.memories:
            return []
        live = (copy.expires > at.timestamp()) & copy.confirmed
        order: list[int] = []
        profile = _TYPE_CODES[MemoryType.PROFILE]
        profiles = np.flatnonzero(live & (copy.type_code == profile))
        copy.memories.load(profiles)
        names = [i for i in profiles if copy.memories[i].memory_key.startswith("profile:name")]
        order += names[:1]
        preference = np.flatnonzero(live & (copy.type_code == _TYPE_CODES[MemoryType.PREFERENCE]))
        order += sorted(
            preference,
            key=lambda i: (
                not copy.pinned[i],
                -copy.importance[i],
                -copy.use_count[i],
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
        order = list(dict.fromkeys(int(i) for i in order))
        copy.memories.load(order)
        return [copy.memories[i] for i in order]
    finally:
        copy.lock.release()
