"""pgvector's keyword rows (memory/facts/vector_pg.py, issue 19 round five): a narrow table of
each live memory's scoped keyword tokens, their counts and its rotated vector kept inline, and
the triggers that delete a memory's row with it.

Does nothing on SQLite or a PostgreSQL without the extension (as 0022 and 0027). The table starts
empty: every scope's search columns are marked behind, so the next search of each (or
`manage.py vector_index`) derives them. Going back drops the table and its triggers.
"""

from django.db import migrations


def forward(apps, schema_editor):
    from memory.facts import vector_pg

    vector_pg.install(schema_editor.connection)


def backward(apps, schema_editor):
    from memory.facts import vector_pg

    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for statement in vector_pg.ROWS_UNINSTALL_SQL:
            cursor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("memory", "0027_pgvector_halfvec_index")]

    operations = [migrations.RunPython(forward, backward, elidable=False)]
