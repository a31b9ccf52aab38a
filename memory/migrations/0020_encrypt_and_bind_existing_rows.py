"""Encrypt what 0017 made encrypted, and bind every encrypted value to its table and column.

Forward: the same pass as `manage.py rotate_keys` (memory/reencrypt.py). Memory keys, fact
identities, metadata (the sentence a fact came from), entity refs and labels, embeddings and
display names written in plaintext are encrypted; every value written before binding (an
`enc:v1:` value, sealed with its key id only) is rewritten as `enc:v2:`, bound to its table and
column. Reverse: nothing (0017's fields read v2 and plaintext alike; to write plaintext back,
unapply 0011 too, whose reverse decrypts every column).
"""

from django.db import migrations


def encrypt_and_bind_rows(apps, schema_editor):
    from memory import reencrypt

    reencrypt.reencrypt_all(apps.get_app_config("memory").get_models())


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0019_encrypt_keys_labels_embeddings_names"),
    ]

    operations = [
        migrations.RunPython(encrypt_and_bind_rows, migrations.RunPython.noop, elidable=True),
    ]
