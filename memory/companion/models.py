"""What the companion needs beyond the conversation: stories, personas, the turn queue, check-ins."""

from django.db import models

from memory.conversations.models import ChatMessage, Person, Session
from memory.core.fields import EncryptedTextField, KeyedDigestField
from memory.core.ids import uuid7, uuid7_text


class Narrative(models.Model):
    """A short story or grounding text Clara can lean on: the team's library, or one about the person.

    Person-specific narratives are written by caregivers about the person's own life; the
    library's (person is null) are for everyone. A person's story has its title and text
    encrypted at rest and bound to the row (its id); the library's stay as they are (text about
    no one, the same for every organisation: `clear_unless`). The id is made by code
    (`uuid7_text`: time-ordered, 74 random bits), so one organisation cannot guess or confirm
    another's; the starter library keeps its slugs (migration 0003).
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

    id = models.SlugField(max_length=128, primary_key=True, default=uuid7_text)
    # max_length limits form input; the column is TEXT (the ciphertext is longer).
    title = EncryptedTextField(max_length=200, clear_unless="person_id")
    category = models.CharField(max_length=32, choices=Category.choices)
    # Emotions this narrative is meant to meet (values of Emotion).
    target_emotions = models.JSONField(default=list, blank=True)
    # Question types it answers well (values of QuestionType); empty means any.
    question_types = models.JSONField(default=list, blank=True)
    theme_tags = models.JSONField(default=list, blank=True)
    length = models.CharField(max_length=8, choices=Length.choices, default=Length.SHORT)
    text = EncryptedTextField(clear_unless="person_id")
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
    # Stored as a keyed digest of the person and the key (turns.client_key_digests).
    client_key = KeyedDigestField(max_length=128)
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
