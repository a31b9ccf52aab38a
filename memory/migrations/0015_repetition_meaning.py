"""The meaning of each of the person's messages, stored with its repetition record (issue 17).

A nullable encrypted binary column: existing rows keep NULL and are compared by fingerprint
alone, as before; new rows carry the meaning that later messages of the session are compared
with (memory/conversations/repeats.py).
"""

import memory.core.fields
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0014_organisation_required'),
    ]

    operations = [
        migrations.AddField(
            model_name='repetitionrecord',
            name='meaning',
            field=memory.core.fields.EncryptedBinaryField(blank=True, null=True),
        ),
    ]
