"""The conversation record: people, sessions, messages, emotions, repetition, stories told, API keys.

Messages, emotions, repetition records and narrative usage are append-only: nothing in the
product updates or deletes them (erasure of a whole person aside).
"""

import uuid

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models, router
from django.db.models import Q
from django.utils import timezone

from memory.core.fields import (
    EncryptedBinaryField,
    EncryptedJSONField,
    EncryptedTextField,
    FindableQuerySet,
    FindableTextField,
    FingerprintField,
    KeepsLookupIndexes,
    KeyedDigestField,
    LookupHashField,
)
from memory.core.ids import uuid7


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


class Organisation(models.Model):
    """A care organisation. It owns its people (and through them their conversations, memories,
    alerts and care teams), its sessions, personas and API keys.

    One deployment serves many organisations and none sees another's rows: every query of the
    bot API, the tools and the dashboard is scoped to the caller's organisation
    (memory/conversations/tenancy.py), and another organisation's ids answer as unknown ones.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    # Who to tell when an urgent alert is not acknowledged by the care team.
    contact_email = models.EmailField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    # Retention (memory/retention.py, nightly): conversations' text is kept this many days after
    # a conversation's last message, then removed; summaries and analytics stay.
    transcript_retention_days = models.PositiveIntegerField(
        default=365, validators=[MinValueValidator(1), MaxValueValidator(36_500)]
    )
    # A person with no conversation for this many days is marked inactive (archived people stay
    # archived; a person who talks again is active again).
    inactive_after_days = models.PositiveIntegerField(
        default=90, validators=[MinValueValidator(1), MaxValueValidator(36_500)]
    )

    class Meta:
        db_table = "organisations"

    def __str__(self) -> str:
        return self.name or self.slug


# The organisation `make run`'s demo lives in, and every row written before organisations existed.
DEFAULT_ORGANISATION = "default"


def default_organisation_id() -> uuid.UUID:
    """The default organisation's id, made on first use.

    The default for rows created without an organisation: commands run without `--org`, and code
    that has no caller. Everything a caller creates names the caller's organisation explicitly.
    """
    # The id alone: migrations call this as a field default, before later columns exist. Read
    # where the row being created will be written (never a read replica: clara/replica.py).
    found = (
        Organisation.objects.using(router.db_for_write(Organisation))
        .filter(slug=DEFAULT_ORGANISATION)
        .values_list("pk", flat=True)
        .first()
    )
    if found is not None:
        return found
    organisation, _ = Organisation.objects.get_or_create(
        slug=DEFAULT_ORGANISATION, defaults={"name": "Default organisation"}
    )
    return organisation.pk


class OrganisationMembership(models.Model):
    """A login (a Django user: caregiver, staff) belongs to an organisation; to several, if need be.

    The dashboard shows a caregiver only people of their organisations (and only those whose care
    team they are in); a care team takes only the person's organisation's logins; staff who are
    not superusers see only their organisations' rows in the admin. `is_admin`: the organisation's
    admin, who reads its audit on the dashboard.
    """

    organisation = models.ForeignKey(
        Organisation, on_delete=models.CASCADE, related_name="members", db_index=False
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="organisation_memberships",
        db_index=False,
    )
    is_admin = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "organisation_members"
        constraints = [
            # One membership per login and organisation; also "a login's organisations" and the
            # dashboard's access check (WHERE user_id=? AND organisation_id=?).
            models.UniqueConstraint(fields=["user", "organisation"], name="uniq_org_member_user"),
        ]
        indexes = [
            # An organisation's logins (the care team's "add someone" list, the admin).
            models.Index(fields=["organisation", "user"], name="idx_org_members_org"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.organisation}{' (admin)' if self.is_admin else ''}"


class Home(models.Model):
    """A care home of an organisation (one building, one address). Its name is the
    organisation's structure, not anyone's personal data: stored in plaintext, shown to every
    login of the organisation (the unit filter of the people list and the shift view).

    CASCADE from the organisation: a home is part of it (and an organisation is never deleted
    while it has people: Person.organisation is PROTECT).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organisation = models.ForeignKey(
        Organisation, on_delete=models.CASCADE, related_name="homes", db_index=False
    )
    name = models.CharField(max_length=100)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "homes"
        ordering = ("name",)
        constraints = [
            # One home of a name per organisation; also "an organisation's homes, by name" (the
            # filter's choices, the homes page).
            models.UniqueConstraint(fields=["organisation", "name"], name="uniq_home_org_name"),
        ]

    def __str__(self) -> str:
        return self.name


class Unit(models.Model):
    """A unit of a home (a wing, a floor) where people live. Like the home's, its name is the
    organisation's structure, not personal data.

    CASCADE from the home (a unit is part of it); a unit with people in it cannot be deleted
    (Person.unit is PROTECT): move them first, so nobody leaves a unit, and the care team rights
    it gave them, without the service that keeps those in step (dashboard/units/services.py).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    home = models.ForeignKey(Home, on_delete=models.CASCADE, related_name="units", db_index=False)
    name = models.CharField(max_length=100)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "units"
        ordering = ("name",)
        constraints = [
            # One unit of a name per home; also "a home's units, by name".
            models.UniqueConstraint(fields=["home", "name"], name="uniq_unit_home_name"),
        ]

    def __str__(self) -> str:
        return self.name


class Person(KeepsLookupIndexes):
    """Someone living with dementia whom Clara talks with. Not a login user."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        INACTIVE = "inactive"
        ARCHIVED = "archived"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organisation = models.ForeignKey(
        Organisation,
        on_delete=models.PROTECT,
        related_name="people",
        db_index=False,
        default=default_organisation_id,
    )
    # Encrypted and bound to this row (memory/core/fields.py); the admin still finds a person by
    # the exact name (memory/admin/base.py), matched on a keyed hash of it; lists sort in Python.
    display_name = FindableTextField(
        max_length=200, blank=True, default="", index_field="display_name_index"
    )
    # A default in the database too: code of the previous release, still running while this one
    # migrates, inserts people without the column (they are found by name once renamed or
    # `rotate_keys` has run).
    display_name_index = LookupHashField(source="display_name", db_default="")
    created_at = models.DateTimeField()
    last_active_at = models.DateTimeField()
    # What caregivers set (name, pronouns, zone, topics, agreed answers): read it through
    # memory.core.person.CaregiverContext. A blob, so new settings need no migration.
    caregiver_context = EncryptedJSONField(default=dict, blank=True)
    # Who the person is on record, for a report a clinician files (dashboard's clinician report):
    # the full name and the home's or the health service's identifier. Caregivers set them on
    # the profile; never sent to the bot (unlike caregiver_context). Encrypted and bound to the
    # row like the display name; NULL (not set) for people made before them.
    full_name = EncryptedTextField(max_length=200, null=True, blank=True)
    identifier = EncryptedTextField(max_length=60, null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    # Off: nothing new is remembered about the person (extraction and agent writes are refused);
    # what is already there stays until a caregiver forgets it.
    memory_enabled = models.BooleanField(default=True)
    # The companion persona that talks with this person; its memory policy applies (Persona).
    persona = models.CharField(max_length=32, default="clara")
    # Where in a care home the person lives: null for someone living at home or not yet placed.
    # Always a unit of the person's own organisation (memory/conversations/homes.py moves people;
    # nothing else writes it). PROTECT: a unit with people in it is not deleted (Unit).
    # Indexed (the FK's own index): the people list and the shift view limited to a unit.
    unit = models.ForeignKey(
        Unit, null=True, blank=True, on_delete=models.PROTECT, related_name="people"
    )
    # Stored texts staff let through the prompt firewall for this person: keyed digests only
    # (memory.core.screening.Approvals), space-separated; a changed text has another digest, so
    # an edit holds it back again. Read with the session on every turn (no query of its own).
    approved_texts = models.TextField(blank=True, default="", db_default="")

    # Renaming through update() keeps the name's lookup hash in step.
    objects = FindableQuerySet.as_manager()

    class Meta:
        db_table = "people"
        verbose_name_plural = "people"
        indexes = [
            # People list: most recently active first.
            models.Index(fields=["-last_active_at"], name="idx_people_last_active"),
            # An organisation's people (listings, the scope check of every person id).
            models.Index(fields=["organisation", "-last_active_at"], name="idx_people_org_active"),
            # A person by the exact name (the admin's search: display_name=..., a keyed hash).
            models.Index(fields=["display_name_index"], name="idx_people_name_index"),
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
    # The organisation whose bot opened it (a session may have no person yet).
    organisation = models.ForeignKey(
        Organisation,
        on_delete=models.PROTECT,
        related_name="sessions",
        db_index=False,
        default=default_organisation_id,
    )
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
    # The persona the person talked with in this session (their persona when it began, or when
    # an anonymous session became theirs): a continuous companion's stream is its own persona's
    # sessions only (memory/companion/continuity.py).
    persona = models.CharField(max_length=32, default="clara")
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
    # When retention removed the text of its messages (memory/retention.py); null while kept.
    transcript_removed_at = models.DateTimeField(null=True, blank=True)

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
    # Stored as a keyed digest of the key and the session (sql.db_idempotency_key), never the
    # key itself; 128 wide as before (keys stored before the digest are rewritten by 0034).
    idempotency_key = KeyedDigestField(max_length=128, null=True, blank=True)
    # Where it was said (voice, app, sms...), for companions that follow a person across channels.
    channel = models.CharField(max_length=32, null=True, blank=True)
    # The person's messages: whether this one needed a person (the recogniser's verdict or the
    # bot's flag); it keeps the next turns' window wide. Null on the assistant's, and on rows
    # written before it was recorded (the recogniser then reads the text again).
    escalated = models.BooleanField(null=True, blank=True)

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
    # Clara's reply to this message: at a repeat, the reassurance to keep (or a story to change).
    response_given = EncryptedTextField(null=True, blank=True)
    # What the message means (memory/conversations/meaning.py `to_stored`, ~1.2 KB), encrypted:
    # later messages of the session are compared with it, never re-embedded. NULL for rows
    # stored before meanings were, or while the embedder cannot analyse: the fingerprint decides.
    meaning = EncryptedBinaryField(null=True, blank=True)

    class Meta:
        db_table = "repetition_tracking"
        indexes = [
            # Tier 1: every fingerprint of this session, in order.
            models.Index(fields=["session", "timestamp"], name="idx_repetition_session"),
            # "Has this person asked exactly this before, in any session?" With the time and
            # the session in the index, the per-turn count of the other sessions' last 7 days
            # (sql.PERSON_REPEATS_BY_FINGERPRINT) reads the index alone, not each row.
            models.Index(
                fields=["person", "fingerprint", "timestamp", "session"],
                name="idx_repetition_user",
            ),
            # "How many location questions this session?"
            models.Index(fields=["session", "question_type"], name="idx_repetition_type"),
            # Tier 2: a person's questions of one type in the last 7 days (count over a range).
            # The session last: the per-turn count leaves out this session's rows from the index
            # alone (sql.PERSON_REPEATS_BY_TYPE), without reading each row (issue 20).
            models.Index(
                fields=["person", "question_type", "timestamp", "session"],
                name="idx_repetition_user_type",
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


class Scope(models.TextChoices):
    """What an API key may do. A key gets only what its bot needs (least privilege)."""

    TURNS = "turns", "sessions, context, query, exchanges, turn queue, outbox"
    MEMORIES_READ = "memories:read", "read and search memories, list namespaces, tool schemas"
    MEMORIES_WRITE = "memories:write", "write and forget memories, status notes"
    EXPORT = "export", "export everything about a person"
    ERASE = "erase", "erase a person"
    ADMIN = "admin", "personas, check-in settings, memory settings"


class ApiKey(models.Model):
    """A bot client's key. Only a prefix (for lookup) and a SHA-256 of the whole key are stored.

    It belongs to one organisation and acts only on that organisation's rows, within its scopes.
    """

    organisation = models.ForeignKey(
        Organisation,
        on_delete=models.PROTECT,
        related_name="api_keys",
        default=default_organisation_id,
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # None: never expires. An expired key is refused like a revoked one.
    expires_at = models.DateTimeField(null=True, blank=True)
    # Values of Scope.
    scopes = models.JSONField(default=list)

    class Meta:
        db_table = "api_keys"
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


# There is one persona today; the column is there so a second one needs no migration.
DEFAULT_PERSONA = "clara"


class MemoryPolicy(models.TextChoices):
    # Clara's rules (the default): only the current session enters the prompt, nothing reveals
    # repetition, nothing quizzes or corrects.
    DEMENTIA_SAFE = "dementia_safe"
    # One unbroken conversation across sessions and channels, older turns compacted.
    CONTINUOUS = "continuous"


class Persona(models.Model):
    """A companion persona of one organisation and the memory policy its conversations follow.

    A person names their persona by slug (`Person.persona`); without a row the persona is Clara's
    dementia-safe default.
    """

    organisation = models.ForeignKey(
        Organisation,
        on_delete=models.CASCADE,
        related_name="personas",
        db_index=False,
        default=default_organisation_id,
    )
    slug = models.SlugField(max_length=32)
    display_name = models.CharField(max_length=100)
    memory_policy = models.CharField(
        max_length=16, choices=MemoryPolicy.choices, default=MemoryPolicy.DEMENTIA_SAFE
    )

    class Meta:
        db_table = "personas"
        constraints = [
            # One persona per slug in an organisation; also the per-turn policy lookup.
            models.UniqueConstraint(fields=["organisation", "slug"], name="uniq_persona_org_slug"),
        ]

    def __str__(self) -> str:
        return f"{self.display_name} ({self.memory_policy})"


# --- The audit of disclosures outside the per-turn path --------------------------------------------


class AccessChannel(models.TextChoices):
    API = "api", "REST API"
    MCP = "mcp", "MCP"
    ADMIN = "admin", "admin"
    JOB = "job", "nightly job"


class AccessAction(models.TextChoices):
    """What a key or an operator read or did. Codes, never text: nothing about the person is copied."""

    READ_MESSAGES = "read_messages", "read a conversation's messages"
    READ_MEMORY = "read_memory", "read a memory"
    READ_MEMORY_HISTORY = "read_memory_history", "read a memory's versions"
    SEARCH_MEMORIES = "search_memories", "searched memories"
    LIST_NAMESPACES = "list_namespaces", "listed memory namespaces"
    READ_PERSON_MEMORIES = "read_person_memories", "read what is remembered about a person"
    EXPORT_JSON = "export_json", "exported everything about a person (JSON)"
    EXPORT_CSV = "export_csv", "exported a person's memories (CSV)"
    EXPORT_FHIR = "export_fhir", "exported a person's care record (FHIR)"
    TOOL_CALL = "tool_call", "called an agent tool"
    FORGET = "forget", "forgot memories"
    ERASE = "erase", "erased a person"
    ADMIN_MESSAGES = "admin_messages", "read messages in the admin"
    # Any other admin page of a person's data: their profile, summaries, commitments, stories,
    # alerts, care team. The object is "<model>:<id>" (a list: "<model>").
    ADMIN_READ = "admin_read", "read a person's records in the admin"
    RETENTION = "retention", "removed conversation text past the retention period"
    MARK_INACTIVE = "mark_inactive", "marked a person inactive"
    MARK_ACTIVE = "mark_active", "marked a person active again"
    ARCHIVE = "archive", "archived a person"
    # The person asked Clara not to keep what they said: its facts were not stored.
    WITHHOLD = "withhold", "did not remember an exchange, as the person asked"
    # An operator's change in the admin to a login, its second factor, an organisation's
    # membership or a care team: a row in the audit of each organisation the login is in
    # (refused attempts too). The object is the login's, device's or membership's id.
    ADMIN_LOGIN_CHANGED = "admin_login_changed", "changed a login in the admin"
    ADMIN_PASSWORD_SET = "admin_password_set", "set a login's password in the admin"
    ADMIN_LOGIN_DELETED = "admin_login_deleted", "deleted a login in the admin"
    ADMIN_DEVICE_DELETED = "admin_device_deleted", "removed a login's second factor in the admin"
    ADMIN_MEMBER_ADDED = "admin_member_added", "added a login to the organisation in the admin"
    ADMIN_MEMBER_CHANGED = "admin_member_changed", "changed a login's membership in the admin"
    ADMIN_MEMBER_REMOVED = (
        "admin_member_removed",
        "took a login out of an organisation in the admin",
    )
    ADMIN_TEAM_ADDED = "admin_team_added", "put a login in a care team in the admin"
    ADMIN_TEAM_CHANGED = "admin_team_changed", "changed a care-team role or right in the admin"
    ADMIN_TEAM_REMOVED = "admin_team_removed", "took a login off a care team in the admin"


class AccessOutcome(models.TextChoices):
    ALLOWED = "allowed", "allowed"
    # The caller is known but may not (a key without the scope, staff without the permission).
    REFUSED = "refused", "refused"
    # Unknown, or another organisation's (answered alike).
    NOT_FOUND = "not_found", "not found"
    # Allowed, but the confirmation did not match (an erasure): nothing was done.
    UNCONFIRMED = "unconfirmed", "wrong confirmation"


class AccessEvent(models.Model):
    """One disclosure of a person's data outside the per-turn path: by an API key (REST or MCP)
    or by an operator in the admin. Written by memory.conversations.audit, never edited.

    The dashboard's own reads are in dashboard.AuditEvent; an organisation's admin reads both.
    As there, erasing a person leaves the row without them (SET_NULL), and no column holds a
    name, a query or message text.
    """

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    at = models.DateTimeField(default=timezone.now)
    # Whose audit it is: the key's organisation, or that of the row an operator opened. Null
    # only for an operator's request that found nothing (superusers see those).
    # Indexed by idx_access_org_at, which leads with it.
    organisation = models.ForeignKey(
        Organisation,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,
    )
    channel = models.CharField(max_length=8, choices=AccessChannel.choices)
    # "key:<prefix>" for an API key, "user:<login name>" for an operator: kept when the key or
    # the login is gone, so the audit still says who.
    actor = models.CharField(max_length=160)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    # Indexed by idx_access_person_at, which leads with it.
    person = models.ForeignKey(
        Person, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_index=False
    )
    action = models.CharField(max_length=32, choices=AccessAction.choices)
    # The session, message or memory concerned, or the tool's name (never text).
    object_id = models.CharField(max_length=64, blank=True, default="")
    outcome = models.CharField(max_length=16, choices=AccessOutcome.choices)

    class Meta:
        db_table = "access_audit"
        indexes = [
            # An organisation's audit, newest first (the dashboard's audit page, the admin).
            models.Index(fields=["organisation", "-at"], name="idx_access_org_at"),
            # "Who read this person's data", newest first.
            models.Index(fields=["person", "-at"], name="idx_access_person_at"),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor} {self.action} {self.outcome}"
