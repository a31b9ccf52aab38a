"""Long-term memory: facts about the person in namespaces, notes, and commitments."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from memory.conversations.models import DEFAULT_PERSONA, ChatMessage, Person, Session
from memory.core.fields import (
    EncryptedBinaryField,
    EncryptedJSONField,
    EncryptedKeyField,
    EncryptedTextField,
)
from memory.core.ids import uuid7


class MemoryType(models.TextChoices):
    PROFILE = "profile"
    PEOPLE = "people"
    ROUTINE = "routine"
    PREFERENCE = "preference"
    EVENT = "event"
    FEELING = "feeling"
    LIFE_STORY = "life_story"
    OTHER = "other"


class Memory(models.Model):
    """One remembered item in a namespace: a fact about a person, a note, or an agent's value.

    A namespace is a tuple of at least two non-empty parts, stored joined by NAMESPACE_SEPARATOR
    (which parts may not contain) so that "everything under a prefix" is an indexed range scan.
    Person-scoped memories live under ("memories", "<person id>", ...) and carry the person as a
    foreign key too, for erasure and for the caregiver's review. Only one row per (namespace, key)
    and per (namespace, memory_key) is active; superseded rows stay as history.
    """

    NAMESPACE_SEPARATOR = "\x1f"

    class Source(models.TextChoices):
        CONVERSATION_EXTRACTION = "conversation_extraction"
        CAREGIVER = "caregiver"
        SEEDED_PROFILE = "seeded_profile"
        CURATED_FOLD = "curated_fold"
        TOOL = "tool"

    class Status(models.TextChoices):
        ACTIVE = "active"
        DEPRECATED = "deprecated"
        ARCHIVED = "archived"

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    namespace = models.CharField(max_length=512)
    # The namespace's first two parts: the unit of search caching and of write versioning.
    scope = models.CharField(max_length=300)
    # Keys and fact identities name people ("people|person:claire|relationship"): encrypted
    # deterministically, so get/put by key and the unique constraints below still match in SQL.
    key = EncryptedKeyField(max_length=200)
    person = models.ForeignKey(
        Person,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="memories",
        db_index=False,
    )
    content = EncryptedTextField()
    # The sentence a fact came from, its value: encrypted (filters on it run in Python, search.py).
    metadata = EncryptedJSONField(default=dict, blank=True)
    type = models.CharField(max_length=16, choices=MemoryType.choices, default=MemoryType.OTHER)
    # ["person:sarah"]: matched in Python only (search's entity boost), so encrypted.
    entity_refs = EncryptedJSONField(default=list, blank=True)
    # {"person:sarah": "Sarah"}: how each referenced entity is shown to people.
    entity_labels = EncryptedJSONField(default=dict, blank=True)
    subtype = models.JSONField(default=dict, blank=True)
    importance = models.PositiveSmallIntegerField(default=1)
    pinned = models.BooleanField(default=False)
    memory_key = EncryptedKeyField(max_length=300, blank=True, default="")
    source = models.CharField(max_length=32, choices=Source.choices, default=Source.TOOL)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    confirmed = models.BooleanField(default=False)
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    confirmed_at = models.DateTimeField(null=True, blank=True)
    confidence = models.FloatField(default=1.0)
    supersedes = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="superseded_by",
    )
    expires_at = models.DateTimeField(null=True, blank=True)
    # The lifetime it was given, so reading it can renew it (LangGraph's refresh_ttl).
    ttl_minutes = models.FloatField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    use_count = models.PositiveIntegerField(default=0)
    source_message = models.ForeignKey(
        ChatMessage,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # float32 little-endian, memory/core/embeddings.py; empty until embedded. Encrypted: with
    # the public model anyone could confirm a guessed sentence against a plaintext vector.
    embedding = EncryptedBinaryField(null=True, blank=True)
    # Null: every persona of the companion may use it.
    persona = models.CharField(max_length=32, null=True, blank=True)
    # The scope's generation when this row last changed: search copies catch up by reading
    # only the rows with a revision above the generation they hold.
    revision = models.BigIntegerField(default=0)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "memories"
        constraints = [
            # get/put by (namespace, key); the one active row per key, even under concurrent upserts.
            models.UniqueConstraint(
                fields=["namespace", "key"],
                condition=Q(status="active"),
                name="uniq_memory_active_key",
            ),
            # Deduplication: one active row per fact identity in a namespace.
            models.UniqueConstraint(
                fields=["namespace", "memory_key"],
                condition=Q(status="active") & ~Q(memory_key=""),
                name="uniq_memory_active_memory_key",
            ),
            models.CheckConstraint(condition=Q(importance__lte=3), name="memory_importance_0_3"),
            models.CheckConstraint(
                condition=Q(pinned=False) | Q(importance=3), name="memory_pinned_importance_3"
            ),
        ]
        indexes = [
            # Search and listing load a scope's live rows; history reads a key's versions.
            models.Index(fields=["scope", "status"], name="idx_memories_scope_status"),
            # A search copy catching up: the scope's rows changed since its generation.
            models.Index(fields=["scope", "revision"], name="idx_memories_scope_revision"),
            models.Index(fields=["namespace", "key", "created_at"], name="idx_memories_key_hist"),
            # A person's memories for the caregiver's review, export and erasure.
            models.Index(fields=["person", "status"], name="idx_memories_person_status"),
            # The expiry sweep: live rows whose time has come.
            models.Index(
                fields=["expires_at"],
                condition=Q(status="active") & Q(expires_at__isnull=False),
                name="idx_memories_expiry",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.namespace_tuple} {self.key}"

    @property
    def namespace_tuple(self) -> tuple[str, ...]:
        return tuple(self.namespace.split(self.NAMESPACE_SEPARATOR))


class MemoryScope(models.Model):
    """A write counter per memory scope, bumped in every transaction that changes the scope.

    Search keeps a scope's vectors and keyword index in process memory; comparing this counter
    (one indexed read) tells any process whether its copy is still current.
    """

    scope = models.CharField(max_length=300, primary_key=True)
    generation = models.BigIntegerField(default=0)
    # Bumped when rows are deleted (forgetting, erasure): copies reload instead of catching up.
    epoch = models.BigIntegerField(default=0)

    class Meta:
        db_table = "memory_scopes"

    def __str__(self) -> str:
        return f"{self.scope} @ {self.generation}"


class MemorySnapshot(models.Model):
    """A scope's search copy as it was built (memory/facts/snapshots.py): its arrays serialised
    and encrypted as one value, bound to this row, so a process's first search of the scope
    reads one value instead of opening and tokenising every row, then catches up by revision.

    A cache of what the scope's rows already hold, never the only copy: deleted with the scope
    (erasure), with the person, whenever rows are deleted from the scope (forgetting), and
    rewritten by `rotate_keys`; a snapshot that is stale or does not open is rebuilt from rows.
    """

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    scope = models.OneToOneField(
        MemoryScope, on_delete=models.CASCADE, related_name="snapshot", db_column="scope"
    )
    # Whose memories it holds (null for an organisation's own scope): it goes with the person.
    person = models.ForeignKey(
        Person,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
    )
    # The scope's generation and epoch the copy was built at.
    generation = models.BigIntegerField()
    epoch = models.BigIntegerField()
    data = EncryptedBinaryField()

    class Meta:
        db_table = "memory_snapshots"

    def __str__(self) -> str:
        return f"snapshot {self.scope_id} @ {self.generation}"


class PersonNotes(models.Model):
    """The companion's status notes about a person (`update_status`): each field with its time.

    `fields` maps a name to {"value": ..., "updated_at": ISO time}; the companion edits them
    one at a time, and a caregiver can read them all.
    """

    person = models.ForeignKey(Person, on_delete=models.CASCADE, related_name="notes")
    persona = models.CharField(max_length=32, default=DEFAULT_PERSONA)
    fields = EncryptedJSONField(default=dict, blank=True)
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "person_notes"
        constraints = [
            # One notes object per person and persona; also its lookup.
            models.UniqueConstraint(fields=["person", "persona"], name="uniq_notes_person_persona"),
        ]

    def __str__(self) -> str:
        return f"notes {self.person_id}/{self.persona}"


class Commitment(models.Model):
    """Something the companion promised or the person planned ("call Ann on Sunday")."""

    class Kind(models.TextChoices):
        PROMISE = "promise"  # the companion said it would do or remember something
        PLAN = "plan"  # the person said they would do something

    class Status(models.TextChoices):
        OPEN = "open"
        DONE = "done"
        DROPPED = "dropped"

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    person = models.ForeignKey(Person, on_delete=models.CASCADE, related_name="commitments")
    persona = models.CharField(max_length=32, default=DEFAULT_PERSONA)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    text = EncryptedTextField(max_length=500)
    due_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    source_message = models.ForeignKey(
        ChatMessage, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    session = models.ForeignKey(
        Session, null=True, blank=True, on_delete=models.SET_NULL, related_name="commitments"
    )
    created_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "commitments"
        indexes = [
            # Open loops of a person (summaries, caregivers, the companion's context).
            models.Index(fields=["person", "status", "-created_at"], name="idx_commitments_open"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.text[:40]}"
