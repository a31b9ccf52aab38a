"""The conversation memory schema (seed §2): people, sessions, messages, emotions, repetition, narratives.

Table names follow the seed so operators can read the design document against the database.
Messages, emotions, repetition records and narrative usage are append-only: nothing in the
product updates or deletes them.
"""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from memory.fields import EncryptedJSONField, EncryptedTextField, FingerprintField
from memory.ids import uuid7


class Emotion(models.TextChoices):
    ANXIOUS = "anxious"
    CONFUSED = "confused"
    FEARFUL = "fearful"
    LONELY = "lonely"
    SAD = "sad"
    NEUTRAL = "neutral"
    CALM = "calm"


class Trajectory(models.TextChoices):
    ESCALATING = "escalating"
    STABLE = "stable"
    DE_ESCALATING = "de-escalating"


class QuestionType(models.TextChoices):
    LOCATION = "location"
    IDENTITY = "identity"
    TIME = "time"
    ACTIVITY = "activity"
    PERSON = "person"
    GENERAL = "general"


class Person(models.Model):
    """Someone living with dementia whom Clara talks with. Not a login user."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        INACTIVE = "inactive"
        ARCHIVED = "archived"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    display_name = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField()
    last_active_at = models.DateTimeField()
    # knownTopics, avoidTopics and other caregiver settings; a blob so new keys need no migration.
    caregiver_context = EncryptedJSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    # Off: nothing new is remembered about the person (extraction and agent writes are refused);
    # what is already there stays until a caregiver forgets it.
    memory_enabled = models.BooleanField(default=True)
    # The companion persona that talks with this person; its memory policy applies (Persona).
    persona = models.CharField(max_length=32, default="clara")

    class Meta:
        db_table = "people"
        verbose_name_plural = "people"
        indexes = [
            # People list: most recently active first.
            models.Index(fields=["-last_active_at"], name="idx_people_last_active"),
        ]

    def __str__(self) -> str:
        return self.display_name or str(self.id)


class Session(models.Model):
    """One continuous conversation: active until closed by the bot or expired when idle."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        CLOSED = "closed"
        EXPIRED = "expired"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Nullable: a bot that sends only a session id gets an anonymous session.
    # Indexed by idx_sessions_person_created, which leads with it.
    person = models.ForeignKey(
        Person,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="sessions",
        db_index=False,
    )
    created_at = models.DateTimeField()
    last_activity_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    # Every message, both roles. The next exchange takes sequence numbers count+1 and count+2.
    message_count = models.PositiveIntegerField(default=0)
    dominant_emotion = models.CharField(
        max_length=16, choices=Emotion.choices, null=True, blank=True
    )
    escalation_triggered = models.BooleanField(default=False)
    # Set once the person asked one thing five or more times: for caregivers, never the prompt.
    chronic_repetition_pattern = models.BooleanField(default=False)
    session_summary = EncryptedJSONField(null=True, blank=True)

    class Meta:
        db_table = "sessions"
        indexes = [
            # Idle sweep: active sessions whose last activity is older than the cut-off.
            models.Index(
                fields=["status", "last_activity_at"], name="idx_sessions_status_activity"
            ),
            # A person's sessions, newest first (cross-session analytics, caregiver timeline).
            models.Index(fields=["person", "created_at"], name="idx_sessions_person_created"),
        ]

    def __str__(self) -> str:
        return str(self.id)

    def duration_seconds(self) -> float:
        end = self.ended_at or self.last_activity_at
        return max((end - self.created_at).total_seconds(), 0.0)


class ChatMessage(models.Model):
    """What was said: one row per message, the person's or Clara's (the delivered text)."""

    class Role(models.TextChoices):
        USER = "user"
        ASSISTANT = "assistant"

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    # Indexed by the composite (session, ...) indexes below, which lead with it.
    session = models.ForeignKey(
        Session, on_delete=models.PROTECT, related_name="messages", db_index=False
    )
    # Denormalised from the session so per-person reads need no join.
    person = models.ForeignKey(
        Person,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="messages",
        db_index=False,
    )
    role = models.CharField(max_length=16, choices=Role.choices)
    content = EncryptedTextField()
    timestamp = models.DateTimeField()
    sequence_number = models.PositiveIntegerField()
    intent = models.CharField(max_length=64, null=True, blank=True)
    narrative_id = models.CharField(max_length=128, null=True, blank=True)
    processing_time_ms = models.PositiveIntegerField(null=True, blank=True)
    # Set on the person's message of an exchange the bot sent with a key; a retry finds it here.
    idempotency_key = models.CharField(max_length=128, null=True, blank=True)
    # Where it was said (voice, app, sms...), for companions that follow a person across channels.
    channel = models.CharField(max_length=32, null=True, blank=True)

    class Meta:
        db_table = "chat_messages"
        constraints = [
            # Conversation window: WHERE session_id=? ORDER BY sequence_number DESC LIMIT n.
            # Unique, so two writers can never take the same sequence number.
            models.UniqueConstraint(
                fields=["session", "sequence_number"], name="idx_messages_session_seq"
            ),
            # Exactly-once exchanges: a retried key finds the stored exchange instead of a 2nd one.
            models.UniqueConstraint(
                fields=["session", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="uniq_messages_session_idempotency",
            ),
        ]
        indexes = [
            # Cross-session reads: a person's messages in a time range.
            models.Index(fields=["person", "timestamp"], name="idx_messages_user_time"),
            # Only the person's (or only Clara's) messages of a session.
            models.Index(fields=["session", "role"], name="idx_messages_role"),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}#{self.sequence_number} {self.role}"


class DetectedEmotion(models.Model):
    """The emotion read from one of the person's messages; written once, never updated."""

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    message = models.OneToOneField(ChatMessage, on_delete=models.PROTECT, related_name="emotion")
    # Indexed by the composite (session, ...) indexes below, which lead with it.
    session = models.ForeignKey(
        Session, on_delete=models.PROTECT, related_name="emotions", db_index=False
    )
    person = models.ForeignKey(
        Person,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="emotions",
        db_index=False,
    )
    emotion = models.CharField(max_length=16, choices=Emotion.choices)
    confidence = models.FloatField()
    distress_score = models.FloatField()
    trajectory = models.CharField(max_length=16, choices=Trajectory.choices)
    timestamp = models.DateTimeField()

    class Meta:
        db_table = "detected_emotions"
        constraints = [
            models.CheckConstraint(
                condition=Q(confidence__gte=0, confidence__lte=1), name="emotion_confidence_0_1"
            ),
            models.CheckConstraint(
                condition=Q(distress_score__gte=0, distress_score__lte=1),
                name="emotion_distress_0_1",
            ),
        ]
        indexes = [
            # Emotion timeline of a session; the per-turn query takes the last 10.
            models.Index(fields=["session", "timestamp"], name="idx_emotions_session_time"),
            # A person's emotions across sessions (baselines, caregiver trends).
            models.Index(fields=["person", "timestamp"], name="idx_emotions_user_time"),
        ]

    def __str__(self) -> str:
        return f"{self.emotion} ({self.distress_score:.2f})"


class RepetitionRecord(models.Model):
    """The fingerprint and question type of one of the person's messages (seed: repetition_tracking)."""

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    # Indexed by the composite (session, ...) indexes below, which lead with it.
    session = models.ForeignKey(
        Session, on_delete=models.PROTECT, related_name="repetitions", db_index=False
    )
    person = models.ForeignKey(
        Person,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="repetitions",
        db_index=False,
    )
    message = models.OneToOneField(ChatMessage, on_delete=models.PROTECT, related_name="repetition")
    # Sorted content words joined by spaces: kept as text because Jaccard needs the word set.
    fingerprint = FingerprintField(blank=True)
    original_message = EncryptedTextField()
    question_type = models.CharField(
        max_length=16, choices=QuestionType.choices, default=QuestionType.GENERAL
    )
    # How many earlier messages of the session this one repeated (analytics only, never the LLM).
    repeat_count = models.PositiveIntegerField(default=0)
    timestamp = models.DateTimeField()
    # Clara's reply to this message, so a repeated question can get a different telling.
    response_given = EncryptedTextField(null=True, blank=True)

    class Meta:
        db_table = "repetition_tracking"
        indexes = [
            # Tier 1: every fingerprint of this session, in order.
            models.Index(fields=["session", "timestamp"], name="idx_repetition_session"),
            # "Has this person asked exactly this before, in any session?"
            models.Index(fields=["person", "fingerprint"], name="idx_repetition_user"),
            # "How many location questions this session?"
            models.Index(fields=["session", "question_type"], name="idx_repetition_type"),
            # Tier 2: a person's questions of one type in the last 7 days (count over a range).
            models.Index(
                fields=["person", "question_type", "timestamp"], name="idx_repetition_user_type"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.question_type}: {self.fingerprint or '∅'}"


class NarrativeUsage(models.Model):
    """A curated story Clara used, as a seed for the LLM or delivered as a fallback."""

    class Mode(models.TextChoices):
        SEED = "seed"
        FALLBACK = "fallback"

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    narrative_id = models.CharField(max_length=128)
    # Indexed by the composite (session, ...) indexes below, which lead with it.
    session = models.ForeignKey(
        Session, on_delete=models.PROTECT, related_name="narratives", db_index=False
    )
    person = models.ForeignKey(
        Person,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="narratives",
        db_index=False,
    )
    # Clara's message that carried the story; the next emotion record measures its effect.
    message = models.OneToOneField(
        ChatMessage, on_delete=models.PROTECT, related_name="narrative_usage"
    )
    mode = models.CharField(max_length=16, choices=Mode.choices)
    category = models.CharField(max_length=64)
    emotion_at_usage = models.CharField(max_length=16, choices=Emotion.choices)
    timestamp = models.DateTimeField()

    class Meta:
        db_table = "narrative_usage"
        verbose_name_plural = "narrative usage"
        indexes = [
            # Stories already told this session (excluded from the next pick).
            models.Index(fields=["session", "timestamp"], name="idx_narrative_session"),
            # "Has this person heard this story before?"
            models.Index(fields=["person", "narrative_id"], name="idx_narrative_user"),
            # "How many calming stories this week?"
            models.Index(fields=["person", "category", "timestamp"], name="idx_narrative_category"),
        ]

    def __str__(self) -> str:
        return f"{self.narrative_id} ({self.mode})"


class Narrative(models.Model):
    """A short story or grounding text Clara can lean on: the team's library, or one about the person.

    Person-specific narratives are written by caregivers about the person's own life; the
    library's (person is null) are for everyone.
    """

    class Category(models.TextChoices):
        CALMING_STORY = "calming_story"
        GROUNDING = "grounding"
        MEMORY_LOOP = "memory_loop"
        REMINISCENCE = "reminiscence"
        GENTLE_REDIRECT = "gentle_redirect"

    class Length(models.TextChoices):
        SHORT = "short"
        MEDIUM = "medium"
        LONG = "long"

    id = models.SlugField(max_length=128, primary_key=True)
    title = models.CharField(max_length=200)
    category = models.CharField(max_length=32, choices=Category.choices)
    # Emotions this narrative is meant to meet (values of Emotion).
    target_emotions = models.JSONField(default=list, blank=True)
    # Question types it answers well (values of QuestionType); empty means any.
    question_types = models.JSONField(default=list, blank=True)
    theme_tags = models.JSONField(default=list, blank=True)
    length = models.CharField(max_length=8, choices=Length.choices, default=Length.SHORT)
    text = models.TextField()
    active = models.BooleanField(default=True)
    person = models.ForeignKey(
        Person, null=True, blank=True, on_delete=models.CASCADE, related_name="own_narratives"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "narratives"
        indexes = [
            # Candidates each turn: the active library plus the person's own.
            models.Index(fields=["active", "person"], name="idx_narratives_active_person"),
        ]

    def __str__(self) -> str:
        return self.title


class ApiKey(models.Model):
    """A bot client's key. Only a prefix (for lookup) and a SHA-256 of the whole key are stored."""

    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "api_keys"
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


# --- Insights: summaries, trends and caregiver alerts, computed by background jobs ------------

# There is one persona today; the column is there so a second one needs no migration.
DEFAULT_PERSONA = "clara"


class RollingSummary(models.Model):
    """A short running account of the person's latest conversation, overwritten every 4 turns."""

    # Indexed by the unique constraint below, which leads with it.
    person = models.ForeignKey(
        Person, on_delete=models.CASCADE, related_name="rolling_summaries", db_index=False
    )
    persona = models.CharField(max_length=32, default=DEFAULT_PERSONA)
    text = EncryptedTextField(max_length=600)
    # The person's total message count (all sessions) when this text was written.
    messages_covered = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "rolling_summaries"
        constraints = [
            # One running summary per person and persona; also the lookup of each update.
            models.UniqueConstraint(
                fields=["person", "persona"], name="uniq_rolling_person_persona"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.person_id} ({self.persona})"


class SummarySpine(models.Model):
    """A versioned long-term outline of the person (profile, people, open loops); new every 20+ messages."""

    # Indexed by the unique constraint below, which leads with it.
    person = models.ForeignKey(
        Person, on_delete=models.CASCADE, related_name="summary_spines", db_index=False
    )
    persona = models.CharField(max_length=32, default=DEFAULT_PERSONA)
    version = models.PositiveIntegerField()
    content = EncryptedJSONField(default=dict)
    # The person's total message count (all sessions) this version covers.
    message_count = models.PositiveIntegerField()
    created_at = models.DateTimeField()

    class Meta:
        db_table = "summary_spines"
        constraints = [
            # Versions count up per person and persona; the latest is the highest (ORDER BY DESC).
            models.UniqueConstraint(
                fields=["person", "persona", "version"], name="uniq_spine_person_persona_version"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.person_id} ({self.persona}) v{self.version}"


class PersonTrend(models.Model):
    """A person's emotional trends as of one day (their own time zone): for caregivers only."""

    # Indexed by the unique constraint below, which leads with it.
    person = models.ForeignKey(
        Person, on_delete=models.CASCADE, related_name="trends", db_index=False
    )
    day = models.DateField()
    data = models.JSONField(default=dict)
    computed_at = models.DateTimeField()

    class Meta:
        db_table = "person_trends"
        constraints = [
            # One row per person per day; also the dashboard's "latest trends of a person" read.
            models.UniqueConstraint(fields=["person", "day"], name="uniq_trend_person_day"),
        ]

    def __str__(self) -> str:
        return f"{self.person_id} {self.day}"


class Alert(models.Model):
    """Something a caregiver should look at; written once per dedupe key (the outbox)."""

    class Kind(models.TextChoices):
        ESCALATION = "escalation"
        DISTRESS_ABOVE_BASELINE = "distress_above_baseline"
        CHRONIC_REPETITION = "chronic_repetition"

    class Status(models.TextChoices):
        OPEN = "open"
        LOOKING_INTO = "looking_into"
        ACKNOWLEDGED = "acknowledged"

    # Null for an escalation in an anonymous session: the alert must not be lost for want of a person.
    # Indexed by idx_alerts_person_created, which leads with it.
    person = models.ForeignKey(
        Person,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="alerts",
        db_index=False,
    )
    session = models.ForeignKey(
        Session,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="alerts",
    )
    kind = models.CharField(max_length=32, choices=Kind.choices)
    detail = models.JSONField(default=dict, blank=True)
    # Unique, so the event that raises an alert can never raise it twice (retries, reruns).
    dedupe_key = models.CharField(max_length=200, unique=True)
    created_at = models.DateTimeField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    acted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    acted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "alerts"
        indexes = [
            # Caregiver inbox: open alerts, newest first.
            models.Index(fields=["status", "-created_at"], name="idx_alerts_status_created"),
            # A person's alerts, newest first (person page).
            models.Index(fields=["person", "-created_at"], name="idx_alerts_person_created"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} ({self.status})"


# --- Long-term memory: facts about a person -------------------------------------------------


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
    key = models.CharField(max_length=200)
    person = models.ForeignKey(
        Person,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="memories",
        db_index=False,
    )
    content = EncryptedTextField()
    metadata = models.JSONField(default=dict, blank=True)
    type = models.CharField(max_length=16, choices=MemoryType.choices, default=MemoryType.OTHER)
    entity_refs = models.JSONField(default=list, blank=True)
    # {"person:sarah": "Sarah"}: how each referenced entity is shown to people.
    entity_labels = models.JSONField(default=dict, blank=True)
    subtype = models.JSONField(default=dict, blank=True)
    importance = models.PositiveSmallIntegerField(default=1)
    pinned = models.BooleanField(default=False)
    memory_key = models.CharField(max_length=300, blank=True, default="")
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
    # float32 little-endian, memory/embeddings.py; empty until embedded.
    embedding = models.BinaryField(null=True, blank=True)
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


# --- Companions: memory policy, turn queue, check-ins, commitments ----------------------------


class MemoryPolicy(models.TextChoices):
    # Clara's rules (the default): only the current session enters the prompt, nothing reveals
    # repetition, nothing quizzes or corrects.
    DEMENTIA_SAFE = "dementia_safe"
    # One unbroken conversation across sessions and channels, older turns compacted.
    CONTINUOUS = "continuous"


class Persona(models.Model):
    """A companion persona and the memory policy its conversations follow."""

    slug = models.SlugField(max_length=32, primary_key=True)
    display_name = models.CharField(max_length=100)
    memory_policy = models.CharField(
        max_length=16, choices=MemoryPolicy.choices, default=MemoryPolicy.DEMENTIA_SAFE
    )

    class Meta:
        db_table = "personas"

    def __str__(self) -> str:
        return f"{self.display_name} ({self.memory_policy})"


class StreamSummary(models.Model):
    """A continuous companion's compaction: older turns of the whole stream folded into text."""

    person = models.ForeignKey(Person, on_delete=models.CASCADE, related_name="stream_summaries")
    persona = models.CharField(max_length=32)
    text = EncryptedTextField()
    # Messages up to and including this one (by time-ordered id) are folded into the text.
    covers_through = models.UUIDField()
    messages_covered = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "stream_summaries"
        constraints = [
            # One compaction per person and persona; also its lookup on every turn.
            models.UniqueConstraint(
                fields=["person", "persona"], name="uniq_stream_person_persona"
            ),
        ]

    def __str__(self) -> str:
        return f"stream {self.person_id}/{self.persona}"


class PendingMessage(models.Model):
    """A message held in the turn queue until a turn takes it (in arrival order)."""

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    person = models.ForeignKey(Person, on_delete=models.CASCADE, related_name="pending_messages")
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="+")
    content = EncryptedTextField()
    channel = models.CharField(max_length=32, null=True, blank=True)
    # The bot's id for this message: a retried POST is the same message, not a second one.
    client_key = models.CharField(max_length=128)
    # Arrival order across all web workers (a database sequence, not a clock).
    arrival = models.BigIntegerField()
    arrived_at = models.DateTimeField()
    turn_id = models.UUIDField(null=True, blank=True)

    class Meta:
        db_table = "pending_messages"
        constraints = [
            models.UniqueConstraint(
                fields=["person", "client_key"], name="uniq_pending_client_key"
            ),
        ]
        indexes = [
            # A turn takes the person's unclaimed messages in arrival order.
            models.Index(fields=["person", "turn_id", "arrival"], name="idx_pending_person_turn"),
        ]

    def __str__(self) -> str:
        return f"pending {self.person_id} #{self.arrival}"


class TurnLock(models.Model):
    """At most one turn in flight per person, across every web worker."""

    person = models.OneToOneField(
        Person, on_delete=models.CASCADE, primary_key=True, related_name="turn_lock"
    )
    turn_id = models.UUIDField(null=True, blank=True)
    # A turn whose bot never answered frees the person after this time.
    held_until = models.DateTimeField(null=True, blank=True)
    # The next arrival number for this person's queue.
    next_arrival = models.BigIntegerField(default=1)

    class Meta:
        db_table = "turn_locks"

    def __str__(self) -> str:
        return f"turn lock {self.person_id}"


class CheckInSettings(models.Model):
    """When a companion may reach out first; caregivers set the times or switch it off."""

    person = models.OneToOneField(
        Person, on_delete=models.CASCADE, primary_key=True, related_name="check_in_settings"
    )
    enabled = models.BooleanField(default=False)
    # Local times ("HH:MM") in the person's time zone.
    times = models.JSONField(default=list, blank=True)
    # No check-ins from night_start to night_end (local hours, wrapping midnight).
    night_start = models.PositiveSmallIntegerField(default=21)
    night_end = models.PositiveSmallIntegerField(default=8)
    # After this many unanswered check-ins in a row, stop until the person talks again.
    max_unanswered = models.PositiveSmallIntegerField(default=2)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "check_in_settings"

    def __str__(self) -> str:
        return f"check-ins {self.person_id} ({'on' if self.enabled else 'off'})"


class CheckIn(models.Model):
    """One scheduled decision whether to reach out, and what came of it."""

    class Outcome(models.TextChoices):
        SENT = "sent"
        SUPPRESSED = "suppressed"

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    person = models.ForeignKey(Person, on_delete=models.CASCADE, related_name="check_ins")
    persona = models.CharField(max_length=32)
    # The local slot it was for ("2026-11-22T09:00"), so one slot is decided once.
    slot = models.CharField(max_length=32)
    decided_at = models.DateTimeField()
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    reason = models.CharField(max_length=64, blank=True, default="")
    message = models.ForeignKey(
        ChatMessage, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    answered = models.BooleanField(default=False)

    class Meta:
        db_table = "check_ins"
        constraints = [
            # Idempotence of the scheduler: a slot is decided once per person.
            models.UniqueConstraint(fields=["person", "slot"], name="uniq_checkin_person_slot"),
        ]
        indexes = [
            # The suppression rule reads a person's latest check-ins.
            models.Index(fields=["person", "-decided_at"], name="idx_checkins_person_latest"),
        ]

    def __str__(self) -> str:
        return f"check-in {self.person_id} {self.slot} {self.outcome}"


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
