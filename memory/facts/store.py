"""The long-term memory store: put/upsert, get, delete, history, namespaces, and the caregiver's controls.

What Clara remembers about a person lives here as `Memory` rows under the namespace
("memories", "<person id>", <type>). Other namespaces (an agent's own, a LangGraph graph's) work
the same way without a person attached.

Rules the store keeps, whoever writes:
- one active row per (namespace, key) and per (namespace, memory_key), backed by partial unique
  constraints, and every write to a scope holds that scope's row lock (memory_scopes), so two
  concurrent upserts of one fact queue up instead of racing;
- the same fact said again (same key or memory_key, similar content) reinforces the row: its
  use count goes up and, with use, its importance (a fact mentioned ten times matters more than
  one mentioned once); a different value supersedes it: the old row is deprecated and kept as
  history, the new one points back to it;
- feelings, events and other small talk expire (MEMORY_TTL); facts and preferences don't;
- nothing sensitive is stored (memory/core/sensitive.py runs on every content);
- extracted facts start unconfirmed; only a caregiver confirms them.
"""

import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.db import IntegrityError, connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from memory.conversations.models import (
    Person,
)
from memory.core.errors import Conflict, Invalid, NotFound
from memory.facts import snapshots, vector_pg
from memory.facts.models import Memory, MemoryScope, MemoryType
from memory.facts.namespaces import (  # noqa: F401 - the store's names, used by its callers
    CHARS_PER_TOKEN,
    MAX_CONTENT_TOKENS,
    MAX_ENTITY_REFS,
    MAX_KEY,
    MAX_NAMESPACE_PART,
    MAX_TTL_MINUTES,
    PERSON_ROOT,
    SEP,
    clean_text,
    content_validate,
    entity_ref,
    entity_ref_validate,
    key_validate,
    namespace_prefix_validate,
    namespace_validate,
    normalised,
    person_namespace,
    scope_of,
    slugify,
)

# How long an item of each type is kept when the writer does not say (None: until forgotten).
MEMORY_TTL: dict[str, timedelta | None] = {
    MemoryType.FEELING: timedelta(hours=6),
    MemoryType.EVENT: timedelta(days=7),
    MemoryType.OTHER: timedelta(days=1),
    MemoryType.PROFILE: None,
    MemoryType.PEOPLE: None,
    MemoryType.ROUTINE: None,
    MemoryType.PREFERENCE: None,
    MemoryType.LIFE_STORY: None,
}
# Content this close (cosine of the embeddings, or equal once normalised) is "the same value".
SAME_VALUE_COSINE = 0.92
# Use makes a fact more important: reinforced this often, it is at least this important.
IMPORTANCE_BY_USE = ((10, 3), (3, 2))

_UNSET: Any = object()


@dataclass(frozen=True)
class UpsertResult:
    memory: Memory
    # created | reinforced | superseded
    action: str
    previous: Memory | None = None


def _person_for(namespace: tuple[str, ...]) -> Person | None:
    if namespace[0] != PERSON_ROOT:
        return None
    try:
        person_id = uuid.UUID(namespace[1])
    except ValueError:
        return None
    return Person.objects.filter(id=person_id).first()


def _expiry(*, type: str, ttl_minutes: float | None | Any, at: datetime) -> datetime | None:
    if ttl_minutes is _UNSET:
        ttl = MEMORY_TTL.get(type)
        return at + ttl if ttl else None
    if ttl_minutes is None:
        return None
    if not 0 < ttl_minutes <= MAX_TTL_MINUTES:
        raise Invalid(
            f"ttl_minutes must be more than 0 and at most {MAX_TTL_MINUTES} (ten years); "
            "null keeps the memory until it is forgotten.",
            field="ttl_minutes",
        )
    return at + timedelta(minutes=ttl_minutes)


def _importance_after_use(importance: int, use_count: int, pinned: bool) -> int:
    if pinned:
        return 3
    for uses, level in IMPORTANCE_BY_USE:
        if use_count >= uses:
            return max(importance, level)
    return importance


def _bump_scope(scope: str, *, reset: bool = False) -> int:
    """Take the scope's write lock (its row lock) and move its generation on; returns it.

    Every change to a scope's memories happens in a transaction that starts with this, so
    writers of one person's memories queue up; rows changed in the transaction are stamped with
    the new generation (`revision`), so search copies elsewhere catch up by reading just those.
    `reset` (rows deleted) tells copies to reload instead.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_scopes (scope, generation, epoch) VALUES (%s, 1, %s) "
            "ON CONFLICT (scope) DO UPDATE SET generation = memory_scopes.generation + 1, "
            "epoch = memory_scopes.epoch + %s RETURNING generation",
            # A scope created anew (after an erasure) starts from an epoch no copy has seen.
            [scope, time.time_ns() // 1000, int(reset)],
        )
        generation = cursor.fetchone()[0]
    if reset:
        # A snapshot of the copy holds the rows about to be deleted: it goes with them.
        snapshots.delete(scope)
    # PostgreSQL's search columns follow once this write commits (memory/facts/vector_pg.py).
    vector_pg.after_write(scope)
    return generation


def _embed(text: str) -> bytes:
    from memory.core.embeddings import get_embedder, vector_to_bytes

    return vector_to_bytes(get_embedder().encode([text])[0])


def _cosine(a: bytes | None, b: bytes | None) -> float:
    if not a or not b:
        return 0.0
    va = np.frombuffer(bytes(a), dtype="<f4")
    vb = np.frombuffer(bytes(b), dtype="<f4")
    if va.shape != vb.shape:
        return 0.0
    return float(va @ vb)


def _live(qs: QuerySet, at: datetime) -> QuerySet:
    return qs.filter(status=Memory.Status.ACTIVE).filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=at)
    )


# --- Writes -----------------------------------------------------------------------------------


def memory_upsert(
    *,
    namespace: Sequence[str],
    content: str,
    key: str | None = None,
    type: str = MemoryType.OTHER,
    memory_key: str = "",
    metadata: dict | None = None,
    entity_refs: Sequence[str] = (),
    entity_labels: dict[str, str] | None = None,
    subtype: dict | None = None,
    importance: int | None = None,
    pinned: bool = False,
    source: str = Memory.Source.TOOL,
    confirmed: bool = False,
    confirmed_by=None,
    confidence: float = 1.0,
    persona: str | None = None,
    ttl_minutes: float | None = _UNSET,
    source_message_id: uuid.UUID | None = None,
    embed: bool = True,
    embedding: bytes | None = None,
    replace: bool = False,
    at: datetime | None = None,
) -> UpsertResult:
    """Store a memory, or reinforce or supersede the one it repeats. One transaction per call.

    The existing row is found by key, else by memory_key. Similar content reinforces it (no new
    row); different content deprecates it and stores the new version linked by `supersedes`.
    `replace` (a key-value writer such as LangGraph) supersedes unless content and metadata are
    exactly the same. `embed=False` stores no vector: found by keywords and filters only.
    `embedding` stores vectors the caller computed (float32 bytes, e.g. a LangGraph store's own
    model, one vector per indexed field) instead of embedding the content.
    """
    at = at or timezone.now()
    ns = namespace_validate(namespace)
    if key is not None:
        key_validate(key)
    content = clean_text(content_validate(content))
    if type not in MemoryType.values:
        raise Invalid(f"Unknown memory type {type!r}.", field="type")
    if source not in Memory.Source.values:
        raise Invalid(f"Unknown source {source!r}.", field="source")
    if importance is not None and not (isinstance(importance, int) and 0 <= importance <= 3):
        raise Invalid("Importance is a whole number from 0 to 3.", field="importance")
    if not 0.0 <= float(confidence) <= 1.0:
        raise Invalid("Confidence is between 0 and 1.", field="confidence")
    if len(entity_refs) > MAX_ENTITY_REFS:
        raise Invalid(f"At most {MAX_ENTITY_REFS} entity refs.", field="entity_refs")
    refs = list(dict.fromkeys(entity_ref_validate(ref) for ref in entity_refs))
    labels = {ref: str(label)[:200] for ref, label in (entity_labels or {}).items() if ref in refs}
    if len(memory_key) > Memory._meta.get_field("memory_key").max_length:
        raise Invalid("The memory_key is too long.", field="memory_key")
    expires_at = _expiry(type=type, ttl_minutes=ttl_minutes, at=at)
    if ttl_minutes is _UNSET:
        ttl = MEMORY_TTL.get(type)
        ttl_minutes = ttl.total_seconds() / 60 if ttl else None
    if embedding is None and embed:
        embedding = _embed(content)
    person = _person_for(ns)
    if person is not None and not person.memory_enabled:
        raise Conflict("Memory is switched off for this person.", field="namespace")

    path = SEP.join(ns)
    for attempt in range(3):
        try:
            with transaction.atomic():
                revision = _bump_scope(scope_of(ns))
                return _upsert_locked(
                    revision=revision,
                    path=path,
                    ns=ns,
                    key=key,
                    content=content,
                    type=type,
                    memory_key=memory_key,
                    metadata=metadata or {},
                    refs=refs,
                    labels=labels,
                    subtype=subtype or {},
                    importance=importance,
                    pinned=pinned,
                    source=source,
                    confirmed=confirmed,
                    confirmed_by=confirmed_by,
                    confidence=float(confidence),
                    persona=persona,
                    expires_at=expires_at,
                    source_message_id=source_message_id,
                    embedding=embedding,
                    person=person,
                    ttl_minutes=ttl_minutes,
                    replace=replace,
                    at=at,
                )
        except IntegrityError:
            # Another writer created the same active row first (possible only for the first
            # write of a scope, before its lock row exists); the retry finds and merges it.
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _upsert_locked(
    *, path, ns, key, content, memory_key, at, embedding, person, revision, **fields
):
    existing = None
    if key is not None:
        existing = Memory.objects.filter(
            namespace=path, key=key, status=Memory.Status.ACTIVE
        ).first()
    if existing is None and memory_key:
        existing = Memory.objects.filter(
            namespace=path, memory_key=memory_key, status=Memory.Status.ACTIVE
        ).first()
    if existing is not None and existing.expires_at and existing.expires_at <= at:
        # An expired row is gone as far as anyone can see; make way for the new one.
        existing.status = Memory.Status.ARCHIVED
        existing.updated_at = at
        existing.revision = revision
        existing.save(update_fields=["status", "updated_at", "revision"])
        existing = None

    if fields["replace"]:
        same = (
            existing is not None
            and existing.content == content
            and existing.metadata == fields["metadata"]
        )
    else:
        same = existing is not None and (
            normalised(existing.content) == normalised(content)
            or _cosine(existing.embedding, embedding) >= SAME_VALUE_COSINE
        )
    if same:
        existing.use_count += 1
        existing.last_used_at = at
        existing.updated_at = at
        existing.pinned = existing.pinned or fields["pinned"]
        base = max(existing.importance, fields["importance"] or 0)
        existing.importance = _importance_after_use(base, existing.use_count, existing.pinned)
        existing.metadata = {**existing.metadata, **fields["metadata"]}
        existing.entity_refs = list(dict.fromkeys([*existing.entity_refs, *fields["refs"]]))
        existing.entity_labels = {**existing.entity_labels, **fields["labels"]}
        if fields["confirmed"] and not existing.confirmed:
            existing.confirmed = True
            existing.confirmed_by = fields["confirmed_by"]
            existing.confirmed_at = at
        existing.confidence = max(existing.confidence, fields["confidence"])
        if fields["replace"]:
            # A key-value writer states the whole item: its lifetime and vectors are the new ones.
            existing.expires_at = fields["expires_at"]
            existing.ttl_minutes = fields["ttl_minutes"]
            existing.embedding = embedding
        elif existing.expires_at and fields["expires_at"]:
            # Said again: it is fresh again.
            existing.expires_at = max(existing.expires_at, fields["expires_at"])
        existing.revision = revision
        existing.save()
        return UpsertResult(existing, "reinforced")

    if existing is not None and existing.confirmed and not fields["confirmed"]:
        # What a caregiver confirmed is only changed by a caregiver: a person living with
        # dementia may say otherwise and mean it, and a tool may have misheard.
        raise Conflict(
            "A caregiver confirmed a different value for this fact; only a caregiver can change it.",
            field="content",
        )
    importance = fields["importance"]
    if importance is None:
        importance = 2 if fields["type"] in (MemoryType.PROFILE, MemoryType.PEOPLE) else 1
    if fields["pinned"]:
        importance = 3
    if existing is not None:
        existing.status = Memory.Status.DEPRECATED
        existing.updated_at = at
        existing.revision = revision
        existing.save(update_fields=["status", "updated_at", "revision"])
        # The fact keeps its identity (key) and what it had earned through use.
        key = key or existing.key
        importance = max(importance, existing.importance) if not fields["pinned"] else 3
    memory = Memory.objects.create(
        namespace=path,
        scope=scope_of(ns),
        key=key or uuid.uuid4().hex,
        person=person,
        content=content,
        metadata=fields["metadata"],
        type=fields["type"],
        entity_refs=fields["refs"],
        entity_labels=fields["labels"],
        subtype=fields["subtype"],
        importance=importance,
        pinned=fields["pinned"],
        memory_key=memory_key,
        source=fields["source"],
        status=Memory.Status.ACTIVE,
        confirmed=fields["confirmed"],
        confirmed_by=fields["confirmed_by"] if fields["confirmed"] else None,
        confirmed_at=at if fields["confirmed"] else None,
        confidence=fields["confidence"],
        supersedes=existing,
        expires_at=fields["expires_at"],
        ttl_minutes=fields["ttl_minutes"],
        use_count=1,
        last_used_at=at,
        source_message_id=fields["source_message_id"],
        embedding=embedding,
        persona=fields["persona"],
        revision=revision,
        created_at=at,
        updated_at=at,
    )
    return UpsertResult(memory, "superseded" if existing else "created", previous=existing)


def memory_delete(*, namespace: Sequence[str], key: str) -> int:
    """Forget (namespace, key): the live row and its history. Returns how many rows went."""
    ns = namespace_validate(namespace)
    key_validate(key)
    with transaction.atomic():
        _bump_scope(scope_of(ns), reset=True)
        deleted, _ = Memory.objects.filter(namespace=SEP.join(ns), key=key).delete()
    return deleted


def _memory_for_update(memory_id: uuid.UUID) -> Memory:
    memory = Memory.objects.select_for_update().filter(id=memory_id).first()
    if memory is None:
        raise NotFound("No such memory.", field="memory_id")
    return memory


def memory_confirm(memory_id: uuid.UUID, *, user, at: datetime | None = None) -> Memory:
    """A caregiver says this is true: from now on it may be used as a fact."""
    at = at or timezone.now()
    with transaction.atomic():
        memory = _memory_for_update(memory_id)
        memory.revision = _bump_scope(memory.scope)
        memory.confirmed = True
        memory.confirmed_by = user
        memory.confirmed_at = at
        memory.updated_at = at
        memory.save(
            update_fields=["confirmed", "confirmed_by", "confirmed_at", "updated_at", "revision"]
        )
    return memory


def memory_edit(memory_id: uuid.UUID, *, content: str, user, at: datetime | None = None) -> Memory:
    """A caregiver corrects a memory: a new confirmed version supersedes the old one."""
    memory = Memory.objects.filter(id=memory_id, status=Memory.Status.ACTIVE).first()
    if memory is None:
        raise NotFound("No such memory.", field="memory_id")
    result = memory_upsert(
        namespace=memory.namespace_tuple,
        key=memory.key,
        content=content,
        type=memory.type,
        memory_key=memory.memory_key,
        metadata=memory.metadata,
        entity_refs=memory.entity_refs,
        entity_labels=memory.entity_labels,
        subtype=memory.subtype,
        importance=memory.importance,
        pinned=memory.pinned,
        source=Memory.Source.CAREGIVER,
        confirmed=True,
        confirmed_by=user,
        persona=memory.persona,
        ttl_minutes=None if memory.expires_at is None else _UNSET,
        at=at,
    )
    return result.memory


def memory_relink(
    memory_id: uuid.UUID,
    *,
    content: str,
    entity_refs: list[str],
    entity_labels: dict[str, str],
    memory_key: str,
    metadata: dict[str, Any],
    at: datetime | None = None,
) -> Memory:
    """Say again whom a memory is about (staff deciding on a name Clara may have misheard):
    its words, people, identity and notes; the same row, confirmed or not as it was."""
    at = at or timezone.now()
    with transaction.atomic():
        memory = _memory_for_update(memory_id)
        memory.revision = _bump_scope(memory.scope)
        memory.content = content
        memory.entity_refs = list(entity_refs)
        memory.entity_labels = dict(entity_labels)
        memory.memory_key = memory_key[:300]
        memory.metadata = metadata
        memory.updated_at = at
        memory.save(
            update_fields=[
                "content",
                "entity_refs",
                "entity_labels",
                "memory_key",
                "metadata",
                "updated_at",
                "revision",
            ]
        )
    return memory


def memory_pin(memory_id: uuid.UUID, *, pinned: bool, at: datetime | None = None) -> Memory:
    """Pinned memories are always at hand (foundation) and never archived; they count as critical."""
    at = at or timezone.now()
    with transaction.atomic():
        memory = _memory_for_update(memory_id)
        memory.revision = _bump_scope(memory.scope)
        memory.pinned = pinned
        if pinned:
            memory.importance = 3
        memory.updated_at = at
        memory.save(update_fields=["pinned", "importance", "updated_at", "revision"])
    return memory


def memory_forget(memory_id: uuid.UUID) -> int:
    """Forget one memory and every earlier or later version of it."""
    memory = Memory.objects.filter(id=memory_id).first()
    if memory is None:
        raise NotFound("No such memory.", field="memory_id")
    return memory_delete(namespace=memory.namespace_tuple, key=memory.key)


def memories_forget(
    *, person_id: uuid.UUID, entity: str | None = None, type: str | None = None
) -> int:
    """Forget everything about one entity (`person:sarah`) or of one type for a person."""
    if entity is None and type is None:
        raise Invalid("Say which entity or which type to forget.", field="entity")
    if type is not None and type not in MemoryType.values:
        raise Invalid(f"Unknown memory type {type!r}.", field="type")
    if entity is not None:
        entity_ref_validate(entity)
    _person_or_404(person_id)
    scope = scope_of(person_namespace(person_id))
    with transaction.atomic():
        _bump_scope(scope, reset=True)
        rows = Memory.objects.filter(scope=scope)
        if type is not None:
            rows = rows.filter(type=type)
        if entity is not None:
            # Entity refs are a JSON list; checked here rather than with a JSON lookup that
            # SQLite and PostgreSQL spell differently. One person's memories fit in memory.
            ids = [m.id for m in rows.only("id", "entity_refs") if entity in m.entity_refs]
            rows = Memory.objects.filter(id__in=ids)
        # Forgetting a fact forgets its history: every version with the same key.
        keys = set(rows.values_list("namespace", "key"))
        deleted = 0
        for path, key in keys:
            count, _ = Memory.objects.filter(namespace=path, key=key).delete()
            deleted += count
    return deleted


def memories_used(uses: Iterable[tuple[uuid.UUID, datetime | None, int, datetime]]) -> int:
    """Record uses (memory id, count-once-after time or None, uses, time of the latest):
    `use_count` goes up by the uses (by one, once, after `since`: a fact used in every turn of a
    conversation is used once in it) and `last_used_at` moves on. The scope's generation moves too, so search copies, whose
    ranking reads the use count, catch up. Forgotten memories are passed over. Returns the number
    of uses counted."""
    from django.db.models import F, Q
    from django.db.models.functions import Greatest

    uses = list(uses)
    rows = dict(Memory.objects.filter(id__in={u[0] for u in uses}).values_list("id", "scope"))
    counted = 0
    by_scope: dict[str, list] = {}
    for use in uses:
        if use[0] in rows:
            by_scope.setdefault(rows[use[0]], []).append(use)
    for scope, scope_uses in by_scope.items():
        with transaction.atomic():
            revision = _bump_scope(scope)
            for memory_id, since, count, at in scope_uses:
                row = Memory.objects.filter(id=memory_id)
                fresh = (
                    row
                    if since is None
                    else row.filter(Q(last_used_at__isnull=True) | Q(last_used_at__lt=since))
                )
                count = count if since is None else 1
                if fresh.update(
                    use_count=F("use_count") + count, last_used_at=at, revision=revision
                ):
                    counted += count
                else:
                    row.update(last_used_at=Greatest(F("last_used_at"), at), revision=revision)
    return counted


def person_memory_set_enabled(*, person_id: uuid.UUID, enabled: bool) -> Person:
    person = _person_or_404(person_id)
    person.memory_enabled = enabled
    person.save(update_fields=["memory_enabled"])
    return person


# --- Reads ------------------------------------------------------------------------------------


def memory_get(
    *,
    namespace: Sequence[str],
    key: str,
    refresh_ttl: bool = False,
    at: datetime | None = None,
) -> Memory:
    """The live memory under (namespace, key); expired or superseded ones are not found.

    `refresh_ttl` renews the lifetime of one that was given one explicitly (reading keeps it).
    """
    at = at or timezone.now()
    ns = namespace_validate(namespace)
    key_validate(key)
    memory = _live(Memory.objects.filter(namespace=SEP.join(ns), key=key), at).first()
    if memory is None:
        raise NotFound("Nothing is stored under this key.", field="key")
    if refresh_ttl:
        ttl_refresh([memory], at=at)
    return memory


def ttl_refresh(memories: Sequence[Memory], *, at: datetime | None = None) -> None:
    """Push the expiry of memories with a lifetime forward: now plus their lifetime."""
    at = at or timezone.now()
    renew = [m for m in memories if m.ttl_minutes and m.expires_at]
    if not renew:
        return
    with transaction.atomic():
        revisions = {scope: _bump_scope(scope) for scope in sorted({m.scope for m in renew})}
        for memory in renew:
            revision = revisions[memory.scope]
            memory.expires_at = at + timedelta(minutes=memory.ttl_minutes)
            memory.revision = revision
            Memory.objects.filter(id=memory.id, status=Memory.Status.ACTIVE).update(
                expires_at=memory.expires_at, revision=revision
            )


def memory_history(*, namespace: Sequence[str], key: str) -> list[Memory]:
    """Every version of a key, oldest first: what was believed, and when it changed."""
    ns = namespace_validate(namespace)
    key_validate(key)
    rows = list(Memory.objects.filter(namespace=SEP.join(ns), key=key).order_by("created_at"))
    if not rows:
        raise NotFound("Nothing was ever stored under this key.", field="key")
    return rows


def namespaces_list(
    *,
    prefix: Sequence[str] = (),
    suffix: Sequence[str] = (),
    max_depth: int | None = None,
    limit: int = 100,
    offset: int = 0,
    at: datetime | None = None,
    scopes: Sequence[str] | None = None,
) -> list[tuple[str, ...]]:
    """The namespaces that hold live memories, under a prefix, cut to max_depth parts.

    `scopes`, when given, are the only scopes listed (a caller's own: memory/facts/tenancy.py).
    """
    at = at or timezone.now()
    prefix = namespace_prefix_validate(prefix)
    suffix = namespace_prefix_validate(suffix, field="suffix")
    if max_depth is not None and max_depth < 1:
        raise Invalid("max_depth must be at least 1.", field="max_depth")
    rows = _live(Memory.objects.all(), at)
    if scopes is not None:
        rows = rows.filter(scope__in=list(scopes))
    if prefix:
        path = SEP.join(prefix)
        rows = rows.filter(Q(namespace=path) | Q(namespace__startswith=path + SEP))
    found: set[tuple[str, ...]] = set()
    for path in rows.values_list("namespace", flat=True).distinct():
        parts = tuple(path.split(SEP))
        if suffix and parts[-len(suffix) :] != suffix:
            continue
        found.add(parts[:max_depth] if max_depth else parts)
    return sorted(found)[offset : offset + limit]


def memory_list_for_person(
    person_id: uuid.UUID,
    *,
    type: str | None = None,
    include_inactive: bool = False,
    at: datetime | None = None,
) -> list[Memory]:
    """What Clara remembers about a person, most important first (the caregiver's review)."""
    at = at or timezone.now()
    _person_or_404(person_id)
    rows = Memory.objects.filter(person_id=person_id)
    if not include_inactive:
        rows = _live(rows, at)
    if type is not None:
        if type not in MemoryType.values:
            raise Invalid(f"Unknown memory type {type!r}.", field="type")
        rows = rows.filter(type=type)
    return list(rows.defer("embedding").order_by("-pinned", "-importance", "type", "-updated_at"))


def _person_or_404(person_id: uuid.UUID) -> Person:
    person = Person.objects.filter(id=person_id).first()
    if person is None:
        raise NotFound("No such person.", field="person_id")
    return person


# --- Erasure ------------------------------------------------------------------------------------


def person_memories_erase(person_id: uuid.UUID) -> int:
    """Delete every memory of a person and their scope (inside the caller's transaction).

    Part of erasing the person (`memory.privacy.person_erase`); the scope's generation is reset
    first so every process's search copy drops them.
    """
    scope = scope_of(person_namespace(person_id))
    _bump_scope(scope, reset=True)
    deleted = Memory.objects.filter(Q(person_id=person_id) | Q(scope=scope)).delete()[0]
    MemoryScope.objects.filter(scope=scope).delete()
    return deleted
