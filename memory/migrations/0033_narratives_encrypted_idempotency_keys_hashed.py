"""Personal text at rest, round three (issue 30, step 5): the schema side.

A narrative's title and text become encrypted fields (a person's story's, bound to the row,
its id: the id now has a default, made by code; the shared library's stay plaintext); the bot's
keys (a message's idempotency key, a queued message's client key) become keyed digests. Column
types: title VARCHAR(200) becomes TEXT (ciphertext is longer); the rest keep theirs. The rows
are rewritten by 0034.
"""

from django.db import migrations, models

import memory.core.fields
import memory.core.ids


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0032_alert_acted_replaced_by_claim_and_resolution"),
    ]

    operations = [
        migrations.AlterField(
            model_name="pendingmessage",
            name="client_key",
            field=memory.core.fields.KeyedDigestField(max_length=128),
        ),
        migrations.AlterField(
            model_name="chatmessage",
            name="idempotency_key",
            field=memory.core.fields.KeyedDigestField(blank=True, max_length=128, null=True),
        ),
        migrations.AlterField(
            model_name="narrative",
            name="id",
            field=models.SlugField(
                default=memory.core.ids.uuid7_text,
                max_length=128,
                primary_key=True,
                serialize=False,
            ),
        ),
        migrations.AlterField(
            model_name="narrative",
            name="text",
            field=memory.core.fields.EncryptedTextField(clear_unless="person_id"),
        ),
        migrations.AlterField(
            model_name="narrative",
            name="title",
            field=memory.core.fields.EncryptedTextField(clear_unless="person_id", max_length=200),
        ),
    ]
