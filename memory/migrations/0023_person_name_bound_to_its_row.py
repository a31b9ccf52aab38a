"""A person's name bound to its row: randomised (enc:r1:<key>:<person id>:), found by a keyed hash.

Until now the name was sealed deterministically (AES-SIV, enc:d1:) so that the admin could find a
person by the exact name: equal names gave equal values, so the value could not name its row,
and a name copied onto another person's row read as theirs. Now the name is sealed like every
other value (bound to the person's id) and the exact-name search matches a keyed hash of it in
its own column (`display_name_index`).

Forward: each name is rewritten bound to its row and its hash filled (memory/reencrypt.py, the
`rotate_keys` pass, over people only). Reverse: each name sealed deterministically again.
"""

import memory.core.fields
from django.db import migrations, models


def bind_names(apps, schema_editor):
    from memory import reencrypt

    reencrypt.reencrypt_all([apps.get_model("memory", "Person")])


def seal_names_again(apps, schema_editor):
    from memory.core import crypto

    ring = crypto.keyring()
    context = "people.display_name"
    Person = apps.get_model("memory", "Person")
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT id, display_name FROM people")
        rows = cursor.fetchall()
        for pk, value in rows:
            if not value:
                continue
            sealed = ring.seal_lookup(ring.decrypt(value, context=context), context=context)
            cursor.execute(
                "UPDATE people SET display_name = %s WHERE id = %s",
                [sealed, Person._meta.pk.get_db_prep_value(pk, schema_editor.connection)],
            )


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0022_pgvector_search_columns'),
    ]

    operations = [
        migrations.AddField(
            model_name='person',
            name='display_name_index',
            field=memory.core.fields.LookupHashField(db_default='', source='display_name'),
        ),
        migrations.AlterField(
            model_name='person',
            name='display_name',
            field=memory.core.fields.FindableTextField(blank=True, default='', index_field='display_name_index', max_length=200),
        ),
        migrations.AddIndex(
            model_name='person',
            index=models.Index(fields=['display_name_index'], name='idx_people_name_index'),
        ),
        migrations.RunPython(bind_names, seal_names_again, elidable=True),
    ]
