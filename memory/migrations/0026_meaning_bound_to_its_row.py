"""A repetition record's stored meaning bound to its row (enc:r1:<key>:<record id>:).

The per-turn exchange write sealed the meaning bound to its column only, so a meaning copied
onto another record of the person read as that record's. Now it is written bound to the
record's id and read with it (memory/conversations/repeats.py).

Forward: the `rotate_keys` pass over repetition records (memory/reencrypt.py), which rewrites
each meaning bound to its row (a meaning under an older key is made again from the record's
original message, as a rotation does). Reverse: nothing (the code before this reads a meaning
bound to its row as well as one bound to its column).
"""

from django.db import migrations


def bind_meanings(apps, schema_editor):
    from memory import reencrypt

    reencrypt.reencrypt_all([apps.get_model("memory", "RepetitionRecord")])


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0025_repetition_counts_read_the_index_alone"),
    ]

    operations = [
        migrations.RunPython(bind_meanings, migrations.RunPython.noop, elidable=True),
    ]
