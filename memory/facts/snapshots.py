"""Snapshots of search copies: a scope's built copy kept in the database as one encrypted value.

Building a scope's copy (memory/facts/search.py) opens three ciphertexts and tokenises each live
row: about 170 µs a row, so a process's first search of a scope of 100k memories took tens of
seconds. After a build, the copy's arrays (vectors, filter columns, ids, block layout, the
rows' keyword tokens as term ids, the BM25 postings, entity refs) are written one after another
in numpy's .npy format (plain dtypes only: nothing is ever unpickled), encrypted as one value bound
to its row (AES-GCM, memory/core/crypto.py) and stored with the scope's generation and epoch. A
cold start reads that one value and catches up by revision as a warm copy does.

What keeps it safe to use:
- written only if the scope is still at the generation and epoch the copy was built at, in one
  statement that locks the scope's row (PostgreSQL) or holds SQLite's write lock: a copy built
  before an erasure or a deletion is never written after it;
- deleted whenever rows are deleted from the scope (forgetting, expiry, erasure: the scope's
  epoch moves, `delete`), with the scope's row, and with the person (cascades);
- not used, and rebuilt from rows, if its epoch is not the scope's, its generation is ahead of
  the scope's, it does not decrypt, it names another row or scope, or it was made by other
  ranking code (`signature`: tokeniser, BM25 parameters, layout);
- rewritten under the new key by `rotate_keys` like every encrypted column (memory/reencrypt.py).
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import logging
import math
import uuid
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import DatabaseError, connection, transaction

from memory.core import crypto
from memory.core.fields import context_of
from memory.facts import ranking as retrieval
from memory.facts.models import MemorySnapshot
from memory.facts.namespaces import PERSON_ROOT, SEP

logger = logging.getLogger(__name__)

# Bump when what a snapshot holds, or how the copy reads it, changes.
FORMAT = 1
# AES-GCM in `cryptography` seals at most 2**31 - 1 bytes; a scope past ~1.3M memories is not
# snapshotted (it builds from its rows, as before).
MAX_BYTES = 2**31 - 2**20
CONTEXT = context_of(MemorySnapshot._meta.get_field("data"))
_IDS = uuid.UUID("6f1d3c52-2f0e-4d8c-9a57-1b0b8e6c2a41")
# Filter columns of the copy (search.py's `_columns`), saved as they are.
COLUMNS = (
    "ns_code",
    "type_code",
    "persona_code",
    "confirmed",
    "pinned",
    "importance",
    "use_count",
    "updated",
    "created",
    "expires",
    "has_vector",
)


@functools.cache
def signature() -> str:
    """What the saved tokens and postings depend on: the format, the tokeniser's output on a
    probe and its stopwords, and BM25's parameters. A snapshot made by other code is rebuilt."""
    probe = "Sarah's visiting the gardens: she loved dancing, happily, at 1940s tea-dances."
    index = retrieval.BM25Index([retrieval.tokenize(probe)])
    parts = [
        str(FORMAT),
        " ".join(retrieval.tokenize(probe)),
        " ".join(sorted(retrieval.STOPWORDS)),
        f"{index.k1} {index.b}",
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def snapshot_id(scope: str) -> uuid.UUID:
    """The row id of a scope's snapshot (its ciphertext is bound to it): the same in every
    process, so a rewrite keeps its row."""
    return uuid.uuid5(_IDS, scope)


# --- The copy as arrays ------------------------------------------------------------------------


class Ragged:
    """Per-row lists as a snapshot holds them (ids into a list of names, and each row's end),
    made into Python values only for the rows asked for; rows patched in since are appended.
    Tokens come back as lists (a rebuild reads them all), entity refs as tuples (a search reads
    those of its candidates)."""

    def __init__(self, names: list[str], flat: np.ndarray, ends: np.ndarray, *, kind=list):
        self.names, self.kind = names, kind
        self.flat, self.ends = flat.tolist(), ends.tolist()
        self.base = len(ends)
        self.added: list = []
        self._made: dict[tuple, tuple] = {}

    def __len__(self) -> int:
        return self.base + len(self.added)

    def __getitem__(self, i):
        i = int(i)
        if i >= self.base:
            return self.added[i - self.base]
        ids = self.flat[self.ends[i - 1] if i else 0 : self.ends[i]]
        if self.kind is list:
            return [self.names[t] for t in ids]
        key = tuple(ids)
        made = self._made.get(key)
        if made is None:
            made = self._made[key] = tuple(self.names[t] for t in ids)
        return made

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def append(self, row) -> None:
        self.added.append(row)


class Ids:
    """Row ids as a snapshot holds them (16 bytes a row), made into UUIDs only when asked."""

    def __init__(self, raw: bytes):
        self.raw = raw
        self.base = len(raw) // 16
        self.added: list[uuid.UUID] = []

    def __len__(self) -> int:
        return self.base + len(self.added)

    def __getitem__(self, i) -> uuid.UUID:
        i = int(i)
        if i >= self.base:
            return self.added[i - self.base]
        return uuid.UUID(bytes=self.raw[16 * i : 16 * i + 16])

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def append(self, key: uuid.UUID) -> None:
        self.added.append(key)


class Positions:
    """Slot of each row id (search.py's `_ScopeCopy.pos`), built on first use from the ids'
    bytes: a copy read from a snapshot and never written to never builds it."""

    def __init__(self, ids: Ids):
        self.ids = ids
        self._slots: dict[bytes, int] | None = None

    def _map(self) -> dict[bytes, int]:
        if self._slots is None:
            raw = self.ids.raw
            self._slots = {raw[i : i + 16]: i // 16 for i in range(0, len(raw), 16)}
            for i, key in enumerate(self.ids.added, self.ids.base):
                self._slots[key.bytes] = i
        return self._slots

    def __getitem__(self, key: uuid.UUID) -> int:
        return self._map()[key.bytes]

    def __setitem__(self, key: uuid.UUID, slot: int) -> None:
        self._map()[key.bytes] = slot

    def __contains__(self, key: uuid.UUID) -> bool:
        return key.bytes in self._map()

    def get(self, key: uuid.UUID, default=None):
        return self._map().get(key.bytes, default)

    def pop(self, key: uuid.UUID, default=None):
        return self._map().pop(key.bytes, default)


def _ragged(rows, vocabulary: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """(flat term ids, end offsets) of lists of terms."""
    lengths = np.fromiter((len(row) for row in rows), np.int64, len(rows))
    flat = np.fromiter((vocabulary[t] for row in rows for t in row), np.int32, int(lengths.sum()))
    return flat, np.cumsum(lengths)


def encode(copy) -> tuple[dict, dict[str, np.ndarray]]:
    """(plain values, arrays) of a copy just built (no retired or patched rows)."""
    n = copy.n
    index_meta, index_arrays = copy.keyword.base.state()
    vocabulary = copy.keyword.base.vocabulary
    tokens = list(copy.tokens) if isinstance(copy.tokens, Ragged) else copy.tokens
    token_flat, token_ends = _ragged(tokens, vocabulary)
    ref_names: dict[str, int] = {}
    for refs in copy.refs:
        for ref in refs:
            ref_names.setdefault(ref, len(ref_names))
    ref_flat, ref_ends = _ragged(copy.refs, ref_names)
    meta = {
        "signature": signature(),
        "scope": copy.scope,
        "n": n,
        "dims": copy.dims,
        "namespaces": copy.namespaces,
        "personas": copy.personas,
        "blocks": [[c, t, lo, hi] for (c, t), (lo, hi) in copy.blocks.items()],
        "refs": list(ref_names),
        "index": index_meta,
    }
    arrays = {
        "ids": np.frombuffer(
            copy.ids.raw
            if isinstance(copy.ids, Ids) and not copy.ids.added
            else b"".join(key.bytes for key in copy.ids),
            np.uint8,
        ).reshape(n, 16),
        "vectors": copy.vectors[:n],
        "token_flat": token_flat,
        "token_ends": token_ends,
        "ref_flat": ref_flat,
        "ref_ends": ref_ends,
        **{f"column_{name}": getattr(copy, name)[:n] for name in COLUMNS},
        **{f"index_{name}": value for name, value in index_arrays.items()},
    }
    return meta, arrays


@dataclass
class Decoded:
    """A copy's state read from a snapshot, for search.py's `_ScopeCopy` to take."""

    n: int
    dims: int
    ids: Ids
    vectors: np.ndarray
    columns: dict[str, np.ndarray]
    namespaces: list[str]
    personas: list[str]
    blocks: dict[tuple[bool, int], tuple[int, int]]
    tokens: Ragged
    refs: Ragged
    by_entity: dict[str, list[int]]
    index: retrieval.BM25Index


def decode(meta: dict, arrays: dict[str, np.ndarray]) -> Decoded:
    """A copy's state from `unpack`'s arrays. The vectors stay a view of the opened snapshot
    (no copy: read-only, a write grows them into a new array); ids, tokens and entity refs
    become Python values only for the rows asked for."""
    n, dims = int(meta["n"]), int(meta["dims"])
    ids = arrays["ids"]
    vectors = arrays["vectors"]
    if ids.shape != (n, 16) or vectors.shape != (n, dims) or vectors.dtype != np.float32:
        raise ValueError("A snapshot's ids or vectors do not match its size.")
    columns = {name: arrays[f"column_{name}"].copy() for name in COLUMNS}
    if any(len(column) != n for column in columns.values()):
        raise ValueError("A snapshot's columns do not match its size.")
    index = retrieval.BM25Index.from_state(
        meta["index"],
        {
            name: arrays[f"index_{name}"]
            for name in ("lengths", "docs", "weights", "df", "starts", "idf")
        },
    )
    token_ends = arrays["token_ends"]
    if len(token_ends) != n or index.size != n:
        raise ValueError("A snapshot's tokens do not match its size.")
    tokens = Ragged(meta["index"]["vocabulary"], arrays["token_flat"], token_ends)
    names = meta["refs"]
    flat, ends = arrays["ref_flat"], arrays["ref_ends"]
    if len(ends) != n:
        raise ValueError("A snapshot's entity refs do not match its size.")
    refs = Ragged(names, flat, ends, kind=tuple)
    by_entity: dict[str, list[int]] = defaultdict(list)
    if len(flat):
        slots = np.repeat(np.arange(n), np.diff(ends, prepend=0))
        order = np.argsort(flat, kind="stable")
        bounds = np.flatnonzero(np.diff(flat[order])) + 1
        for group in np.split(order, bounds):
            by_entity[names[int(flat[group[0]])]] = slots[group].tolist()
    return Decoded(
        n=n,
        dims=dims,
        ids=Ids(ids.tobytes()),
        vectors=vectors,
        columns=columns,
        namespaces=list(meta["namespaces"]),
        personas=list(meta["personas"]),
        blocks={(bool(c), int(t)): (int(lo), int(hi)) for c, t, lo, hi in meta["blocks"]},
        tokens=tokens,
        refs=refs,
        by_entity=by_entity,
        index=index,
    )


def pack(meta: dict, arrays: dict[str, np.ndarray]) -> bytes:
    """The meta (JSON, as a uint8 array) then every array, each in the .npy format, one after
    another (`np.lib.format`, allow_pickle=False: plain dtypes only)."""
    buffer = io.BytesIO()
    meta = {**meta, "arrays": list(arrays)}
    header = np.frombuffer(json.dumps(meta, separators=(",", ":")).encode(), np.uint8)
    for array in (header, *arrays.values()):
        np.lib.format.write_array(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


def _read(view: memoryview, at: int) -> tuple[np.ndarray, int]:
    """The .npy array at `at` as a view of `view` (no copy), and where the next one starts."""
    stream = io.BytesIO(view[at : at + 4096])
    version = np.lib.format.read_magic(stream)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
    else:
        raise ValueError("A snapshot array has an unknown .npy version.")
    if dtype.hasobject or fortran:
        raise ValueError("A snapshot array holds objects.")  # never unpickled
    count = math.prod(shape)
    start = at + stream.tell()
    array = np.frombuffer(view, dtype=dtype, count=count, offset=start).reshape(shape)
    return array, start + count * dtype.itemsize


def unpack(data: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    view = memoryview(data)
    header, at = _read(view, 0)
    meta = json.loads(header.tobytes())
    arrays = {}
    for name in meta.pop("arrays"):
        arrays[name], at = _read(view, at)
    if at != len(data):
        raise ValueError("A snapshot has bytes after its arrays.")
    return meta, arrays


# --- In the database ---------------------------------------------------------------------------


@dataclass
class Stored:
    generation: int
    epoch: int
    meta: dict
    arrays: dict[str, np.ndarray]


def read(scope: str, *, generation: int, epoch: int) -> Stored | None:
    """The scope's snapshot if it can stand for the scope's rows at (generation, epoch) once
    caught up; None when there is none, or it is stale, foreign or unreadable (build from rows)."""
    with _cursor() as cursor:
        _execute(
            cursor,
            "SELECT id, generation, epoch, data FROM memory_snapshots WHERE scope = %s",
            [scope],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    key, saved_generation, saved_epoch, data = row
    if saved_epoch != epoch or saved_generation > generation:
        return None  # rows were deleted since (it is deleted then too), or the scope is new
    try:
        data = bytes(data)
        if not crypto.is_encrypted_bytes(data):
            raise crypto.DecryptionError("A search snapshot is not encrypted.")
        plain, bound = crypto.keyring().decrypt_bytes_bound(data, context=CONTEXT)
        expected = str(uuid.UUID(str(key)))
        if bound != expected or expected != str(snapshot_id(scope)):
            raise crypto.DecryptionError("A search snapshot is bound to another row.")
        meta, arrays = unpack(plain)
        if meta.get("signature") != signature() or meta.get("scope") != scope:
            return None
    except (crypto.DecryptionError, ValueError, KeyError, OSError):
        logger.warning("A search snapshot could not be read; the copy is built from its rows.")
        return None
    return Stored(saved_generation, saved_epoch, meta, arrays)


def _person_of(scope: str) -> uuid.UUID | None:
    parts = scope.split(SEP)
    if len(parts) == 2 and parts[0] == PERSON_ROOT:
        try:
            return uuid.UUID(parts[1])
        except ValueError:
            return None
    return None


def write(copy) -> bool:
    """Save a copy just built (at `copy.generation`, `copy.epoch`), if the scope is still there
    and the copy is large enough to be worth it. False when nothing was written."""
    scope = copy.scope
    if copy.n < settings.CLARA_SEARCH_SNAPSHOT_MIN_ROWS:
        return False
    payload = pack(*encode(copy))
    if len(payload) > MAX_BYTES:
        return False
    key = snapshot_id(scope)
    data = crypto.keyring().encrypt_bytes(payload, context=CONTEXT, row=str(key))
    person = _person_of(scope)
    uuid_field = MemorySnapshot._meta.pk
    people = MemorySnapshot._meta.get_field("person").related_model._meta.db_table
    # Only while the scope is at the copy's generation and epoch: in one statement that locks
    # the scope's row (PostgreSQL waits for a writer of the scope, then sees its change) or
    # under SQLite's single writer, so a copy built before an erasure is never written after it.
    lock = " FOR SHARE OF s" if connection.vendor == "postgresql" else ""
    sql = (
        "INSERT INTO memory_snapshots (id, scope, person_id, generation, epoch, data) "
        f"SELECT %s, s.scope, (SELECT p.id FROM {people} p WHERE p.id = %s), "  # noqa: S608
        "s.generation, s.epoch, %s FROM memory_scopes s "
        f"WHERE s.scope = %s AND s.generation = %s AND s.epoch = %s{lock} "
        "ON CONFLICT (scope) DO UPDATE SET id = excluded.id, person_id = excluded.person_id, "
        "generation = excluded.generation, epoch = excluded.epoch, data = excluded.data"
    )
    params = [
        uuid_field.get_db_prep_value(key, connection),
        uuid_field.get_db_prep_value(person, connection) if person else None,
        data,
        scope,
        copy.generation,
        copy.epoch,
    ]
    try:
        with transaction.atomic(), _cursor() as cursor:
            _execute(cursor, sql, params)
            return cursor.rowcount > 0
    except _ERRORS:
        # A cache: a search never fails for want of one (the next build writes it).
        logger.warning("A search snapshot could not be written.", exc_info=True)
        return False


def _cursor():
    """A cursor for the one large value. On PostgreSQL a psycopg cursor binding on the server,
    so the value travels as binary: Django's cursors inline parameters into the SQL text, which
    doubles a bytea (hex) and had the server parse a 340 MB literal (12 s at 100k memories)."""
    if connection.vendor != "postgresql":
        return connection.cursor()
    import psycopg

    connection.ensure_connection()
    return psycopg.Cursor(connection.connection)


def _execute(cursor, sql: str, params: list) -> None:
    if connection.vendor == "postgresql":
        # Results in binary too: a bytea comes back as its bytes, not as hex text to decode.
        cursor.execute(sql, params, binary=True)
    else:
        cursor.execute(sql, params)


def _errors() -> tuple[type[Exception], ...]:
    try:
        import psycopg
    except ImportError:  # pragma: no cover - SQLite-only installs
        return (DatabaseError,)
    return (DatabaseError, psycopg.Error)


_ERRORS = _errors()


def delete(scope: str) -> None:
    """Drop the scope's snapshot (rows were deleted from it: it must not keep them)."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM memory_snapshots WHERE scope = %s", [scope])
