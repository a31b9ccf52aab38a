"""Encrypt the rows written before encryption existed (and hash their fingerprints).

Forward: every encrypted column is rewritten under the primary key of CLARA_ENCRYPTION_KEYS,
and each repetition fingerprint becomes keyed tokens (memory/reencrypt.py; the same pass as
`manage.py rotate_keys`). Reverse: everything is written back as plaintext and fingerprints as
words, so 0010 can be unapplied. Both need the keys that encrypted the rows.
"""

from django.db import migrations


def encrypt_rows(apps, schema_editor):
    from memory import reencrypt

    reencrypt.reencrypt_all(apps.get_app_config("memory").get_models())


def decrypt_rows(apps, schema_editor):
    from memory import reencrypt

    reencrypt.decrypt_all(apps.get_app_config("memory").get_models())


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0010_encrypted_fields"),
    ]

    operations = [
        migrations.RunPython(encrypt_rows, decrypt_rows, elidable=True),
    ]
