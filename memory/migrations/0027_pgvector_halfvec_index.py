"""pgvector's HNSW index over half-precision copies by inner product (memory/facts/vector_pg.py).

Replaces 0022's cosine index over the float vectors where the search columns exist; does nothing
on SQLite or a PostgreSQL without the extension (as 0022). Going back rebuilds the cosine index.
"""

from django.db import migrations


def forward(apps, schema_editor):
    from memory.facts import vector_pg

    vector_pg.install(schema_editor.connection)


def backward(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM information_schema.columns WHERE table_name = 'memories' "
            "AND column_name = 'search_vector' AND table_schema = current_schema()"
        )
        if cursor.fetchone() is None:
            return
        cursor.execute(
            "CREATE INDEX IF NOT EXISTS idx_memories_search_vector ON memories "
            "USING hnsw (search_vector vector_cosine_ops) WHERE status = 'active'"
        )
        cursor.execute("DROP INDEX IF EXISTS idx_memories_search_halfvec")


class Migration(migrations.Migration):
    dependencies = [("memory", "0026_meaning_bound_to_its_row")]

    operations = [migrations.RunPython(forward, backward, elidable=False)]
