"""The long-term memory API: the namespaced store, a person's memories and controls, agent tools.

Namespaces travel as a list of strings: in a JSON body as `namespace: ["memories", "<id>",
"people"]`, in a query string as repeated `namespace=` parameters.

Every read, search, listing and forgetting leaves one audit row (memory.conversations.audit);
writes of new memories are not disclosures and are not audited.
"""

from typing import Annotated, Any, Literal
from uuid import UUID

from ninja import Field, Query, Router, Schema, Status
from pydantic import AfterValidator, AwareDatetime

from memory.conversations import audit, tenancy
from memory.conversations.models import AccessAction, Scope
from memory.conversations.tenancy import Caller
from memory.core.errors import NotFound
from memory.core.schemas import ERRORS, RequestSchema, Text
from memory.facts import search, store, usage
from memory.facts import tenancy as facts_tenancy
from memory.facts.models import Memory, MemoryType

router = Router(tags=["memories"])

# How far a caller may page: past this a listing is a scan, not a page.
MAX_OFFSET = 10_000
# Deeper than any namespace can be (each part is at least one character and a separator).
MAX_DEPTH = 100

MemoryTypeName = Literal[tuple(MemoryType.values)]  # type: ignore[valid-type]
SourceName = Literal[tuple(Memory.Source.values)]  # type: ignore[valid-type]
StatusName = Literal[tuple(Memory.Status.values)]  # type: ignore[valid-type]


def _namespace(value: list[str]) -> list[str]:
    return list(store.namespace_validate(value))


def _prefix(value: list[str]) -> list[str]:
    return list(store.namespace_prefix_validate(value))


# Checked by the store's rules, so the API and the services agree on what a namespace is.
Namespace = Annotated[list[str], AfterValidator(_namespace)]
Prefix = Annotated[list[str], AfterValidator(_prefix)]
Content = Annotated[
    str,
    Field(min_length=1, max_length=store.MAX_CONTENT_TOKENS * store.CHARS_PER_TOKEN),
    AfterValidator(store.content_validate),
]


class MemoryIn(RequestSchema):
    namespace: Namespace
    key: Text(max_length=store.MAX_KEY, min_length=1) | None = None
    content: Content
    type: MemoryTypeName = MemoryType.OTHER
    memory_key: Text(max_length=300) = ""
    metadata: dict[str, Any] = {}
    entity_refs: list[str] = Field(default=[], max_length=store.MAX_ENTITY_REFS)
    entity_labels: dict[str, str] = {}
    subtype: dict[str, str] = {}
    importance: int | None = Field(default=None, ge=0, le=3)
    pinned: bool = False
    persona: Text(max_length=32, min_length=1) | None = None
    confidence: float = Field(default=1.0, ge=0, le=1)
    # Minutes until it is forgotten; omitted: the type's default (feelings 6 h, events 7 days,
    # other 1 day, facts never); null: never.
    ttl_minutes: float | None = Field(
        default=None,
        gt=0,
        le=store.MAX_TTL_MINUTES,
        description="Omit for the type's default; null keeps it until forgotten.",
    )
    source: SourceName = Memory.Source.TOOL


class MemoryOut(Schema):
    id: UUID
    namespace: list[str]
    key: str
    content: str
    type: MemoryTypeName
    metadata: dict[str, Any]
    entity_refs: list[str]
    entity_labels: dict[str, str]
    subtype: dict[str, Any]
    importance: int
    pinned: bool
    memory_key: str
    source: SourceName
    status: StatusName
    confirmed: bool
    confidence: float
    supersedes_id: UUID | None
    expires_at: AwareDatetime | None
    last_used_at: AwareDatetime | None
    use_count: int
    persona: str | None
    created_at: AwareDatetime
    updated_at: AwareDatetime

    @staticmethod
    def resolve_namespace(obj: Memory) -> list[str]:
        # As the caller's organisation named it (memory/facts/tenancy.py).
        return list(facts_tenancy.shown(obj.namespace_tuple))


class UpsertOut(Schema):
    action: Literal["created", "reinforced", "superseded"]
    memory: MemoryOut


class SearchIn(RequestSchema):
    prefix: Prefix = Field(..., min_length=2)
    query: Text(max_length=2000) | None = None
    types: list[MemoryTypeName] = []
    persona: Text(max_length=32, min_length=1) | None = None
    confirmed: bool | None = None
    status: StatusName = Memory.Status.ACTIVE
    filter: dict[str, Any] = {}
    limit: int = Field(default=10, ge=1, le=search.MAX_LIMIT)
    offset: int = Field(default=0, ge=0, le=MAX_OFFSET)
    threshold: float | None = Field(default=None, ge=-1, le=1)
    entity_cards: bool = False


class SearchHitOut(Schema):
    score: float
    relevance: float
    memory: MemoryOut


class SearchOut(Schema):
    items: list[SearchHitOut]
    entity_cards: list[str]


class NamespacesIn(RequestSchema):
    prefix: Prefix = []
    suffix: Prefix = []
    max_depth: int | None = Field(default=None, ge=1, le=MAX_DEPTH)
    limit: int = Field(default=100, ge=1, le=1000)
    offset: int = Field(default=0, ge=0, le=MAX_OFFSET)


class NamespacesOut(Schema):
    namespaces: list[list[str]]


class KeyQuery(Schema):
    namespace: list[str]
    key: str


class DeletedOut(Schema):
    deleted: int


class ForgetIn(RequestSchema):
    entity: Text(max_length=100, min_length=3) | None = None
    type: MemoryTypeName | None = None


class MemorySettingsIn(RequestSchema):
    enabled: bool


class MemorySettingsOut(Schema):
    person_id: UUID
    memory_enabled: bool


def _key_query(
    caller: Caller, params: KeyQuery, scope: str, access: audit.Access
) -> tuple[tuple[str, ...], str]:
    """The stored namespace and the key a request names, for a caller holding `scope`."""
    access.claim(facts_tenancy.person_id_of(params.namespace))
    caller.require(scope)
    namespace = facts_tenancy.stored(caller, store.namespace_validate(params.namespace))
    key = store.key_validate(params.key)
    access.person_id = facts_tenancy.person_id_of(namespace)
    return namespace, key


@router.put("/memories", response={200: UpsertOut, 201: UpsertOut, **ERRORS})
def put_memory(request, payload: MemoryIn):
    """Store a memory; the same fact again reinforces it (200), a new value supersedes it (200)."""
    caller = tenancy.request_caller(request, Scope.MEMORIES_WRITE)
    namespace = store.namespace_validate(payload.namespace)
    result = store.memory_upsert(
        namespace=facts_tenancy.stored(caller, namespace),
        key=payload.key,
        content=payload.content,
        type=payload.type,
        memory_key=payload.memory_key,
        metadata=payload.metadata,
        entity_refs=payload.entity_refs,
        entity_labels=payload.entity_labels,
        subtype=payload.subtype,
        importance=payload.importance,
        pinned=payload.pinned,
        persona=payload.persona,
        confidence=payload.confidence,
        # A bot may not confirm: only caregivers (the dashboard) say a fact is true.
        confirmed=False,
        source=payload.source if payload.source != Memory.Source.CAREGIVER else Memory.Source.TOOL,
        **(
            {"ttl_minutes": payload.ttl_minutes}
            if "ttl_minutes" in payload.model_fields_set
            else {}
        ),
    )
    code = 201 if result.action == "created" else 200
    return Status(code, {"action": result.action, "memory": result.memory})


@router.get("/memories/item", response={200: MemoryOut, **ERRORS})
def get_memory(request, params: Query[KeyQuery]):
    """The live memory under (namespace, key); 404 if none, expired or superseded."""
    caller = tenancy.caller_for_key(request.auth)
    with audit.audited(caller, AccessAction.READ_MEMORY) as access:
        namespace, key = _key_query(caller, params, Scope.MEMORIES_READ, access)
        memory = store.memory_get(namespace=namespace, key=key)
        access.object_id = str(memory.id)
    return memory


@router.delete("/memories/item", response={200: DeletedOut, **ERRORS})
def delete_memory(request, params: Query[KeyQuery]):
    """Forget (namespace, key) with its history; 404 if nothing was there."""
    caller = tenancy.caller_for_key(request.auth)
    with audit.audited(caller, AccessAction.FORGET) as access:
        namespace, key = _key_query(caller, params, Scope.MEMORIES_WRITE, access)
        deleted = store.memory_delete(namespace=namespace, key=key)
        if not deleted:
            raise NotFound("Nothing is stored under this key.", field="key")
    return {"deleted": deleted}


@router.get("/memories/history", response={200: list[MemoryOut], **ERRORS})
def memory_history(request, params: Query[KeyQuery]):
    """Every version of a key, oldest first."""
    caller = tenancy.caller_for_key(request.auth)
    with audit.audited(caller, AccessAction.READ_MEMORY_HISTORY) as access:
        namespace, key = _key_query(caller, params, Scope.MEMORIES_READ, access)
        return store.memory_history(namespace=namespace, key=key)


@router.post("/memories/search", response={200: SearchOut, **ERRORS})
def search_memories(request, payload: SearchIn):
    """Hybrid search under a namespace prefix: meaning, keywords, recency, use and importance."""
    caller = tenancy.caller_for_key(request.auth)
    with audit.audited(
        caller, AccessAction.SEARCH_MEMORIES, person=facts_tenancy.person_id_of(payload.prefix)
    ) as access:
        caller.require(Scope.MEMORIES_READ)
        prefix, scopes = facts_tenancy.scopes(
            caller, store.namespace_prefix_validate(payload.prefix)
        )
        access.person_id = facts_tenancy.person_id_of(prefix)
        result = search.memory_search(
            prefix=prefix,
            scopes=scopes,
            query=payload.query,
            types=payload.types,
            persona=payload.persona,
            confirmed=payload.confirmed,
            status=payload.status,
            metadata=payload.filter,
            limit=payload.limit,
            offset=payload.offset,
            threshold=payload.threshold,
            entity_cards=payload.entity_cards,
        )
    usage.note(hit.memory.id for hit in result.hits)
    return {
        "items": [
            {"score": h.score, "relevance": h.relevance, "memory": h.memory} for h in result.hits
        ],
        "entity_cards": result.entity_cards,
    }


@router.post("/memories/namespaces", response={200: NamespacesOut, **ERRORS})
def list_namespaces(request, payload: NamespacesIn):
    """Namespaces holding live memories, under a prefix, cut to max_depth parts."""
    caller = tenancy.caller_for_key(request.auth)
    with audit.audited(
        caller, AccessAction.LIST_NAMESPACES, person=facts_tenancy.person_id_of(payload.prefix)
    ) as access:
        caller.require(Scope.MEMORIES_READ)
        prefix, scopes = facts_tenancy.scopes(
            caller, store.namespace_prefix_validate(payload.prefix)
        )
        access.person_id = facts_tenancy.person_id_of(prefix)
        # Listed in the stored form, then cut and paged as the caller names them.
        stored = store.namespaces_list(
            prefix=prefix, suffix=payload.suffix, limit=10**6, offset=0, scopes=scopes
        )
    depth = payload.max_depth
    found = sorted(
        {facts_tenancy.shown(ns)[:depth] if depth else facts_tenancy.shown(ns) for ns in stored}
    )
    found = found[payload.offset : payload.offset + payload.limit]
    return {"namespaces": [list(facts_tenancy.shown(ns)) for ns in found]}


# --- A person's memories: the controls families and caregivers ask for -------------------------


@router.get("/people/{person_id}/memories", response={200: list[MemoryOut], **ERRORS})
def person_memories(request, person_id: UUID, type: MemoryTypeName | None = None):
    """What is remembered about a person, most important first."""
    caller = tenancy.caller_for_key(request.auth)
    with audit.audited(caller, AccessAction.READ_PERSON_MEMORIES, person=person_id) as access:
        caller.require(Scope.MEMORIES_READ)
        tenancy.person_check(caller, person_id)
        access.person_id = person_id
        return store.memory_list_for_person(person_id, type=type)


@router.post("/people/{person_id}/memories/forget", response={200: DeletedOut, **ERRORS})
def person_memories_forget(request, person_id: UUID, payload: ForgetIn):
    """Forget everything about an entity (`person:sarah`) or of a type, with its history."""
    caller = tenancy.caller_for_key(request.auth)
    with audit.audited(caller, AccessAction.FORGET, person=person_id) as access:
        caller.require(Scope.MEMORIES_WRITE)
        tenancy.person_check(caller, person_id)
        access.person_id = person_id
        deleted = store.memories_forget(
            person_id=person_id, entity=payload.entity, type=payload.type
        )
    return {"deleted": deleted}


@router.delete("/people/{person_id}/memories/{memory_id}", response={200: DeletedOut, **ERRORS})
def person_memory_forget(request, person_id: UUID, memory_id: UUID):
    """Forget one memory of this person, with its earlier and later versions."""
    caller = tenancy.caller_for_key(request.auth)
    with audit.audited(
        caller, AccessAction.FORGET, object_id=memory_id, person=person_id
    ) as access:
        caller.require(Scope.MEMORIES_WRITE)
        tenancy.person_check(caller, person_id)
        access.person_id = person_id
        memory = Memory.objects.filter(id=memory_id, person_id=person_id).first()
        if memory is None:
            raise NotFound("No such memory for this person.", field="memory_id")
        deleted = store.memory_forget(memory.id)
    return {"deleted": deleted}


@router.put("/people/{person_id}/memory-settings", response={200: MemorySettingsOut, **ERRORS})
def person_memory_settings(request, person_id: UUID, payload: MemorySettingsIn):
    """Switch remembering on or off for a person (off: nothing new is stored)."""
    tenancy.person_check(tenancy.request_caller(request, Scope.ADMIN), person_id)
    person = store.person_memory_set_enabled(person_id=person_id, enabled=payload.enabled)
    return {"person_id": person.id, "memory_enabled": person.memory_enabled}
