"""A note one caregiver leaves for the others about a person ("slept badly, ask about Sarah").

Who and when are kept beside the text; the text is the caregivers' words about the person and
may quote them, so it is encrypted at rest and bound to its row (memory/core/fields.py: the
primary key is made in code, so the ciphertext names it). Who reads it is the note's
`visibility`: the whole care team, or care staff and team admins only (the default for staff,
since a note may say more than family need). Erasure: notes go with the person (CASCADE).
"""

from django.conf import settings
from django.db import models
from django.utils import timezone

from memory.core.fields import EncryptedTextField
from memory.core.ids import uuid7
from memory.models import Person

NOTE_MAX_CHARS = 1000


class NoteVisibility(models.TextChoices):
    TEAM = "team", "Everyone in the care team, family too"
    STAFF = "staff", "Care staff and team admins only"


class CaregiverNote(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    # Indexed by idx_caregiver_notes_person, which leads with it.
    person = models.ForeignKey(Person, on_delete=models.CASCADE, related_name="+", db_index=False)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    # The caregiver's name as shown when it was written, kept when the login is deleted.
    author_name = models.CharField(max_length=150)
    created_at = models.DateTimeField(default=timezone.now)
    visibility = models.CharField(
        max_length=8, choices=NoteVisibility.choices, default=NoteVisibility.STAFF
    )
    text = EncryptedTextField(max_length=NOTE_MAX_CHARS)

    class Meta:
        db_table = "caregiver_notes"
        indexes = [
            # The notes panel: a person's notes, newest first.
            models.Index(fields=["person", "-created_at"], name="idx_caregiver_notes_person"),
        ]

    def __str__(self) -> str:
        return f"note {self.id} by {self.author_name}"
