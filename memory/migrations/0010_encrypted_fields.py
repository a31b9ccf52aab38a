"""Encrypted fields for what identifies or describes a person (memory/core/fields.py).

The encrypted fields keep their columns' types (TEXT, and JSON holding a JSON string), so for
them only Django's model state changes: `SeparateDatabaseAndState` with no database operation,
because SQLite would otherwise copy every row of chat_messages, memories, people, sessions and
repetition_tracking into a new table to change nothing. The two VARCHAR columns become TEXT (a
ciphertext is longer than the plaintext limit, which stays as the fields' form limit); on
PostgreSQL that is a catalogue change, no rewrite.

The rows themselves are encrypted by the next migration (0011_encrypt_existing_rows).
"""

from django.db import migrations

import memory.core.fields

# Same column type before and after: the model state changes, the database does not.
STATE_ONLY = [
    ("chatmessage", "content", memory.core.fields.EncryptedTextField()),
    ("memory", "content", memory.core.fields.EncryptedTextField()),
    ("pendingmessage", "content", memory.core.fields.EncryptedTextField()),
    ("person", "caregiver_context", memory.core.fields.EncryptedJSONField(blank=True, default=dict)),
    ("personnotes", "fields", memory.core.fields.EncryptedJSONField(blank=True, default=dict)),
    ("repetitionrecord", "fingerprint", memory.core.fields.FingerprintField(blank=True)),
    ("repetitionrecord", "original_message", memory.core.fields.EncryptedTextField()),
    (
        "repetitionrecord",
        "response_given",
        memory.core.fields.EncryptedTextField(blank=True, null=True),
    ),
    ("session", "session_summary", memory.core.fields.EncryptedJSONField(blank=True, null=True)),
    ("streamsummary", "text", memory.core.fields.EncryptedTextField()),
    ("summaryspine", "content", memory.core.fields.EncryptedJSONField(default=dict)),
]


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0009_seed_personas"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(model_name=model, name=name, field=field)
                for model, name, field in STATE_ONLY
            ],
            database_operations=[],
        ),
        # VARCHAR(500) and VARCHAR(600) -> TEXT.
        migrations.AlterField(
            model_name="commitment",
            name="text",
            field=memory.core.fields.EncryptedTextField(max_length=500),
        ),
        migrations.AlterField(
            model_name="rollingsummary",
            name="text",
            field=memory.core.fields.EncryptedTextField(max_length=600),
        ),
    ]
