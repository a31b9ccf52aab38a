"""pgvector search columns and indexes (memory/facts/vector_pg.py), only where they can exist.

On SQLite, and on a PostgreSQL without the `vector` extension available, this does nothing (and
`manage.py vector_index --install` can add them later, once the extension is there). The columns
are not model fields: Django never reads or writes them; vector_pg.py keeps them in step.
"""

from django.db import migrations


def forward(apps, schema_editor):
    from memory.facts import vector_pg

    vector_pg.install(schema_editor.connection)


def backward(apps, schema_editor):
    from memory.facts import vector_pg

    vector_pg.uninstall(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [("memory", "0021_webhooks")]

    operations = [migrations.RunPython(forward, backward, elidable=False)]
